"""``--engine stages``: the stages of a Dask run on ``-j`` worker processes of this machine, with
no Dask: the one-process output byte for byte, and a rerun in the same work directory does only
the tasks an interrupted run left undone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed_corpus import write_corpus

from simdedup.cli import cli


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
        f"{tmp_path / 'out'}/",  # DIR/: the part files themselves
        corpus,
    )
    assert done.returncode == 0, done.stderr
    assert b"".join(p.read_bytes() for p in sorted((tmp_path / "out").iterdir())) == one_process


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("small")
    write_corpus(folder, 600, seed=5, files=3)
    return folder


# every command an engine runs, in each output form: -o FILE is that file on every engine
OUTPUTS = {
    "fingerprint": ["fingerprint", "--id-field", "id"],
    "fingerprint binary": ["fingerprint", "--id-field", "id", "--format", "binary"],
    "dedup": ["dedup", "--id-field", "id", "-k", 10],
    "dedup members": ["dedup", "--id-field", "id", "--format", "members", "--singletons", "--linkage", "single"],
    "cluster": ["cluster", "-k", 8, "--singletons"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", OUTPUTS)
def test_o_file_is_the_file_the_local_engine_writes(small_corpus, tmp_path, name):
    """-o FILE is a regular file, byte for byte the local engine's, replaced only with --force,
    with no temporary file left beside it (it was issue 43: a directory of part files)."""
    command, *options = OUTPUTS[name]
    inputs = [small_corpus]
    if command == "cluster":
        inputs = [tmp_path / "fp.sdfp"]
        assert (
            simdedup("fingerprint", "--id-field", "id", "--format", "binary", "-o", inputs[0], small_corpus).returncode
            == 0
        )
    local = tmp_path / "local" / "out"
    staged = tmp_path / "staged" / "out"
    for folder in (local.parent, staged.parent):
        folder.mkdir()
    assert simdedup(command, *options, "-o", local, *inputs).returncode == 0
    engine = ["--engine", "stages", "--work-dir", tmp_path / "work"] + (["-j", 2] if command != "cluster" else [])
    done = simdedup(command, *engine, *options, "-o", staged, *inputs)
    assert done.returncode == 0, done.stderr
    assert staged.is_file() and staged.read_bytes() == local.read_bytes() and local.stat().st_size > 0
    assert done.stdout == b""
    again = simdedup(command, *engine, *options, "-o", staged, *inputs)
    assert again.returncode == 2 and b"exists; use --force" in again.stderr
    forced = simdedup(command, *engine, *options, "--force", "-o", staged, *inputs)
    assert forced.returncode == 0, forced.stderr
    assert staged.read_bytes() == local.read_bytes()
    assert [p.name for p in staged.parent.iterdir()] == ["out"]


def test_o_file_of_the_examples_is_a_file(tmp_path):
    """The quick case of the test above (issue 43: -o clusters.jsonl became a directory)."""
    local, staged = tmp_path / "local.jsonl", tmp_path / "clusters.jsonl"
    assert simdedup("dedup", "--silent", "-o", local, "examples").returncode == 0
    done = simdedup("dedup", "--silent", "--engine", "stages", "-j", 1, "-o", staged, "examples")
    assert done.returncode == 0, done.stderr
    assert staged.is_file() and staged.read_bytes() == local.read_bytes() and local.read_bytes().count(b"\n") >= 3


def test_o_file_never_replaces_an_input_the_walk_finds(small_corpus, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in small_corpus.iterdir():
        (corpus / path.name).write_bytes(path.read_bytes())
    before = {p.name: p.read_bytes() for p in corpus.iterdir()}
    victim = corpus / sorted(before)[1]
    for engine in (["--engine", "stages", "-j", 2], []):
        done = simdedup("dedup", *engine, "--id-field", "id", "--force", "-o", victim, corpus)
        assert done.returncode == 2 and b"is an input" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in corpus.iterdir()} == before


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


@pytest.mark.parametrize("command", ["fingerprint", "cluster", "dedup"])
@pytest.mark.parametrize(
    "engine, option",
    [
        ("local", ["--scheduler", "tcp://127.0.0.1:1"]),
        ("stages", ["--scheduler", "tcp://127.0.0.1:1"]),
        ("local", ["--local", "2"]),
        ("stages", ["--local", "2"]),
        ("local", ["--work-dir", "w"]),
    ],
)
def test_an_engine_option_of_another_engine_is_refused_in_one_line(command, engine, option, tmp_path):
    """Nothing an engine does not use is taken silently; a scheduler named in the environment
    (DASK_SCHEDULER_ADDRESS) is not an option given, and is left alone."""
    runner = CliRunner()
    done = runner.invoke(cli, [command, "--engine", engine, *option, str(tmp_path)])
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: ")
    quiet = runner.invoke(
        cli, ["cluster", str(tmp_path / "none.jsonl")], env={"DASK_SCHEDULER_ADDRESS": "tcp://127.0.0.1:1"}
    )
    assert "scheduler" not in quiet.stderr
