"""The engines' bad environments are one line each: a work dir named by a URL no worker shares,
a file as a work dir, an unreachable scheduler (fast), Ctrl-C while a local cluster starts
(no worker's traceback), more local workers than cores (a note)."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from helpers import EXAMPLES

from simdedup.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


#: schemes fsspec knows that no worker shares (each process's own memory) or cannot write
UNSHARED = ["memory", "zip", "tar", "http", "https", "ftp", "github", "reference", "cached", "data", "sftp"]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("engine", ["stages", "dask"])
def test_a_work_dir_no_worker_shares_is_one_line(tmp_path, seed, engine):
    rng = random.Random(seed)
    scheme = rng.choice(UNSHARED + ["".join(rng.choice("abcxyz") for _ in range(rng.randint(2, 8)))])
    url = f"{scheme}://{rng.choice(['w', 'x/y', 'bucket/work', ''])}"
    for option in ("--work-dir", "-o"):
        args = ["dedup", "--engine", engine, "-k", 3, EXAMPLES / "en"]
        args += [option, url] + (["--work-dir", tmp_path / f"w{seed}"] if option == "-o" else [])
        result = invoke(*args)
        assert len(result.stderr.strip().splitlines()) == 1, result.output
        if option == "-o":  # one file, as the local engine writes it: refused where it cannot be written
            assert result.exit_code in (1, 2) and url in result.stderr, (url, result.output)
            continue
        assert result.exit_code == 1, (url, result.output)
        assert "a work directory is a local directory or a URL of s3" in result.stderr, result.output


@pytest.mark.parametrize("kind", ["file", "empty file", "/dev/null", "fifo"])
def test_a_file_as_work_dir_is_not_a_directory(tmp_path, kind):
    if kind == "/dev/null":
        path = "/dev/null"
    else:
        path = tmp_path / "notadir"
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.write_bytes(b"" if kind == "empty file" else b"data\n")
    result = invoke("dedup", "--engine", "stages", "-k", 3, "--work-dir", path, EXAMPLES / "en")
    assert result.exit_code == 1 and f"--work-dir {path} is not a directory" in result.stderr, result.output
    if kind != "/dev/null":
        assert os.path.lexists(path) and not os.path.isdir(path)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_line_within_seconds(tmp_path):
    pytest.importorskip("distributed")
    start = time.monotonic()
    result = invoke(
        "dedup", "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{_closed_port()}", "-k", 3, EXAMPLES / "en"
    )
    took = time.monotonic() - start
    assert result.exit_code == 1 and "cannot connect" in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and took < 15


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_ctrl_c_while_a_local_cluster_starts_is_one_line(tmp_path, seed):
    """SIGINT to the whole process group at a seeded moment of the start: the run ends with its
    own line; no worker prints a traceback."""
    pytest.importorskip("distributed")
    delay = random.Random(seed).uniform(1.0, 3.5)
    command = [sys.executable, "-m", "simdedup", "dedup", "--silent", "--engine", "dask", "--local", "2"]
    command += ["--work-dir", str(tmp_path / "w"), str(EXAMPLES / "en")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    text = err.decode()
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    if process.returncode != 0:  # it may have finished before the signal
        assert [line for line in text.splitlines() if line.strip()] in ([], ["Aborted!"]), text


@pytest.mark.slow
def test_more_local_workers_than_cores_is_a_note(tmp_path):
    pytest.importorskip("distributed")
    workers = (os.cpu_count() or 1) + 1
    result = invoke(
        "dedup", "--engine", "dask", "--local", workers, "-k", 3, "--work-dir", tmp_path / "w", EXAMPLES / "en"
    )
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if "note: --local" in line]
    assert notes == [
        f"simdedup: note: --local {workers} starts {workers} workers on {os.cpu_count()} cores; they share them"
    ]


@pytest.mark.parametrize("command", ["fingerprint", "dedup", "cluster"])
@pytest.mark.parametrize("output", ["IDX/out/", "IDX/out.jsonl", "W/", "W/out.jsonl", "W", "in/"])
def test_a_refused_output_leaves_no_work_dir(tmp_path, monkeypatch, command, output):
    """Every check of -o comes before the work dir is made: a refused run writes nothing, and
    the corrected run is not then refused for a work dir of other settings."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text((EXAMPLES / "en" / "lighthouses.txt").read_text())
    records = tmp_path / "records.jsonl"
    records.write_bytes(invoke("fingerprint", "--silent", "in").stdout_bytes)
    assert invoke("index", "create", "IDX", "-k", 3, "--from", records).exit_code == 0
    source = records if command == "cluster" else "in"
    done = invoke(command, "--engine", "stages", "--work-dir", "W", source, "-o", output)
    assert done.exit_code in (1, 2) and done.stderr.count("\n") == 1, done.output
    assert not (tmp_path / "W").exists()
    assert invoke(command, "--engine", "stages", "--work-dir", "W", source, "-o", "fine.jsonl").exit_code == 0
