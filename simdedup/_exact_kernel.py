"""numba source of :func:`simdedup.similarity.exact_sets` (compiled on first use, cached on disk)."""

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_PRIME = np.uint64(0x100000001B3)
_WORD, _ONE = 1, 2


@numba.njit(inline="always")
def _mix(x):  # pragma: no cover - compiled; splitmix64's finalizer, as simdedup.sketch._mix
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def token_arrays(points, classes, lower, punctuation, lowercase, n):  # pragma: no cover - compiled
    """``(token hashes, whether each is a word, n-gram hashes)`` of the code points of one text.

    A token is a run of code points of class word, or one code point of class one (beyond the
    tables' range: one); its hash mixes the polynomial hash of its code points with its length.
    Words are the tokens that are not punctuation; n-grams chain all tokens (one n-gram of all
    of them when there are fewer than n).
    """
    size = len(points)
    tokens = np.empty(size, dtype=np.uint64)
    is_word = np.empty(size, dtype=np.bool_)
    count = 0
    run = np.uint64(0)
    length = np.uint64(0)
    limit = np.uint32(len(classes))
    for i in range(size + 1):
        kind = np.uint8(0)
        punct = False
        code = np.uint64(0)
        if i < size:
            point = points[i]
            code = np.uint64(point)
            kind = np.uint8(_ONE)
            if point < limit:
                kind = classes[point]
                punct = punctuation[point]
                if lowercase:
                    code = np.uint64(lower[point])
        if kind == _WORD:
            run = run * _PRIME + code
            length += np.uint64(1)
            continue
        if length > 0:
            tokens[count] = _mix(run ^ (length * _GOLDEN))
            is_word[count] = True
            count += 1
            run = np.uint64(0)
            length = np.uint64(0)
        if kind == _ONE:
            tokens[count] = _mix(code ^ _GOLDEN)
            is_word[count] = not punct
            count += 1
    grams_n = min(n, count)
    grams = np.empty(max(count - grams_n + 1, 0), dtype=np.uint64)
    for i in range(len(grams)):
        gram = np.uint64(0)
        for j in range(grams_n):
            gram = _mix(gram * _GOLDEN + tokens[i + j])
        grams[i] = gram
    return tokens[:count], is_word[:count], grams


@numba.njit(cache=True, nogil=True)
def shared_weights(hashes, weights, offsets, left, right, weighted):  # pragma: no cover - compiled
    """For each pair, the sum over the hashes both documents hold of the smaller weight (1 each
    without ``weighted``): a merge of the two sorted runs ``offsets[d]:offsets[d + 1]``."""
    out = np.zeros(len(left), dtype=np.int64)
    for p in range(len(left)):
        i, i_end = offsets[left[p]], offsets[left[p] + 1]
        j, j_end = offsets[right[p]], offsets[right[p] + 1]
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
        out[p] = total
    return out


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
