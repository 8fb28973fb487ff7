"""numba source of the pair kernels (:mod:`simdedup.kernels.pairs`): the candidate pairs of a
block table, of two chunks of a crowd, of a packed table, and the canonical-table filter."""

import numba
import numpy as np
from numba import carray

from .common import ONE, _popcount


@numba.njit(inline="always")
def _within(first, a, second, b, words, k):  # pragma: no cover - compiled
    """Whether fingerprint ``a`` of ``first`` and ``b`` of ``second`` (``words`` uint64 each, row
    after row) are at most ``k`` bits apart; stops at the first word that puts them further."""
    if words == 1:
        return _popcount(first[a] ^ second[b]) <= k
    distance = 0
    for w in range(words):
        distance += _popcount(first[a * words + w] ^ second[b * words + w])
        if distance > k:
            return False
    return True


def table_pairs(values_p, order_p, keys_p, n, words, k, left_p, right_p, capacity):  # pragma: no cover - compiled
    """The pairs of one block table (:mod:`simdedup.pairs`) within Hamming distance ``k``.

    The table's ``n`` rows are sorted by key: ``keys[p]`` is the key of sorted position ``p``,
    ``order[p]`` its row and ``values[p * words : (p + 1) * words]`` its fingerprint. Every two
    positions of a run of equal keys are compared; the first ``capacity`` pairs within ``k`` go
    to ``left`` and ``right`` (as rows, earlier position first), and the number of all of them
    is returned (the caller asks again with room for them when it is larger).
    """
    size = max(n, 1)
    values = carray(values_p, (size * words,))
    order = carray(order_p, (size,))
    keys = carray(keys_p, (size,))
    left = carray(left_p, (max(capacity, 1),))
    right = carray(right_p, (max(capacity, 1),))
    found = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and keys[end] == keys[start]:
            end += 1
        for i in range(start, end - 1):
            for j in range(i + 1, end):
                if _within(values, i, values, j, words, k):
                    if found < capacity:
                        left[found] = order[i]
                        right[found] = order[j]
                    found += 1
        start = end
    return found


def cross_pairs(first_p, n_first, second_p, n_second, words, k, left_p, right_p, capacity):  # pragma: no cover
    """The pairs ``(i, j)`` of fingerprints ``first[i]`` and ``second[j]`` (``words`` uint64
    each) within Hamming distance ``k`` (the chunk pairs of :mod:`simdedup.pairs`); as in
    ``table_pairs``, the first ``capacity`` go to ``left`` and ``right`` and the number of all
    is returned."""
    first = carray(first_p, (max(n_first, 1) * words,))
    second = carray(second_p, (max(n_second, 1) * words,))
    left = carray(left_p, (max(capacity, 1),))
    right = carray(right_p, (max(capacity, 1),))
    found = 0
    for i in range(n_first):
        for j in range(n_second):
            if _within(first, i, second, j, words, k):
                if found < capacity:
                    left[found] = i
                    right[found] = j
                found += 1
    return found


@numba.njit(inline="always")
def _agree_somewhere(values, a, b, words, masks, nmasks):  # pragma: no cover - compiled
    """Whether fingerprints ``a`` and ``b`` agree in every bit of one of the ``nmasks`` masks
    (``words`` uint64 each, mask after mask)."""
    for m in range(nmasks):
        agree = True
        for w in range(words):
            if (values[a * words + w] ^ values[b * words + w]) & masks[m * words + w] != 0:
                agree = False
                break
        if agree:
            return True
    return False


def packed_pairs(
    packed_p, n, index_bits, values_p, words, k, crowd, left_p, right_p, capacity, runs_p, counts_p, masks_p, nmasks
):  # pragma: no cover - compiled
    """The pairs of a block table sorted packed (:class:`simdedup.pairs.SortedTable`):
    ``packed[p]`` is the key of sorted position ``p`` above ``index_bits`` bits of its row, whose
    fingerprint is ``values[row * words : (row + 1) * words]``. Every two rows of a run of equal
    keys of at most ``crowd`` rows are compared; the first ``capacity`` pairs within ``k`` that
    differ in each of the ``nmasks`` blocks ``masks`` (``words`` uint64 each; so that this table
    is their canonical table) go to ``left`` and ``right`` (rows, earlier position first) and the
    number of all is returned. Longer runs are not compared: their ``(start, length)`` go to
    ``runs`` (room for ``n // (crowd + 1)``) and their number to ``counts[0]``."""
    masks = carray(masks_p, (max(nmasks, 1) * words,))
    size = max(n, 1)
    packed = carray(packed_p, (size,))
    values = carray(values_p, (size * words,))
    left = carray(left_p, (max(capacity, 1),))
    right = carray(right_p, (max(capacity, 1),))
    runs = carray(runs_p, (2 * (n // (crowd + 1)) + 2,))
    counts = carray(counts_p, (1,))
    shift = np.uint64(index_bits)
    mask = (ONE << shift) - ONE
    found = 0
    crowded = 0
    start = 0
    while start < n:
        key = packed[start] >> shift
        end = start + 1
        while end < n and packed[end] >> shift == key:
            end += 1
        if end - start > crowd:
            runs[2 * crowded] = start
            runs[2 * crowded + 1] = end - start
            crowded += 1
        else:
            for i in range(start, end - 1):
                row = np.int64(packed[i] & mask)
                for j in range(i + 1, end):
                    other = np.int64(packed[j] & mask)
                    if _within(values, row, values, other, words, k):
                        if not _agree_somewhere(values, row, other, words, masks, nmasks):
                            if found < capacity:
                                left[found] = row
                                right[found] = other
                            found += 1
        start = end
    counts[0] = crowded
    return found


def canonical_pairs(
    values_p, n, words, left_p, right_p, npairs, masks_p, chosen_p, ends_p, nlevels, limits_p
):  # pragma: no cover - compiled
    """Keep, in place and in order, the pairs of rows ``left[p]``, ``right[p]`` of ``values``
    (``words`` uint64 a row) whose tables at every level are their canonical tables
    (:func:`simdedup.pairs.chunk_pairs`); returns how many are kept.

    The blocks of level ``l`` are masks ``ends[l - 1] .. ends[l]`` (rows of ``words`` words
    over the whole fingerprint) in their order, ``chosen`` marking the blocks of the level's
    table: a pair is kept when, at every level, the blocks it agrees on that are among the
    first ``limits[l]`` it agrees on are exactly the chosen ones.
    """
    values = carray(values_p, (max(n, 1), words))
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    ends = carray(ends_p, (max(nlevels, 1),))
    nmasks = ends[nlevels - 1] if nlevels > 0 else 0
    masks = carray(masks_p, (max(nmasks, 1), words))
    chosen = carray(chosen_p, (max(nmasks, 1),))
    limits = carray(limits_p, (max(nlevels, 1),))
    kept = 0
    for p in range(npairs):
        a, b = left[p], right[p]
        ok = True
        m = 0
        for level in range(nlevels):
            agreed = 0
            while m < ends[level]:
                agree = True
                for w in range(words):
                    if (values[a, w] ^ values[b, w]) & masks[m, w] != 0:
                        agree = False
                        break
                if agree:
                    agreed += 1
                if (agree and agreed <= limits[level]) != (chosen[m] != 0):
                    ok = False
                    break
                m += 1
            if not ok:
                break
        if ok:
            left[kept] = a
            right[kept] = b
            kept += 1
    return kept
