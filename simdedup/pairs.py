"""All pairs of fingerprints within Hamming distance k: Manku, Jain & Das Sarma (WWW 2007).

The ``bits`` bits are split into ``b`` contiguous blocks (sizes differ by at most one). Two
fingerprints at distance at most ``k`` differ in at most ``k`` blocks, so they agree exactly on
at least ``b - k`` of them (pigeonhole). There is one table for each choice of ``b - k`` blocks;
its key is a fingerprint's bits in those blocks. A table is an argsort of the keys: fingerprints
sharing a key are adjacent, each such pair is a candidate, and a candidate becomes a pair when
the popcount of the XOR is at most ``k``. Every pair within ``k`` shares a key in some table, so
the search is exact; more blocks give longer keys and fewer candidates but more tables.
:func:`choose_blocks` picks ``b`` from ``n`` and ``k`` with a cost model (for k = 3: 4 tables of
16-bit keys for small ``n``; 10 tables of ~26-bit keys from about a million fingerprints).

Fingerprints are an ``(n, words)`` uint64 array, word 0 holding bits 0-63 (:func:`as_words`).
Callers should remove identical fingerprints first (:func:`numpy.unique`): ``m`` copies of one
fingerprint are ``m²/2`` candidates in every table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import combinations
from math import comb, log2

import numpy as np

#: tables of one search at most (C(blocks, k) of them: each a sorted copy of the fingerprints)
MAX_TABLES = 512
# Relative costs per fingerprint per table (sort, key) and per candidate, in rough units.
_SORT_COST, _CANDIDATE_COST, _BRUTE_COST = 1.0, 4.0, 0.5
# A candidate checked by the compiled table kernel costs about three all-pairs comparisons (a
# table of 10^5 128-bit fingerprints with a crowded template family: 7.7 ns against 2.5 ns).
_KERNEL_CANDIDATE_COST = 1.5
_FOLD = np.uint64(0x9E3779B97F4A7C15)  # odd, so multiplying by it is a bijection


def as_words(values: list[int] | np.ndarray, bits: int) -> np.ndarray:
    """Fingerprints (Python ints) as an ``(n, bits // 64)`` uint64 array, word 0 low."""
    words = bits // 64
    out = np.empty((len(values), words), dtype=np.uint64)
    mask = (1 << 64) - 1
    for w in range(words):
        out[:, w] = np.fromiter(((v >> (64 * w)) & mask for v in values), dtype=np.uint64, count=len(values))
    return out


def popcount_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamming distances between the rows of two ``(n, words)`` uint64 arrays."""
    return np.bitwise_count(a ^ b).sum(axis=1, dtype=np.int64)


def block_ranges(bits: int, blocks: int) -> list[tuple[int, int]]:
    """``(first bit, size)`` of each block; blocks are contiguous and as even as possible."""
    if not 1 <= blocks <= bits:
        raise ValueError(f"blocks must be between 1 and {bits}")
    ranges = []
    start = 0
    for i in range(blocks):
        size = bits // blocks + (1 if i < bits % blocks else 0)
        ranges.append((start, size))
        start += size
    return ranges


def block_masks(bits: int, blocks: int) -> list[np.ndarray]:
    """One ``(words,)`` uint64 mask per block (:func:`block_ranges`)."""
    masks = []
    for start, size in block_ranges(bits, blocks):
        value = ((1 << size) - 1) << start
        masks.append(np.array([(value >> (64 * w)) & ((1 << 64) - 1) for w in range(bits // 64)], dtype=np.uint64))
    return masks


def table_masks(bits: int, k: int, blocks: int) -> list[np.ndarray]:
    """Key masks of the ``C(blocks, k)`` tables: the union of every choice of ``blocks - k`` blocks."""
    if not k < blocks <= bits:
        raise ValueError(f"need k < blocks <= bits, got k={k}, blocks={blocks}, bits={bits}")
    per_block = block_masks(bits, blocks)
    return [np.bitwise_or.reduce([per_block[i] for i in chosen]) for chosen in combinations(range(blocks), blocks - k)]


def estimated_cost(n: int, k: int, bits: int, blocks: int) -> float:
    """Rough cost of the block search for ``n`` random fingerprints (arbitrary units)."""
    tables = comb(blocks, k)
    key_bits = bits * (blocks - k) / blocks
    candidates = n * n / 2 * 2.0**-key_bits
    return tables * (n * max(1.0, log2(max(n, 2))) * _SORT_COST + candidates * _CANDIDATE_COST)


def choose_blocks(n: int, k: int, bits: int = 64) -> int:
    """Number of blocks with the lowest :func:`estimated_cost`, or 0 when comparing all pairs is cheaper."""
    best, best_cost = 0, n * n / 2 * _BRUTE_COST
    for blocks in range(k + 1, bits + 1):
        if comb(blocks, k) > MAX_TABLES:
            break
        cost = estimated_cost(n, k, bits, blocks)
        if cost < best_cost:
            best, best_cost = blocks, cost
    return best


def _table_key(fps: np.ndarray, mask: np.ndarray) -> np.ndarray:
    key = fps[:, 0] & mask[0]
    for w in range(1, fps.shape[1]):
        # Fold wider keys into 64 bits: equal keys stay equal; collisions are only extra candidates.
        key = (key * _FOLD) ^ (fps[:, w] & mask[w])
    return key


_CANDIDATES_AT_ONCE = 1 << 20  # candidate pairs checked in one vectorised step (about 50 MB of arrays)
#: a table with this many candidate pairs goes to the compiled pair kernel
#: (:mod:`simdedup.kernels.pairs`), when it loads: about 20 ms of numpy work, more than loading the
#: kernel costs
KERNEL_AFTER_CANDIDATES = 1 << 18


def _pairs_in_table(
    fps: np.ndarray, order: np.ndarray, sorted_key: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of rows within ``k`` among the rows sharing a key (adjacent in ``order``)."""
    n = len(order)
    # Each sorted position p pairs with every later position of its run of equal keys; the
    # candidates are generated run by run in vectorised steps of a bounded size, so that long
    # runs (crowded keys) cost no Python loop per distance.
    starts = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))
    lengths = np.diff(np.append(starts, n))
    if int((lengths * (lengths - 1) // 2).sum()) >= KERNEL_AFTER_CANDIDATES:
        from .kernels.pairs import PairKernel

        kernel = PairKernel.loaded()
        if kernel is not None:
            return kernel.pairs(fps[order], order, sorted_key, k)
    later = np.repeat(starts + lengths, lengths) - np.arange(n) - 1  # later positions in the run
    positions = np.flatnonzero(later)
    counts = later[positions]
    if not len(positions):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    distance = _distance_function(fps)
    ends = np.cumsum(counts)
    cuts = np.searchsorted(ends, np.arange(_CANDIDATES_AT_ONCE, ends[-1], _CANDIDATES_AT_ONCE), side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [len(positions)])))  # a position never splits
    left_parts, right_parts = [], []
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        step_counts = counts[first:last]
        left = np.repeat(positions[first:last], step_counts)
        right = left + np.arange(len(left)) - np.repeat(np.cumsum(step_counts) - step_counts, step_counts) + 1
        a, b = order[left], order[right]
        close = distance(a, b) <= k
        left_parts.append(a[close])
        right_parts.append(b[close])
    return np.concatenate(left_parts), np.concatenate(right_parts)


def _distance_function(fps: np.ndarray):
    """Hamming distance between rows ``a`` and ``b`` of ``fps`` (a faster form for one word)."""
    if fps.shape[1] == 1:
        values = fps[:, 0]
        return lambda a, b: np.bitwise_count(values[a] ^ values[b])
    return lambda a, b: popcount_distance(fps[a], fps[b])


def _clustered(fps: np.ndarray, masks: list[np.ndarray], k: int) -> bool:
    """Whether the tables would hand out more candidates than comparing all pairs.

    The cost model assumes spread-out fingerprints; a corpus whose fingerprints crowd together
    fills single keys with thousands of rows. The first table's runs tell: each run's pairs
    are compared in every table, but those of a family (:func:`_a_family`, among the
    :data:`FAMILY_CHECKS` longest runs over :data:`FAMILY_RUN` rows) once in all.
    """
    from .kernels.pairs import PackedKernel

    n = len(fps)
    keys = _table_key(fps, masks[0])
    values, runs = np.unique(keys, return_counts=True)
    pairs = (runs * (runs - 1) // 2).astype(float)
    long = np.flatnonzero(runs > FAMILY_RUN)
    once = sum(
        pairs[run]
        for run in long[np.argsort(-runs[long], kind="stable")][:FAMILY_CHECKS].tolist()
        if _a_family(fps[keys == values[run]], k)
    )
    cost = _KERNEL_CANDIDATE_COST if PackedKernel.loaded() else _CANDIDATE_COST
    return ((pairs.sum() - once) * len(masks) + once) * cost > n * n / 2 * _BRUTE_COST


#: at most this many long runs are checked for families by the cost model of :func:`_clustered`
FAMILY_CHECKS = 64


#: room made at first for the pairs of each row in an all-pairs search; real text at dedup's k = 10
#: gives about 60 (man pages and documentation, 24,000 documents), and more costs a second pass
BRUTE_PAIRS_PER_ROW = 96


def _brute_pairs(fps: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(fps)
    if n * (n - 1) // 2 >= KERNEL_AFTER_CANDIDATES:
        from .kernels.pairs import PairKernel

        kernel = PairKernel.loaded()
        if kernel is not None:  # every row in one run of the pair kernel: all pairs, compiled
            return kernel.pairs(
                fps, np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.uint64), k, BRUTE_PAIRS_PER_ROW * n
            )
    left_parts, right_parts = [], []
    step = max(1, (1 << 22) // max(n, 1))
    for start in range(0, n, step):
        rows = np.arange(start, min(n, start + step))
        dist = np.bitwise_count(fps[rows, None, :] ^ fps[None, :, :]).sum(axis=2)
        i, j = np.nonzero(dist <= k)
        keep = j > rows[i]
        left_parts.append(rows[i[keep]])
        right_parts.append(j[keep])
    if not left_parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(left_parts), np.concatenate(right_parts)


def near_pairs(fps: np.ndarray, k: int, blocks: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of rows of ``fps`` at Hamming distance at most ``k``.

    Args:
        fps: ``(n, words)`` uint64 fingerprints (see :func:`as_words`).
        k: largest distance of a pair, ``0 <= k <= bits`` (near ``bits / 2`` and above nearly
            every pair is one: the work and the result grow with the square of ``n``).
        blocks: number of blocks; None chooses it (:func:`choose_blocks`), 0 compares all pairs.

    Returns:
        ``(left, right, distance)`` int64 arrays with ``left < right``, sorted by (left, right),
        each pair once.
    """
    fps = np.ascontiguousarray(fps, dtype=np.uint64)
    if fps.ndim != 2:
        raise ValueError("fps must be an (n, words) array")
    n, words = fps.shape
    bits = 64 * words
    if not 0 <= k <= bits:
        raise ValueError(f"k must be between 0 and {bits}")
    if blocks is None:
        blocks = choose_blocks(n, k, bits)
        if blocks and _clustered(fps, table_masks(bits, k, blocks), k):
            blocks = 0
    if blocks == 0:
        left, right = _brute_pairs(fps, k)
        code = _codes(left, right, n)
    else:
        # A pair is found in every table whose blocks it agrees on; each table keeps only the
        # pairs it is the canonical table of (the first blocks the two agree on), so each comes
        # out once, however many tables a crowded family fills.
        left, right = search(fps, k, blocks)
        code = np.sort(_codes(left, right, n))
    lo, hi = code // max(n, 1), code % max(n, 1)
    return lo, hi, popcount_distance(fps[lo], fps[hi])


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: ``np.unique`` by a sort. numpy 2's default hash-based
    ``np.unique`` takes seconds on the millions of repeated pair codes of a duplicate-dense
    corpus (1.7 s for 2·10^6, against 0.1 s sorted)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def _codes(left: np.ndarray, right: np.ndarray, n: int) -> np.ndarray:
    """Pairs as single int64 codes ``low * n + high``."""
    lo, hi = np.minimum(left, right).astype(np.int64), np.maximum(left, right).astype(np.int64)
    return lo * n + hi


# --- the canonical-table search ---------------------------------------------------------------
# Each pair is kept only in its canonical table, the first ``b - k`` blocks its two fingerprints
# agree on (a function of the two alone), so it comes out of one table: in this process
# (:func:`search`, used by :func:`near_pairs`) and in the tasks of the distributed engine
# (:mod:`simdedup.engines.pairs`, which splits the same tables across workers).


#: runs of one key longer than this are searched again on their remaining bits
CROWD = 1 << 12


def plan_blocks(n: int, k: int, bits: int) -> int:
    """Blocks of the tables for ``n`` distinct fingerprints: the cheapest by the one-process cost
    model, and always a table search (the one-process search may compare all pairs instead)."""
    chosen = choose_blocks(n, k, bits)
    if chosen:
        return chosen
    candidates = [b for b in range(k + 1, bits + 1) if comb(b, k) <= MAX_TABLES]
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

    When the key fits beside the row number in 64 bits, the key's bits are gathered straight
    above the row number and the two are sorted as plain integers (numpy's vectorised sort:
    about ten times an argsort); longer keys are argsorted."""

    def __init__(self, values: np.ndarray, bits: int, blocks: int, chosen: tuple[int, ...]):
        n = len(values)
        ranges = block_ranges(bits, blocks)
        self.index_bits = max(1, (n - 1).bit_length())
        if sum(ranges[i][1] for i in chosen) + self.index_bits > 64:
            keys = table_keys(values, bits, blocks, chosen)
            self.order: np.ndarray | None = (
                np.lexsort(keys.T[::-1]) if keys.shape[1] > 1 else np.argsort(keys[:, 0], kind="stable")
            )
            self.packed: np.ndarray | None = None
            keys = keys[self.order]
            self._same = (keys[1:] == keys[:-1]).all(axis=1)
            return
        if values.shape[1] == 1:
            packed = _packed_keys(values[:, 0], _joined([ranges[i] for i in chosen]), self.index_bits)
        else:
            packed = table_keys(values, bits, blocks, chosen)[:, 0] << np.uint64(self.index_bits)
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


def canonical(
    values: np.ndarray, left: np.ndarray, right: np.ndarray, bits: int, k: int, blocks: int, chosen: tuple[int, ...]
) -> np.ndarray:
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
    family: bool = False  # most of its pairs are within k (:func:`_a_family`)

    def take(self, members: np.ndarray, level: tuple[int, int, tuple[int, ...]], family: bool = False) -> Crowd:
        """The run of ``members`` found in the table ``level``."""
        return Crowd(self.values[members], self.rows[members], (*self.levels, level), family)


@dataclass
class Found:
    """The pairs of a task (global numbers, ``left < right``) and the crowds it left."""

    left: np.ndarray
    right: np.ndarray
    crowds: list[Crowd]


def table_pairs(
    values: np.ndarray,
    rows: np.ndarray,
    bits: int,
    k: int,
    blocks: int,
    chosen: tuple[int, ...],
    crowd: int = CROWD,
    families: bool = False,
) -> Found:
    """The pairs within ``k`` among ``values`` (distinct, with their global numbers ``rows``)
    whose canonical table is the one of the ``chosen`` blocks. With ``families``, a crowded run
    that is a family (most of its pairs within ``k``: :func:`_a_family`) is left as a crowd
    at once, not searched again."""
    crowds: list[Crowd] = []
    a, b = _table_pairs(
        values, np.arange(len(values)), bits, k, blocks, chosen, crowd, 0, Crowd(values, rows, ()), crowds, families
    )
    a, b = rows[a], rows[b]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((hi, lo))
    return Found(lo[order], hi[order], crowds)


def _table_pairs(
    values: np.ndarray,
    rows: np.ndarray,
    bits: int,
    k: int,
    blocks: int,
    chosen: tuple[int, ...],
    crowd: int,
    depth: int,
    origin: Crowd,
    crowds: list[Crowd],
    families: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
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
    found_a, found_b, crowded_starts, crowded_lengths = _runs(
        table, values, k, crowd, bits, blocks, chosen, before_last
    )
    lefts, rights = [], []
    other_ranges = [r for i, r in enumerate(ranges) if i not in set(chosen)]
    for start, length in zip(crowded_starts.tolist(), crowded_lengths.tolist()):
        members = table.rows(np.arange(start, start + length))
        if any((lambda b: (b == b[0]).all())(_bits(values[members], *r)) for r in before_last):
            continue  # the whole run agrees in such a block: none of its pairs is canonical here
        if families and _a_family(values[members], k):
            crowds.append(origin.take(members, (bits, blocks, chosen), family=True))
            continue
        rest = gather_bits(values[members], other_ranges)  # the run agrees on the chosen blocks
        a, b = _all_pairs(
            rest,
            members,
            sum(size for _, size in other_ranges),
            k,
            crowd,
            depth + 1,
            origin.take(members, (bits, blocks, chosen)),
            crowds,
            families,
        )
        lefts.append(a)
        rights.append(b)
    if lefts:  # the crowded runs' pairs, positions in ``values``
        a, b = np.concatenate(lefts), np.concatenate(rights)
        keep = canonical(values, a, b, bits, k, blocks, chosen)
        found_a, found_b = np.concatenate([found_a, a[keep]]), np.concatenate([found_b, b[keep]])
    return rows[found_a], rows[found_b]


def _runs(
    table: SortedTable,
    values: np.ndarray,
    k: int,
    crowd: int,
    bits: int,
    blocks: int,
    chosen: tuple[int, ...],
    before_last: list[tuple[int, int]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Positions in ``values`` of the pairs within ``k`` in the table's runs of equal keys of at
    most ``crowd`` rows whose canonical table it is (they differ in each block ``before_last``),
    and ``(start, length)`` of the longer runs: in one compiled pass over a packed table
    (:mod:`simdedup.kernels.pairs`), else with numpy."""
    from .kernels.pairs import PackedKernel

    if table.packed is not None and (kernel := PackedKernel.loaded()):
        masks = as_words([((1 << size) - 1) << start for start, size in before_last], 64 * values.shape[1])
        return kernel.pairs(table.packed, table.index_bits, values, k, crowd, masks)
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


#: pairs of a crowded run looked at to tell a family (most pairs within k) from a run of keys
#: that collide
FAMILY_SAMPLE = 64
#: runs longer than this are checked for being a family, in one process (:func:`search`)
FAMILY_RUN = 256


def _a_family(values: np.ndarray, k: int) -> bool:
    """Whether most of a crowded run's pairs are within ``k``, on a fixed sample of them: a
    family of near copies, which every table of a search finds whole."""
    n = len(values)
    first = np.arange(FAMILY_SAMPLE) * n // FAMILY_SAMPLE
    second = (first + 1 + np.arange(FAMILY_SAMPLE) * 7919) % n
    second = np.where(second == first, (first + 1) % n, second)
    return 2 * int((popcount_distance(values[first], values[second]) <= k).sum()) > FAMILY_SAMPLE


#: crowded runs are searched again on their remaining bits this many times, then left to
#: chunk-pair tasks (a family of templates within k of each other is quadratic however it is cut)
MAX_DEPTH = 2


def _all_pairs(
    values: np.ndarray,
    rows: np.ndarray,
    bits: int,
    k: int,
    crowd: int,
    depth: int,
    origin: Crowd,
    crowds: list[Crowd],
    families: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
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
        a, b = _table_pairs(values, rows, bits, k, blocks, chosen, crowd, depth, origin, crowds, families)
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
    rows (``within``), or between them and the rest. Compiled (the pair kernels of
    :mod:`simdedup.kernels.pairs`), else numpy in steps of bounded size."""
    from .kernels.pairs import CrossKernel, PairKernel

    if kernel := PairKernel.loaded() if within else CrossKernel.loaded():
        if within:  # one run of equal keys: every pair, earlier position first
            return kernel.pairs(values, np.arange(size, dtype=np.int64), np.zeros(size, dtype=np.uint64), k)
        a, b = kernel.pairs(values[:size], values[size:], k)
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


def chunk_pairs(
    levels: tuple[tuple[int, int, tuple[int, ...]], ...], k: int, first: Crowd, second: Crowd | None
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of a crowd (found in the tables ``levels``) between the rows of chunk ``first``
    and those of chunk ``second`` (None: within ``first``) that are within ``k`` and canonical at
    every level, as global numbers ``(left < right)``. Memory: the two chunks and their pairs."""
    size = len(first.rows)
    values = first.values if second is None else np.concatenate([first.values, second.values])
    rows = first.rows if second is None else np.concatenate([first.rows, second.rows])
    a, b = _near_in_chunks(values, size, second is None, k)  # positions in ``values``
    from .kernels.pairs import CanonicalKernel

    if kernel := CanonicalKernel.loaded():
        a, b = kernel.keep(values, a, b, *level_masks(levels, k, values.shape[1]))
    else:
        for level_bits, blocks, chosen in levels:  # the run agrees on the blocks of each level's table
            keep = canonical(values, a, b, level_bits, k, blocks, chosen)
            a, b = a[keep], b[keep]
            values = gather_bits(values, [r for i, r in enumerate(block_ranges(level_bits, blocks)) if i not in chosen])
    a, b = rows[a], rows[b]
    return np.minimum(a, b), np.maximum(a, b)


@functools.lru_cache(maxsize=1 << 12)  # a few KB each; a crowd search meets hundreds of levels
def level_masks(
    levels: tuple[tuple[int, int, tuple[int, ...]], ...], k: int, words: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The blocks of every level's search as masks over the whole fingerprint (a level's bits
    are the bits its table did not choose at the level above, gathered), for the compiled
    :func:`canonical` of :func:`chunk_pairs`: ``(masks (blocks, words), chosen (per block),
    the end of each level's blocks, blocks - k per level)``. Each whole-fingerprint bit is
    followed through the gathering as a fingerprint of that bit alone."""
    bits = 64 * words
    where = as_words([1 << bit for bit in range(bits)], bits)  # row: a bit; its place at this level
    masks, chosen_flags, ends, limits = [], [], [], []
    for level_bits, blocks, chosen in levels:
        ranges = block_ranges(level_bits, blocks)
        for block, (start, size) in enumerate(ranges):
            inside = np.flatnonzero(_bits(where, start, size))
            masks.append(as_words([sum(1 << int(bit) for bit in inside)], bits)[0])
            chosen_flags.append(block in chosen)
        ends.append(len(masks))
        limits.append(blocks - k)
        where = gather_bits(where, [r for i, r in enumerate(ranges) if i not in chosen])
    arrays = (
        np.array(masks, dtype=np.uint64).reshape(-1, words),
        np.array(chosen_flags, dtype=np.uint8),
        np.array(ends, dtype=np.int64),
        np.array(limits, dtype=np.int64),
    )
    for array in arrays:  # cached: shared by every call with these levels
        array.setflags(write=False)
    return arrays


def search(values: np.ndarray, k: int, blocks: int, crowd: int = CROWD) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows of ``values`` (``(n, words)`` uint64) within ``k``, in this process:
    the tables of ``blocks`` blocks with the canonical rule, then the crowds they leave, a pair
    of chunks of ``crowd`` rows at a time. ``left < right``, each pair once; unsorted unless a
    family was met.

    A family of near copies fills a key of nearly every table: compared table by table, its
    pairs would be compared once per table and thrown away by the canonical rule but once. So
    a run of more than :data:`FAMILY_RUN` rows that is a family is set aside, the families are
    merged where they share rows, and each is compared once, all its pairs at a time."""
    bits = 64 * values.shape[1]
    rows = np.arange(len(values), dtype=np.int64)
    lefts, rights = [], []
    families: list[np.ndarray] = []
    for chosen in tables(bits, k, blocks):
        found = table_pairs(values, rows, bits, k, blocks, chosen, min(crowd, FAMILY_RUN), families=True)
        lefts.append(found.left)
        rights.append(found.right)
        for run in found.crowds:
            if run.family:
                families.append(run.rows)
                continue
            left, right = crowd_pairs(run, k, crowd)
            lefts.append(left)
            rights.append(right)
    if not lefts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    if not families:
        return np.concatenate(lefts), np.concatenate(rights)
    for rows in _family_compares(families, len(values)):
        a, b = _near_in_chunks(values[rows], len(rows), True, k)
        lefts.append(rows[a])
        rights.append(rows[b])
    n = len(values)  # a family's pairs may have come from a table too: each once
    code = distinct(np.concatenate(lefts) * n + np.concatenate(rights))
    return code // n, code % n


def crowd_pairs(run: Crowd, k: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of a crowd canonical at every level, each once, a pair of chunks of ``chunk``
    rows at a time (:func:`chunk_pairs`; an engine runs each chunk pair as a task)."""
    lefts, rights = [], []
    for (a, b), (c, d) in chunk_spans(len(run.rows), chunk):
        first = Crowd(run.values[a:b], run.rows[a:b], run.levels)
        second = None if (a, b) == (c, d) else Crowd(run.values[c:d], run.rows[c:d], run.levels)
        left, right = chunk_pairs(run.levels, k, first, second)
        lefts.append(left)
        rights.append(right)
    return np.concatenate(lefts), np.concatenate(rights)


def _family_compares(families: list[np.ndarray], n: int) -> list[np.ndarray]:
    """The sorted rows to compare all pairs of, for the families (runs of rows below ``n``)
    that the tables set aside: each merged family (:func:`merged_crowds`) once, or, where that
    would compare more pairs, each distinct family of it apart. Families chained by shared
    rows (a page drifting over many versions, each with its copies) can merge into one crowd
    whose far ends are no pair at all; apart, no more pairs are compared than the tables would
    have compared. Every pair within k shares a run of some table, so either way finds it."""
    merged = merged_crowds(families, n)
    where = np.empty(n, dtype=np.int64)
    for i, members in enumerate(merged):
        where[members] = i
    own_families: list[dict[bytes, np.ndarray]] = [{} for _ in merged]  # each merged family's, once each
    for family in families:
        rows = np.sort(family)
        own_families[int(where[rows[0]])][rows.tobytes()] = rows
    compares: list[np.ndarray] = []
    for members, own in zip(merged, own_families):
        apart = sum(len(rows) * (len(rows) - 1) // 2 for rows in own.values())
        compares.extend([members] if len(members) * (len(members) - 1) // 2 <= apart else own.values())
    return compares


def merged_crowds(crowds: list[np.ndarray], n: int) -> list[np.ndarray]:
    """The crowds (arrays of rows below ``n``) merged where they share a row, each as its sorted
    rows: every pair of rows of one crowd is a pair of one merged crowd. (Families only: runs
    of colliding keys, merged, could make one crowd of most rows.)"""
    if not crowds:
        return []
    label = np.arange(n, dtype=np.int64)
    changed = True
    while changed:  # each crowd takes its smallest label, until none moves (a few rounds)
        changed = False
        for members in crowds:
            labels = label[members]
            smallest = labels.min()
            if (labels != smallest).any():
                label[label[members]] = smallest  # the crowds those labels stand for follow
                label[members] = smallest
                changed = True
        label = label[label]
    inside = np.unique(np.concatenate(crowds))
    order = inside[np.argsort(label[inside], kind="stable")]
    bounds = np.flatnonzero(np.diff(label[order])) + 1
    return np.split(order, bounds)
