"""numba source of the linkage kernel (:mod:`simdedup.kernels.linkage`): complete linkage over
verified pairs."""

import numba
import numpy as np
from numba import carray

from .common import ONE, _mix, _popcount
from .exact import _exact_runs, _verdict

#: link_complete(n, nedges, left, right, offsets, adjacency, sketches, bins, passing, fps, words, k,
#:               parent, size, volume, next_member, keys, good, bad, capacity,
#:               exact, has, bag_hashes, bag_weights, bag_offsets, bag_totals, gram_hashes, gram_offsets,
#:               gram_totals, measure, min_similarity, min_resemblance, floor) -> pairs merged (-1: a bug)


def link_complete(
    n,
    nedges,
    left_p,
    right_p,
    offsets_p,
    adjacency_p,
    sketches_p,
    bins,
    passing_p,
    first_bins,
    fps_p,
    words,
    k,
    parent_p,
    size_p,
    volume_p,
    next_p,
    keys_p,
    good_p,
    bad_p,
    capacity,
    exact,
    has_p,
    bag_hashes_p,
    bag_weights_p,
    bag_offsets_p,
    bag_totals_p,
    gram_hashes_p,
    gram_offsets_p,
    gram_totals_p,
    measure,
    min_similarity,
    min_resemblance,
    floor,
    evidence,
):  # pragma: no cover - compiled
    """Complete linkage of ``n`` units (:func:`simdedup.linkage._link_complete`): the verified
    edges ``left[e]``-``right[e]`` are taken in order, and each joins its two clusters when every
    pair across them passes the test.

    The test: with ``exact`` and when both units have exact sets (``has``), the exact measure
    (:func:`_verdict` over the units' runs of sorted hashes, as
    :class:`simdedup.similarity.ExactIndex` keeps them); otherwise, with ``bins`` > 0,
    ``passing[m]`` for two sketches (rows of ``sketches``, a bin a byte) that agree in ``m``
    bins, or with ``first_bins`` > 0 (sketches of shingles, :mod:`simdedup.shingle_sketch`)
    ``passing[t * (bins + 1) + m]`` for the bins their kinds compare (t = 0: both of words, all
    but the last bin; 1: both of characters, their own parts; 2: one of each, the first
    ``first_bins``); otherwise at
    most ``k`` differing bits of the ``words``-word fingerprints. Returns how many pairs were
    measured exactly.
    ``adjacency`` receives each unit's edges, unit ``u``'s from ``offsets[u]`` (the running sums
    of their numbers) to ``offsets[u + 1]``. A hash table of ``capacity``
    slots (a power of two, at least twice ``nedges``; ``keys`` all ones on entry) holds, for
    each pair of clusters with an edge between them, the number of edges across (``good``) and
    whether a pair across is known to fail (``bad``); it is keyed by their roots, low * n + high.
    An edge joins at once when ``good`` is the product of the sizes, is refused at once when
    ``bad``, and otherwise has every pair across tested (once: a failing pair is remembered).
    When two clusters join, the one with fewer edges (``volume``) hands its entries over to the
    other, found through its members' edges, so that each edge is looked at O(log) times.
    ``parent`` ends as each unit's cluster (a unit of it); ``size``, ``volume``, ``next_member``
    (the members of a cluster, a ring) are scratch.
    """
    left = carray(left_p, (max(nedges, 1),))
    right = carray(right_p, (max(nedges, 1),))
    offsets = carray(offsets_p, (n + 1,))
    adjacency = carray(adjacency_p, (max(2 * nedges, 1),))
    sketches = carray(sketches_p, (max(n * bins, 1),))
    passing = carray(passing_p, ((3 if first_bins > 0 else 1) * (bins + 1),))
    fps = carray(fps_p, (max(n * words, 1),))
    parent = carray(parent_p, (n,))
    size = carray(size_p, (n,))
    volume = carray(volume_p, (n,))
    next_member = carray(next_p, (n,))
    keys = carray(keys_p, (capacity,))
    good = carray(good_p, (capacity,))
    bad = carray(bad_p, (capacity,))
    units = n if exact else 0  # without exact sets, each of their arrays holds one zero
    has = carray(has_p, (max(units, 1),))
    runs = _exact_runs(
        units, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p, gram_totals_p
    )
    merged = 0
    empty = ~np.uint64(0)
    mask = np.uint64(capacity - 1)
    un = np.uint64(n)
    for u in range(n):
        volume[u] = offsets[u]  # for now, where the next edge of ``u`` goes
    for e in range(nedges):
        adjacency[volume[left[e]]] = right[e]
        volume[left[e]] += 1
        adjacency[volume[right[e]]] = left[e]
        volume[right[e]] += 1
    for u in range(n):
        parent[u] = u
        size[u] = 1
        volume[u] = offsets[u + 1] - offsets[u]
        next_member[u] = u
    for e in range(nedges):
        key = np.uint64(min(left[e], right[e])) * un + np.uint64(max(left[e], right[e]))
        slot = _mix(key) & mask
        while keys[slot] != empty:
            slot = (slot + ONE) & mask
        keys[slot] = key
        good[slot] = 1
        bad[slot] = 0
    for e in range(nedges):
        a = left[e]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = right[e]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a == b:
            continue
        key = np.uint64(min(a, b)) * un + np.uint64(max(a, b))
        slot = _mix(key) & mask
        while keys[slot] != key and keys[slot] != empty:
            slot = (slot + ONE) & mask
        if keys[slot] == empty:  # cannot be: this very edge is between the two clusters
            return -1
        if bad[slot]:
            continue
        if good[slot] != size[a] * size[b]:
            joins = True
            x = a
            while joins:
                y = b
                while True:
                    if exact and has[x] != 0 and has[y] != 0:
                        merged += 1
                        ok = _verdict(x, y, runs, measure, min_similarity, min_resemblance, floor, evidence)[0]
                    elif bins > 0 and first_bins > 0:
                        ok = passing[_shingle_agreement(sketches, x, y, bins, first_bins)] != 0
                    elif bins > 0:
                        agree = 0
                        for i in range(bins):
                            if sketches[x * bins + i] == sketches[y * bins + i]:
                                agree += 1
                        ok = passing[agree] != 0
                    else:
                        differ = 0
                        for w in range(words):
                            differ += _popcount(fps[x * words + w] ^ fps[y * words + w])
                        ok = differ <= k
                    if not ok:
                        joins = False
                        break
                    y = next_member[y]
                    if y == b:
                        break
                x = next_member[x]
                if x == a:
                    break
            if not joins:
                bad[slot] = 1
                continue
        # Join: ``keep`` takes over the entries of ``gone``.
        keep, gone = (a, b) if volume[a] >= volume[b] else (b, a)
        _delete(keys, good, bad, slot, mask, empty)
        m = gone
        while True:
            for p in range(offsets[m], offsets[m + 1]):
                c = adjacency[p]
                while parent[c] != c:
                    parent[c] = parent[parent[c]]
                    c = parent[c]
                if c == gone or c == keep:
                    continue
                old = np.uint64(min(gone, c)) * un + np.uint64(max(gone, c))
                slot = _mix(old) & mask
                while keys[slot] != old and keys[slot] != empty:
                    slot = (slot + ONE) & mask
                if keys[slot] == empty:  # already handed over, through another edge
                    continue
                count, failed = good[slot], bad[slot]
                _delete(keys, good, bad, slot, mask, empty)
                new = np.uint64(min(keep, c)) * un + np.uint64(max(keep, c))
                slot = _mix(new) & mask
                while keys[slot] != new and keys[slot] != empty:
                    slot = (slot + ONE) & mask
                if keys[slot] == empty:
                    keys[slot] = new
                    good[slot] = count
                    bad[slot] = failed
                else:
                    good[slot] += count
                    bad[slot] |= failed
            m = next_member[m]
            if m == gone:
                break
        parent[gone] = keep
        size[keep] += size[gone]
        volume[keep] += volume[gone]
        next_member[keep], next_member[gone] = next_member[gone], next_member[keep]  # one ring
    for u in range(n):
        r = u
        while parent[r] != r:
            r = parent[r]
        parent[u] = r
    return merged


@numba.njit(inline="always")
def _shingle_agreement(sketches, x, y, bins, first_bins):  # pragma: no cover - compiled
    """Where in the passing tables two sketches of shingles (a bin a byte) fall: the table of
    their kinds (their last bins) and the bins of it they agree in."""
    kind_x, kind_y = sketches[x * bins + bins - 1], sketches[y * bins + bins - 1]
    first = own = 0
    for i in range(first_bins):
        first += sketches[x * bins + i] == sketches[y * bins + i]
    if kind_x == kind_y:
        for i in range(first_bins, bins - 1):
            own += sketches[x * bins + i] == sketches[y * bins + i]
    if kind_x != kind_y:
        return 2 * (bins + 1) + first
    if kind_x == 0:
        return first + own
    return (bins + 1) + own


@numba.njit(inline="always")
def _delete(keys, good, bad, slot, mask, empty):  # pragma: no cover - compiled
    """Empty ``slot`` of a linear-probing table, moving back the entries after it that would
    otherwise no longer be found (no tombstones)."""
    hole = slot
    probe = slot
    while True:
        probe = (probe + ONE) & mask
        if keys[probe] == empty:
            break
        home = _mix(keys[probe]) & mask
        # the entry stays when its home lies cyclically in (hole, probe]
        if (hole < probe and hole < home <= probe) or (hole > probe and (home > hole or home <= probe)):
            continue
        keys[hole] = keys[probe]
        good[hole] = good[probe]
        bad[hole] = bad[probe]
        hole = probe
    keys[hole] = empty
