"""numba source of the upper-bound kernels (:mod:`simdedup.kernels.exact`): the elements of
multisets, their bitsets over the frequent ones (through a sieve) and the Jaccard bounds."""

import numba
import numpy as np
from numba import carray

from .common import GOLDEN, ONE, _mix, _popcount


@numba.njit(inline="always")
def _element(h, j):  # pragma: no cover - compiled
    """The j-th copy of a hash: a multiset as a set (the hash itself first)."""
    return h if j == 0 else _mix(h ^ (np.uint64(j) * GOLDEN))


def exact_elements(
    hashes_p, weights_p, offsets_p, ndocs, units_p, nunits, weighted, out_p, room
):  # pragma: no cover - compiled
    """The elements of ``units``' runs back to back into ``out`` (``room`` for the caller's
    count of them, never more): each hash ``weight`` times as its copies (once each without
    ``weighted``); returns how many."""
    offsets = carray(offsets_p, (ndocs + 1,))
    hashes = carray(hashes_p, (max(offsets[ndocs], 1),))
    weights = carray(weights_p, (max(offsets[ndocs], 1) if weighted else 1,))
    units = carray(units_p, (max(nunits, 1),))
    out = carray(out_p, (max(room, 1),))
    at = 0
    for r in range(nunits):
        u = units[r]
        for i in range(offsets[u], offsets[u + 1]):
            copies = np.int64(weights[i]) if weighted else 1
            for j in range(min(copies, room - at)):
                out[at] = _element(hashes[i], j)
                at += 1
    return at


#: bits of the sieve in front of the table of frequent elements (16 KiB: it stays in the L1 cache)
SIEVE_BITS = 1 << 17  # (simdedup.kernels.exact.SIEVE_BITS)
SIEVE_SHIFT = 65 - SIEVE_BITS.bit_length()  # a key's top bits, its bit in the sieve


def exact_frequent_bits(
    hashes_p, weights_p, offsets_p, ndocs, units_p, nunits, weighted, keys_p, ids_p, nkeys, bits_p, words, sieve_p
):  # pragma: no cover - compiled
    """Row r of ``bits`` (``words`` uint64 a row, zero on entry): the bitset of the elements of
    unit ``units[r]`` found in the open-addressing table ``keys`` (``nkeys`` slots, a power of
    two, 0 empty) at bit ``ids[slot]``. ``sieve`` has bit ``key >> SIEVE_SHIFT`` set for each key: most
    elements are in no table, and it tells so from the L1 cache (the table is in L2)."""
    offsets = carray(offsets_p, (ndocs + 1,))
    hashes = carray(hashes_p, (max(offsets[ndocs], 1),))
    weights = carray(weights_p, (max(offsets[ndocs], 1) if weighted else 1,))
    units = carray(units_p, (max(nunits, 1),))
    keys = carray(keys_p, (nkeys,))
    ids = carray(ids_p, (nkeys,))
    bits = carray(bits_p, (max(nunits, 1), words))
    sieve = carray(sieve_p, (SIEVE_BITS // 64,))
    mask = np.uint64(nkeys - 1)
    for r in range(nunits):
        u = units[r]
        for i in range(offsets[u], offsets[u + 1]):
            copies = np.int64(weights[i]) if weighted else 1
            for j in range(copies):
                e = _element(hashes[i], j)
                top = e >> np.uint64(SIEVE_SHIFT)
                if (sieve[top >> np.uint64(6)] >> (top & np.uint64(63))) & ONE == 0:
                    continue
                slot = e & mask
                while keys[slot] != 0:
                    if keys[slot] == e:
                        at = ids[slot]
                        bits[r, at >> 6] |= ONE << np.uint64(at & 63)
                        break
                    slot = (slot + ONE) & mask
    return 0


@numba.njit(inline="always")
def _bound(shared, free_a, free_b, size_a, size_b):  # pragma: no cover - compiled
    most = shared + min(free_a, free_b)
    return most / (size_a + size_b - most)


def exact_bounded(
    bits_p, nrows, words, sizes_p, free_p, left_p, right_p, npairs, out_p, prefix, prefix_free_p, cuts_p, ncuts
):  # pragma: no cover
    """For each pair of rows, an upper bound of the Jaccard of their sets into ``out``: the
    elements both rows' bitsets hold, plus at most the smaller number of elements outside the
    bitsets. The first ``prefix`` words (the most frequent elements) are counted first, with
    ``prefix_free`` the elements outside them: a pair whose bound from those is below its cut
    (``cuts[p]``, or ``cuts[0]`` for all when ``ncuts`` is 1) keeps that looser bound, and the
    other words are not read. Any cut is safe: a looser bound is still a bound."""
    bits = carray(bits_p, (max(nrows, 1), words))  # two dimensions: twice as fast as rows flattened by hand
    sizes = carray(sizes_p, (max(nrows, 1),))
    free = carray(free_p, (max(nrows, 1),))
    prefix_free = carray(prefix_free_p, (max(nrows, 1),))
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    out = carray(out_p, (max(npairs, 1),))
    cuts = carray(cuts_p, (max(ncuts, 1),))
    for p in range(npairs):
        a, b = left[p], right[p]
        shared = 0
        for w in range(prefix):
            shared += _popcount(bits[a, w] & bits[b, w])
        bound = _bound(shared, prefix_free[a], prefix_free[b], sizes[a], sizes[b])
        if bound >= cuts[p if ncuts > 1 else 0]:
            for w in range(prefix, words):
                shared += _popcount(bits[a, w] & bits[b, w])
            bound = _bound(shared, free[a], free[b], sizes[a], sizes[b])
        out[p] = bound
    return 0
