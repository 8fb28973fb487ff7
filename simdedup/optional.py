"""The packages of the extras (``pip install 'simdedup[EXTRA]'``): every import of one goes
through :func:`need`, which turns its absence into :class:`~simdedup.errors.MissingPackage`, one
line naming the extra to install (exit status 1). The CLI gives the same line for an import of
one of them that slipped past :func:`need` (:func:`missing`), so no plain install ever ends in a
traceback or a report of a bug for want of an extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingPackage

#: the top-level module of each optional package, and the extra that installs it
EXTRAS = {
    "matplotlib": "plot",
    "pyarrow": "parquet",
    "zstandard": "zstd",
    "rjieba": "zh-fast",
    "opencc": "zh-fold",
    "warcio": "warc",
    "dask": "dask",
    "distributed": "dask",
    "s3fs": "s3",
    "gcsfs": "gcs",
    "adlfs": "azure",
    "aiohttp": "http",
    "fsspec": "http",  # every URL extra brings it; http is the one that brings nothing else
}


def install_hint(module: str) -> str:
    """``pip install 'simdedup[EXTRA]'`` for the package of ``module`` (``pip install PACKAGE``
    for one of no extra)."""
    top = module.split(".")[0]
    extra = EXTRAS.get(top)
    return f"pip install 'simdedup[{extra}]'" if extra else f"pip install {top}"


def need(module: str, purpose: str) -> ModuleType:
    """``import module``, for ``purpose`` (what the user asked for: ``--engine dask``).

    Raises:
        MissingPackage: it (or a package it needs) is not installed; the message names the extra.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing(exc, purpose, module) from None


def missing(exc: ImportError, purpose: str, module: str | None = None) -> MissingPackage:
    """The one-line error for ``exc``, met doing ``purpose``: the package that is missing and the
    extra that brings it (the extra of ``module``, what was asked for, when the missing package is
    one of its own dependencies)."""
    absent = (exc.name or module or "").split(".")[0]
    asked = (module or absent).split(".")[0]
    extra_of = asked if asked in EXTRAS else absent
    return MissingPackage(f"{purpose} needs {absent or asked}: {install_hint(extra_of)}")


def optional_module(exc: BaseException) -> bool:
    """Whether ``exc`` says that a package of an extra is not installed."""
    return isinstance(exc, ImportError) and (exc.name or "").split(".")[0] in EXTRAS
