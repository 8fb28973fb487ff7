"""numba kernels of :mod:`simdedup.fastpath`; importing this module imports numba."""

import llvmlite.binding
import numba
import numpy as np
import xxhash._xxhash
from numba import types

# Make XXH3_64bits of the xxhash extension visible to compiled code by its symbol name, so numba
# can cache the machine code (a ctypes pointer could not be cached). It takes (pointer, length);
# the pointer is passed as an address, which the C calling convention allows.
llvmlite.binding.load_library_permanently(xxhash._xxhash.__file__)
xxh3 = types.ExternalFunction("XXH3_64bits", types.uint64(types.uintp, types.uintp))

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW32 = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True)
def _grow(keys, counts):  # pragma: no cover - compiled
    capacity = 2 * len(keys)
    mask = capacity - 1
    new_keys = np.zeros(capacity, dtype=np.uint64)
    new_counts = np.zeros(capacity, dtype=np.int64)
    for j in range(len(keys)):
        if counts[j] != 0:
            slot = np.int64(keys[j] & np.uint64(mask))
            while new_counts[slot] != 0:
                slot = (slot + 1) & mask
            new_keys[slot], new_counts[slot] = keys[j], counts[j]
    return new_keys, new_counts


@numba.njit(cache=True)
def count_tokens(data, is_token):  # pragma: no cover - compiled
    """Distinct XXH3-64 hashes of the tokens (maximal runs of bytes with is_token set) and counts.

    An open-addressing table with linear probing; a count of 0 marks a free slot. It starts at
    about a third of the document's bytes (at most 64 Ki slots) and doubles at half load.
    """
    n = len(data)
    capacity = 1024
    while capacity < n // 3 and capacity < 65536:
        capacity *= 2
    mask = capacity - 1
    keys = np.zeros(capacity, dtype=np.uint64)
    counts = np.zeros(capacity, dtype=np.int64)
    size = 0
    base = data.ctypes.data
    i = 0
    while i < n:
        if is_token[data[i]] == 0:
            i += 1
            continue
        start = i
        while i < n and is_token[data[i]] != 0:
            i += 1
        h = xxh3(base + start, i - start)
        slot = np.int64(h & np.uint64(mask))
        while counts[slot] != 0 and keys[slot] != h:
            slot = (slot + 1) & mask
        if counts[slot] == 0:
            keys[slot] = h
            size += 1
        counts[slot] += 1
        if 2 * size > capacity:
            keys, counts = _grow(keys, counts)
            capacity = len(keys)
            mask = capacity - 1
    used = counts != 0
    return keys[used], counts[used]


@numba.njit(cache=True)
def votes(hashes, counts):  # pragma: no cover - compiled
    """For each bit, the total count of the features whose hash has it set."""
    out = np.zeros(64, dtype=np.int64)
    for j in range(len(hashes)):
        h, c = hashes[j], counts[j]
        for bit in range(64):
            if (h >> np.uint64(bit)) & np.uint64(1):
                out[bit] += c
    return out


@numba.njit(cache=True)
def _mix(x):  # pragma: no cover - compiled
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def fingerprint(hashes, counts, shift, empty, bins, binary):  # pragma: no cover - compiled
    """Simhash and sketch (empty when ``bins`` is 0) of distinct hashes with counts.

    The same arithmetic as :func:`simdedup.fingerprint.simhash_words` and
    :func:`simdedup.sketch.make_sketch`: strict majority of bit votes, weighted by count or
    (``binary``) one per feature; bin minima densified from the next filled bin to the right,
    low 8 bits kept.
    """
    weights = np.ones(len(counts), dtype=np.int64) if binary else counts
    bit_votes = votes(hashes, weights)
    total = 0
    for j in range(len(weights)):
        total += weights[j]
    value = np.uint64(0)
    for bit in range(64):
        if 2 * bit_votes[bit] - total > 0:
            value |= np.uint64(1) << np.uint64(bit)
    sketch = np.zeros(bins, dtype=np.uint8)
    if bins == 0:
        return value, sketch
    low = minima(hashes, counts, shift, empty, bins)
    for position in range(bins):
        for hop in range(bins):
            source = (position + hop) % bins
            if low[source] != empty:
                if hop == 0:
                    sketch[position] = np.uint8(low[source] & np.uint64(0xFF))
                else:
                    mixed = _mix(low[source] + np.uint64(hop) * GOLDEN)
                    sketch[position] = np.uint8(mixed & np.uint64(0xFF))
                break
    return value, sketch


@numba.njit(cache=True)
def minima(hashes, counts, shift, empty, bins):  # pragma: no cover - compiled
    """The sketch's bin minima, as :func:`simdedup.sketch.sketch_minima` computes them."""
    out = np.full(bins, empty, dtype=np.uint64)
    for j in range(len(hashes)):
        h = hashes[j]
        for rank in range(counts[j]):
            x = _mix(h ^ (np.uint64(rank) * GOLDEN))
            b = x >> shift
            v = x & LOW32
            if v < out[b]:
                out[b] = v
    return out
