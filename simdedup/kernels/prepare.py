"""Make every cache file a run may need (:mod:`simdedup.cache`): the machine code of each kernel
(:data:`~simdedup.kernels.load.KERNELS`) and the Unicode tables of the fast path, the exact
sets and the span units, in the cache folder beside the package.

``pip install .`` runs this while it builds the wheel (``setup.py``), so that the first command
after the install loads kernels instead of compiling them for a minute; ``python -m
simdedup.kernels.prepare`` does it for an installed copy (a wheel built on another machine,
whose machine code this CPU cannot use). Only numpy, numba, llvmlite, xxhash and click are imported.
"""

from __future__ import annotations

import sys
import time


def prepare(say=print) -> int:  # noqa: ANN001 - print or a logger's method
    """Compile each kernel not in the cache and make the tables; the number of failures (each
    said in one line: the first run then makes what is missing)."""
    from . import load
    from .load import KERNELS, _load_code

    load._said = True  # the COMPILING line is for a command's user, who did not ask for this
    failures = 0
    steps = [(f"kernel {name}", _load_code, name) for name in KERNELS]
    steps += [("table unicode", _unicode_tables, None), ("table exact", _exact_table, None)]
    steps += [("table units", _unit_table, None)]
    for what, make, argument in steps:
        started = time.monotonic()
        try:
            make(argument)
        except Exception as exc:  # a kernel this numba cannot compile is compiled (or not) at run time
            failures += 1
            say(f"simdedup: {what}: not prepared ({type(exc).__name__}: {exc})")
            continue
        say(f"simdedup: {what}: {time.monotonic() - started:.1f} s")
    return failures


def _unicode_tables(_: None) -> None:
    from .fastpath import unicode_tables

    unicode_tables()


def _exact_table(_: None) -> None:
    from ..similarity import DEFAULT_FOLDING, _tables

    _tables(DEFAULT_FOLDING)


def _unit_table(_: None) -> None:
    from .units import unit_table

    unit_table()


if __name__ == "__main__":
    sys.exit(1 if prepare() else 0)
