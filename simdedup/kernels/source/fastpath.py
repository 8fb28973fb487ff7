"""numba source of the fast path (:mod:`simdedup.kernels.fastpath`): decode, lower-case and
cut a batch of UTF-8 documents into tokens or shingles, hash and count them, and add up the
simhash votes and the sketch's bin minima."""

import numba
import numpy as np
from numba import carray
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from .common import (
    BYTES_01,
    GOLDEN,
    LOW32,
    ONE,
    _decode,
    _load8,
    _mask64,
    _mix,
    _past_non_ascii,
    _space_bytes8,
    _store8,
    _word_bytes8,
    xxh3,
    xxh3_128,
)

PLANES = 48  # bit planes of the vote counters: totals below 2**48 (kernels.fastpath.PLANES)

MAX_BINS = 4096
# vote planes of each 64-bit word of a value, the sketch's bin minima (at most MAX_BINS bins),
# then the hashes of the tokens of 64 bytes (at most 32), low then high halves
BLOCK_HASHES = 2 * PLANES + MAX_BINS
SCRATCH_WORDS = BLOCK_HASHES + 64
# bytes that 64 bytes at a time read from where they start: the 64, and 6 past them, where the
# eight-byte loads that lower-case a token reach from its last byte (at most the 63rd: the 64th
# ends the block or starts a token left for the next); a document's last bytes, fewer than
# this, go character by character, so no load passes its end
BLOCK_READS = 64 + 6

# The layout of a character's entry in the Unicode tables (kernels.fastpath.UnicodeTables says
# how they are made): its lower-case form and classes.
# the lower-case code point minus this one (modulo 2**21), or where in `extra` the lower-case
# characters start
CODE = 0x1FFFFF
MULTI = 1 << 25  # lower-cases to several characters: extra[CODE] of them follow it there
IGNORABLE = 1 << 26  # case-ignorable, for the final sigma
CASED = 1 << 27
SIGMA = 1 << 28  # U+03A3, whose lower case depends on the characters around it
#: a document's flag: lone surrogates (encoded as UTF-8 with surrogatepass) are characters
SURROGATES = 1
#: features[d] of a document the batch could not hold (retry it alone with room for it) and of
#: one that is not valid UTF-8 (the Python path says why)
RETRY, INVALID = -1, -2


@numba.njit(inline="always")
def _lower8(x):  # pragma: no cover - compiled
    """The eight ASCII bytes of ``x`` with A-Z lower-cased (SWAR: bit 7 of a byte marks it)."""
    low = x & (BYTES_01 * np.uint64(0x7F))
    at_least_a = low + BYTES_01 * np.uint64(0x80 - 0x41)
    past_z = low + BYTES_01 * np.uint64(0x80 - 0x5B)
    upper = at_least_a & ~past_z & ~x & (BYTES_01 * np.uint64(0x80))
    return x | (upper >> np.uint64(2))


@numba.njit(inline="always")
def _entry(blocks, entries, code):  # pragma: no cover - compiled
    return entries[np.int64(blocks[code >> 8]) * 256 + (code & 255)]


@numba.njit(inline="always")
def _encode(tokens, w, code):  # pragma: no cover - compiled
    """Write the UTF-8 of ``code`` (a surrogate as ``surrogatepass`` does) at ``tokens[w]``;
    the position after it."""
    if code < 0x80:
        tokens[w] = code
        return w + 1
    if code < 0x800:
        tokens[w] = 0xC0 | (code >> 6)
        tokens[w + 1] = 0x80 | (code & 0x3F)
        return w + 2
    if code < 0x10000:
        tokens[w] = 0xE0 | (code >> 12)
        tokens[w + 1] = 0x80 | ((code >> 6) & 0x3F)
        tokens[w + 2] = 0x80 | (code & 0x3F)
        return w + 3
    tokens[w] = 0xF0 | (code >> 18)
    tokens[w + 1] = 0x80 | ((code >> 12) & 0x3F)
    tokens[w + 2] = 0x80 | ((code >> 6) & 0x3F)
    tokens[w + 3] = 0x80 | (code & 0x3F)
    return w + 4


@numba.njit
def _final_sigma(data, begin, end, at, after, blocks, entries, surrogates):  # pragma: no cover - compiled
    """Whether the capital sigma at ``data[at:after]`` lower-cases to the final form, as
    ``str.lower`` decides: a cased character before it and none after it, looking past
    case-ignorable ones (the text before it is valid UTF-8; invalid text after it ends the look)."""
    j = at
    cased = False
    while j > begin:
        j -= 1
        while (data[j] & 0xC0) == 0x80:
            j -= 1
        c = np.int64(data[j])
        if c >= 0x80:
            c, _ = _decode(data, j, end, surrogates)
        e = _entry(blocks, entries, c)
        if not e & IGNORABLE:
            cased = (e & CASED) != 0
            break
    if not cased:
        return False
    j = after
    while j < end:
        c = np.int64(data[j])
        n = 1
        if c >= 0x80:
            c, n = _decode(data, j, end, surrogates)
            if n == 0:
                return True
        e = _entry(blocks, entries, c)
        if not e & IGNORABLE:
            return (e & CASED) == 0
        j += n
    return True


@numba.njit(inline="always")
def _count(table, highs, used, size, mask, slots, words, address, length):  # pragma: no cover - compiled
    """Hash the feature of ``length`` bytes at ``address`` and count it in the table
    (:func:`_count_hash`). A feature is keyed by its XXH3-64, or with ``words`` 2 by the low
    half of its XXH3-128, whose high half goes to ``highs`` (the low halves of distinct
    features collide about once in 2**64 pairs, as the 64-bit hashes do)."""
    if words == 2:
        h, high = xxh3_128(address, length)
    else:
        h, high = xxh3(address, length), np.uint64(0)
    return _count_hash(table, highs, used, size, mask, slots, words, h, high)


@numba.njit(inline="always")
def _count_hash(table, highs, used, size, mask, slots, words, h, high):  # pragma: no cover - compiled
    """Count the feature of hash ``h`` (and ``high``) in the table: the new number of distinct
    features, or -1 when a new one would fill it past half."""
    slot = np.int64(h & mask)
    while table[2 * slot + 1] != 0 and table[2 * slot] != h:
        slot = np.int64(np.uint64(slot + 1) & mask)
    if table[2 * slot + 1] == 0:
        if 2 * size == slots:
            return -1
        table[2 * slot] = h
        if words == 2:
            highs[slot] = high
        used[size] = slot
        size += 1
    table[2 * slot + 1] += ONE
    return size


@numba.njit(inline="always")
def _add_votes(scratch, first_plane, h, weight):  # pragma: no cover - compiled
    """Add ``h`` times ``weight`` to the bit-sliced counters of planes ``first_plane`` on."""
    plane = first_plane
    while weight:
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


@numba.njit
def _ascii_tokens(
    data_p,
    i,
    end,
    scratch_p,
    runs_are,
    tokens_p,
    tokens_address,
    words,
    table_p,
    highs_p,
    used_p,
    size,
    mask,
    slots,
    capacity,
):  # pragma: no cover - compiled
    """Count the tokens of the stretch of ASCII from ``data[i]`` on (between tokens), 64 bytes
    at a time: a bit mask of the bytes that continue a token gives each token's first and last
    byte, the tokens are lower-cased eight bytes at a time, hashed, then counted (a branch per
    token, where the loop over the bytes mispredicts the end of each). A token that may go on
    past the 64 bytes starts the next 64. Stops before 64 bytes that are not all ASCII, one
    token of 64 bytes or more, or fewer than BLOCK_READS bytes left before ``end``. Returns the number
    of distinct features (``-1 - size`` when the table is full), where it stopped and where
    64 bytes may be tried next. A function of its own, called with pointers: inlined, it
    slowed the kernel's loop over other characters (CJK text's) by a tenth."""
    scratch = carray(scratch_p, (SCRATCH_WORDS,))
    table = carray(table_p, (2 * capacity,))
    highs = carray(highs_p, (capacity if words == 2 else 1,))
    used = carray(used_p, (capacity,))
    while i + BLOCK_READS <= end:
        past = _past_non_ascii(data_p, i)
        if past:
            return size, i, i + past
        # the bytes that continue a token: the word characters, or all but white space
        runs = _mask64(data_p, i, 1) if runs_are == 1 else ~_mask64(data_p, i, 2)
        after = i + 64
        if runs >> np.uint64(63):
            if runs == ~np.uint64(0):
                return size, i, i + 1
            last = 63 - np.int64(leading_zeros(~runs))  # the last separator
            runs &= (ONE << np.uint64(last)) - ONE
            after = i + last + 1
        firsts = runs & ~(runs << ONE)  # each token's first byte
        lasts = runs & ~(runs >> ONE)  # and its last
        found = 0  # hash them all, then count them all: the two loops overlap better
        while firsts:
            first = i + np.int64(trailing_zeros(firsts))
            length = i + np.int64(trailing_zeros(lasts)) + 1 - first
            firsts &= firsts - ONE
            lasts &= lasts - ONE
            for k in range(0, length, 8):
                _store8(tokens_p, k, _lower8(_load8(data_p, first + k)))
            if words == 2:
                h, high = xxh3_128(tokens_address, np.uint64(length))
            else:
                h, high = xxh3(tokens_address, np.uint64(length)), np.uint64(0)
            scratch[BLOCK_HASHES + found] = h
            scratch[BLOCK_HASHES + 32 + found] = high
            found += 1
        for t in range(found):
            counted = _count_hash(
                table, highs, used, size, mask, slots, words, scratch[BLOCK_HASHES + t], scratch[BLOCK_HASHES + 32 + t]
            )
            if counted < 0:
                return -1 - size, i, i
            size = counted
        i = after
    return size, i, i


@numba.njit
def _simhash_and_sketch(
    table, highs, used, size, binary, bins, shift, scratch, words, values, sketches, d
):  # pragma: no cover - compiled
    """The simhash of the ``size`` features counted in ``table`` (``used``: their slots; with
    ``words`` 2 the high halves of their hashes in ``highs``), written at ``values[d * words]``
    low word first, and their sketch of ``bins`` bins (from the low halves, as the Python
    path's) written at ``sketches[d * bins]`` (a function of its own: the tokenizing loop
    keeps its registers)."""
    empty = np.uint64(1) << np.uint64(40)  # as simdedup.sketch.EMPTY: above every 32-bit value
    for p in range(words * PLANES):
        scratch[p] = np.uint64(0)
    total = 0
    for j in range(size):
        weight = 1 if binary else np.int64(table[2 * used[j] + 1])
        total += weight
        _add_votes(scratch, 0, table[2 * used[j]], weight)
        if words == 2:
            _add_votes(scratch, PLANES, highs[used[j]], weight)
    used_planes = 1
    while used_planes < PLANES and (1 << used_planes) <= total:  # no vote exceeds the total
        used_planes += 1
    for word in range(words):
        value = np.uint64(0)
        for bit in range(64):
            vote = 0
            for p in range(used_planes):
                vote += np.int64((scratch[word * PLANES + p] >> np.uint64(bit)) & ONE) << p
            if 2 * vote - total > 0:
                value |= ONE << np.uint64(bit)
        values[d * words + word] = value
    if bins > 0:
        minima = 2 * PLANES
        base = d * bins
        for b in range(bins):
            scratch[minima + b] = empty
        for j in range(size):
            h = table[2 * used[j]]
            for rank in range(np.int64(table[2 * used[j] + 1])):
                x = _mix(h ^ (np.uint64(rank) * GOLDEN))
                b = minima + np.int64(x >> shift)
                v = x & LOW32
                if v < scratch[b]:
                    scratch[b] = v
        for position in range(bins):
            for hop in range(bins):
                low = scratch[minima + (position + hop) % bins]
                if low != empty:
                    if hop == 0:
                        sketches[base + position] = np.uint8(low & np.uint64(0xFF))
                    else:
                        mixed = _mix(low + np.uint64(hop) * GOLDEN)
                        sketches[base + position] = np.uint8(mixed & np.uint64(0xFF))
                    break


def fingerprint_batch(
    data_p,
    offsets_p,
    ndocs,
    flags_p,
    blocks_p,
    entries_p,
    nentries,
    extra_p,
    nextra,
    class_shift,
    shingle,
    starts_p,
    tokens_p,
    tokens_address,
    token_room,
    bins,
    shift,
    binary,
    words,
    values_p,
    features_p,
    sketches_p,
    table_p,
    highs_p,
    used_p,
    capacity,
    scratch_p,
):  # pragma: no cover
    """Simhash, feature count and sketch of each UTF-8 document of a batch.

    ``data`` holds the documents back to back, document ``d`` at ``offsets[d]:offsets[d + 1]``,
    with ``flags[d]`` (:data:`SURROGATES`). Each character is decoded (strictly, as Python
    does), lower-cased and classed with the Unicode tables (``blocks``: an entry block per 256
    code points; ``entries``; ``extra``: the characters that lower-case to several, each count
    followed by their entries) as the Python tokenizer does it: the class of a lower-cased
    character is ``(entry >> class_shift) & 3``: 0 separates tokens, 1 continues a token, 2 is
    a token of its own. Tokens are written lower-cased to ``tokens`` (``token_room`` bytes at
    ``tokens_address``); with ``shingle`` N above 1 the last N are kept there joined by spaces
    (``starts``: a ring of N token starts) and each N-gram is a feature, or the one N-gram of
    every token of a document with fewer. Each distinct feature's XXH3-64 hash (``words`` 1) or
    the low half of its XXH3-128 (``words`` 2, the high half kept in ``highs``, slot for slot)
    is counted in an open-addressing table (``table`` holds key and count side by side, so a
    probe touches one cache line; at most ``capacity`` slots, a power of two at least 1024;
    counts are all zero on entry and are left so). ``values`` gets ``words`` 64-bit words a
    document, the low first. The arithmetic is that of :func:`simdedup.simhash.simhash_words`
    and :func:`simdedup.sketch.make_sketch`: bit ``b`` is set when the votes of the features with
    bit ``b`` set are a strict majority of all votes, each feature voting once (``binary``) or
    by count; bin minima of the ranked feature copies, densified from the next filled bin to
    the right, low 8 bits kept. ``features[d]`` is the number of distinct features, or
    :data:`RETRY` when they overflow half of ``capacity`` or the tokens kept overflow
    ``token_room``, or :data:`INVALID` when the document is not valid UTF-8.

    Between tokens, with ``shingle`` 1, 64 bytes of ASCII are cut at once (:func:`_ascii_tokens`).
    """
    offsets = carray(offsets_p, (ndocs + 1,))
    data = carray(data_p, (max(offsets[ndocs], 1),))
    flags = carray(flags_p, (max(ndocs, 1),))
    blocks = carray(blocks_p, (0x1100,))
    entries = carray(entries_p, (nentries,))
    extra = carray(extra_p, (nextra,))
    starts = carray(starts_p, (shingle,))
    tokens = carray(tokens_p, (token_room,))
    values = carray(values_p, (ndocs * words,))
    features = carray(features_p, (ndocs,))
    sketches = carray(sketches_p, (ndocs * bins,))
    table = carray(table_p, (2 * capacity,))
    highs = carray(highs_p, (capacity if words == 2 else 1,))
    used = carray(used_p, (capacity,))
    scratch = carray(scratch_p, (SCRATCH_WORDS,))
    room = token_room - 16  # a character's lower case (at most three, four bytes each) and a space fit beyond it
    # The ASCII characters that continue a token, as _ascii_tokens marks them: 1, the word
    # characters; 2, all but white space; 0, neither (no 64 bytes at a time then).
    runs_are = 3
    for b in range(0x80):
        run_byte = (entries[b] >> class_shift) & 3 == 1
        if run_byte != (_word_bytes8(np.uint64(b)) != 0):
            runs_are &= 2
        if run_byte != (_space_bytes8(np.uint64(b)) == 0):
            runs_are &= 1
    for d in range(ndocs):
        begin, end = offsets[d], offsets[d + 1]
        surrogates = (flags[d] & SURROGATES) != 0
        # A small table for a small document stays in cache: a quarter of its bytes, doubled
        # (and the document counted again) whenever it fills to half.
        slots = 1024
        while slots < capacity and slots < (end - begin) // 4:
            slots *= 2
        slots = min(slots, capacity)
        while True:
            mask = np.uint64(slots - 1)
            size = 0
            status = 0  # 1: the table is full, 2: no room for the tokens, 3: not UTF-8
            w = 0  # bytes in tokens
            token_start = 0  # where the token being read starts in tokens
            last_end = 0  # where the last token read ends in tokens
            pending = False  # a token is being read
            ntokens = 0
            ascii_at = begin if runs_are else end  # no 64 bytes of ASCII start before this
            i = begin
            while status == 0:
                whole = False  # tokens[0:w] is a whole token, to count at once (shingle 1)
                if i < end:
                    c = np.int64(data[i])
                    if c < 0x80:
                        if i >= ascii_at and shingle == 1 and not pending and i + BLOCK_READS <= end:
                            size, i, ascii_at = _ascii_tokens(
                                data_p,
                                i,
                                end,
                                scratch_p,
                                runs_are,
                                tokens_p,
                                tokens_address,
                                words,
                                table_p,
                                highs_p,
                                used_p,
                                size,
                                mask,
                                slots,
                                capacity,
                            )
                            if size < 0:  # the table is full (its size as it was: to clear it)
                                size = -1 - size
                                status = 1
                                break
                            continue
                        e = entries[c]
                        cls = (e >> class_shift) & 3
                        if cls == 1 and w < room:  # the common cases: a run of ASCII inside a token,
                            # (unsigned indices: no negative-index arithmetic in these loops)
                            stop = min(end, i + room - w)
                            while True:
                                tokens[np.uint64(w)] = (c + e) & 0x7F
                                w += 1
                                i += 1
                                if i == stop:
                                    break
                                c = np.int64(data[np.uint64(i)])
                                if c >= 0x80:
                                    break
                                e = entries[np.uint64(c)]
                                if (e >> class_shift) & 3 != 1:
                                    break
                            # ... ended by an ASCII separator (left for the next round)
                            whole = shingle == 1 and c < 0x80 and (e >> class_shift) & 3 == 0 and i < end
                            if not whole:
                                pending = True
                                continue
                        elif cls == 0 and not pending:  # ... and a run of ASCII between tokens
                            i += 1
                            while i < end:
                                c = np.int64(data[np.uint64(i)])
                                if c >= 0x80 or (entries[np.uint64(c)] >> class_shift) & 3 != 0:
                                    break
                                i += 1
                            continue
                        else:
                            i += 1
                    else:
                        c, n = _decode(data, i, end, surrogates)
                        if n == 0:
                            status = 3
                            break
                        e = _entry(blocks, entries, c)
                        if e & SIGMA:
                            final = _final_sigma(data, begin, end, i, i + n, blocks, entries, surrogates)
                            c = 0x3C2 if final else 0x3C3
                            e = _entry(blocks, entries, c)
                        i += n
                        # ... and a character that is a token of its own (CJK), between tokens
                        whole = shingle == 1 and not pending and not e & MULTI and (e >> class_shift) & 3 == 2
                        if whole:
                            w = _encode(tokens, 0, (c + np.int64(e)) & CODE)
                else:
                    c, e = 0, np.uint32(0)  # past the end: a separator in both classes
                if whole:
                    counted = _count(table, highs, used, size, mask, slots, words, tokens_address, np.uint64(w))
                    if counted < 0:
                        status = 1
                        break
                    size = counted
                    ntokens += 1
                    w = 0
                    pending = False
                    continue
                count = 1
                at = -1
                if e & MULTI:
                    at = np.int64(e & CODE)
                    count = np.int64(extra[at])
                for q in range(count):
                    if at >= 0:
                        e = extra[at + 1 + q]
                        code = np.int64(e & CODE)
                    else:
                        code = (c + np.int64(e)) & CODE
                    cls = (e >> class_shift) & 3
                    if w >= room:
                        status = 2
                        break
                    if cls == 1:
                        w = _encode(tokens, w, code)
                        pending = True
                        continue
                    for part in range(2):  # the token before, then the character as a token of its own
                        if part == 1:
                            if cls != 2:
                                break
                            w = _encode(tokens, w, code)
                            pending = True
                        if not pending:
                            continue
                        pending = False
                        ntokens += 1
                        counted = size
                        if shingle == 1:
                            counted = _count(
                                table,
                                highs,
                                used,
                                size,
                                mask,
                                slots,
                                words,
                                tokens_address + np.uint64(token_start),
                                np.uint64(w - token_start),
                            )
                            w = 0
                        else:
                            starts[(ntokens - 1) % shingle] = token_start
                            if ntokens >= shingle:
                                first = starts[(ntokens - shingle) % shingle]
                                counted = _count(
                                    table,
                                    highs,
                                    used,
                                    size,
                                    mask,
                                    slots,
                                    words,
                                    tokens_address + np.uint64(first),
                                    np.uint64(w - first),
                                )
                            last_end = w
                            tokens[w] = 32  # shingle_separator
                            w += 1
                            if 2 * w > token_room:  # keep only the last N - 1 tokens, at the front
                                first = starts[(ntokens - shingle + 1) % shingle] if ntokens >= shingle - 1 else 0
                                for k in range(w - first):
                                    tokens[k] = tokens[first + k]
                                for k in range(min(ntokens, shingle)):
                                    starts[k] -= first
                                w -= first
                                last_end -= first
                        token_start = w
                        if counted < 0:
                            status = 1
                            break
                        size = counted
                    if status != 0:
                        break
                if i >= end and not pending:
                    break
            if status == 0 and 0 < ntokens < shingle:  # fewer tokens than N: one N-gram of them all
                counted = _count(table, highs, used, size, mask, slots, words, tokens_address, np.uint64(last_end))
                if counted < 0:
                    status = 1
                else:
                    size = counted
            if status != 1 or slots == capacity:
                break
            for j in range(size):
                table[2 * used[j] + 1] = 0
            slots *= 2
        if status == 3:
            features[d] = INVALID
        elif status != 0:
            features[d] = RETRY
        else:
            features[d] = size
            _simhash_and_sketch(table, highs, used, size, binary, bins, shift, scratch, words, values, sketches, d)
        for j in range(size):
            table[2 * used[j] + 1] = 0
    return 0
