"""A record, cluster or gold file whose line never ends (/dev/zero, a file without a newline)
is one line of error, exit 1, in bounded memory: every command that reads such files reads
their lines through one bound."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MEMORY = 2 << 30  # the bound is 256 MiB a line; an unbounded reader takes all there is


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


COMMANDS = {
    "cluster": ["cluster", "/dev/zero"],
    "cluster --against": ["cluster", "--against", "/dev/zero", "{records}"],
    "stats": ["stats", "/dev/zero"],
    "convert": ["convert", "--to", "jsonl", "-o", "{tmp}/out.jsonl", "/dev/zero"],
    "select": ["select", "/dev/zero"],
    "report": ["report", "/dev/zero", "-o", "{tmp}/r.html"],
    "eval": ["eval", "--gold", "/dev/zero", "{records}"],
    "index create": ["index", "create", "{tmp}/idx", "-k", "3", "--from", "/dev/zero"],
    "stdin": ["cluster", "-"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_endless_line_is_one_error_in_bounded_memory(tmp_path, name):
    records = tmp_path / "records.jsonl"
    records.write_bytes(
        subprocess.run(
            [sys.executable, "-m", "simdedup", "fingerprint", "--silent", EXAMPLES / "en"], capture_output=True
        ).stdout
    )
    argv = [a.format(tmp=tmp_path, records=records) for a in COMMANDS[name]]
    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run(
            [sys.executable, "-m", "simdedup", *argv],
            stdin=zeros,
            capture_output=True,
            text=True,
            preexec_fn=_limited,
            timeout=600,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "a line of more than 256 MiB" in done.stderr, done.stderr
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "r.html").exists()
