"""Stage 2: every pair of distinct fingerprints within ``k`` bits, each found exactly once.

Manku tables (:mod:`simdedup.pairs`) split across tasks: a task is one table ``t`` and one part
``r`` of its keys. Equal keys never straddle two parts, so every pair within ``k`` meets in the
task of each table whose blocks it agrees on. The **canonical-table rule** keeps a pair only in
the first of those tables in the tables' (lexicographic) order: the first ``b - k`` blocks the
two fingerprints agree on, a function of the two fingerprints alone. So each pair comes out of
exactly one task, and no pass removes repeats.

Two ways to hand the rows to the tasks:

- **broadcast**: the fingerprint column (8 bytes a fingerprint per 64 bits) is sent to every
  worker; a task takes its part of the rows (a range of the values of its table's first block,
  so equal keys stay together), keys them and sorts them (packed with the row number, as plain
  integers, where they fit).
- **shuffle**: when the column does not fit a worker, map tasks cut it into chunks and write,
  per table, their rows sorted by key with the offsets of each key range (ranges from a sample
  of the keys); the task of (table, range) reads its slices only.

A **crowded key** (a run of more than ``crowd`` rows sharing a key) is not compared all against
all: its rows agree on the table's blocks, so a pair within ``k`` differs only in the other bits,
and those are searched again with Manku tables of their own (:func:`simdedup.pairs.near_pairs`
on the remaining bits), which stays exact; memory follows the run and its pairs. A run whose rows
all agree in a block that comes before the table's last block and is not one of its blocks is
skipped: none of its pairs is canonical there (a template family crowds many tables' keys, and
only its canonical tables enumerate it). A run still crowded ``MAX_DEPTH`` searches deep (a
family of templates within ``k`` of each other) is left as a :class:`Crowd`: cut into chunks,
one task compares each pair of chunks ``i <= j`` (memory: two chunks and their pairs) and keeps
a pair when every table that found the run is its canonical table at its level.
"""

from __future__ import annotations

import io
from math import comb

import numpy as np

# The search itself lives with the one-process index, which runs it too; the tasks' names for it:
from ..pairs import (
    CROWD,
    Crowd,  # noqa: F401
    Found,
    _bits,
    block_ranges,
    chunk_pairs,  # noqa: F401
    chunk_spans,  # noqa: F401
    plan_blocks,  # noqa: F401
    table_keys,
    table_pairs,
    tables,
)

_MIX = np.uint64(0x9E3779B97F4A7C15)


# --- broadcast ------------------------------------------------------------------------------


def broadcast_task(
    values: np.ndarray, bits: int, k: int, blocks: int, table: int, part: int, parts: int, crowd: int = CROWD
) -> Found:
    """One task of the broadcast mode: the pairs of table ``table`` among the fingerprints
    whose key falls in part ``part`` of ``parts`` (``values``: the whole distinct column)."""
    chosen = tables(bits, k, blocks)[table]
    if parts == 1:
        return table_pairs(values, np.arange(len(values), dtype=np.int64), bits, k, blocks, chosen, crowd)
    # a range of the first chosen block's values: equal keys are in one part
    start, size = block_ranges(bits, blocks)[chosen[0]]
    rows = _rows_in_range(values, start, size, (part << size) // parts, ((part + 1) << size) // parts)
    return table_pairs(values[rows], rows, bits, k, blocks, chosen, crowd)


#: rows whose key range is tested at once: temporaries that stay in the cache (one pass over the
#: whole column at once was 2-4 times slower, and every part of every table makes that pass)
_SELECTED_AT_ONCE = 1 << 16


def _rows_in_range(values: np.ndarray, start: int, size: int, low: int, high: int) -> np.ndarray:
    """Rows whose bits ``start .. start + size`` lie in ``[low, high)``."""
    found = []
    for first in range(0, len(values), _SELECTED_AT_ONCE):
        key = _bits(values[first : first + _SELECTED_AT_ONCE], start, size)
        key -= np.uint64(low)  # below ``low`` wraps around to large values
        found.append(np.flatnonzero(key < np.uint64(high - low)) + first)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


# --- shuffle --------------------------------------------------------------------------------


def range_bounds(sample: np.ndarray, bits: int, k: int, blocks: int, ranges: int) -> np.ndarray:
    """``(tables, ranges - 1)`` uint64 bounds of each table's key ranges (on the key's first
    word), quantiles of a sample of the fingerprints."""
    out = np.zeros((comb(blocks, k), max(ranges - 1, 0)), dtype=np.uint64)
    if ranges <= 1 or not len(sample):
        return out
    for t, chosen in enumerate(tables(bits, k, blocks)):
        first = np.sort(table_keys(sample, bits, blocks, chosen)[:, 0])
        out[t] = first[(np.arange(1, ranges) * len(first)) // ranges]
    return out


def map_chunk(values: np.ndarray, rows: np.ndarray, bits: int, k: int, blocks: int, bounds: np.ndarray) -> list[bytes]:
    """The map side of the shuffle, for one chunk of the column: per table, the chunk's rows
    ordered by key range, and where each range starts (one file per table)."""
    out = []
    for t, chosen in enumerate(tables(bits, k, blocks)):
        keys = table_keys(values, bits, blocks, chosen)
        which = np.searchsorted(bounds[t], keys[:, 0], side="right")
        order = np.argsort(which, kind="stable")
        offsets = np.searchsorted(which[order], np.arange(bounds.shape[1] + 2))
        buffer = io.BytesIO()
        np.savez(buffer, values=values[order], rows=rows[order], offsets=offsets)
        out.append(buffer.getvalue())
    return out


def reduce_slices(
    slices: list[tuple[np.ndarray, np.ndarray]], bits: int, k: int, blocks: int, table: int, crowd: int = CROWD
) -> Found:
    """The reduce side: the pairs of one (table, range) from the slices every map task wrote."""
    values = np.concatenate([v for v, _ in slices]) if slices else np.empty((0, bits // 64), dtype=np.uint64)
    rows = np.concatenate([r for _, r in slices]) if slices else np.empty(0, dtype=np.int64)
    chosen = tables(bits, k, blocks)[table]
    return table_pairs(values, rows, bits, k, blocks, chosen, crowd)


def read_slice(data: bytes, which: int) -> tuple[np.ndarray, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        offsets = arrays["offsets"]
        first, last = int(offsets[which]), int(offsets[which + 1])
        return arrays["values"][first:last], arrays["rows"][first:last]
