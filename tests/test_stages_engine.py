"""``--engine stages``: the stages of a Dask run on ``-j`` worker processes of this machine, with
no Dask: the one-process output byte for byte, and a rerun in the same work directory does only
the tasks an interrupted run left undone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from distributed_corpus import write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    write_corpus(folder, 6_000, seed=11, files=3)
    return folder


def simdedup(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdedup", *map(str, args)], capture_output=True)


@pytest.fixture(scope="module")
def one_process(corpus) -> bytes:
    done = simdedup("dedup", "-k", 10, "--id-field", "id", "--linkage", "complete", corpus)
    assert done.returncode == 0 and done.stdout.count(b"\n") > 500
    return done.stdout


def test_dedup_on_two_processes_is_the_one_process_output(corpus, one_process, tmp_path):
    done = simdedup(
        "dedup",
        "--engine",
        "stages",
        "-j",
        2,
        "--work-dir",
        tmp_path / "work",
        "-k",
        10,
        "--id-field",
        "id",
        "--linkage",
        "complete",
        "-o",
        tmp_path / "out",
        corpus,
    )
    assert done.returncode == 0, done.stderr
    assert b"".join(p.read_bytes() for p in sorted((tmp_path / "out").iterdir())) == one_process


def test_a_rerun_does_only_the_tasks_left_undone(corpus, one_process, tmp_path):
    """A run stopped part way leaves the markers of the tasks it finished; the rerun does the
    others, and says how many it found done."""
    work = tmp_path / "work"
    command = [
        "dedup",
        "--engine",
        "stages",
        "-j",
        2,
        "--work-dir",
        work,
        "-k",
        10,
        "--id-field",
        "id",
        "--linkage",
        "complete",
        corpus,
    ]
    assert simdedup(*command).stdout == one_process
    pairs = sorted((work / "done" / "pairs").iterdir())
    assert len(pairs) > 4
    for marker in pairs[::2] + [work / "done" / "records", work / "done" / "output"]:  # as if never done
        if marker.is_dir():
            for inner in marker.iterdir():
                inner.unlink()
        else:
            marker.unlink()
    rerun = simdedup(*command)
    assert rerun.returncode == 0, rerun.stderr
    assert (
        f"pairs: {len(pairs)}/{len(pairs)} tasks ({len(pairs) - len(pairs[::2])} done before)".encode() in rerun.stderr
    )
    assert rerun.stdout == one_process


def test_cluster_of_fingerprint_files_is_the_one_process_output(corpus, tmp_path):
    fingerprints = tmp_path / "fp.jsonl"
    assert simdedup("fingerprint", "--id-field", "id", "-o", fingerprints, corpus).returncode == 0
    single = simdedup("cluster", "-k", 8, fingerprints)
    staged = simdedup("cluster", "--engine", "stages", "--work-dir", tmp_path / "work", "-k", 8, fingerprints)
    assert staged.returncode == 0, staged.stderr
    assert staged.stdout == single.stdout and single.stdout.count(b"\n") > 500


def test_stages_take_jobs_not_a_local_cluster(tmp_path):
    done = simdedup("dedup", "--engine", "stages", "--local", 2, "-k", 6, "examples")
    assert done.returncode == 2 and b"--local goes with --engine dask (--engine stages takes -j)" in done.stderr
