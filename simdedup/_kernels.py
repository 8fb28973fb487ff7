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
def count_tokens(data, is_token):  # pragma: no cover - compiled
    """Distinct XXH3-64 hashes of the tokens (maximal runs of bytes with is_token set) and counts."""
    capacity = 1024
    keys = np.zeros(capacity, dtype=np.uint64)
    counts = np.zeros(capacity, dtype=np.int64)
    used = np.zeros(capacity, dtype=np.uint8)
    size = 0
    n = len(data)
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
        slot = h & np.uint64(capacity - 1)
        while used[slot] and keys[slot] != h:
            slot = (slot + np.uint64(1)) & np.uint64(capacity - 1)
        if used[slot]:
            counts[slot] += 1
            continue
        used[slot], keys[slot], counts[slot] = 1, h, 1
        size += 1
        if 2 * size > capacity:  # grow and rehash
            old_keys, old_counts, old_used = keys, counts, used
            capacity *= 2
            keys = np.zeros(capacity, dtype=np.uint64)
            counts = np.zeros(capacity, dtype=np.int64)
            used = np.zeros(capacity, dtype=np.uint8)
            for j in range(len(old_keys)):
                if old_used[j]:
                    slot = old_keys[j] & np.uint64(capacity - 1)
                    while used[slot]:
                        slot = (slot + np.uint64(1)) & np.uint64(capacity - 1)
                    used[slot], keys[slot], counts[slot] = 1, old_keys[j], old_counts[j]
    mask = used == 1
    return keys[mask], counts[mask]


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
def minima(hashes, counts, shift, empty, bins):  # pragma: no cover - compiled
    """The sketch's bin minima, as :func:`simdedup.sketch.sketch_minima` computes them."""
    out = np.full(bins, empty, dtype=np.uint64)
    for j in range(len(hashes)):
        h = hashes[j]
        for rank in range(counts[j]):
            x = h ^ (np.uint64(rank) * GOLDEN)
            x = x ^ (x >> np.uint64(30))
            x = x * np.uint64(0xBF58476D1CE4E5B9)
            x = x ^ (x >> np.uint64(27))
            x = x * np.uint64(0x94D049BB133111EB)
            x = x ^ (x >> np.uint64(31))
            b = x >> shift
            v = x & LOW32
            if v < out[b]:
                out[b] = v
    return out
