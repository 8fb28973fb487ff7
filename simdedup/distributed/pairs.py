"""Stage 2: every pair of distinct fingerprints within ``k`` bits, each found exactly once.

Manku tables (:mod:`simdedup.index`) split across tasks: a task is one table ``t`` and one part
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
and those are searched again with Manku tables of their own (:func:`simdedup.index.near_pairs`
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
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from ..index import _MAX_TABLES, _pairs_in_table, block_ranges, choose_blocks, estimated_cost

#: runs of one key longer than this are searched again on their remaining bits
CROWD = 1 << 12
_MIX = np.uint64(0x9E3779B97F4A7C15)


def plan_blocks(n: int, k: int, bits: int) -> int:
    """Blocks of the tables for ``n`` distinct fingerprints: the cheapest by the one-process cost
    model, and always a table search (the one-process search may compare all pairs instead)."""
    chosen = choose_blocks(n, k, bits)
    if chosen:
        return chosen
    candidates = [b for b in range(k + 1, bits + 1) if comb(b, k) <= _MAX_TABLES]
    return min(candidates, key=lambda b: estimated_cost(max(n, 2), k, bits, b))


def tables(bits: int, k: int, blocks: int) -> list[tuple[int, ...]]:
    """The chosen blocks of each table, in the canonical order."""
    return list(combinations(range(blocks), blocks - k))


def _bits(values: np.ndarray, start: int, size: int) -> np.ndarray:
    """Bits ``start .. start + size`` (size <= 64) of each row of ``(n, words)`` uint64."""
    word, offset = divmod(start, 64)
    out = values[:, word] >> np.uint64(offset)
    if offset + size > 64:
        out = out | (values[:, word + 1] << np.uint64(64 - offset))
    if size < 64:
        out = out & np.uint64((1 << size) - 1)
    return out


def gather_bits(values: np.ndarray, ranges: list[tuple[int, int]]) -> np.ndarray:
    """The bits of the given ``(start, size)`` ranges packed one after the other into
    ``(n, ceil(total / 64))`` uint64 words, the first range lowest."""
    total = sum(size for _, size in ranges)
    out = np.zeros((len(values), max(1, -(-total // 64))), dtype=np.uint64)
    position = 0
    for start, size in _joined(ranges):
        piece = _bits(values, start, size)
        word, offset = divmod(position, 64)
        out[:, word] |= piece << np.uint64(offset)
        if offset + size > 64:
            out[:, word + 1] |= piece >> np.uint64(64 - offset)
        position += size
    return out


def _joined(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The same bits in fewer ranges: a range that goes on where the one before ends is joined
    to it (up to 64 bits), so adjacent blocks are read in one step."""
    out: list[tuple[int, int]] = []
    for start, size in ranges:
        if out and sum(out[-1]) == start and out[-1][1] + size <= 64:
            out[-1] = (out[-1][0], out[-1][1] + size)
        else:
            out.append((start, size))
    return out


class SortedTable:
    """The rows of a table sorted by key (equal keys in row order): :attr:`same` tells whether
    sorted positions ``p`` and ``p + 1`` share a key, :meth:`rows` which rows sit at some positions.

    For one-word fingerprints whose key fits beside the row number in 64 bits, the key's bits
    are gathered straight above the row number and the two are sorted as plain integers
    (numpy's vectorised sort: about ten times an argsort); other keys are argsorted."""

    def __init__(self, values: np.ndarray, bits: int, blocks: int, chosen: tuple[int, ...]):
        n = len(values)
        ranges = block_ranges(bits, blocks)
        self.index_bits = max(1, (n - 1).bit_length())
        if values.shape[1] > 1 or sum(ranges[i][1] for i in chosen) + self.index_bits > 64:
            keys = table_keys(values, bits, blocks, chosen)
            self.order: np.ndarray | None = (np.lexsort(keys.T[::-1]) if keys.shape[1] > 1
                                             else np.argsort(keys[:, 0], kind="stable"))
            self.packed: np.ndarray | None = None
            keys = keys[self.order]
            self._same = (keys[1:] == keys[:-1]).all(axis=1)
            return
        packed = _packed_keys(values[:, 0], _joined([ranges[i] for i in chosen]), self.index_bits)
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        self.order, self.packed = None, packed

    @property
    def same(self) -> np.ndarray:
        if self.packed is None:
            return self._same
        return (self.packed[1:] ^ self.packed[:-1]) < np.uint64(1 << self.index_bits)

    def rows(self, positions: np.ndarray) -> np.ndarray:
        if self.packed is None:
            return self.order[positions]  # type: ignore[index]
        return (self.packed[positions] & np.uint64((1 << self.index_bits) - 1)).astype(np.int64)


def _packed_keys(column: np.ndarray, ranges: list[tuple[int, int]], shift: int) -> np.ndarray:
    """The bits of ``ranges`` of a uint64 column, one range after the other from bit ``shift``
    up (three passes over the column a range, in place)."""
    key = np.empty_like(column)
    piece = np.empty_like(column)
    position = shift
    for i, (start, size) in enumerate(ranges):
        target = key if i == 0 else piece
        np.bitwise_and(column, np.uint64(((1 << size) - 1) << start), out=target)
        if position > start:
            np.left_shift(target, np.uint64(position - start), out=target)
        elif position < start:
            np.right_shift(target, np.uint64(start - position), out=target)
        if i:
            np.bitwise_or(key, piece, out=key)
        position += size
    return key


def table_keys(values: np.ndarray, bits: int, blocks: int, chosen: tuple[int, ...]) -> np.ndarray:
    """Each row's key in the table of the ``chosen`` blocks: their bits, packed, as
    ``(n, words)`` uint64 (one word unless the key is over 64 bits)."""
    ranges = block_ranges(bits, blocks)
    return gather_bits(values, [ranges[i] for i in chosen])


def canonical(values: np.ndarray, left: np.ndarray, right: np.ndarray, bits: int, k: int, blocks: int,
              chosen: tuple[int, ...]) -> np.ndarray:
    """Whether the table of the ``chosen`` blocks is the canonical table of each pair: the
    first ``blocks - k`` blocks the two fingerprints agree on are exactly its blocks."""
    differ = values[left] ^ values[right]
    agreed = np.zeros(len(left), dtype=np.int64)
    keep = np.ones(len(left), dtype=bool)
    wanted = set(chosen)
    for block, (start, size) in enumerate(block_ranges(bits, blocks)):
        agree = _bits(differ, start, size) == 0
        agreed += agree
        first = agree & (agreed <= blocks - k)
        keep &= first if block in wanted else ~first
    return keep


@dataclass
class Crowd:
    """Rows of a crowded run, as a search on their remaining bits sees them: ``values`` their
    whole fingerprints, ``rows`` their global numbers, ``levels`` the ``(bits, blocks, chosen)``
    of the table of each search that found the run, outermost first. A run that stays crowded
    (``MAX_DEPTH`` searches deep, or where comparing all its pairs is cheaper than tables) is
    left to chunk-pair tasks (:func:`chunk_pairs`), which keep a pair when each of those tables
    is its canonical table at its level."""

    values: np.ndarray
    rows: np.ndarray
    levels: tuple[tuple[int, int, tuple[int, ...]], ...]

    def take(self, members: np.ndarray, level: tuple[int, int, tuple[int, ...]]) -> Crowd:
        """The run of ``members`` found in the table ``level``."""
        return Crowd(self.values[members], self.rows[members], (*self.levels, level))


@dataclass
class Found:
    """The pairs of a task (global numbers, ``left < right``) and the crowds it left."""

    left: np.ndarray
    right: np.ndarray
    crowds: list[Crowd]


def table_pairs(values: np.ndarray, rows: np.ndarray, bits: int, k: int, blocks: int, chosen: tuple[int, ...],
                crowd: int = CROWD) -> Found:
    """The pairs within ``k`` among ``values`` (distinct, with their global numbers ``rows``)
    whose canonical table is the one of the ``chosen`` blocks."""
    crowds: list[Crowd] = []
    a, b = _table_pairs(values, np.arange(len(values)), bits, k, blocks, chosen, crowd, 0,
                        Crowd(values, rows, ()), crowds)
    a, b = rows[a], rows[b]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi, lo))
    return Found(lo[order], hi[order], crowds)


def _table_pairs(values: np.ndarray, rows: np.ndarray, bits: int, k: int, blocks: int,
                 chosen: tuple[int, ...], crowd: int, depth: int, origin: Crowd,
                 crowds: list[Crowd]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`table_pairs` at any depth: pairs as ``rows`` (the values' numbers in the search
    above), unordered; crowds that stay crowded are added to ``crowds``."""
    n = len(values)
    empty = np.empty(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    ranges = block_ranges(bits, blocks)
    table = SortedTable(values, bits, blocks, chosen)
    # A pair is canonical here only if it differs in every other block before the last chosen one.
    before_last = [ranges[i] for i in range(max(chosen)) if i not in set(chosen)]
    found_a, found_b, crowded_starts, crowded_lengths = _runs(table, values, k, crowd, bits, blocks, chosen,
                                                              before_last)
    lefts, rights = [], []
    other_ranges = [r for i, r in enumerate(ranges) if i not in set(chosen)]
    for start, length in zip(crowded_starts.tolist(), crowded_lengths.tolist()):
        members = table.rows(np.arange(start, start + length))
        if any((lambda b: (b == b[0]).all())(_bits(values[members], *r)) for r in before_last):
            continue  # the whole run agrees in such a block: none of its pairs is canonical here
        rest = gather_bits(values[members], other_ranges)  # the run agrees on the chosen blocks
        a, b = _all_pairs(rest, members, sum(size for _, size in other_ranges), k, crowd, depth + 1,
                          origin.take(members, (bits, blocks, chosen)), crowds)
        lefts.append(a)
        rights.append(b)
    if lefts:  # the crowded runs' pairs, positions in ``values``
        a, b = np.concatenate(lefts), np.concatenate(rights)
        keep = canonical(values, a, b, bits, k, blocks, chosen)
        found_a, found_b = np.concatenate([found_a, a[keep]]), np.concatenate([found_b, b[keep]])
    return rows[found_a], rows[found_b]


def _runs(table: SortedTable, values: np.ndarray, k: int, crowd: int, bits: int, blocks: int, chosen: tuple[int, ...],
          before_last: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions in ``values`` of the pairs within ``k`` in the table's runs of equal keys of at
    most ``crowd`` rows whose canonical table it is (they differ in each block ``before_last``),
    and ``(start, length)`` of the longer runs: in one compiled pass over a packed table of
    one-word fingerprints (:mod:`simdedup.fastpath`), else with numpy."""
    from .. import fastpath

    if table.packed is not None and (kernel := fastpath.packed_pair_kernel()):
        masks = np.array([((1 << size) - 1) << start for start, size in before_last], dtype=np.uint64)
        return kernel.pairs(table.packed, table.index_bits, values[:, 0], k, crowd, masks)
    # Only positions in runs of two or more rows take part: for spread-out fingerprints a few.
    same = table.same
    paired = np.flatnonzero(np.concatenate(([False], same)) | np.concatenate((same, [False])))
    new_run = np.ones(len(paired), dtype=bool)
    new_run[1:] = ~same[paired[1:] - 1]
    run = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    lengths = np.diff(np.append(starts, len(paired)))
    crowded = np.repeat(lengths > crowd, lengths)
    plain = paired[~crowded]
    a, b = _pairs_in_table(values, table.rows(plain), run[~crowded].astype(np.uint64), k)
    keep = canonical(values, a, b, bits, k, blocks, chosen)
    return a[keep], b[keep], paired[starts[lengths > crowd]], lengths[lengths > crowd]


#: crowded runs are searched again on their remaining bits this many times, then left to
#: chunk-pair tasks (a family of templates within k of each other is quadratic however it is cut)
MAX_DEPTH = 2


def _all_pairs(values: np.ndarray, rows: np.ndarray, bits: int, k: int, crowd: int, depth: int, origin: Crowd,
               crowds: list[Crowd]) -> tuple[np.ndarray, np.ndarray]:
    """Every pair within ``k`` among a crowded run's distinct ``values`` (their low ``bits``
    used), once each, as ``rows``: Manku tables of their own with the canonical rule; or, when
    comparing all pairs is cheaper or the search is already ``MAX_DEPTH`` deep, none here: the
    run becomes a :class:`Crowd`."""
    blocks = choose_blocks(len(values), k, bits) if depth < MAX_DEPTH and k < bits else 0
    if not blocks:
        crowds.append(origin)
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    lefts, rights = [], []
    for chosen in tables(bits, k, blocks):
        a, b = _table_pairs(values, rows, bits, k, blocks, chosen, crowd, depth, origin, crowds)
        lefts.append(a)
        rights.append(b)
    return np.concatenate(lefts), np.concatenate(rights)


#: candidate pairs compared at once in a chunk-pair task (about 40 MB of temporaries)
_COMPARED_AT_ONCE = 1 << 22


def chunk_spans(size: int, chunk: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The chunk pairs ``(i, j)``, ``i <= j``, of a crowd of ``size`` rows cut in chunks of
    ``chunk`` rows, as two ``(first, last)`` row spans: every pair of rows in exactly one."""
    bounds = list(range(0, size, chunk)) + [size]
    spans = list(zip(bounds, bounds[1:]))
    return [(spans[i], spans[j]) for i in range(len(spans)) for j in range(i, len(spans))]


def _near_in_chunks(values: np.ndarray, size: int, within: bool, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``a < b`` of the pairs within ``k`` among ``values``: within the first ``size``
    rows (``within``), or between them and the rest. Compiled for one-word fingerprints (the pair
    kernels of :mod:`simdedup.fastpath`), else numpy in steps of bounded size."""
    from .. import fastpath

    if values.shape[1] == 1 and (kernel := fastpath.pair_kernel() if within else fastpath.cross_pair_kernel()):
        if within:  # one run of equal keys: every pair, earlier position first
            return kernel.pairs(values[:, 0], np.arange(size, dtype=np.int64), np.zeros(size, dtype=np.uint64), k)
        a, b = kernel.pairs(values[:size, 0], values[size:, 0], k)
        return a, b + size
    other = values if within else values[size:]
    step = max(1, _COMPARED_AT_ONCE // max(1, len(other)))
    lefts, rights = [], []
    for start in range(0, size, step):
        block = values[start : min(start + step, size)]
        distance = np.zeros((len(block), len(other)), dtype=np.int32)
        for word in range(values.shape[1]):
            distance += np.bitwise_count(block[:, word, None] ^ other[None, :, word])
        a, b = np.nonzero(distance <= k)
        a += start
        if within:
            keep = b > a
            a, b = a[keep], b[keep]
        else:
            b += size
        lefts.append(a)
        rights.append(b)
    return np.concatenate(lefts), np.concatenate(rights)


def chunk_pairs(levels: tuple[tuple[int, int, tuple[int, ...]], ...], k: int, first: Crowd,
                second: Crowd | None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of a crowd (found in the tables ``levels``) between the rows of chunk ``first``
    and those of chunk ``second`` (None: within ``first``) that are within ``k`` and canonical at
    every level, as global numbers ``(left < right)``. Memory: the two chunks and their pairs."""
    size = len(first.rows)
    values = first.values if second is None else np.concatenate([first.values, second.values])
    rows = first.rows if second is None else np.concatenate([first.rows, second.rows])
    a, b = _near_in_chunks(values, size, second is None, k)  # positions in ``values``
    for level_bits, blocks, chosen in levels:  # the run agrees on the blocks of each level's table
        keep = canonical(values, a, b, level_bits, k, blocks, chosen)
        a, b = a[keep], b[keep]
        values = gather_bits(values, [r for i, r in enumerate(block_ranges(level_bits, blocks)) if i not in chosen])
    a, b = rows[a], rows[b]
    return np.minimum(a, b), np.maximum(a, b)


def search(values: np.ndarray, k: int, blocks: int, crowd: int = CROWD) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows of ``values`` (``(n, words)`` uint64) within ``k``, once each, in this
    process: the tables of ``blocks`` blocks with the canonical rule, then the crowds they leave,
    a pair of chunks of ``crowd`` rows at a time. Unsorted, ``left < right``."""
    bits = 64 * values.shape[1]
    rows = np.arange(len(values), dtype=np.int64)
    lefts, rights = [], []
    for chosen in tables(bits, k, blocks):
        found = table_pairs(values, rows, bits, k, blocks, chosen, crowd)
        lefts.append(found.left)
        rights.append(found.right)
        for run in found.crowds:
            for (a, b), (c, d) in chunk_spans(len(run.rows), crowd):
                first = Crowd(run.values[a:b], run.rows[a:b], run.levels)
                second = None if (a, b) == (c, d) else Crowd(run.values[c:d], run.rows[c:d], run.levels)
                left, right = chunk_pairs(run.levels, k, first, second)
                lefts.append(left)
                rights.append(right)
    if not lefts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(lefts), np.concatenate(rights)


# --- broadcast ------------------------------------------------------------------------------


def broadcast_task(values: np.ndarray, bits: int, k: int, blocks: int, table: int, part: int, parts: int,
                   crowd: int = CROWD) -> Found:
    """One task of the broadcast mode: the pairs of table ``table`` among the fingerprints
    whose key falls in part ``part`` of ``parts`` (``values``: the whole distinct column)."""
    chosen = tables(bits, k, blocks)[table]
    rows = np.arange(len(values), dtype=np.int64)
    if parts > 1:  # a range of the first chosen block's values: equal keys are in one part
        start, size = block_ranges(bits, blocks)[chosen[0]]
        low, high = (part << size) // parts, ((part + 1) << size) // parts
        first = _bits(values, start, size)
        first -= np.uint64(low)  # below ``low`` wraps around to large values
        rows = np.flatnonzero(first < np.uint64(high - low))
        values = values[rows]
    return table_pairs(values, rows, bits, k, blocks, chosen, crowd)


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


def reduce_slices(slices: list[tuple[np.ndarray, np.ndarray]], bits: int, k: int, blocks: int, table: int,
                  crowd: int = CROWD) -> Found:
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
