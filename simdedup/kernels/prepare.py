"""Make every cache file a run may need (:mod:`simdedup.cache`): the machine code of each kernel
(:data:`~simdedup.kernels.load.KERNELS`) and the Unicode tables of the fast path, the exact
sets and the span units, in the cache folder beside the package.

``pip install .`` runs this while it builds the wheel (``setup.py``), so that the first command
after the install loads kernels instead of compiling them for a minute; ``python -m
simdedup.kernels.prepare`` does it for an installed copy (a wheel built on another machine,
whose machine code this CPU cannot use). Only numpy, numba, llvmlite, xxhash and click are imported.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable


def prepare(say: Callable[[str], None] = print, processes: int | None = None) -> int:
    """Compile each kernel not in the cache and make the tables, in ``processes`` processes (one
    per core, at most 4: each compilation is one thread); the number of failures, each said in one
    line (the first run then makes what is missing)."""
    from .load import KERNELS

    steps = [("kernel", name) for name in KERNELS] + [("table", name) for name in _TABLES]
    processes = processes or min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    failures = 0
    # an executor, not a Pool: a compiler that crashes its process fails its step, never hangs the build
    with ProcessPoolExecutor(processes, mp_context=context) as executor:
        for (kind, name), done in zip(steps, [executor.submit(_step, step) for step in steps]):
            try:
                line, ok = done.result()
            except BrokenProcessPool:
                line, ok = f"simdedup: {kind} {name}: not prepared (its process ended)", False
            failures += not ok
            say(line)
    return failures


def _step(step: tuple[str, str]) -> tuple[str, bool]:
    """Make one kernel's machine code or one table: the line that says so, and whether it was made."""
    from . import load

    load._said = True  # the COMPILING line is for a command's user, who did not ask for this
    kind, name = step
    started = time.monotonic()
    try:
        load._load_code(name) if kind == "kernel" else _TABLES[name]()
    except Exception as exc:  # a kernel this numba cannot compile is compiled (or not) at run time
        return f"simdedup: {kind} {name}: not prepared ({type(exc).__name__}: {exc})", False
    return f"simdedup: {kind} {name}: {time.monotonic() - started:.1f} s", True


def _unicode_tables() -> None:
    from .fastpath import unicode_tables

    unicode_tables()


def _exact_table() -> None:
    from ..similarity import DEFAULT_FOLDING, _tables

    _tables(DEFAULT_FOLDING)


def _unit_table() -> None:
    from .units import unit_table

    unit_table()


_TABLES = {"unicode": _unicode_tables, "exact": _exact_table, "units": _unit_table}

if __name__ == "__main__":
    sys.exit(1 if prepare() else 0)
