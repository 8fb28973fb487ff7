"""Caches are untrusted input: whatever happened to a file of the compiled-kernel cache or of a
stages work directory (cut short, bytes flipped, emptied, another file of it copied over it),
the next run warns, makes it again, and gives the output of an undamaged run, never a signal.

The damage is seeded. ``SIMDEDUP_FUZZ=1`` damages every file of the kernel cache in every way
instead of a sample (each costs a kernel compilation: seconds)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from helpers import REPO, words, write
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup import cache
from simdedup.kernels import load

DAMAGES = ("truncate", "flip", "empty", "swap")
FUZZ = bool(os.environ.get("SIMDEDUP_FUZZ"))


def damage(path: Path, how: str, rng: random.Random, others: list[Path]) -> None:
    """``path`` cut at a random offset, with random bits flipped, emptied, or replaced by one of
    ``others``."""
    data = path.read_bytes()
    if how == "truncate":
        data = data[: rng.randrange(max(1, len(data)))]
    elif how == "flip":
        changed = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            position = rng.randrange(len(changed))
            changed[position] ^= 1 << rng.randrange(8)
        data = bytes(changed)
    elif how == "empty":
        data = b""
    else:
        data = rng.choice([o for o in others if o != path]).read_bytes()
    path.write_bytes(data)


@settings(max_examples=100, deadline=None)
@given(payload=st.binary(min_size=1, max_size=256), how=st.sampled_from(DAMAGES), seed=st.integers(0, 2**32))
def test_what_the_cache_gives_back_is_what_was_kept_or_nothing(payload, how, seed):
    """Through the cache's own functions, under names no run uses (removed afterwards)."""
    name, other = f"hostile-test-{uuid.uuid4().hex}", f"hostile-test-{uuid.uuid4().hex}"
    cache.write(name, payload)
    cache.write(other, payload[::-1] + b"x")
    stored = [folder / n for n in (name, other) for folder in cache.cache_dirs() if (folder / n).exists()]
    try:
        damage(stored[0], how, random.Random(seed), stored[1:])
        assert cache.read(name) in (None, payload)
    finally:
        for path in stored:
            path.unlink()


def simdedup(package: Path, xdg: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package), "XDG_CACHE_HOME": str(xdg), "SIMDEDUP_LOAD_PLUGINS": ""}
    env.pop("SIMDEDUP_FASTPATH", None)
    # run from the package's folder: ``-m`` imports from the working directory first
    return subprocess.run(
        [sys.executable, "-m", "simdedup", *map(str, args)], capture_output=True, env=env, cwd=package, timeout=600
    )


@pytest.fixture(scope="module")
def kernel_run(tmp_path_factory):
    """A copy of the package (its cache filled from the real one, which is never touched, with
    the machine code of this source only), a corpus large enough for the compiled kernels, and the
    undamaged run's output."""
    root = tmp_path_factory.mktemp("caches")
    for i in range(4):  # over the half megabyte after which the compiled kernels load
        write(root / f"corpus/{i}.txt", words(i // 2, 150000) + (" tail" if i % 2 else ""))
    args = ["dedup", "-j", "1", root / "corpus"]
    # The real cache first: on a new clone the kernels are compiled once, there, not once
    # in the copy and again for the tests after this one.
    assert simdedup(REPO, root / "xdg", *args).returncode == 0
    package = root / "package"
    shutil.copytree(REPO / "simdedup", package / "simdedup", ignore=shutil.ignore_patterns("__pycache__"))
    (kept,) = [folder for folder in cache.cache_dirs() if "__pycache__" in folder.parts]
    copy = package / "simdedup" / kept.relative_to(REPO / "simdedup")
    copy.mkdir(parents=True)
    current = {load.cache_name(name) for name in load.KERNELS}
    for folder in cache.cache_dirs():
        for path in folder.glob("*") if folder.is_dir() else ():
            stale = path.suffix == ".o" and path.name not in current  # of an older source: never read
            if not path.name.startswith((".", "hostile-test-")) and not stale and not (copy / path.name).exists():
                shutil.copy(path, copy / path.name)
    for path in copy.iterdir():  # read by the run below: its access time moves (relatime)
        os.utime(path, (0, path.stat().st_mtime))
    first = simdedup(package, root / "xdg", *args)
    assert first.returncode == 0, first.stderr
    kept_files = [p for p in copy.iterdir() if not p.name.startswith(".")]
    # Damage only what the run reads (other kernels, other tables' files are never opened);
    # on a file system that keeps no access times, every file.
    files = sorted([p for p in kept_files if p.stat().st_atime > 0] or kept_files)
    assert any(p.name.startswith("fastpath-") for p in files)
    return package, root / "xdg", args, first.stdout, files


def kernel_damages():
    """(seed, which file, how): every file in every way with SIMDEDUP_FUZZ, else the issue's
    example (the fast path's machine code cut short) and one seeded other."""
    if FUZZ:
        return [(seed, index, how) for seed, how in enumerate(DAMAGES) for index in range(32)]
    return [(0, "fastpath", "truncate"), (1, None, None)]


@pytest.mark.parametrize("seed,which,how", kernel_damages())
def test_a_damaged_kernel_cache_file_is_made_again(kernel_run, seed, which, how):
    package, xdg, args, expected, files = kernel_run
    rng = random.Random(seed)
    if isinstance(which, int):
        if which >= len(files):
            pytest.skip("fewer cache files")
        target = files[which]
    elif which is None:
        target = rng.choice(files)
    else:
        (target,) = [p for p in files if p.name.startswith(which)]
    saved = target.read_bytes()
    damage(target, how or rng.choice(DAMAGES), rng, files)
    try:
        again = simdedup(package, xdg, *args)
        assert again.returncode == 0, again.stderr  # not -11, SIGSEGV
        assert again.stdout == expected
        if target.read_bytes() != saved:  # not damaged in a way that left it whole
            assert str(target).encode() in again.stderr or target.read_bytes() == saved
    finally:
        target.write_bytes(saved)


def test_a_damaged_work_directory_file_is_made_again(tmp_path):
    """Files of a stages work directory in turn (a seeded three, or all with SIMDEDUP_FUZZ),
    damaged in a seeded way, then the run again with the same --work-dir: the same output."""
    for i in range(4):
        write(tmp_path / f"corpus/{i}.txt", words(i // 2, 300) + (" tail" if i % 2 else ""))
    work = tmp_path / "work"
    args = ["dedup", "--engine", "stages", "-j", "1", "-k", "3", "--work-dir", work, tmp_path / "corpus"]
    first = simdedup(REPO, tmp_path / "xdg", *args)
    assert first.returncode == 0, first.stderr
    files = sorted(p for p in work.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert len(files) > 4
    rng = random.Random(3)
    for target in files if FUZZ else rng.sample(files, 3):
        damage(target, rng.choice(DAMAGES), rng, files)
        again = simdedup(REPO, tmp_path / "xdg", *args)
        assert again.returncode == 0, (target, again.stderr)
        assert again.stdout == first.stdout, target
