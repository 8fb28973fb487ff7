"""numba source of the :mod:`simdedup.fastpath` kernels; importing this module imports numba.

Each kernel is a C function over raw pointers that allocates nothing: the caller passes every
buffer, including the scratch hash tables. So its machine code refers to no numba runtime
symbol, only to ``XXH3_64bits`` and ``XXH3_128bits``, and :mod:`simdedup.fastpath` can keep that
code and load it later with llvmlite alone, without importing numba (which costs about 0.4 s per
process).
"""

import llvmlite.binding
import numba
import numpy as np
import xxhash._xxhash
from llvmlite import ir
from numba import carray, types
from numba.core import cgutils
from numba.core.extending import intrinsic

# XXH3_64bits of the xxhash extension, linked by its symbol name. It takes (pointer, length);
# the pointer is passed as an address, which the C calling convention allows.
llvmlite.binding.load_library_permanently(xxhash._xxhash.__file__)
xxh3 = types.ExternalFunction("XXH3_64bits", types.uint64(types.uintp, types.uintp))


@intrinsic
def xxh3_128(typingctx, address, length):
    """``(low 64 bits, high 64 bits)`` of ``XXH3_128bits(address, length)`` of the xxhash
    extension. The C function returns a struct of two uint64 by value, which numba's
    ExternalFunction cannot declare; clang lowers that return to the literal struct
    ``{i64, i64}`` (on x86-64 and aarch64), so it is declared so here."""
    signature = types.UniTuple(types.uint64, 2)(types.uintp, types.uintp)

    def codegen(context, builder, sig, args):
        word = ir.IntType(64)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.LiteralStructType([word, word]), [word, word]), "XXH3_128bits")
        pair = builder.call(function, args)
        halves = (builder.extract_value(pair, 0), builder.extract_value(pair, 1))
        return context.make_tuple(builder, sig.return_type, halves)

    return signature, codegen


GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW32 = np.uint64(0xFFFFFFFF)
ONE = np.uint64(1)
PLANES = 48  # bit planes of the vote counters: totals below 2**48 (fastpath.PLANES)

_u8p, _i64p, _u64p = types.CPointer(types.uint8), types.CPointer(types.int64), types.CPointer(types.uint64)
_u16p, _u32p = types.CPointer(types.uint16), types.CPointer(types.uint32)
#: fingerprint_batch(data, offsets, ndocs, flags, blocks, entries, nentries, extra, nextra, class_shift,
#:                   shingle, starts, tokens, tokens_address, token_room, bins, shift, binary, words,
#:                   values, features, sketches, table, highs, used, capacity, scratch) -> 0
SIGNATURE = types.int64(_u8p, _i64p, types.int64, _u8p, _u16p, _u32p, types.int64, _u32p, types.int64, types.int64,
                        types.int64, _i64p, _u8p, types.uintp, types.int64, types.int64, types.uint64, types.int64,
                        types.int64, _u64p, _i64p, _u8p, _u64p, _u64p, _i64p, types.int64, _u64p)
# vote planes of each 64-bit word of a value, then the sketch's bin minima (at most 4096 bins)
SCRATCH_WORDS = 2 * PLANES + 4096

# The layout of a character's entry in the Unicode tables (fastpath.UnicodeTables says how
# they are made): its lower-case form and classes.
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
def _mix(x):  # pragma: no cover - compiled
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(inline="always")
def _decode(data, i, end, surrogates):  # pragma: no cover - compiled
    """``(code point, length)`` of the UTF-8 character at ``data[i]`` (not ASCII), as Python's
    strict decoder reads it (with ``surrogatepass`` when ``surrogates``); length 0 if invalid."""
    c = np.int64(data[i])
    if c < 0xC2 or c > 0xF4:
        return 0, 0
    if c < 0xE0:
        if i + 1 >= end or (data[i + 1] & 0xC0) != 0x80:
            return 0, 0
        return ((c & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F), 2
    low, high = 0x80, 0xBF
    if c < 0xF0:
        if c == 0xE0:
            low = 0xA0
        elif c == 0xED and not surrogates:
            high = 0x9F
        if i + 2 >= end or not low <= data[i + 1] <= high or (data[i + 2] & 0xC0) != 0x80:
            return 0, 0
        return ((c & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F), 3
    if c == 0xF0:
        low = 0x90
    elif c == 0xF4:
        high = 0x8F
    if (i + 3 >= end or not low <= data[i + 1] <= high or (data[i + 2] & 0xC0) != 0x80
            or (data[i + 3] & 0xC0) != 0x80):
        return 0, 0
    return (((c & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12) | ((np.int64(data[i + 2]) & 0x3F) << 6)
            | (np.int64(data[i + 3]) & 0x3F)), 4


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
    """Hash the feature of ``length`` bytes at ``address`` and count it in the table: the new
    number of distinct features, or -1 when a new one would fill it past half. A feature is
    keyed by its XXH3-64, or with ``words`` 2 by the low half of its XXH3-128, whose high half
    goes to ``highs`` (the low halves of distinct features collide about once in 2**64 pairs,
    as the 64-bit hashes do)."""
    if words == 2:
        h, high = xxh3_128(address, length)
    else:
        h, high = xxh3(address, length), np.uint64(0)
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
def _simhash_and_sketch(table, highs, used, size, binary, bins, shift, scratch, words, values, sketches,
                        d):  # pragma: no cover - compiled
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


def fingerprint_batch(data_p, offsets_p, ndocs, flags_p, blocks_p, entries_p, nentries, extra_p, nextra, class_shift,
                      shingle, starts_p, tokens_p, tokens_address, token_room, bins, shift, binary, words,
                      values_p, features_p, sketches_p, table_p, highs_p, used_p, capacity,
                      scratch_p):  # pragma: no cover
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
            i = begin
            while status == 0:
                whole = False  # tokens[0:w] is a whole token, to count at once (shingle 1)
                if i < end:
                    c = np.int64(data[i])
                    if c < 0x80:
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
                            counted = _count(table, highs, used, size, mask, slots, words,
                                             tokens_address + np.uint64(token_start), np.uint64(w - token_start))
                            w = 0
                        else:
                            starts[(ntokens - 1) % shingle] = token_start
                            if ntokens >= shingle:
                                first = starts[(ntokens - shingle) % shingle]
                                counted = _count(table, highs, used, size, mask, slots, words,
                                                 tokens_address + np.uint64(first), np.uint64(w - first))
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



_f64p = types.CPointer(types.float64)
#: keyword_batch(data, nbytes, data_address, token_chars, doc_tokens, ndocs, vocab_keys, vocab_idf, vocab_slots,
#:               median, spaces, nspaces, stop_words, stop_ends, nstop, topk, keys, counts, first, idfs,
#:               used, capacity, best, best_scores, nbest) -> 0
KEYWORD_SIGNATURE = types.int64(_u8p, types.int64, types.uintp, _i64p, _i64p, types.int64, _u64p, _f64p, types.int64,
                                types.float64, _i64p, types.int64, _u8p, _i64p, types.int64, types.int64,
                                _u64p, _i64p, _i64p, _f64p, _i64p, types.int64, _i64p, _f64p, _i64p)


def keyword_batch(data_p, nbytes, address, token_chars_p, doc_tokens_p, ndocs, vocab_keys_p, vocab_idf_p, vocab_slots,
                  median, spaces_p, nspaces, stop_p, stop_ends_p, nstop, topk, keys_p, counts_p, first_p, idfs_p,
                  used_p, capacity, best_p, best_scores_p, nbest_p):  # pragma: no cover - compiled
    """jieba's TF-IDF keywords of each document of a batch, from its segmented words.

    ``data`` (``nbytes``) is the UTF-8 of every word of every document back to back; word ``t`` is
    ``token_chars[t]`` characters long and document ``d`` has words ``doc_tokens[d]`` to
    ``doc_tokens[d + 1]``. A word is known by its XXH3-64 hash. ``vocab_keys``/``vocab_idf``
    is an open-addressing table (``vocab_slots`` slots, key 0 empty) of jieba's IDF per word,
    NaN for words jieba drops. A word not in it gets ``median``, or NaN when jieba drops it:
    fewer than two characters once the code points in ``spaces`` are stripped from its ends,
    or an ASCII word that lower-cases to one of the ``stop`` words (stored back to back, the
    ``i``-th ending at ``stop_ends[i]``). The score is ``count * (idf / total)`` with ``total``
    the count of kept words, as in ``extract_tags``; the ``topk`` best go to ``best`` (index of
    the word's first occurrence) and ``best_scores``, ties in first-seen order, and their
    number to ``nbest[d]``. ``keys`` .. ``used`` are a per-document table of ``capacity``
    slots (a power of two, at least twice the most words of a document); ``counts`` is all
    zero on entry and is left so.
    """
    doc_tokens = carray(doc_tokens_p, (ndocs + 1,))
    ntokens = doc_tokens[ndocs]
    token_chars = carray(token_chars_p, (max(ntokens, 1),))
    vocab_keys = carray(vocab_keys_p, (vocab_slots,))
    vocab_idf = carray(vocab_idf_p, (vocab_slots,))
    spaces = carray(spaces_p, (max(nspaces, 1),))
    stop_ends = carray(stop_ends_p, (max(nstop, 1),))
    keys = carray(keys_p, (capacity,))
    counts = carray(counts_p, (capacity,))
    first = carray(first_p, (capacity,))
    idfs = carray(idfs_p, (capacity,))
    used = carray(used_p, (capacity,))
    best = carray(best_p, (max(ndocs * topk, 1),))
    best_scores = carray(best_scores_p, (max(ndocs * topk, 1),))
    nbest = carray(nbest_p, (ndocs,))
    stop_bytes = stop_ends[nstop - 1] if nstop > 0 else 0
    stop = carray(stop_p, (max(stop_bytes, 1),))
    data = carray(data_p, (max(nbytes, 1),))
    vocab_mask = np.uint64(vocab_slots - 1)
    position = 0
    for d in range(ndocs):
        start_token, end_token = doc_tokens[d], doc_tokens[d + 1]
        slots = 64
        while slots < 2 * (end_token - start_token):
            slots *= 2
        mask = np.uint64(slots - 1)
        size = 0
        for t in range(start_token, end_token):
            start = position
            ascii_only = True
            for _ in range(token_chars[t]):
                c = data[position]
                if c < 0x80:
                    position += 1
                else:
                    ascii_only = False
                    position += 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            h = xxh3(address + start, position - start)
            slot = np.int64(h & mask)
            while counts[slot] != 0 and keys[slot] != h:
                slot = np.int64(np.uint64(slot + 1) & mask)
            if counts[slot] != 0:
                counts[slot] += 1
                continue
            keys[slot] = h
            counts[slot] = 1
            first[slot] = t
            used[size] = slot
            size += 1
            v = np.int64(h & vocab_mask)
            while vocab_keys[v] != 0 and vocab_keys[v] != h:
                v = np.int64(np.uint64(v + 1) & vocab_mask)
            if vocab_keys[v] == h:
                idfs[slot] = vocab_idf[v]
                continue
            # Not in jieba's table: its filters. Characters kept once the ends are stripped:
            # from the first to the last character that is not a space.
            kept_first, kept_last, index = -1, -1, 0
            i = start
            while i < position:
                c = np.int64(data[i])
                if c < 0x80:
                    i += 1
                elif c < 0xE0:
                    c = ((c & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F)
                    i += 2
                elif c < 0xF0:
                    c = ((c & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F)
                    i += 3
                else:
                    c = (((c & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12)
                         | ((np.int64(data[i + 2]) & 0x3F) << 6) | (np.int64(data[i + 3]) & 0x3F))
                    i += 4
                space = False
                for s in range(nspaces):
                    if spaces[s] == c:
                        space = True
                        break
                if not space:
                    if kept_first < 0:
                        kept_first = index
                    kept_last = index
                index += 1
            if kept_first < 0 or kept_last - kept_first + 1 < 2:
                idfs[slot] = np.nan
                continue
            idfs[slot] = median
            if ascii_only:
                for w in range(nstop):
                    w_start = stop_ends[w - 1] if w > 0 else 0
                    if stop_ends[w] - w_start != position - start:
                        continue
                    same = True
                    for j in range(position - start):
                        c = data[start + j]
                        if 65 <= c <= 90:
                            c += 32
                        if c != stop[w_start + j]:
                            same = False
                            break
                    if same:
                        idfs[slot] = np.nan
                        break
        total = 0
        for j in range(size):
            if not np.isnan(idfs[used[j]]):
                total += counts[used[j]]
        found = 0
        base = d * topk
        if total > 0:
            denominator = np.float64(total)
            for j in range(size):  # first-seen order; a later equal score ranks after
                slot = used[j]
                if np.isnan(idfs[slot]):
                    continue
                score = np.float64(counts[slot]) * (idfs[slot] / denominator)
                if found == topk and not score > best_scores[base + topk - 1]:
                    continue
                k = found if found < topk else topk - 1
                while k > 0 and best_scores[base + k - 1] < score:
                    best_scores[base + k] = best_scores[base + k - 1]
                    best[base + k] = best[base + k - 1]
                    k -= 1
                best_scores[base + k] = score
                best[base + k] = first[slot]
                if found < topk:
                    found += 1
        nbest[d] = found
        for j in range(size):
            counts[used[j]] = 0
    return 0



#: table_pairs(sorted_values, order, sorted_keys, n, words, k, left, right, capacity) -> pairs found
PAIRS_SIGNATURE = types.int64(_u64p, _i64p, _u64p, types.int64, types.int64, types.int64, _i64p, _i64p, types.int64)
_M1, _M2, _M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@numba.njit(inline="always")
def _popcount(x):  # pragma: no cover - compiled; SWAR (LLVM makes it one instruction)
    x = x - ((x >> ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


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
    """The pairs of one block table (:mod:`simdedup.index`) within Hamming distance ``k``.

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



#: cross_pairs(first, n_first, second, n_second, words, k, left, right, capacity) -> pairs found
CROSS_SIGNATURE = types.int64(_u64p, types.int64, _u64p, types.int64, types.int64, types.int64, _i64p, _i64p,
                              types.int64)


def cross_pairs(first_p, n_first, second_p, n_second, words, k, left_p, right_p, capacity):  # pragma: no cover
    """The pairs ``(i, j)`` of fingerprints ``first[i]`` and ``second[j]`` (``words`` uint64
    each) within Hamming distance ``k`` (the chunk pairs of :mod:`simdedup.index`); as in
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



#: packed_pairs(packed, n, index_bits, values, words, k, crowd, left, right, capacity, runs, counts, masks,
#:              nmasks) -> pairs found
PACKED_SIGNATURE = types.int64(_u64p, types.int64, types.int64, _u64p, types.int64, types.int64, types.int64, _i64p,
                               _i64p, types.int64, _i64p, _i64p, _u64p, types.int64)


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


def packed_pairs(packed_p, n, index_bits, values_p, words, k, crowd, left_p, right_p, capacity, runs_p,
                 counts_p, masks_p, nmasks):  # pragma: no cover - compiled
    """The pairs of a block table sorted packed (:class:`simdedup.index.SortedTable`):
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



#: link_complete(n, nedges, left, right, offsets, adjacency, sketches, bins, passing, fps, words, k,
#:               parent, size, volume, next_member, keys, good, bad, capacity,
#:               exact, has, bag_hashes, bag_weights, bag_offsets, bag_totals, gram_hashes, gram_offsets,
#:               gram_totals, measure, min_similarity, min_resemblance, floor) -> pairs merged (-1: a bug)
_f64 = types.float64
LINKAGE_SIGNATURE = types.int64(types.int64, types.int64, _i64p, _i64p, _i64p, _i64p, _u8p, types.int64, _u8p,
                                _u64p, types.int64, types.int64, _i64p, _i64p, _i64p, _i64p, _u64p, _i64p, _u8p,
                                types.int64, types.int64, _u8p, _u64p, _u32p, _i64p, _i64p, _u64p, _i64p, _i64p,
                                types.int64, _f64, _f64, _f64)


@numba.njit(inline="always")
def _exact_runs(units, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p,
                gram_totals_p):  # pragma: no cover - compiled
    """The exact sets of ``units`` documents as :class:`simdedup.similarity.ExactIndex` keeps
    them, over raw pointers: ``(bag hashes, weights, offsets, totals, gram hashes, offsets,
    totals)``."""
    bag_offsets = carray(bag_offsets_p, (units + 1,))
    gram_offsets = carray(gram_offsets_p, (units + 1,))
    return (carray(bag_hashes_p, (max(bag_offsets[units], 1),)), carray(bag_weights_p, (max(bag_offsets[units], 1),)),
            bag_offsets, carray(bag_totals_p, (max(units, 1),)), carray(gram_hashes_p, (max(gram_offsets[units], 1),)),
            gram_offsets, carray(gram_totals_p, (max(units, 1),)))


@numba.njit(inline="always")
def _verdict(a, b, runs, measure, min_similarity, min_resemblance, floor):  # pragma: no cover - compiled
    """``(passes, bag similarity)`` of two documents with exact sets (``runs``: :func:`_exact_runs`):
    :func:`simdedup.similarity.passes` (``measure`` numbered as ``simdedup.fastpath.MEASURE_CODES``),
    with the 3-grams merged only as far as the verdict needs."""
    bag_hashes, bag_weights, bag_offsets, bag_totals, gram_hashes, gram_offsets, gram_totals = runs
    shared = _shared(bag_hashes, bag_weights, bag_offsets, a, b, True, -1.0, 0)
    similarity = shared / (bag_totals[a] + bag_totals[b] - shared)
    if measure == 1:
        return similarity >= min_similarity, similarity
    threshold = min_resemblance
    if measure == 0 and similarity >= min_similarity:  # then either part of the rule will do
        threshold = min(min_resemblance, floor)
    both = gram_totals[a] + gram_totals[b]
    shared = _shared(gram_hashes, bag_weights, gram_offsets, a, b, False, threshold, both)
    return shared / (both - shared) >= threshold, similarity


def link_complete(n, nedges, left_p, right_p, offsets_p, adjacency_p, sketches_p, bins, passing_p, fps_p, words, k,
                  parent_p, size_p, volume_p, next_p, keys_p, good_p, bad_p, capacity, exact, has_p, bag_hashes_p,
                  bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p, gram_totals_p, measure,
                  min_similarity, min_resemblance, floor):  # pragma: no cover - compiled
    """Complete linkage of ``n`` units (:func:`simdedup.group._link_complete`): the verified
    edges ``left[e]``-``right[e]`` are taken in order, and each joins its two clusters when every
    pair across them passes the test.

    The test: with ``exact`` and when both units have exact sets (``has``), the exact measure
    (:func:`_verdict` over the units' runs of sorted hashes, as
    :class:`simdedup.similarity.ExactIndex` keeps them); otherwise, with ``bins`` > 0,
    ``passing[m]`` for two sketches (rows of ``sketches``) that agree in ``m`` bins; otherwise at
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
    passing = carray(passing_p, (bins + 1,))
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
    runs = _exact_runs(units, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p,
                       gram_totals_p)
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
                        ok = _verdict(x, y, runs, measure, min_similarity, min_resemblance, floor)[0]
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



_HEX_VALUES = np.full(256, 255, dtype=np.uint8)
for _digits, _first in ((b"0123456789", 0), (b"abcdef", 10), (b"ABCDEF", 10)):
    _HEX_VALUES[np.frombuffer(_digits, dtype=np.uint8)] = np.arange(_first, _first + len(_digits))
_BASE64URL_VALUES = np.full(256, 255, dtype=np.uint8)
_BASE64URL_VALUES[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8)] = (
    np.arange(64))

@numba.njit(inline="always")
def _piece(data, i, n, pieces, start, end):  # pragma: no cover - compiled
    """Where ``data`` goes on after the literal ``pieces[start:end]`` at ``i``; -1 when it is not there."""
    if i < 0 or i + (end - start) > n:
        return -1
    for j in range(start, end):
        if data[i] != pieces[j]:
            return -1
        i += 1
    return i


@numba.njit(inline="always")
def _natural(data, i, n):  # pragma: no cover - compiled
    """``(value, next)`` of the decimal ``0|[1-9][0-9]*`` at ``i``, ``next`` -1 when there is none or
    it has more than 18 digits (the regular-expression path decides those)."""
    if i < 0 or i >= n or data[i] < 48 or data[i] > 57:
        return 0, -1
    if data[i] == 48:
        return 0, i + 1
    value = 0
    start = i
    while i < n and 48 <= data[i] <= 57:
        if i - start == 18:
            return 0, -1
        value = value * 10 + np.int64(data[i] - 48)
        i += 1
    return value, i


#: scan_records(data, nbytes, pieces, piece_ends, kinds, steps, hex_digits, words, sketch_chars, sketch_bytes,
#:              id_bytes, id_ends, escaped, values, features, sizes, sketches, capacity) -> records (-1: a
#:              line not of the template)
SCAN_SIGNATURE = types.int64(_u8p, types.int64, _u8p, _i64p, _i64p, types.int64, types.int64, types.int64,
                             types.int64, types.int64, _u8p, _i64p, _u8p, _u64p, _i64p, _i64p, _u8p, types.int64)
#: the fields of a template (simdedup.fingerprints.columns.Template)
FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_BYTES, FIELD_SKETCH = range(5)


def scan_records(data_p, nbytes, pieces_p, ends_p, kinds_p, steps, hex_digits, words, sketch_chars, sketch_bytes,
                 ids_p, id_ends_p, escaped_p, values_p, features_p, sizes_p, sketches_p,
                 capacity):  # pragma: no cover - compiled
    """Fingerprint lines of one template (:class:`simdedup.fingerprints.columns.Template`):

        pieces[0] FIELD kinds[0] pieces[1] ... FIELD kinds[steps - 1] pieces[steps] \r? \n

    where ``pieces`` holds ``steps + 1`` literals ending at ``ends``, and the fields are:
    FIELD_ID, JSON string content (no control character, a backslash escapes the next one);
    FIELD_HEX, ``hex_digits`` hex digits; FIELD_FEATURES, ``0|[1-9][0-9]*``; FIELD_BYTES, the
    same with an optional minus; FIELD_SKETCH, ``sketch_chars`` URL-safe base64 characters.
    Every line of ``data`` must fit, the last may lack its newline. The ids are copied to
    ``ids``, each followed by a newline (``id_ends``: where each ends), ``escaped`` marks those
    with a backslash; the fingerprints go to ``values`` (``words`` a record, word 0 low), the
    numbers to ``features`` and ``sizes`` (0 and -1 when the template has no such field), the
    decoded sketches to ``sketches``. Returns the number of records, or -1 when a line does
    not fit, a number has more than 18 digits or there are more than ``capacity`` lines: the
    caller then reads the block another way."""
    if hex_digits != 16 * words:
        return -1
    n = nbytes
    data = carray(data_p, (max(n, 1),))
    ends = carray(ends_p, (steps + 1,))
    kinds = carray(kinds_p, (max(steps, 1),))
    pieces = carray(pieces_p, (max(ends[steps], 1),))
    cap = max(capacity, 1)
    ids = carray(ids_p, (max(n, 1),))
    id_ends = carray(id_ends_p, (cap,))
    escaped = carray(escaped_p, (cap,))
    values = carray(values_p, (cap * words,))
    features = carray(features_p, (cap,))
    sizes = carray(sizes_p, (cap,))
    sketches = carray(sketches_p, (max(cap * sketch_bytes, 1),))
    i = 0
    r = 0
    w = 0
    while i < n:
        if r == capacity:
            return -1
        features[r] = 0
        sizes[r] = -1
        escaped[r] = 0
        id_ends[r] = w
        start = 0
        for step in range(steps):
            i = _piece(data, i, n, pieces, start, ends[step])
            start = ends[step]
            if i < 0:
                return -1
            kind = kinds[step]
            if kind == FIELD_ID:  # up to its closing quote (the first byte of the next piece)
                while True:
                    if i >= n or data[i] < 32:
                        return -1
                    c = data[i]
                    if c == 34:
                        break
                    if c == 92:
                        escaped[r] = 1
                        ids[w] = c
                        w += 1
                        i += 1
                        if i >= n or data[i] < 32:
                            return -1
                        c = data[i]
                    ids[w] = c
                    w += 1
                    i += 1
                id_ends[r] = w
            elif kind == FIELD_HEX:
                if i + hex_digits > n:
                    return -1
                for word in range(words):  # 16 digits a word, the first word the highest
                    value = np.uint64(0)
                    for d in range(i + 16 * word, i + 16 * word + 16):
                        nibble = _HEX_VALUES[data[d]]
                        if nibble > 15:
                            return -1
                        value = (value << np.uint64(4)) | np.uint64(nibble)
                    values[r * words + words - 1 - word] = value
                i += hex_digits
            elif kind == FIELD_FEATURES or kind == FIELD_BYTES:
                sign = 1
                if kind == FIELD_BYTES and i < n and data[i] == 45:
                    sign = -1
                    i += 1
                number, i = _natural(data, i, n)
                if i < 0:
                    return -1
                if kind == FIELD_FEATURES:
                    features[r] = number
                else:
                    sizes[r] = sign * number
            else:  # FIELD_SKETCH
                if i + sketch_chars > n:
                    return -1
                out = r * sketch_bytes
                held = np.uint32(0)
                invalid = np.uint32(0)
                for d in range(sketch_chars):  # six bits a character; bits past the last byte are dropped
                    six = np.uint32(_BASE64URL_VALUES[data[i + d]])
                    invalid |= six
                    held = (held << np.uint32(6)) | (six & np.uint32(63))
                    if d & 3 == 3:
                        sketches[out] = np.uint8(held >> np.uint32(16))
                        sketches[out + 1] = np.uint8((held >> np.uint32(8)) & np.uint32(255))
                        sketches[out + 2] = np.uint8(held & np.uint32(255))
                        out += 3
                        held = np.uint32(0)
                if invalid > 63:
                    return -1
                tail = sketch_chars & 3  # 2 or 3 characters: 1 or 2 bytes
                if tail >= 2:
                    held <<= np.uint32(6 * (4 - tail))
                    sketches[out] = np.uint8(held >> np.uint32(16))
                    if tail == 3:
                        sketches[out + 1] = np.uint8((held >> np.uint32(8)) & np.uint32(255))
                i += sketch_chars
        i = _piece(data, i, n, pieces, start, ends[steps])
        if i < 0:
            return -1
        if i < n and data[i] == 13:
            i += 1
        if i < n:
            if data[i] != 10:
                return -1
            i += 1
        ids[w] = 10
        w += 1
        r += 1
    return r



# ---- exact similarities (simdedup.similarity) ---------------------------------------------------

_PRIME = np.uint64(0x100000001B3)
# kinds of code points in the exact tables (as simdedup.similarity._tables): a separator, part of a
# run, a token of its own that is a word (a CJK character, or any code point beyond the table), one
# that is punctuation
_SPACE, _RUN, _ONE_WORD, _ONE_PUNCT = 0, 1, 2, 3

#: exact_tokens(data, size, table, words, grams, sizes) -> -1, or where the decoder stops
EXACT_TOKENS_SIGNATURE = types.int64(_u8p, types.int64, _u32p, _u64p, _u64p, _i64p)


@numba.njit(inline="always")
def _exact_add(token, word, words, grams, n_words, tokens, p1, p2):  # pragma: no cover - compiled
    """Store a token: its hash at the end of ``words`` (counted if ``word``), and the 3-gram it
    ends at ``grams[tokens - 2]`` (``p1``, ``p2``: the chained hashes of the last one and two
    tokens before it). Returns the new ``n_words, tokens, p1, p2``."""
    words[np.uint64(n_words)] = token  # unsigned indices: numba tests signed ones for wrapping around
    grams[np.uint64(max(tokens - 2, 0))] = _mix(p2 * GOLDEN + token)
    return n_words + word, tokens + 1, _mix(token), _mix(p1 * GOLDEN + token)


def exact_tokens(data_p, size, table_p, words_p, grams_p, sizes_p):  # pragma: no cover - compiled
    """The word hashes and 3-gram hashes of one text in UTF-8 (``size`` bytes at ``data``;
    surrogates as ``surrogatepass`` writes them), both in text order, into ``words`` and
    ``grams`` (room for ``size`` each); their numbers go to ``sizes[0]`` and ``sizes[1]``.
    Returns -1, or the first byte where Python's decoder stops (nothing overlong, nothing
    beyond U+10FFFF; then nothing is stored).

    ``table[c]`` is code point c's entry (c < 0x10000): the code point it counts as (lower-cased
    or not) << 2 | its kind. A token is a run of code points of kind run, or one code point of
    another kind but separator (beyond the table: a word); its hash mixes the polynomial hash
    of its code points with its length. Words are the tokens that are not punctuation; 3-grams
    chain all tokens (one gram of all of them when there are fewer than 3). One pass, decoding as
    the fingerprint kernel does (:func:`_decode`): each token is hashed, and its 3-gram chained,
    as it ends.
    """
    data = carray(data_p, (max(size, 1),))
    table = carray(table_p, (0x10000,))
    words = carray(words_p, (max(size, 1),))
    grams = carray(grams_p, (max(size, 1),))
    sizes = carray(sizes_p, (2,))
    sizes[0] = sizes[1] = 0
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
            point, width = _decode(data, i, size, True)  # surrogates pass
            if width == 0:
                return i
            i += width
            entry = np.int64(table[point]) if point < 0x10000 else point << 2 | _ONE_WORD
        kind = entry & 3
        code = np.uint64(entry >> 2)
        if kind == _RUN:
            run = run * _PRIME + code
            length += ONE
            continue
        if length > 0:
            n_words, tokens, p1, p2 = _exact_add(_mix(run ^ (length * GOLDEN)), 1, words, grams, n_words, tokens,
                                                 p1, p2)
            run = length = np.uint64(0)
        if kind != _SPACE:
            n_words, tokens, p1, p2 = _exact_add(_mix(code ^ GOLDEN), kind == _ONE_WORD, words, grams, n_words,
                                                 tokens, p1, p2)
    if length > 0:
        n_words, tokens, p1, p2 = _exact_add(_mix(run ^ (length * GOLDEN)), 1, words, grams, n_words, tokens, p1, p2)
    if tokens == 1:
        grams[0] = p1
    elif tokens == 2:
        grams[0] = p2
    sizes[0] = n_words
    sizes[1] = max(tokens - 2, min(tokens, 1))
    return -1



#: exact_distinct(hashes, n, counts, counted) -> distinct hashes
EXACT_DISTINCT_SIGNATURE = types.int64(_u64p, types.int64, _u32p, types.int64)


def exact_distinct(hashes_p, n, counts_p, counted):  # pragma: no cover - compiled
    """Leave the distinct values of the sorted ``hashes[:n]`` at its start, and, when
    ``counted``, how often each occurs in ``counts``; returns how many there are.

    Without branches on the data (a repeat is as likely as not, so a branch would be
    mispredicted half the time): each value is written after the last distinct one, which
    moves on when it differs; ``counts`` first takes where each distinct value starts."""
    hashes = carray(hashes_p, (max(n, 1),))
    counts = carray(counts_p, (max(n, 1) if counted else 1,))
    if n == 0:
        return 0
    at = 0
    if counted:
        counts[0] = 0
    for i in range(1, n):
        value = hashes[i]
        new = value != hashes[at]
        at += np.int64(new)
        hashes[at] = value
        if counted:
            start = counts[at]
            counts[at] = np.uint32(i) if new else start
    if counted:
        for j in range(at):
            counts[j] = counts[j + 1] - counts[j]
        counts[at] = np.uint32(n) - counts[at]
    return at + 1



@numba.njit(inline="always")
def _shared(hashes, weights, offsets, a, b, weighted, threshold, both):  # pragma: no cover - compiled
    """The sum over the hashes documents ``a`` and ``b`` both hold of the smaller weight (1 each
    without ``weighted``): a merge of the two sorted runs ``offsets[d]:offsets[d + 1]``.

    With a ``threshold`` of 0 or more (sets only; ``both``: their two sizes), the merge stops
    once the Jaccard ``shared / (both - shared)`` is sure to fall on one side of it, and returns
    a count on that same side: every 64 steps the count so far, and it plus the shorter remaining
    run, bound the final one, and the Jaccard rises with the count (in floating point too)."""
    i, i_end = offsets[a], offsets[a + 1]
    j, j_end = offsets[b], offsets[b + 1]
    total = 0
    step = 0
    while i < i_end and j < j_end:
        x, y = hashes[i], hashes[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            total += min(np.int64(weights[i]), np.int64(weights[j])) if weighted else 1
            i += 1
            j += 1
        step += 1
        if threshold >= 0 and step & 63 == 0:
            most = total + min(i_end - i, j_end - j)
            if most / (both - most) < threshold:
                return most  # short even if every hash left were shared
            if total / (both - total) >= threshold:
                return total  # there already
    return total


#: exact_shared(hashes, weights, offsets, ndocs, left, right, npairs, weighted, out) -> 0
EXACT_SHARED_SIGNATURE = types.int64(_u64p, _u32p, _i64p, types.int64, _i64p, _i64p, types.int64, types.int64,
                                     _i64p)


def exact_shared(hashes_p, weights_p, offsets_p, ndocs, left_p, right_p, npairs, weighted,
                 out_p):  # pragma: no cover - compiled
    """:func:`_shared` of each pair ``left[p]``, ``right[p]`` of the ``ndocs`` documents whose
    runs of sorted ``hashes`` (with ``weights`` when ``weighted``) ``offsets`` delimits."""
    offsets = carray(offsets_p, (ndocs + 1,))
    hashes = carray(hashes_p, (max(offsets[ndocs], 1),))
    weights = carray(weights_p, (max(offsets[ndocs], 1) if weighted else 1,))
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    out = carray(out_p, (max(npairs, 1),))
    for p in range(npairs):
        out[p] = _shared(hashes, weights, offsets, left[p], right[p], weighted, -1.0, 0)
    return 0



@numba.njit(inline="always")
def _element(h, j):  # pragma: no cover - compiled
    """The j-th copy of a hash: a multiset as a set (the hash itself first)."""
    return h if j == 0 else _mix(h ^ (np.uint64(j) * GOLDEN))


#: exact_elements(hashes, weights, offsets, ndocs, units, nunits, weighted, out, room) -> elements
EXACT_ELEMENTS_SIGNATURE = types.int64(_u64p, _u32p, _i64p, types.int64, _i64p, types.int64, types.int64, _u64p,
                                       types.int64)


def exact_elements(hashes_p, weights_p, offsets_p, ndocs, units_p, nunits, weighted, out_p,
                   room):  # pragma: no cover - compiled
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


#: exact_frequent_bits(hashes, weights, offsets, ndocs, units, nunits, weighted, keys, ids, nkeys, bits,
#:                     words, sieve) -> 0
EXACT_BITS_SIGNATURE = types.int64(_u64p, _u32p, _i64p, types.int64, _i64p, types.int64, types.int64, _u64p, _i64p,
                                   types.int64, _u64p, types.int64, _u64p)
#: bits of the sieve in front of the table of frequent elements (16 KiB: it stays in the L1 cache)
SIEVE_BITS = 1 << 17  # (fastpath.SIEVE_BITS)
SIEVE_SHIFT = 65 - SIEVE_BITS.bit_length()  # a key's top bits, its bit in the sieve


def exact_frequent_bits(hashes_p, weights_p, offsets_p, ndocs, units_p, nunits, weighted, keys_p, ids_p, nkeys,
                        bits_p, words, sieve_p):  # pragma: no cover - compiled
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



#: exact_bounded(bits, nrows, words, sizes, free, left, right, npairs, out, prefix, prefix_free, cuts, ncuts) -> 0
EXACT_BOUNDED_SIGNATURE = types.int64(_u64p, types.int64, types.int64, _i64p, _i64p, _i64p, _i64p, types.int64,
                                      types.CPointer(types.float64), types.int64, _i64p, types.CPointer(types.float64),
                                      types.int64)


@numba.njit(inline="always")
def _bound(shared, free_a, free_b, size_a, size_b):  # pragma: no cover - compiled
    most = shared + min(free_a, free_b)
    return most / (size_a + size_b - most)


def exact_bounded(bits_p, nrows, words, sizes_p, free_p, left_p, right_p, npairs, out_p, prefix, prefix_free_p,
                  cuts_p, ncuts):  # pragma: no cover
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



#: exact_verdicts(bag_hashes, bag_weights, bag_offsets, bag_totals, gram_hashes, gram_offsets, gram_totals,
#:                ndocs, left, right, npairs, measure, min_similarity, min_resemblance, floor, similarity,
#:                passing) -> 0
EXACT_VERDICTS_SIGNATURE = types.int64(_u64p, _u32p, _i64p, _i64p, _u64p, _i64p, _i64p, types.int64, _i64p, _i64p,
                                       types.int64, types.int64, _f64, _f64, _f64, types.CPointer(types.float64),
                                       _u8p)


def exact_verdicts(bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p,
                   gram_totals_p, ndocs, left_p, right_p, npairs, measure, min_similarity, min_resemblance, floor,
                   similarity_p, passing_p):  # pragma: no cover - compiled
    """:func:`_verdict` of each pair ``left[p]``, ``right[p]`` of the ``ndocs`` documents (all
    with exact sets): whether it passes into ``passing``, its bag similarity into ``similarity``."""
    runs = _exact_runs(ndocs, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p,
                       gram_totals_p)
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    similarity = carray(similarity_p, (max(npairs, 1),))
    passing = carray(passing_p, (max(npairs, 1),))
    for p in range(npairs):
        ok, similarity[p] = _verdict(left[p], right[p], runs, measure, min_similarity, min_resemblance, floor)
        passing[p] = ok
    return 0



#: canonical_pairs(values, n, words, left, right, npairs, masks, chosen, level_ends, nlevels, limits) -> kept
CANONICAL_SIGNATURE = types.int64(_u64p, types.int64, types.int64, _i64p, _i64p, types.int64, _u64p, _u8p, _i64p,
                                  types.int64, _i64p)


def canonical_pairs(values_p, n, words, left_p, right_p, npairs, masks_p, chosen_p, ends_p, nlevels,
                    limits_p):  # pragma: no cover - compiled
    """Keep, in place and in order, the pairs of rows ``left[p]``, ``right[p]`` of ``values``
    (``words`` uint64 a row) whose tables at every level are their canonical tables
    (:func:`simdedup.index.chunk_pairs`); returns how many are kept.

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


#: every kernel by the name :mod:`simdedup.fastpath` loads it under: its function and C signature
KERNELS = {
    "fastpath": (fingerprint_batch, SIGNATURE),
    "keywords": (keyword_batch, KEYWORD_SIGNATURE),
    "pairs": (table_pairs, PAIRS_SIGNATURE),
    "cross": (cross_pairs, CROSS_SIGNATURE),
    "packed": (packed_pairs, PACKED_SIGNATURE),
    "canonical": (canonical_pairs, CANONICAL_SIGNATURE),
    "linkage": (link_complete, LINKAGE_SIGNATURE),
    "scan": (scan_records, SCAN_SIGNATURE),
    "exact-tokens": (exact_tokens, EXACT_TOKENS_SIGNATURE),
    "exact-distinct": (exact_distinct, EXACT_DISTINCT_SIGNATURE),
    "exact-shared": (exact_shared, EXACT_SHARED_SIGNATURE),
    "exact-elements": (exact_elements, EXACT_ELEMENTS_SIGNATURE),
    "exact-bits": (exact_frequent_bits, EXACT_BITS_SIGNATURE),
    "exact-bounded": (exact_bounded, EXACT_BOUNDED_SIGNATURE),
    "exact-verdicts": (exact_verdicts, EXACT_VERDICTS_SIGNATURE),
}


def compile_kernel(name: str):
    """Kernel ``name`` compiled by numba as a C function (a cfunc: ``.address``, ``._library``)."""
    function, signature = KERNELS[name]
    return numba.cfunc(signature, nopython=True, error_model="numpy")(function)
