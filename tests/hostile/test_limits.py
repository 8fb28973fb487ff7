"""The machine's limits are not bugs: under a limit on open files (``ulimit -n``) or on memory
(``ulimit -v``) a run either gives the output of an unlimited run or ends in one line, exit 1,
naming the limit: never a traceback, exit 70, a flood of log lines or a hang. A soft limit
below what the workers need is raised as far as the hard one allows.

The limits are drawn from a seeded generator (further seeds in ``make fuzz``); each run is a
real process started under them.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import FUZZ_ONLY, REPO, fuzz_folders

EXAMPLES = REPO / "examples"
COMMANDS = {
    "fingerprint -j 1": ["fingerprint", "-j", "1"],
    "fingerprint -j 2": ["fingerprint", "-j", "2"],
    "dedup -j 1": ["dedup", "-j", "1"],
    "dedup -j 2": ["dedup", "-j", "2"],
    "dedup --engine stages -j 2": ["dedup", "--engine", "stages", "-j", "2", "-k", "8"],
}
DASK = ["dedup", "--engine", "dask", "--local", "2", "-k", "8", "--silent"]
#: what a run whose kernels cannot load under a memory limit says as it verifies on sketches
SKETCH_FALLBACK = "the sketches verify instead"


def _run(args: list[str], cwd: Path, limits: dict[int, tuple[int, int]]) -> subprocess.CompletedProcess:
    def under_limits() -> None:
        for which, (soft, hard) in limits.items():
            resource.setrlimit(which, (soft, hard))

    return subprocess.run(
        [sys.executable, "-m", "simdedup", *args, str(EXAMPLES)],
        cwd=cwd,
        capture_output=True,
        preexec_fn=under_limits,
        timeout=120,
    )


def _check(name: str, result: subprocess.CompletedProcess, unlimited: bytes, limit: str) -> None:
    stderr = result.stderr.decode("utf-8", "replace")
    context = f"{name} under {limit}: exit {result.returncode}\n{stderr[-2000:]}"
    assert "Traceback" not in stderr and "a bug" not in stderr, context
    assert len(stderr.splitlines()) <= 12, context  # progress lines and one error, not a log
    if result.returncode == 0:
        assert result.stdout == unlimited or SKETCH_FALLBACK in stderr, context
    else:
        assert result.returncode == 1, context
        assert stderr.splitlines()[-1].startswith(("simdedup: error: ", "Error: ")), context
        assert any(word in stderr for word in ("open files", "memory", "thread", "did not start")), context


@pytest.fixture(scope="module")
def unlimited(tmp_path_factory) -> dict[str, bytes]:
    """Each command's output without limits."""
    cwd = tmp_path_factory.mktemp("unlimited")
    return {name: _run(args, cwd, {}).stdout for name, args in COMMANDS.items()}


def _limits_case(tmp_path: Path, seed: int, unlimited: dict[str, bytes]) -> None:
    rng = random.Random(seed)
    cases = []
    for name in COMMANDS:
        files = rng.choice([rng.randint(5, 40), rng.randint(40, 120)])
        cases.append((name, {resource.RLIMIT_NOFILE: (files, files)}, f"ulimit -n {files}"))
        memory = rng.randint(250, 1200) << 20
        cases.append((name, {resource.RLIMIT_AS: (memory, memory)}, f"ulimit -v {memory >> 10}"))
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda case: _run(COMMANDS[case[0]], tmp_path, case[1]), cases))
    for (name, _, limit), result in zip(cases, results):
        _check(name, result, unlimited[name], limit)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".simdedup-")]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_limit_gives_the_output_or_one_line(tmp_path, seed, unlimited):
    _limits_case(tmp_path, seed, unlimited)


def test_a_low_soft_limit_on_open_files_is_raised(tmp_path, unlimited):
    """``ulimit -Sn 12``, the hard limit as it was: every command, Dask's local cluster too,
    gives the unlimited run's output (Dask's, as every engine's, is that of ``dedup -j 1``)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 512:
        pytest.skip("the hard limit on open files is too low to raise the soft one")
    expected = {**unlimited, "dask": _run(["dedup", "-j", "1", "-k", "8"], tmp_path, {}).stdout}
    for name, args in {**COMMANDS, "dask": DASK}.items():
        if name == "dask":
            pytest.importorskip("distributed")
        limited = _run(args, tmp_path, {resource.RLIMIT_NOFILE: (12, hard)})
        assert limited.returncode == 0, (name, limited.stderr[-2000:])
        assert limited.stdout == expected[name], name


def test_dask_short_of_open_files_says_so_in_one_line(tmp_path):
    """Without the descriptors its workers need, a local cluster's start retried and logged
    without end (millions of lines at ``ulimit -n 16``); now it is refused before it starts."""
    pytest.importorskip("distributed")
    for files in (16, 48):
        result = _run(DASK, tmp_path, {resource.RLIMIT_NOFILE: (files, files)})
        _check("dask", result, b"", f"ulimit -n {files}")
        assert result.returncode == 1


@FUZZ_ONLY
def test_a_limit_gives_the_output_or_one_line_fuzzed(tmp_path, unlimited):
    for folder, seed in fuzz_folders(tmp_path):
        _limits_case(folder, seed, unlimited)
