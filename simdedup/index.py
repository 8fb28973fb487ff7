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

from itertools import combinations
from math import comb, log2

import numpy as np

_MAX_TABLES = 512
# Relative costs per fingerprint per table (sort, key) and per candidate, in rough units.
_SORT_COST, _CANDIDATE_COST, _BRUTE_COST = 1.0, 4.0, 0.5
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
        if comb(blocks, k) > _MAX_TABLES:
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
#: a table with this many candidate pairs goes to the compiled pair kernel (64-bit
#: fingerprints; :mod:`simdedup.fastpath`), when it loads: about 20 ms of numpy work, more
#: than loading the kernel costs
KERNEL_AFTER_CANDIDATES = 1 << 18


def _pairs_in_table(fps: np.ndarray, order: np.ndarray, sorted_key: np.ndarray,
                    k: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of rows within ``k`` among the rows sharing a key (adjacent in ``order``)."""
    n = len(order)
    # Each sorted position p pairs with every later position of its run of equal keys; the
    # candidates are generated run by run in vectorised steps of a bounded size, so that long
    # runs (crowded keys) cost no Python loop per distance.
    starts = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))
    lengths = np.diff(np.append(starts, n))
    if fps.shape[1] == 1 and int((lengths * (lengths - 1) // 2).sum()) >= KERNEL_AFTER_CANDIDATES:
        from . import fastpath

        kernel = fastpath.pair_kernel()
        if kernel is not None:
            return kernel.pairs(fps[order, 0], order, sorted_key, k)
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


def _clustered(fps: np.ndarray, masks: list[np.ndarray]) -> bool:
    """Whether the tables would hand out more candidates than comparing all pairs.

    The cost model assumes spread-out fingerprints; a corpus whose fingerprints crowd together
    fills single keys with thousands of rows. The first table's runs tell.
    """
    n = len(fps)
    runs = np.unique(_table_key(fps, masks[0]), return_counts=True)[1]
    candidates = float((runs * (runs - 1) // 2).sum())
    return candidates * len(masks) * _CANDIDATE_COST > n * n / 2 * _BRUTE_COST


#: room made at first for the pairs of each row in an all-pairs search; real text at dedup's k = 10
#: gives about 60 (man pages and documentation, 24,000 documents), and more costs a second pass
BRUTE_PAIRS_PER_ROW = 96


def _brute_pairs(fps: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = len(fps)
    if fps.shape[1] == 1 and n * (n - 1) // 2 >= KERNEL_AFTER_CANDIDATES:
        from . import fastpath

        kernel = fastpath.pair_kernel()
        if kernel is not None:  # every row in one run of the pair kernel: all pairs, compiled
            return kernel.pairs(fps[:, 0], np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.uint64), k,
                                BRUTE_PAIRS_PER_ROW * n)
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
        if blocks and _clustered(fps, table_masks(bits, k, blocks)):
            blocks = 0
    if blocks == 0:
        left, right = _brute_pairs(fps, k)
        code = _codes(left, right, n)
    else:
        # A pair is found in every table whose blocks it agrees on; each table keeps only the
        # pairs it is the canonical table of (the first blocks the two agree on), so each comes
        # out once, however many tables a crowded family fills. The engine's search, in this
        # process (imported here: it builds on this module).
        from .distributed.pairs import search

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
