"""Runs that start together on one new work dir: one claims it (a kernel lock, taken in one
step), the others are refused in one line, whatever their settings. A claim left by a run
that is gone is taken over with a note."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from helpers import EXAMPLES

from simdedup.cli import cli
from simdedup.engines.workdir import CLAIM


def command(work, k, linkage):
    return [sys.executable, "-m", "simdedup", "dedup", "--silent", "--engine", "stages", "-k", str(k)] + [
        "--linkage",
        linkage,
        "--work-dir",
        str(work),
        str(EXAMPLES / "en"),
    ]


def _claim_at_once(work, settings, delay, start, done, results):
    """A process that claims ``work`` right after the others are ready (``start``), and holds
    it until all have tried (``done``)."""
    from simdedup.engines.workdir import WorkDir, WorkDirError

    directory = WorkDir(str(work))
    start.wait()
    time.sleep(delay)
    try:
        directory.claim(settings)
        results.put("claimed")
    except WorkDirError as exc:
        results.put(str(exc))
    done.wait()


@pytest.mark.parametrize("seed", range(3))
def test_claims_at_the_same_moment_have_one_winner(tmp_path, seed):
    """Processes released by a barrier claim one new directory with seeded jitter of a few
    microseconds to a millisecond, round after round: one claims it, the others are refused."""
    import multiprocessing

    rng = random.Random(seed)
    context = multiprocessing.get_context("fork")
    for round_number in range(8):
        work = tmp_path / f"work{round_number}"
        count = rng.randint(2, 4)
        start, done, results = context.Barrier(count), context.Barrier(count + 1), context.Queue()
        processes = [
            context.Process(
                target=_claim_at_once,
                args=(work, {"k": rng.choice([3, 4])}, rng.uniform(0, 0.001), start, done, results),
            )
            for _ in range(count)
        ]
        for process in processes:
            process.start()
        outcomes = sorted(results.get(timeout=30) for _ in range(count))
        done.wait(timeout=30)
        for process in processes:
            process.join(timeout=30)
        assert outcomes.count("claimed") == 1, outcomes
        assert all("is in use by" in outcome for outcome in outcomes if outcome != "claimed"), outcomes


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_runs_starting_together_claim_a_new_work_dir_once(tmp_path, seed):
    rng = random.Random(seed)
    work = tmp_path / "work"
    runs = [(rng.choice([3, 4, 5]), rng.choice(["complete", "single", "star"])) for _ in range(rng.randint(2, 3))]
    processes = []
    for k, linkage in runs:
        time.sleep(rng.uniform(0, 0.05))
        processes.append(subprocess.Popen(command(work, k, linkage), stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outcomes = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read().decode()) for p in processes]
    winners = [i for i, (code, _, _) in enumerate(outcomes) if code == 0]
    assert len(winners) == 1, outcomes
    for code, out, err in outcomes:
        if code != 0:
            assert code == 1 and out == b"" and len(err.strip().splitlines()) == 1, err
            assert "is in use by pid" in err or "made with other settings" in err, err
    # the directory is the winner's alone: its rerun reuses it and gives what a fresh run gives
    k, linkage = runs[winners[0]]
    again = subprocess.run(command(work, k, linkage), capture_output=True)
    fresh = subprocess.run(command(tmp_path / "fresh", k, linkage), capture_output=True)
    assert again.returncode == 0 and again.stdout == fresh.stdout == outcomes[winners[0]][1]


def test_a_live_claim_is_refused_in_one_line_and_nothing_is_written(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, json, os, socket, sys, time\n"
            f"fd = os.open({str(work / CLAIM)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, json.dumps({'pid': os.getpid(), 'host': socket.gethostname(), 'since': 'now'}).encode())\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline() == b"held\n"
        result = CliRunner().invoke(cli, ["dedup", "--engine", "stages", "--work-dir", str(work), str(EXAMPLES / "en")])
        assert result.exit_code == 1 and f"is in use by pid {holder.pid}" in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1
        assert sorted(os.listdir(work)) == [CLAIM]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("seed", range(3))
def test_a_claim_left_by_a_run_that_is_gone_is_taken_over(tmp_path, seed):
    """The claim file names a process that has ended (killed before it let go): the next run
    takes the directory, says so in one line, and resumes."""
    rng = random.Random(seed)
    work = tmp_path / "work"
    args = ["dedup", "--silent", "--engine", "stages", "--work-dir", str(work), str(EXAMPLES / "en")]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(gone.stdout)
    (work / CLAIM).write_text(json.dumps({"pid": pid, "host": rng.choice(["here", "vm"]), "since": "earlier"}))
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0 and result.stdout == first.stdout
    notes = [line for line in result.stderr.splitlines() if "taken over" in line]
    assert len(notes) == 1 and f"pid {pid}" in notes[0]
    assert (work / CLAIM).read_text() == ""  # let go at the end


def test_the_library_lets_its_work_dir_go_after_each_run(tmp_path):
    """Runs one after another in one process (the Python API) each take the work dir."""
    import simdedup.engines as engines

    first = engines.dedup([str(EXAMPLES / "en")], client=None, work_dir=str(tmp_path / "w"), k=3)
    again = engines.dedup([str(EXAMPLES / "en")], client=None, work_dir=str(tmp_path / "w"), k=3)
    assert again.read() == first.read() and (tmp_path / "w" / CLAIM).read_text() == ""
