"""An index's writers remove only their own files: a file a user put in the index directory or
its segments/ (an input given from there, notes, a name that looks almost like a segment's)
is never removed, by add, compact, fingerprint --index or a create that replaces an
unfinished one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: names a user may leave in an index, some close to the index's own
NEAR_NAMES = [
    "notes.txt",
    "batch.jsonl",
    "seg-1.sdseg",
    "seg-000001.sdseg.bak",
    "catalog.sqlite.bak",
    "writer.lock.old",
    ".hidden",
    "seg-00000a.sdseg",
    "x.tmp",
]


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _plant(folder: Path, rng: random.Random, records: bytes) -> dict[Path, bytes]:
    planted = {}
    for name in rng.sample(NEAR_NAMES, 4):
        path = folder / name
        data = records if name.endswith(".jsonl") else rng.randbytes(rng.randint(0, 64))
        path.write_bytes(data)
        planted[path] = data
    return planted


@pytest.mark.parametrize("seed", range(4))
def test_writers_remove_only_their_own_files(tmp_path, seed):
    rng = random.Random(seed)
    en = run("fingerprint", "--silent", EXAMPLES / "en").stdout_bytes
    zh = run("fingerprint", "--silent", EXAMPLES / "zh").stdout_bytes
    (tmp_path / "en.jsonl").write_bytes(en)
    index = tmp_path / "idx"
    assert run("index", "create", index, "-k", 3, "--from", tmp_path / "en.jsonl").exit_code == 0
    planted = {**_plant(index, rng, zh), **_plant(index / "segments", rng, zh)}
    inputs = [path for path in planted if path.suffix == ".jsonl"]
    for path in inputs:  # an input given from inside the index
        done = run("index", "add", "--replace", index, path)
        assert done.exit_code in (0, 2), done.output
    assert run("index", "compact", index).exit_code == 0
    page = index / "segments" / "page.txt"
    page.write_bytes((EXAMPLES / "en" / "lighthouses.txt").read_bytes())
    planted[page] = page.read_bytes()
    done = run("fingerprint", "--silent", "--index", index, "--replace", page)
    assert done.exit_code in (0, 2), done.output
    for path, data in planted.items():
        assert path.read_bytes() == data, f"{path.name} was changed or removed"
    assert run("index", "stats", "--verify", index).exit_code == 0
