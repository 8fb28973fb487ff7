"""The one place where numbers from users and records meet what the machine can do.

Every number that sizes memory or work (an option, a tokenizer option, a field of a record or
of an index header) is checked before anything is allocated: options have ranges shown in
``--help`` (the constants here), and an allocation a number asks for is held against the
memory this process may use (:func:`check_memory`), so that the answer is a one-line error,
never ``MemoryError``. Worker processes get the open files they need (:func:`ensure_open_files`),
and a limit reached all the same is named in one line (:func:`limit_reached`), never as a bug.
"""

from __future__ import annotations

import math
from typing import Any

import click

from .errors import SimdedupError, UsageError

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


#: descriptors a run may hold besides its workers': standard streams, the document being read,
#: the output and its temporary file, the kernel cache, the pool's selector
BASE_OPEN_FILES = 32


def ensure_open_files(needed: int, what: str) -> None:
    """Let this process open ``needed`` files at once: a soft limit (``ulimit -n``) below that is
    raised, as far as the hard limit allows (worker processes inherit it). Workers started
    without enough die one by one or, under Dask, retry and log without end.

    Raises:
        SimdedupError: the hard limit is lower than ``needed``.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise SimdedupError(
            f"{what} needs about {needed} open files; this process may open {hard} (ulimit -n): "
            "raise the limit or start fewer processes"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def limit_reached(exc: BaseException) -> str | None:
    """What an exception says when it is the machine's limit, not a bug: memory, open files,
    disk space, file size, threads; None otherwise."""
    import errno
    import resource

    code = getattr(exc, "errno", None)
    if isinstance(exc, MemoryError) or code == errno.ENOMEM:
        return "out of memory (try fewer -j processes, smaller --max-line-bytes, or a machine with more memory)"
    if code == errno.EMFILE:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return f"too many open files: this process may open {soft} (raise ulimit -n, or use fewer -j processes)"
    if code == errno.ENFILE:
        return "too many open files on this machine (its table of open files is full)"
    where = f": {exc.filename}" if isinstance(exc, OSError) and exc.filename else ""
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left on the device{where}"
    if code == errno.EFBIG:
        return f"a file grew past the size this process may write (ulimit -f){where}"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "cannot start another thread (a limit on memory or processes: ulimit -v, ulimit -u)"
    return None


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


#: the longest line of a record, cluster or gold file: far beyond any real one (a cluster of a
#: million members), far below what an endless line (/dev/zero, a file of no newline) would take
MAX_RECORD_LINE = 1 << 28
