"""A work dir copied or moved (``cp -a``, rsync) is a work dir of its own: its markers name
its files relative to it, so a rerun on the copy checks and reads the copy's files. A part
damaged, cut, removed or swapped in the copy is found by its marker's digest and made again
(a one-line warning each); the output is the one a fresh run gives, never the damage."""

from __future__ import annotations

import os
import random
import shutil

import pytest
from click.testing import CliRunner
from helpers import words

from simdedup.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A corpus with near-duplicates, a finished staged dedup of it, and the fresh output."""
    root = tmp_path_factory.mktemp("copies")
    corpus = root / "corpus"
    corpus.mkdir()
    rng = random.Random(3)
    bases = [words(rng.randrange(10**6), 120) for _ in range(8)]
    for i in range(40):
        text = bases[i % 8].split()
        text[rng.randrange(len(text))] = "edit"
        (corpus / f"doc{i:02d}.txt").write_text(" ".join(text))
    args = ["dedup", "--engine", "stages", "-j", 2, corpus]
    result = invoke(*args, "--work-dir", root / "work")
    assert result.exit_code == 0 and result.stdout, result.output
    return root, args, result.stdout


def stored_parts(work):
    """The files tasks wrote (not the markers, not the manifest), by folder."""
    found = {}
    for folder, _, names in os.walk(work):
        relative = os.path.relpath(folder, work)
        if relative.split(os.sep)[0] == "done" or relative == ".":
            continue
        found[relative] = sorted(os.path.join(folder, name) for name in names)
    return found


def test_a_copy_reuses_every_task_and_reads_its_own_files(first_run, tmp_path):
    root, args, expected = first_run
    copy = tmp_path / "copy"
    shutil.copytree(root / "work", copy, symlinks=True)
    result = invoke(*args, "--work-dir", copy)
    assert result.exit_code == 0 and result.stdout == expected
    stages = [line for line in result.stderr.splitlines() if "tasks" in line]
    assert stages and all("done before" in line for line in stages), result.stderr
    assert "warning" not in result.stderr


@pytest.mark.parametrize("seed", range(6))
def test_damage_in_a_copy_is_made_again_not_read(first_run, tmp_path, seed):
    """The original stays intact beside the copy (which the markers once named)."""
    rng = random.Random(seed)
    root, args, expected = first_run
    copy = tmp_path / "copy"
    shutil.copytree(root / "work", copy, symlinks=True)
    folders = {k: v for k, v in stored_parts(copy).items() if v}
    damaged = []
    for _ in range(rng.randint(1, 3)):
        folder = rng.choice(sorted(folders))
        files = folders[folder]
        kind = rng.choice(["flip", "cut", "remove", "swap"] if len(files) > 1 else ["flip", "cut", "remove"])
        path = rng.choice(files)
        if not os.path.exists(path):
            continue
        if kind == "swap":
            other = rng.choice([f for f in files if f != path and os.path.exists(f)] or [path])
            a, b = open(path, "rb").read(), open(other, "rb").read()
            if a == b:
                continue
            open(path, "wb").write(b)
            open(other, "wb").write(a)
            damaged += [path, other]
            continue
        data = bytearray(open(path, "rb").read())
        if kind == "flip" and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            open(path, "wb").write(bytes(data))
        elif kind == "cut":
            open(path, "wb").write(bytes(data[: rng.randrange(len(data) or 1)]))
        else:
            os.unlink(path)
        damaged.append(path)
    result = invoke(*args, "--work-dir", copy)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert all("damaged; task" in line and str(copy) in line for line in warnings), warnings
    assert warnings or not damaged  # each damaged part a task needs is said, and made again
    # the original, intact, was never the one read: it is unchanged and still whole
    again = invoke(*args, "--work-dir", root / "work")
    assert again.exit_code == 0 and again.stdout == expected and "warning" not in again.stderr


def test_markers_name_no_directory_of_their_own(first_run):
    root, _, _ = first_run
    work = root / "work"
    for folder, _, names in os.walk(work / "done"):
        for name in names:
            text = open(os.path.join(folder, name), encoding="utf-8").read()
            assert str(work) not in text, name
