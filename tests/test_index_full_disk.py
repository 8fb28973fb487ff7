"""An index on a file system that fills: segments are written whole (no holes, whose pages a
mapping would need the disk to have: SIGBUS on a full tmpfs), a write that finds no room is one
line and leaves the index as it was, and readers keep working on the full disk."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys

import pytest
from helpers import EXAMPLES, make_records

from simdedup.fingerprints import json_lines


def simdedup(*args, check=True):
    """The command line in its own process (a SIGBUS must not take the test with it)."""
    result = subprocess.run([sys.executable, "-m", "simdedup", *map(str, args)], capture_output=True)
    if check:
        assert result.returncode == 0, result.stderr.decode()
    return result


def write(path, records):
    path.write_bytes(json_lines(records))
    return path


def holes(path) -> bool:
    with open(path, "rb") as handle:
        return os.lseek(handle.fileno(), 0, os.SEEK_HOLE) < os.fstat(handle.fileno()).st_size


def index_state(directory, scratch):
    """What the catalog holds (read from a copy elsewhere: SQLite cannot open it on the full
    disk), and the segment files."""
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    for name in os.listdir(directory):
        if name.startswith("catalog.sqlite"):
            shutil.copyfile(os.path.join(directory, name), os.path.join(scratch, name))
    db = sqlite3.connect(os.path.join(scratch, "catalog.sqlite"))
    try:
        tables = tuple(
            tuple(db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall())
            for t in ("documents", "pairs", "segments", "removed", "settings")
        )
    finally:
        db.close()
    return tables, tuple(sorted(os.listdir(os.path.join(directory, "segments"))))


@pytest.mark.parametrize("seed", range(5))
def test_every_segment_is_written_without_holes(tmp_path, seed):
    """Seeded indexes of every shape (k, blocks, width, sketches; many tables leave a large
    header room): no segment file has a hole, after create, add and compact."""
    from simdedup import store
    from simdedup.fingerprints import load_fingerprints
    from simdedup.options import ClusterOptions

    rng = random.Random(seed)
    bits, sketch = rng.choice([64, 128]), rng.choice([0, 32])
    k = rng.choice([0, 3, 6, 8])
    records = make_records(seed, rng.randint(1, 400), bits=bits, sketch=sketch)
    cut = rng.randint(0, len(records))
    index = str(tmp_path / "idx")
    settings = {**records[0].settings, "bits": bits}
    with open(write(tmp_path / "a.jsonl", records[:cut]), "rb") as handle:
        first = load_fingerprints([("a.jsonl", handle)])
    store.create(index, settings, ClusterOptions(k=k), fingerprints=first)
    store.add(index, [str(write(tmp_path / "b.jsonl", records[cut:]))])
    for name in os.listdir(tmp_path / "idx" / "segments"):
        assert not holes(tmp_path / "idx" / "segments" / name), name
    store.compact(index)
    for name in os.listdir(tmp_path / "idx" / "segments"):
        assert not holes(tmp_path / "idx" / "segments" / name), name


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs (root only; skipped elsewhere)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(disk):
    """Take what room is left (a file of zeros, written until the disk is full)."""
    with open(disk / "filler", "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_readers_work_on_a_full_disk_and_a_full_add_is_one_line(small_disk, tmp_path, seed):
    rng = random.Random(seed)
    index = small_disk / "idx"
    # many tables: a large header room, the hole an old segment had
    simdedup(
        "index",
        "create",
        index,
        "-k",
        8,
        "--blocks",
        11,
        "--from",
        write(tmp_path / "a.jsonl", make_records(seed, 500)),
    )
    query = EXAMPLES / "en" / "lighthouses.txt"
    fill(small_disk)
    before = index_state(index, tmp_path / "state")
    for args in (("index", "stats", "--verify", index), ("index", "cluster", index), ("index", "query", index, query)):
        result = simdedup(*args, check=False)
        assert result.returncode == 0, (args, result.returncode, result.stderr.decode())
    for attempt in range(3):  # adds of seeded sizes: each refused in one line, nothing changed
        batch = write(
            tmp_path / f"b{attempt}.jsonl", make_records(100 + seed * 10 + attempt, rng.randint(50, 800), prefix="b")
        )
        result = simdedup("index", "add", index, batch, "-o", tmp_path / "out.jsonl", check=False)
        assert result.returncode == 1, result.stderr.decode()
        assert len(result.stderr.decode().strip().splitlines()) == 1 and b"No space left" in result.stderr
        assert index_state(index, tmp_path / "state") == before
        assert not [name for name in os.listdir(index / "segments") if name.startswith(".")]
    os.unlink(small_disk / "filler")  # the same add works once there is room
    small = write(tmp_path / "small.jsonl", make_records(200 + seed, 20, prefix="s"))
    simdedup("index", "add", index, small, "-o", tmp_path / "out.jsonl")
    simdedup("index", "stats", "--verify", index)


@pytest.mark.slow
def test_a_segment_with_holes_is_read_not_mapped(small_disk, tmp_path):
    """A segment written with holes (as earlier versions did; here made sparse by cp) is read
    into memory on a full disk instead of dying of SIGBUS."""
    index = small_disk / "idx"
    simdedup(
        "index", "create", index, "-k", 8, "--blocks", 11, "--from", write(tmp_path / "a.jsonl", make_records(5, 500))
    )
    (segment,) = (index / "segments").iterdir()
    sparse = tmp_path / "sparse"
    if subprocess.run(["cp", "--sparse=always", str(segment), str(sparse)]).returncode != 0:
        pytest.skip("no cp --sparse")
    segment.unlink()
    subprocess.run(["cp", "--sparse=always", str(sparse), str(segment)], check=True)
    if not holes(segment):
        pytest.skip("this tmpfs keeps no holes")
    fill(small_disk)
    for args in (("index", "stats", "--verify", index), ("index", "query", index, EXAMPLES / "en" / "lighthouses.txt")):
        result = simdedup(*args, check=False)
        assert result.returncode == 0, (args, result.returncode, result.stderr.decode())
    shutil.rmtree(index, ignore_errors=True)
