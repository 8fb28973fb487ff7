"""numba source of the upper-bound kernels (:mod:`simdedup.kernels.exact`): each document's
elements counted in buckets, and the Jaccard bounds of pairs from them."""

import numpy as np
from numba import carray


def exact_bucket_counts(
    hashes_p, weights_p, offsets_p, ndocs, units_p, nunits, weighted, totals_p, shift, buckets, limit, counts_p
):  # pragma: no cover - compiled
    """Row r of ``counts`` (``buckets`` uint16 a row): the weight of unit ``units[r]``'s hashes
    (their number without ``weighted``) in each bucket, a hash's bucket its top bits (``hash >>
    shift``). The row of a unit of ``limit`` (at most 65,535) or more elements in all, whose
    counts could overflow, is left zero: :func:`exact_bucket_bounded` does without it."""
    offsets = carray(offsets_p, (ndocs + 1,))
    hashes = carray(hashes_p, (max(offsets[ndocs], 1),))
    weights = carray(weights_p, (max(offsets[ndocs], 1) if weighted else 1,))
    units = carray(units_p, (max(nunits, 1),))
    totals = carray(totals_p, (max(ndocs, 1),))
    counts = carray(counts_p, (max(nunits, 1), buckets))
    for r in range(nunits):
        u = units[r]
        for k in range(buckets):
            counts[r, k] = 0
        if totals[u] >= limit:
            continue
        for i in range(offsets[u], offsets[u + 1]):
            k = np.int64(hashes[i] >> np.uint64(shift))
            counts[r, k] += np.uint16(weights[i]) if weighted else np.uint16(1)
    return 0


def exact_bucket_bounded(counts_p, nrows, buckets, sizes_p, limit, left_p, right_p, npairs, out_p):  # pragma: no cover
    """For each pair of rows of ``counts`` (:func:`exact_bucket_counts`; ``sizes``: their
    elements), an upper bound of the Jaccard of their multisets into ``out``: an element both
    hold falls in the same bucket of both, so they share at most the smaller count of each
    bucket. A row of ``limit`` or more elements has no counts: it may share all of the other's."""
    counts = carray(counts_p, (max(nrows, 1), buckets))
    sizes = carray(sizes_p, (max(nrows, 1),))
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    out = carray(out_p, (max(npairs, 1),))
    for p in range(npairs):
        a, b = left[p], right[p]
        most = min(sizes[a], sizes[b])
        if sizes[a] < limit and sizes[b] < limit:
            shared = 0
            for k in range(buckets):
                shared += np.int64(min(counts[a, k], counts[b, k]))
            most = min(most, shared)
        out[p] = most / (sizes[a] + sizes[b] - most)
    return 0
