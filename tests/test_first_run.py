"""The first run on a machine (issue 43): a kernel that must be compiled is announced on stderr
at once, and its compilation is left out of the progress bar's rate. (``pip install .`` compiles
them beforehand: setup.py, :mod:`simdedup.kernels.prepare`.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdedup.kernels import load

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _seconds(command: list[str], environment: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(command, capture_output=True, env=environment, check=True)
    return time.monotonic() - started


@pytest.mark.slow  # compiles, or starts simdedup three times: 5-15 s on a busy machine
def test_a_run_that_compiles_says_so_within_a_second(tmp_path):
    environment = {**os.environ, "SIMDEDUP_CACHE_DIR": str(tmp_path / "cache")}  # empty: all to compile
    simdedup = [sys.executable, "-m", "simdedup"]
    # what a command that compiles nothing takes to start here (the machine may be busy)
    start_up = min(_seconds([*simdedup, "tokenizers"], environment) for _ in range(2))
    started = time.monotonic()
    run = subprocess.Popen(
        [*simdedup, "fingerprint", str(EXAMPLES / "en"), str(EXAMPLES / "zh")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment,
        text=True,
    )
    try:
        first = run.stderr.readline().rstrip("\n")
        said_after = time.monotonic() - started
        made = [path.name for path in (tmp_path / "cache").rglob("*.o")]
    finally:
        run.terminate()
        run.wait()
    assert first == load.COMPILING
    assert not made  # said before the first kernel was ready
    assert said_after - start_up < 1.0, (said_after, start_up)


@pytest.mark.slow  # compiles, or starts simdedup three times: 5-15 s on a busy machine
def test_a_compilation_is_said_once_and_told_to_the_listeners(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SIMDEDUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(load, "_said", False)
    monkeypatch.setattr(load, "_code", {})  # the process's loaded kernels: none, so both are compiled
    told = []
    monkeypatch.setattr(load, "compile_listeners", [lambda: told.append(len(list(tmp_path.rglob("*.o"))))])
    load._load_code("cross")
    load._load_code("pairs")
    assert capsys.readouterr().err.splitlines() == [load.COMPILING]
    assert told == [0, 1]  # after each compilation, before its machine code is kept
    assert len(list(tmp_path.rglob("*.o"))) == 2


@pytest.mark.slow  # compiles, or starts simdedup three times: 5-15 s on a busy machine
def test_prepare_makes_the_files_a_run_then_loads_without_compiling(tmp_path, monkeypatch):
    """What ``pip install .`` runs (setup.py): a run afterwards compiles nothing and says nothing."""
    from simdedup.kernels.prepare import _TABLES, prepare

    monkeypatch.setenv("SIMDEDUP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(load, "KERNELS", {name: load.KERNELS[name] for name in ("cross", "pairs")})
    lines: list[str] = []
    assert prepare(lines.append, processes=2) == 0
    assert [line.split(":")[1] for line in lines] == [" kernel cross", " kernel pairs"] + [
        f" table {t}" for t in _TABLES
    ]
    made = {path.name for path in (tmp_path / "cache").rglob("*") if path.is_file()}
    assert {load.cache_name("cross"), load.cache_name("pairs")} <= made and len(made) == 2 + len(_TABLES)
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from simdedup.kernels.pairs import CrossKernel, PairKernel\n"
            "assert CrossKernel.loaded() and PairKernel.loaded()\n"
            "import sys; assert 'numba' not in sys.modules",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "SIMDEDUP_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert run.returncode == 0 and run.stderr == "", run.stderr


def test_the_progress_bar_leaves_a_compilation_out_of_its_rate(monkeypatch):
    """30 s compiling the first batch's kernel, then 10 documents in 1 s: 10 a second, not 10 in 31 s."""
    from simdedup.cli_options import progress_bar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    clock = [0.0]
    with progress_bar(False, 1000, "doc") as bar:
        assert bar.unpause in load.compile_listeners
        bar._time = lambda: clock[0]
        bar.start_t = bar.last_print_t = 0.0
        clock[0] = 30.0  # the compilation ends
        for listener in load.compile_listeners:
            listener()
        clock[0] = 31.0
        bar.update(10)
        assert bar.format_dict["elapsed"] == 1.0
        assert bar.format_dict["rate"] == pytest.approx(10.0)
    assert bar.unpause not in load.compile_listeners
