"""No output, new index or work directory lands inside an index or a work directory: one
check (simdedup.owned) refuses each in one line (exit 2) and writes nothing, at any depth below
the state directory and through a link to it."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from click.testing import CliRunner
from helpers import EXAMPLES

from simdedup.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def tree(directory):
    return sorted(
        (os.path.relpath(os.path.join(folder, name), directory), os.path.getsize(os.path.join(folder, name)))
        for folder, _, names in os.walk(directory)
        for name in names
    )


@pytest.fixture(scope="module")
def owners(tmp_path_factory):
    """An index, an index whose creation did not finish, and a staged run's work directory."""
    root = tmp_path_factory.mktemp("owners")
    fingerprints = root / "fp.jsonl"
    assert invoke("fingerprint", "--silent", EXAMPLES / "en", "-o", fingerprints).exit_code == 0
    assert invoke("index", "create", root / "idx", "-k", 3, "--from", fingerprints).exit_code == 0
    (root / "unfinished").mkdir()
    (root / "unfinished" / "creating.unfinished").write_bytes(b"")
    result = invoke(
        "cluster", "--engine", "stages", "-k", 3, "--work-dir", root / "work", fingerprints, "-o", root / "p"
    )
    assert result.exit_code == 0, result.output
    return root, fingerprints


def writers(fingerprints, target):
    """Every way of writing a file or directory at ``target``."""
    documents = EXAMPLES / "en"
    return [
        ("fingerprint", "--silent", documents, "-o", target),
        ("cluster", fingerprints, "-o", target),
        ("dedup", "--silent", documents, "-o", target),
        ("dedup", "--silent", documents, "--unique-out", target),
        ("dedup", "--silent", documents, "--unique-out", f"{target}.jsonl"),
        ("dedup", "--silent", documents, "--report", f"{target}.html"),
        ("stats", fingerprints, "--plot", f"{target}.png"),
        ("index", "create", target, "-k", 3),
        ("cluster", "--engine", "stages", "-k", 3, fingerprints, "--work-dir", target),
        ("cluster", "--engine", "stages", "-k", 3, fingerprints, "-o", target),
    ]


@pytest.mark.parametrize("seed", range(6))
def test_nothing_is_written_inside_an_index_or_a_work_dir(owners, tmp_path, seed):
    rng = random.Random(seed)
    root, fingerprints = owners
    owner = root / rng.choice(["idx", "unfinished", "work"])
    if rng.random() < 0.5:  # through a link to it
        link = tmp_path / "link"
        link.symlink_to(owner)
        owner_named = link
    else:
        owner_named = owner
    depth = rng.randrange(0, 3)
    parts = [rng.choice(["segments", "done", "sub", "x y", "é"]) for _ in range(depth)]
    target = owner_named.joinpath(*parts, f"out{seed}")
    before = tree(owner)
    for command in writers(fingerprints, target):
        result = invoke(*command)
        if command[0] == "stats" and "matplotlib" in result.output:
            continue  # the plot extra is not installed: refused before any check
        assert result.exit_code == 2 and "simdedup's own" in result.output, (command, result.output)
        assert len(result.stderr.strip().splitlines()) == 1, result.output
        assert tree(owner) == before, command


def test_stdout_redirected_into_an_index_is_refused(owners):
    root, fingerprints = owners
    target = root / "idx" / "segments" / "redirected.jsonl"
    with open(target, "wb") as out:
        result = subprocess.run(
            [sys.executable, "-m", "simdedup", "cluster", str(fingerprints)], stdout=out, stderr=subprocess.PIPE
        )
    assert result.returncode == 2 and b"stdout writes into a file of the index" in result.stderr
    assert target.read_bytes() == b""
    target.unlink()


def test_a_work_dir_is_reused_and_outputs_beside_state_dirs_are_fine(owners, tmp_path):
    """The work dir itself is the resume; a sibling of an index is not inside it."""
    root, fingerprints = owners
    again = invoke(
        "cluster", "--engine", "stages", "-k", 3, "--work-dir", root / "work", fingerprints, "-o", root / "p2"
    )
    assert again.exit_code == 0, again.output
    assert invoke("cluster", fingerprints, "-o", root / "idx-clusters.jsonl").exit_code == 0
    assert invoke("index", "create", tmp_path / "idx2", "-k", 3).exit_code == 0


def test_index_create_with_a_large_k_finishes(tmp_path, owners):
    """k = 12 once built C(14, 12) tables of few bits and never finished: tables are bounded."""
    _, fingerprints = owners
    result = invoke("index", "create", tmp_path / "k12", "-k", 12, "--from", fingerprints)
    assert result.exit_code == 0, result.output
    stats = invoke("index", "stats", "--json", tmp_path / "k12")
    assert '"tables":455' in stats.output
