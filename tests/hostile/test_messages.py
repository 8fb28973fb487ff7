"""Class: messages scale and say where. Files of generated garbage, with many problems each, in
every kind of table: each file costs at most WARNINGS_PER_FILE warnings and one line counting the
rest, whatever the number of problems, at any -j and engine; each warning about a row names
FILE:LINE (or FILE: byte N for a WARC record); the counts add up to the documents skipped.
"""

import gzip
import json
import random
import re

import pytest
from helpers import invoke, record_line

from simdedup.errors import WARNINGS_PER_FILE

SEEDS = range(3)
MORE = re.compile(r"simdedup: warning: (.*): \.\.\. and (\d+) more problems?( \(-v shows them all\))?$")
SKIPPED = re.compile(r"skipped (\d+) ")


def garbage(rng, kind):
    """A file of ``kind`` with many bad rows (and a few good ones)."""
    good = json.dumps({"text": "a good document among the bad ones"})
    if kind == "random":
        return rng.randbytes(rng.randrange(20_000, 200_000))
    if kind == "jsonl":
        bad = [
            rng.choice([b"{", b"[1]", b'{"text": 3}', b'{"other": "x"}', b"\xff\xfe", b'{"text": "\xc3"}'])
            for _ in range(rng.randrange(50, 500))
        ]
        return b"\n".join([good.encode(), *bad, good.encode()]) + b"\n"
    if kind == "csv":
        rows = [rng.choice(['"unclosed', "", "a", '"a""b"']) for _ in range(rng.randrange(50, 500))]
        return ("text\r\n" + "\r\n".join(rows)).encode() + b"\xff\r\n"
    raise AssertionError(kind)


def check(result, names):
    """The run's warnings are bounded per file, name it, and add up to the closing count."""
    assert result.exit_code == 3, result.stderr[-500:]
    assert "Traceback" not in result.stderr and result.stderr.endswith("\n")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
    shown, held = 0, 0
    for name in names:
        about = [w for w in warnings if w.startswith(f"simdedup: warning: {name}")]
        assert len(about) <= WARNINGS_PER_FILE + 1, about[:10]
        for warning in about:
            more = MORE.match(warning)
            if more:
                held += int(more.group(2))
            else:  # FILE:LINE, FILE:ROW or FILE (a whole file)
                assert re.match(rf"simdedup: warning: {re.escape(str(name))}(:\d+)?: \S", warning), warning
                shown += 1
    assert shown + held == int(SKIPPED.search(result.stderr).group(1))
    assert len(warnings) <= len(names) * (WARNINGS_PER_FILE + 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_files_of_many_problems_cost_a_few_lines_each(tmp_path, seed):
    rng = random.Random(seed)
    names = []
    for i, (kind, suffix) in enumerate(
        [
            ("random", ".jsonl"),
            ("jsonl", ".jsonl"),
            ("jsonl", ".ndjson.gz"),
            ("csv", ".csv"),
            ("random", ".csv"),
            ("random", ".jsonl.gz"),
        ]
    ):
        data = garbage(rng, kind)
        path = tmp_path / f"t{i}{suffix}"
        path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
        names.append(path)
    rng.shuffle(names)
    outputs = set()
    for command in (
        ["fingerprint", "-j", "1"],
        ["fingerprint", "-j", "2"],
        ["exact"],
        ["dedup", "-k", "3", "--engine", "stages", "-j", "2"],
    ):
        result = invoke(*command, "--silent", *names)
        check(result, names)
        if command[0] == "fingerprint":
            outputs.add(result.stderr)
    assert len(outputs) == 1  # the same warnings at any -j
    every = invoke("fingerprint", "--silent", "-v", *names)  # -v: each warning
    skipped = int(SKIPPED.search(every.stderr).group(1))
    assert len([line for line in every.stderr.splitlines() if line.startswith("simdedup: warning: ")]) == skipped


@pytest.mark.parametrize("seed", SEEDS)
def test_repeated_ids_cost_a_few_lines(tmp_path, seed):
    """Fingerprint records given many times over (cat fp fp fp | simdedup cluster)."""
    rng = random.Random(seed)
    records = [record_line(f"doc{i}", rng.getrandbits(64)) for i in range(rng.randrange(20, 60))]
    path = tmp_path / "fp.jsonl"
    path.write_text("\n".join(records * rng.randrange(3, 8)) + "\n")
    for command in (["cluster", "-k", "3", path], ["index", "create", tmp_path / "idx", "-k", "3", "--from", path]):
        result = invoke(*command)
        assert result.exit_code == 0, result.stderr[-500:]
        warnings = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
        assert 1 <= len(warnings) <= WARNINGS_PER_FILE + 1
        assert all(w.startswith(f"simdedup: warning: {path}:") for w in warnings[:-1])
