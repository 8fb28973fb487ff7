"""The one place where numbers from users and records meet what the machine can do.

Every number that sizes memory or work (an option, a tokenizer option, a field of a record or
of an index header) is checked before anything is allocated: options have ranges shown in
``--help`` (the constants here), and an allocation a number asks for is held against the
memory this process may use (:func:`check_memory`), so that the answer is a one-line error,
never ``MemoryError``.
"""

from __future__ import annotations

import math
from typing import Any

import click

from .errors import UsageError

#: the largest shingle, in tokens: each shingle is a string of that many tokens
MAX_SHINGLE = 1024
#: the largest count of keywords (--topk), sentences (--sentences), features listed (explain --top)
MAX_COUNT = 1 << 16
#: the most worker processes (-j, --local): each imports numpy and holds a batch
MAX_JOBS = 512
#: the largest byte count an option takes (--min-bytes, --max-line-bytes)
MAX_BYTES = 1 << 62
#: the largest count that is only compared with counts of a corpus (--min-features)
MAX_COMPARED = (1 << 63) - 1
#: the largest --bloom capacity (its bits are also checked against memory)
MAX_BLOOM = 1 << 50
#: the largest sketch, in bytes (bins)
MAX_SKETCH_BYTES = 4096


def memory_limit() -> int:
    """Bytes this process may hope to allocate: the physical memory, or the address-space
    limit (``ulimit -v``) where that is lower."""
    import os
    import resource

    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = MAX_BYTES
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return physical if soft == resource.RLIM_INFINITY else min(physical, soft)


def check_memory(size: float, what: str, error: type[Exception] = UsageError) -> None:
    """Raise ``error`` when ``what`` would need ``size`` bytes, more than :func:`memory_limit`.

    ``what`` starts the message: ``FILE:LINE: ...`` for a record, an option's name for an option.
    """
    limit = memory_limit()
    if not size <= limit:  # NaN too
        raise error(f"{what} needs {human_bytes(size)} of memory; this process may use {human_bytes(limit)}")


def human_bytes(size: float) -> str:
    if not math.isfinite(size):
        return str(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that also refuses NaN, which every comparison of click's lets through."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number
