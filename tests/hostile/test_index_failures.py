"""Class 8: the persistent index when the file system fails. A seeded generator pairs index
commands (create --from, add, add --replace, add -o FILE, compact) with failures (a file-size
limit at a random byte budget, a full tmpfs with a random room left, a read-only mount): a
writer exits 0 with the clean run's result, or exits 1 with one line and the index as it was,
and the same command without the failure then gives the clean run's result. Readers work
wherever they can read.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import make_records

from simdedup.cli import cli
from simdedup.fingerprints import FingerprintRecord, json_lines

ROOT = os.geteuid() == 0
SIMDEDUP = Path(sys.executable).parent / "simdedup"


def run(*args, limit: int | None = None):
    """The CLI in-process, writing files of at most ``limit`` bytes (the soft RLIMIT_FSIZE;
    Python ignores SIGXFSZ, so writes past it fail with EFBIG)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if limit is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        return CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def state(index: Path) -> tuple:
    """What a reader sees: every document with its cluster, and the counts."""
    if not index.exists():
        return ("absent",)
    members = run("index", "cluster", index, "--singletons", "--format", "members")
    figures = run("index", "stats", index)
    assert members.exit_code == 0 and figures.exit_code == 0, members.output + figures.output
    counts = [
        line for line in figures.stdout.splitlines() if line.split(":")[0] in ("documents", "removed", "pairs", "adds")
    ]
    return members.stdout, tuple(counts)


def assert_failed_cleanly(result) -> None:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("simdedup: warning:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr and "a bug" not in result.stderr, result.stderr


def write(path: Path, records: list[FingerprintRecord]) -> Path:
    path.write_bytes(json_lines(records))
    return path


def commands(rng: random.Random, tmp: Path, index: Path) -> list:
    """A writer command against ``index`` (or creating it), with its inputs written."""
    records = make_records(rng.randrange(10**6), rng.randrange(20, 400), prefix=f"n{rng.randrange(100)}-")
    batch = write(tmp / "batch.jsonl", records)
    kind = rng.choice(["create", "add", "add-o", "replace", "compact"])
    if kind == "create":
        return ["index", "create", index, "-k", 3, "--from", batch]
    if kind == "add":
        return ["index", "add", index, batch]
    if kind == "add-o":
        return ["index", "add", index, batch, "-o", tmp / "out" / "new.jsonl"]
    if kind == "replace":
        changed = [
            FingerprintRecord(f"d{i:05d}", rng.getrandbits(64), 64, 20, r.settings, None, r.sketch)
            for i, r in enumerate(records[: rng.randrange(1, 40)])
        ]
        return ["index", "add", index, write(tmp / "changed.jsonl", changed), "--replace"]
    return ["index", "compact", index]


def base_index(rng: random.Random, index: Path, tmp: Path) -> None:
    """An index of a few adds, some ids replaced (so that compact has work)."""
    records = make_records(rng.randrange(10**6), 300)
    assert run("index", "create", index, "-k", 3, "--from", write(tmp / "a.jsonl", records[:200])).exit_code == 0
    assert run("index", "add", index, write(tmp / "b.jsonl", records[200:])).exit_code == 0
    changed = [
        FingerprintRecord(r.id, r.simhash ^ 0b1011, 64, r.features, r.settings, r.bytes, r.sketch)
        for r in records[::20]
    ]
    assert run("index", "add", index, write(tmp / "c.jsonl", changed), "--replace").exit_code == 0


def clean_run(base: Path, argv: list, output: Path | None) -> tuple:
    """The state ``argv`` leaves when nothing fails; then the index (a copy of ``base``, but
    for ``create``) is put back as it was, and the output removed."""
    index = Path(argv[2])

    def place() -> None:
        if argv[1] != "create":
            shutil.copytree(base, index)

    place()
    if output is not None:
        output.parent.mkdir(exist_ok=True)
    assert run(*argv).exit_code == 0
    clean = state(index)
    shutil.rmtree(index)
    if output is not None:
        output.unlink()
    place()
    return clean


def check_case(argv: list, fail, clean: tuple, output: Path | None) -> None:
    """Run ``argv`` under ``fail``; check the outcome against the clean run's ``clean`` state."""
    index = Path(argv[2])
    before = state(index)
    with fail() as limit:
        result = run(*argv, limit=limit)
    if result.exit_code == 0:
        assert state(index) == clean
        return
    assert_failed_cleanly(result)
    assert state(index) == before
    if output is not None:
        assert not output.exists()
        assert not [name for name in os.listdir(output.parent) if name != output.name]
    retry = run(*argv)
    assert retry.exit_code == 0, retry.output
    assert state(index) == clean


@pytest.mark.parametrize("seed", range(12))
def test_writers_under_a_file_size_limit(tmp_path, seed):
    rng = random.Random(seed)
    base = tmp_path / "base"
    base_index(rng, base, tmp_path)
    for case in range(3):
        argv = commands(rng, tmp_path, tmp_path / "idx")
        output = Path(argv[-1]) if "-o" in argv else None
        clean = clean_run(base, argv, output)
        budget = int(2 ** rng.uniform(0, 19))  # 1 byte to 512 KiB, as many small as large

        @contextmanager
        def limited():
            yield budget

        check_case(argv, limited, clean, output)
        shutil.rmtree(tmp_path / "idx", ignore_errors=True)
        shutil.rmtree(tmp_path / "out", ignore_errors=True)


def test_a_tiny_budget_fails_every_writer_and_a_large_one_none(tmp_path):
    """The generator's two ends, so that neither outcome goes untested."""
    rng = random.Random(99)
    base_index(rng, tmp_path / "idx", tmp_path)
    batch = write(tmp_path / "new.jsonl", make_records(5, 100, prefix="new-"))
    for argv in (
        ["index", "add", tmp_path / "idx", batch],
        ["index", "compact", tmp_path / "idx"],
        ["index", "create", tmp_path / "other", "-k", 3, "--from", batch],
    ):
        before = state(Path(argv[2]))
        assert_failed_cleanly(run(*argv, limit=1000))
        assert state(Path(argv[2])) == before
        assert run(*argv, limit=1 << 30).exit_code == 0


def test_readers_work_under_a_file_size_limit(tmp_path):
    """SQLite makes a 32 KiB -shm file when it opens a catalog: readers must not need it."""
    base_index(random.Random(5), tmp_path / "idx", tmp_path)
    expected = state(tmp_path / "idx")
    query = tmp_path / "q.txt"
    query.write_text("w1 w2 w3 " * 20)
    for limit in (0, 100, 20000):
        for argv in (
            ["index", "cluster", tmp_path / "idx", "--singletons", "--format", "members"],
            ["index", "stats", tmp_path / "idx"],
            ["index", "query", tmp_path / "idx", query],
        ):
            assert run(*argv, limit=limit).exit_code == 0
        assert (
            run("index", "cluster", tmp_path / "idx", "--singletons", "--format", "members", limit=limit).stdout
            == expected[0]
        )


# --- mounts: a full file system, a read-only one (root only) ----------------------------------


def _mount(*args: str) -> bool:
    return ROOT and subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def tmpfs(tmp_path):
    place = tmp_path / "small"
    place.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(place)):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield place
    subprocess.run(["umount", "-l", str(place)], check=True)


@pytest.mark.parametrize("seed", range(4))
def test_writers_on_a_full_file_system(tmp_path, tmpfs, seed):
    rng = random.Random(1000 + seed)
    base = tmp_path / "base"
    base_index(rng, base, tmp_path)
    argv = commands(rng, tmp_path, tmpfs / "idx")
    output = None
    if "-o" in argv:  # the output on the full file system too
        output = tmpfs / "out" / "new.jsonl"
        argv[-1] = output
    clean = clean_run(base, argv, output)
    filler = tmpfs / "filler"

    @contextmanager
    def full():
        room = int(2 ** rng.uniform(0, 18))
        free = os.statvfs(tmpfs).f_bavail * os.statvfs(tmpfs).f_frsize
        with open(filler, "wb") as handle:
            handle.truncate(0)
            handle.write(b"\0" * max(0, free - room))
        try:
            yield None
        finally:
            filler.unlink()

    check_case(argv, full, clean, output)


@pytest.fixture
def read_only_view(tmp_path):
    """``tmp_path/ro``: the index ``tmp_path/idx`` through a read-only bind mount."""
    base_index(random.Random(7), tmp_path / "idx", tmp_path)
    view = tmp_path / "ro"
    view.mkdir()
    if not _mount("--bind", str(tmp_path / "idx"), str(view)):
        pytest.skip("cannot bind-mount here (needs root)")
    if not _mount("-o", "remount,bind,ro", str(view)):
        subprocess.run(["umount", str(view)])
        pytest.skip("cannot remount read-only here")
    yield view
    subprocess.run(["umount", "-l", str(view)], check=True)


@pytest.mark.parametrize("leftover", ["nothing", "wal", "wal and shm"])
def test_readers_work_on_a_read_only_mount_and_writers_fail_cleanly(tmp_path, read_only_view, leftover):
    """A read-only copy of an index as a killed writer may leave it: its last add only in the
    -wal file (with or without the -shm file SQLite keeps beside it)."""
    index = tmp_path / "idx"
    if leftover != "nothing":
        subprocess.run([sys.executable, "-c", _LEAVE_WAL, str(index / "catalog.sqlite"), leftover], check=True)
    expected = state(index)
    assert state(read_only_view) == expected
    query = tmp_path / "q.txt"
    query.write_text("w1 w2 w3 " * 20)
    assert run("index", "query", read_only_view, query).exit_code == 0
    batch = write(tmp_path / "new.jsonl", make_records(8, 50, prefix="new-"))
    for argv in (
        ["index", "add", read_only_view, batch],
        ["index", "compact", read_only_view],
        ["index", "add", read_only_view, batch, "-o", tmp_path / "new-clusters.jsonl"],
    ):
        assert_failed_cleanly(run(*argv))
        assert state(read_only_view) == expected
    inside = run("index", "create", read_only_view / "inner", "-k", 3, "--from", batch)
    assert inside.exit_code == 2 and "inside the index" in inside.stderr  # refused before it is tried
    assert not (tmp_path / "new-clusters.jsonl").exists()


# A killed writer: its last transaction is in the -wal file only (no checkpoint), and the
# process ends without closing the catalog.
_LEAVE_WAL = """
import os, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA wal_autocheckpoint = 0")
connection.execute("INSERT INTO adds VALUES (999, 'x', '[]', 0, 0)")
if sys.argv[2] == "wal":
    os.unlink(sys.argv[1] + "-shm")
os._exit(0)
"""


@pytest.mark.skipif(not SIMDEDUP.exists(), reason="console script not installed")
def test_a_real_process_under_ulimit_f(tmp_path):
    """The shell's ``ulimit -f``: one line and exit 1 from the installed command, no signal."""
    base_index(random.Random(3), tmp_path / "idx", tmp_path)
    before = state(tmp_path / "idx")
    write(tmp_path / "new.jsonl", make_records(4, 300, prefix="new-"))
    result = subprocess.run(
        ["bash", "-c", f"ulimit -f 8; exec {SIMDEDUP} index add idx new.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        env={**os.environ, "SIMDEDUP_LOAD_PLUGINS": ""},
    )
    assert result.returncode == 1, result.stderr
    assert len(result.stderr.decode().strip().splitlines()) == 1 and b"idx" in result.stderr
    assert state(tmp_path / "idx") == before
