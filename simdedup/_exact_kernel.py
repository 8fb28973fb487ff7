"""numba source of :func:`simdedup.similarity.exact_sets` (compiled on first use, cached on disk)."""

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_PRIME = np.uint64(0x100000001B3)
# kinds of code points in the table (as simdedup.similarity._tables): a separator, part of a run,
# a token of its own that is a word (a CJK character, or any code point beyond the table), one
# that is punctuation
_SPACE, _RUN, _ONE_WORD, _ONE_PUNCT = 0, 1, 2, 3


@numba.njit(inline="always")
def _mix(x):  # pragma: no cover - compiled; splitmix64's finalizer, as simdedup.sketch._mix
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(inline="always")
def _add(token, word, words, grams, n_words, tokens, p1, p2):  # pragma: no cover - compiled
    """Store a token: its hash at the end of ``words`` (counted if ``word``), and the 3-gram it
    ends at ``grams[tokens - 2]`` (``p1``, ``p2``: the chained hashes of the last one and two
    tokens before it). Returns the new ``n_words, tokens, p1, p2``."""
    words[np.uint64(n_words)] = token  # unsigned indices: numba tests signed ones for wrapping around
    grams[np.uint64(max(tokens - 2, 0))] = _mix(p2 * _GOLDEN + token)
    return n_words + word, tokens + 1, _mix(token), _mix(p1 * _GOLDEN + token)


@numba.njit(cache=True, nogil=True)
def token_arrays(data, table):  # pragma: no cover - compiled
    """``(word hashes, 3-gram hashes, -1)`` of one text in UTF-8 (``data``, uint8; surrogates as
    ``surrogatepass`` writes them), both in text order; ``(empty, empty, position)`` at the first
    byte where Python's decoder stops (nothing overlong, nothing beyond U+10FFFF).

    ``table[c]`` is code point c's entry: the code point it counts as (lower-cased or not) << 2
    | its kind. A token is a run of code points of kind run, or one code point of another kind
    but separator (beyond the table: a word); its hash mixes the polynomial hash of its code
    points with its length. Words are the tokens that are not punctuation; 3-grams chain all
    tokens (one gram of all of them when there are fewer than 3). One pass, with the decoding
    inline (a call costs more): each token is hashed, and its 3-gram chained, as it ends.
    """
    size = len(data)
    words = np.empty(size, dtype=np.uint64)
    grams = np.empty(max(size, 1), dtype=np.uint64)
    n_words, tokens = 0, 0
    p1 = p2 = np.uint64(0)
    run = length = np.uint64(0)
    i = 0
    while i < size:
        lead = np.int64(data[np.uint64(i)])
        if lead < 0x80:
            entry = np.int64(table[lead])
            i += 1
        else:
            if lead < 0xE0:
                if lead < 0xC2 or i + 1 >= size:
                    return words[:0], grams[:0], i
                c1 = np.int64(data[i + 1])
                if c1 & 0xC0 != 0x80:
                    return words[:0], grams[:0], i
                point = (lead & 0x1F) << 6 | c1 & 0x3F
                i += 2
            elif lead < 0xF0:
                if i + 2 >= size:
                    return words[:0], grams[:0], i
                c1 = np.int64(data[i + 1])
                c2 = np.int64(data[i + 2])
                point = (lead & 0x0F) << 12 | (c1 & 0x3F) << 6 | c2 & 0x3F
                if (c1 & 0xC0 != 0x80) | (c2 & 0xC0 != 0x80) | (point < 0x800):  # surrogates pass
                    return words[:0], grams[:0], i
                i += 3
            else:
                if i + 3 >= size:
                    return words[:0], grams[:0], i
                c1 = np.int64(data[i + 1])
                c2 = np.int64(data[i + 2])
                c3 = np.int64(data[i + 3])
                point = (lead & 0x07) << 18 | (c1 & 0x3F) << 12 | (c2 & 0x3F) << 6 | c3 & 0x3F
                if ((lead > 0xF4) | (c1 & 0xC0 != 0x80) | (c2 & 0xC0 != 0x80) | (c3 & 0xC0 != 0x80)
                        | (point < 0x10000) | (point > 0x10FFFF)):
                    return words[:0], grams[:0], i
                i += 4
            entry = np.int64(table[point]) if point < 0x10000 else point << 2 | _ONE_WORD
        kind = entry & 3
        code = np.uint64(entry >> 2)
        if kind == _RUN:
            run = run * _PRIME + code
            length += np.uint64(1)
            continue
        if length > 0:
            n_words, tokens, p1, p2 = _add(_mix(run ^ (length * _GOLDEN)), 1, words, grams, n_words, tokens, p1, p2)
            run = length = np.uint64(0)
        if kind != _SPACE:
            n_words, tokens, p1, p2 = _add(_mix(code ^ _GOLDEN), kind == _ONE_WORD, words, grams, n_words, tokens,
                                           p1, p2)
    if length > 0:
        n_words, tokens, p1, p2 = _add(_mix(run ^ (length * _GOLDEN)), 1, words, grams, n_words, tokens, p1, p2)
    if tokens in (1, 2):
        grams[0] = p1 if tokens == 1 else p2
    return words[:n_words], grams[: max(tokens - 2, min(tokens, 1))], -1


@numba.njit(inline="always")
def _count_distinct(hashes):  # pragma: no cover - compiled
    count = min(len(hashes), 1)
    for i in range(1, len(hashes)):
        count += hashes[i] != hashes[i - 1]
    return count


@numba.njit(cache=True, nogil=True)
def distinct_sets(words, grams):  # pragma: no cover - compiled
    """``(distinct words, how often each occurs (uint32), distinct grams)`` of sorted hashes: a
    pass to count them, one without branches to copy them into arrays of their size."""
    distinct_words = np.empty(_count_distinct(words), dtype=np.uint64)
    counts = np.empty(len(distinct_words), dtype=np.uint32)
    if len(words):
        distinct_words[0] = words[0]
        at = first = 0
        for i in range(1, len(words)):
            counts[np.uint64(at)] = i - first  # so far; final when the next hash differs
            new = words[i] != words[i - 1]
            at += new
            first = i if new else first
            distinct_words[np.uint64(at)] = words[i]
        counts[at] = len(words) - first
    distinct_grams = np.empty(_count_distinct(grams), dtype=np.uint64)
    if len(grams):
        distinct_grams[0] = grams[0]
        at = 0
        for i in range(1, len(grams)):
            at += grams[i] != grams[i - 1]
            distinct_grams[np.uint64(at)] = grams[i]
    return distinct_words, counts, distinct_grams


@numba.njit(inline="always")
def _shared(hashes, weights, offsets, a, b, weighted):  # pragma: no cover - compiled
    """The sum over the hashes documents ``a`` and ``b`` both hold of the smaller weight (1 each
    without ``weighted``): a merge of the two sorted runs ``offsets[d]:offsets[d + 1]``."""
    i, i_end = offsets[a], offsets[a + 1]
    j, j_end = offsets[b], offsets[b + 1]
    total = 0
    while i < i_end and j < j_end:
        x, y = hashes[i], hashes[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            total += min(weights[i], weights[j]) if weighted else 1
            i += 1
            j += 1
    return total


@numba.njit(cache=True, nogil=True)
def shared_weights(hashes, weights, offsets, left, right, weighted):  # pragma: no cover - compiled
    """:func:`_shared` of each pair ``left[p]``, ``right[p]``."""
    out = np.zeros(len(left), dtype=np.int64)
    for p in range(len(left)):
        out[p] = _shared(hashes, weights, offsets, left[p], right[p], weighted)
    return out


#: the measures of :func:`simdedup.similarity.passes`, by number (for :func:`link_complete`)
MEASURE_CODES = {"combined": 0, "bag": 1, "resemblance": 2}


@numba.njit(inline="always")
def _find(parent, x):  # pragma: no cover - compiled; path halving
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@numba.njit(inline="always")
def _passes(a, b, has, bag, grams, sketches, agreement, measure, min_similarity, min_resemblance,
            floor):  # pragma: no cover - compiled
    """:meth:`simdedup.group._PairTest.passes` of one pair: exactly when both have sets, else on
    the sketches' estimate of the bag similarity."""
    if not (has[a] and has[b]):
        agree = 0
        for c in range(sketches.shape[1]):
            agree += sketches[a, c] == sketches[b, c]
        return agreement[agree] >= min_similarity
    shared = _shared(bag[0], bag[1], bag[2], a, b, True)
    similarity = shared / (bag[3][a] + bag[3][b] - shared)
    if measure == 1:
        return similarity >= min_similarity
    shared = _shared(grams[0], grams[1], grams[2], a, b, False)
    resemblance = shared / (grams[3][a] + grams[3][b] - shared)
    if measure == 2:
        return resemblance >= min_resemblance
    return resemblance >= min_resemblance or (similarity >= min_similarity and resemblance >= floor)


@numba.njit(cache=True)
def link_complete(n, left, right, has, bag, grams, sketches, agreement, measure, min_similarity, min_resemblance,
                  floor):  # pragma: no cover - compiled
    """:func:`simdedup.group._link_complete_python` with its test done exactly
    (:func:`_passes`): the same steps, compiled. ``bag`` and ``grams`` are the
    ``(hashes, weights, offsets, totals)`` of :class:`simdedup.similarity.ExactIndex`. Returns
    each unit's cluster root, and how many pairs were tested."""
    m = len(left)
    degree = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        degree[left[e] + 1] += 1
        degree[right[e] + 1] += 1
    offsets = np.cumsum(degree)
    adjacency = np.empty(2 * m, dtype=np.int64)
    filled = offsets[:-1].copy()
    for e in range(m):
        adjacency[filled[left[e]]] = right[e]
        filled[left[e]] += 1
        adjacency[filled[right[e]]] = left[e]
        filled[right[e]] += 1
    parent = np.arange(n)
    following = np.full(n, -1, dtype=np.int64)  # members as linked lists: head is the root
    last = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    edges = offsets[1:] - offsets[:-1]
    across = dict()  # (cluster a, cluster b), a < b, as a * n + b -> slot of its counts
    count = np.ones(m, dtype=np.int64)
    failed = np.zeros(m, dtype=np.bool_)
    for e in range(m):
        across[min(left[e], right[e]) * n + max(left[e], right[e])] = e
    tested = 0
    for e in range(m):
        a, b = _find(parent, left[e]), _find(parent, right[e])
        if a == b:
            continue
        key = min(a, b) * n + max(a, b)
        slot = across[key]
        if failed[slot]:
            continue
        if count[slot] != size[a] * size[b]:
            ok = True
            u = a
            while u != -1 and ok:
                v = b
                while v != -1:
                    tested += 1
                    if not _passes(u, v, has, bag, grams, sketches, agreement, measure, min_similarity,
                                   min_resemblance, floor):
                        ok = False
                        break
                    v = following[v]
                u = following[u]
            if not ok:
                failed[slot] = True
                continue
        keep, gone = (a, b) if edges[a] >= edges[b] else (b, a)
        del across[key]
        u = gone
        while u != -1:
            for at in range(offsets[u], offsets[u + 1]):
                other = _find(parent, adjacency[at])
                if other == gone or other == keep:
                    continue
                moved_key = min(gone, other) * n + max(gone, other)
                if moved_key not in across:  # already handed over, through another edge
                    continue
                moved = across[moved_key]
                del across[moved_key]
                kept_key = min(keep, other) * n + max(keep, other)
                if kept_key in across:
                    kept = across[kept_key]
                    count[kept] += count[moved]
                    failed[kept] |= failed[moved]
                else:
                    across[kept_key] = moved
            u = following[u]
        parent[gone] = keep
        following[last[keep]] = gone
        last[keep] = last[gone]
        size[keep] += size[gone]
        edges[keep] += edges[gone]
    roots = np.empty(n, dtype=np.int64)
    for u in range(n):
        roots[u] = _find(parent, u)
    return roots, tested


@numba.njit(inline="always")
def _popcount(x):  # pragma: no cover - compiled; SWAR (LLVM makes it one instruction)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@numba.njit(inline="always")
def _element(h, j):  # pragma: no cover - compiled
    """The j-th copy of a hash: a multiset as a set (the hash itself first)."""
    return h if j == 0 else _mix(h ^ (np.uint64(j) * _GOLDEN))


@numba.njit(cache=True, nogil=True)
def elements(hashes, weights, offsets, units, weighted):  # pragma: no cover - compiled
    """The elements of ``units``' runs back to back: each hash ``weight`` times as its copies
    (once each without ``weighted``)."""
    total = 0
    for u in units:
        if weighted:
            for i in range(offsets[u], offsets[u + 1]):
                total += weights[i]
        else:
            total += offsets[u + 1] - offsets[u]
    out = np.empty(total, dtype=np.uint64)
    at = 0
    for u in units:
        for i in range(offsets[u], offsets[u + 1]):
            copies = weights[i] if weighted else 1
            for j in range(copies):
                out[at] = _element(hashes[i], j)
                at += 1
    return out


@numba.njit(cache=True, nogil=True)
def frequent_bits(hashes, weights, offsets, units, weighted, keys, ids, words):  # pragma: no cover - compiled
    """Row r: the bitset of the elements of unit ``units[r]`` found in the open-addressing table
    ``keys`` (power-of-two size, 0 empty) at bit ``ids[slot]``."""
    bits = np.zeros((len(units), words), dtype=np.uint64)
    mask = np.uint64(len(keys) - 1)
    one = np.uint64(1)
    for r in range(len(units)):
        u = units[r]
        for i in range(offsets[u], offsets[u + 1]):
            copies = weights[i] if weighted else 1
            for j in range(copies):
                e = _element(hashes[i], j)
                slot = e & mask
                while keys[slot] != 0:
                    if keys[slot] == e:
                        at = ids[slot]
                        bits[r, at >> 6] |= one << np.uint64(at & 63)
                        break
                    slot = (slot + one) & mask
    return bits


@numba.njit(cache=True, nogil=True)
def bounded_jaccard(bits, sizes, free, left, right):  # pragma: no cover - compiled
    """For each pair of rows, an upper bound of the Jaccard of their sets: the elements both
    rows' bitsets hold, plus at most the smaller number of elements outside the bitsets."""
    out = np.empty(len(left), dtype=np.float64)
    words = bits.shape[1]
    for p in range(len(left)):
        a, b = left[p], right[p]
        shared = 0
        for w in range(words):
            shared += _popcount(bits[a, w] & bits[b, w])
        most = shared + min(free[a], free[b])
        out[p] = most / (sizes[a] + sizes[b] - most)
    return out
