"""numba source of the :mod:`simdedup.fastpath` kernel; importing this module imports numba.

The kernel is a C function over raw pointers that allocates nothing: the caller passes every
buffer, including the scratch hash table. So its machine code refers to no numba runtime
symbol, only to ``XXH3_64bits``, and :mod:`simdedup.fastpath` can keep that code and load it
later with llvmlite alone, without importing numba (which costs about 0.4 s per process).
"""

import llvmlite.binding
import numba
import numpy as np
import xxhash._xxhash
from numba import carray, types

# XXH3_64bits of the xxhash extension, linked by its symbol name. It takes (pointer, length);
# the pointer is passed as an address, which the C calling convention allows.
llvmlite.binding.load_library_permanently(xxhash._xxhash.__file__)
xxh3 = types.ExternalFunction("XXH3_64bits", types.uint64(types.uintp, types.uintp))

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW32 = np.uint64(0xFFFFFFFF)
ONE = np.uint64(1)
PLANES = 48  # bit planes of the vote counters: totals below 2**48 (fastpath.PLANES)

_u8p, _i64p, _u64p = types.CPointer(types.uint8), types.CPointer(types.int64), types.CPointer(types.uint64)
#: fingerprint_batch(data, data_address, offsets, ndocs, is_token, bins, shift, binary,
#:                   values, features, sketches, table, used, capacity, scratch) -> 0
SIGNATURE = types.int64(_u8p, types.uintp, _i64p, types.int64, _u8p, types.int64, types.uint64, types.int64,
                        _u64p, _i64p, _u8p, _u64p, _i64p, types.int64, _u64p)
SCRATCH_WORDS = PLANES + 4096  # vote planes, then the sketch's bin minima (at most 4096 bins)


@numba.njit(inline="always")
def _mix(x):  # pragma: no cover - compiled
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def fingerprint_batch(data_p, address, offsets_p, ndocs, is_token_p, bins, shift, binary,
                      values_p, features_p, sketches_p, table_p, used_p, capacity, scratch_p):  # pragma: no cover
    """Simhash, feature count and sketch of each document of a batch.

    ``data`` holds the ASCII documents back to back, document ``d`` at ``offsets[d]:offsets[d + 1]``;
    it is lower-cased in place as it is read. Tokens are maximal runs of bytes with ``is_token``
    set; each distinct token's XXH3-64 hash is counted in an open-addressing table (``table``
    holds key and count side by side, so a probe touches one cache line; at most ``capacity``
    slots, a power of two at least 1024; counts are all zero on entry and are left so). The
    arithmetic is that of :func:`simdedup.fingerprint.simhash_words` and
    :func:`simdedup.sketch.make_sketch`: bit ``b`` is set when the votes of the features with
    bit ``b`` set are a strict majority of all votes, each feature voting once (``binary``) or
    by count; bin minima of the ranked feature copies, densified from the next filled bin to
    the right, low 8 bits kept. ``features[d]`` is the number of distinct tokens, or -1 when
    they overflow half of ``capacity`` (the caller retries with a larger one).
    """
    offsets = carray(offsets_p, (ndocs + 1,))
    data = carray(data_p, (offsets[ndocs],))
    is_token = carray(is_token_p, (256,))
    values = carray(values_p, (ndocs,))
    features = carray(features_p, (ndocs,))
    sketches = carray(sketches_p, (ndocs * bins,))
    table = carray(table_p, (2 * capacity,))
    used = carray(used_p, (capacity,))
    scratch = carray(scratch_p, (PLANES + 4096,))
    empty = np.uint64(1) << np.uint64(40)  # as simdedup.sketch.EMPTY: above every 32-bit value
    for d in range(ndocs):
        end = offsets[d + 1]
        # A small table for a small document stays in cache: a quarter of its bytes, doubled
        # (and the document counted again) whenever it fills to half.
        slots = 1024
        while slots < capacity and slots < (end - offsets[d]) // 4:
            slots *= 2
        slots = min(slots, capacity)
        while True:
            mask = np.uint64(slots - 1)
            size = 0
            overflow = False
            i = offsets[d]
            while i < end:
                c = data[i]
                if is_token[c] == 0:
                    i += 1
                    continue
                start = i
                while i < end:
                    c = data[i]
                    if is_token[c] == 0:
                        break
                    if 65 <= c <= 90:  # 'A' to 'Z'
                        data[i] = c + 32
                    i += 1
                h = xxh3(address + start, i - start)
                slot = np.int64(h & mask)
                while table[2 * slot + 1] != 0 and table[2 * slot] != h:
                    slot = np.int64(np.uint64(slot + 1) & mask)
                if table[2 * slot + 1] == 0:
                    if 2 * size == slots:
                        overflow = True
                        break
                    table[2 * slot] = h
                    used[size] = slot
                    size += 1
                table[2 * slot + 1] += ONE
            if not overflow or slots == capacity:
                break
            for j in range(size):
                table[2 * used[j] + 1] = 0
            slots *= 2
        if overflow:
            features[d] = -1
        else:
            features[d] = size
            for p in range(PLANES):
                scratch[p] = np.uint64(0)
            total = 0
            for j in range(size):
                h = table[2 * used[j]]
                weight = 1 if binary else np.int64(table[2 * used[j] + 1])
                total += weight
                plane = 0
                while weight:  # add h times weight to the bit-sliced counters
                    if weight & 1:
                        carry = h
                        q = plane
                        while carry:
                            overlap = scratch[q] & carry
                            scratch[q] ^= carry
                            carry = overlap
                            q += 1
                    weight >>= 1
                    plane += 1
            value = np.uint64(0)
            used_planes = 1
            while used_planes < PLANES and (1 << used_planes) <= total:  # no vote exceeds the total
                used_planes += 1
            for bit in range(64):
                vote = 0
                for p in range(used_planes):
                    vote += np.int64((scratch[p] >> np.uint64(bit)) & ONE) << p
                if 2 * vote - total > 0:
                    value |= ONE << np.uint64(bit)
            values[d] = value
            if bins > 0:
                for b in range(bins):
                    scratch[PLANES + b] = empty
                for j in range(size):
                    h = table[2 * used[j]]
                    for rank in range(np.int64(table[2 * used[j] + 1])):
                        x = _mix(h ^ (np.uint64(rank) * GOLDEN))
                        b = PLANES + np.int64(x >> shift)
                        v = x & LOW32
                        if v < scratch[b]:
                            scratch[b] = v
                base = d * bins
                for position in range(bins):
                    for hop in range(bins):
                        low = scratch[PLANES + (position + hop) % bins]
                        if low != empty:
                            if hop == 0:
                                sketches[base + position] = np.uint8(low & np.uint64(0xFF))
                            else:
                                mixed = _mix(low + np.uint64(hop) * GOLDEN)
                                sketches[base + position] = np.uint8(mixed & np.uint64(0xFF))
                            break
        for j in range(size):
            table[2 * used[j] + 1] = 0
    return 0


def compile_batch():
    """The compiled kernel (a numba cfunc: ``.address``, ``._library``)."""
    return numba.cfunc(SIGNATURE, nopython=True, error_model="numpy")(fingerprint_batch)
