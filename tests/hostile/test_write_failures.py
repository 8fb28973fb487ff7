"""Class 8 beyond the index: every command that writes (outputs, reports, copies into a
directory, the staged engines' work directories) fails the same way when the file system does.
A seeded generator pairs a writer with a file-size limit at a random byte budget (Python
ignores SIGXFSZ, so writes past it fail with EFBIG): the run exits 0 with the clean run's
output, or exits 1 with one line and no traceback, and the same command without the limit then
gives the clean run's output.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: each writer: its arguments (``{out}`` is the output's name) and the output to compare
WRITERS = {
    "dedup -o": (["dedup", "--silent", "{en}", "{zh}", "-o", "{out}"], "{out}"),
    "fingerprint -o": (["fingerprint", "--silent", "{en}", "-o", "{out}"], "{out}"),
    "report": (["dedup", "--silent", "{en}", "{zh}", "-o", "c.jsonl", "--report", "{out}"], "{out}"),
    "unique-out DIR": (["dedup", "--silent", "{en}", "-o", "c.jsonl", "--unique-out", "{out}"], "c.jsonl"),
    "stages work dir": (
        [
            "dedup",
            "--silent",
            "--engine",
            "stages",
            "-j",
            "2",
            "-k",
            "8",
            "--work-dir",
            "{out}",
            "{en}",
            "-o",
            "c.jsonl",
        ],
        "c.jsonl",
    ),
}


def invoke(folder: Path, args: list[str], limit: int | None) -> subprocess.CompletedProcess:
    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "simdedup", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=120,
    )


def arguments(writer: str, out: str) -> tuple[list[str], str]:
    args, compared = WRITERS[writer]
    names = {"en": str(EXAMPLES / "en"), "zh": str(EXAMPLES / "zh"), "out": out}
    return [a.format(**names) for a in args], compared.format(**names)


@pytest.mark.parametrize("seed", range(10))
def test_a_writer_under_a_file_size_limit_fails_in_one_line_and_a_retry_works(tmp_path, seed):
    rng = random.Random(seed)
    writer = sorted(WRITERS)[seed % len(WRITERS)]
    limit = int(2 ** rng.uniform(0, 17))  # 1 byte to 128 KiB
    clean, failing = tmp_path / "clean", tmp_path / "failing"
    clean.mkdir()
    failing.mkdir()
    args, compared = arguments(writer, "out")
    expected = invoke(clean, args, None)
    assert expected.returncode == 0, expected.stderr

    under_limit = invoke(failing, args, limit)
    assert under_limit.returncode in (0, 1), (writer, limit, under_limit.stderr)
    assert "Traceback" not in under_limit.stderr
    if under_limit.returncode == 1:
        assert len(under_limit.stderr.splitlines()) == 1, under_limit.stderr
    else:
        assert (failing / compared).read_bytes() == (clean / compared).read_bytes()

    retry = invoke(failing, [*args, "--force"], None)  # what the failed run left whole may be replaced
    assert retry.returncode == 0, retry.stderr
    assert (failing / compared).read_bytes() == (clean / compared).read_bytes()
