"""numba source of the segmentation kernel (:mod:`simdedup.kernels.jieba_cut`): ``jieba.cut(text,
HMM=True)`` of a batch of texts, from jieba's prefix dictionary and HMM as tables.

The rules are jieba 0.42's (``jieba/__init__.py`` and ``jieba/finalseg/__init__.py``); each
function below names the jieba function it follows. The arithmetic is jieba's: the same float64
operations in the same order, and the same ties (Python's ``max`` over tuples).
"""

import numba
import numpy as np
from numba import carray

from .common import prefetch

# Bits of a character's class (:data:`simdedup.kernels.jieba_cut.CLASS_BITS`).
BLOCK = 1  # re_han_default: runs of these are cut by the dictionary
HMM_HAN = 2  # finalseg.re_han: runs of these are cut by the HMM
ALNUM = 4  # [a-zA-Z0-9] of finalseg.re_skip
DIGIT = 8  # \d of finalseg.re_skip

# The HMM's states in the alphabetical order Python's max() compares them in: B E M S.
B, E, M, S = 0, 1, 2, 3

# A prefix of a dictionary word is a 64-bit entry: its last character (bits 0-20), where the
# entries of its one-character-longer prefixes are (a block of trie: its start, bits 21-41, and
# log2 of its size, bits 42-46; 0 when there are none), the number of its weight (bits 47-62),
# and bit 63 set. A prefix's children are found in its block by their character's hash, with
# linear probing: each prefix's block, and so a common character's, is in one place.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW21 = np.uint64((1 << 21) - 1)
START_SHIFT = np.uint64(21)
BITS_SHIFT = np.uint64(42)
WEIGHT_SHIFT = np.uint64(47)
WEIGHT_MASK = np.uint64((1 << 16) - 1)


@numba.njit(inline="always")
def _block(entry, c):  # pragma: no cover - compiled
    """``(first slot to look at, start, mask)`` for character ``c`` in the block of ``entry``'s
    children; mask -1 when it has none."""
    bits = (entry >> BITS_SHIFT) & np.uint64(31)
    if bits == 0:
        return 0, 0, -1
    start = np.int64((entry >> START_SHIFT) & LOW21)
    home = np.int64((np.uint64(c) * GOLDEN) >> (np.uint64(64) - bits))
    return start + home, start, np.int64((1 << bits) - 1)


@numba.njit(inline="always")
def _child(trie, entry, c):  # pragma: no cover - compiled
    """The entry of ``entry``'s prefix followed by character ``c``, 0 for none."""
    slot, start, mask = _block(entry, c)
    if mask < 0:
        return np.uint64(0)
    while True:
        found = trie[slot]
        if found == 0 or found & LOW21 == c:
            return found
        slot = start + ((slot - start + 1) & mask)


@numba.njit(inline="always")
def _weight(weights, entry):  # pragma: no cover - compiled
    return weights[(entry >> WEIGHT_SHIFT) & WEIGHT_MASK]


#: how many characters ahead the dictionary walk asks for its slots (see _cut_dag)
AHEAD = 8


@numba.njit(inline="always")
def _prefetch_walk(units, i, end, roots, trie):  # pragma: no cover - compiled
    """Prefetch the slot the dictionary walk from ``units[i]`` reads after its first character's
    entry (in ``roots``, which stays in the caches)."""
    if i + 1 < end:
        slot, _, mask = _block(roots[units[i]], units[i + 1])
        if mask >= 0:
            prefetch(trie, slot)


@numba.njit(inline="always")
def _class(classes, c):  # pragma: no cover - compiled
    return classes[c] if c < len(classes) else 0


@numba.njit(_nrt=False)
def _is_word(units, start, end, roots, trie, weights):  # pragma: no cover - compiled
    """Whether ``units[start:end]`` is a word of the dictionary (``FREQ.get(buf)`` is not 0)."""
    entry = roots[units[start]]
    for i in range(start + 1, end):
        if entry == 0:
            return False
        entry = _child(trie, entry, units[i])
    return entry != 0 and not np.isnan(_weight(weights, entry))


@numba.njit(_nrt=False)
def _viterbi(units, start, end, start_p, trans_p, emit_p, emit_first, states, out, n):  # pragma: no cover - compiled
    """``finalseg.__cut``: the HMM's words of ``units[start:end]`` (characters of ``HMM_HAN``),
    appended to ``out`` from ``out[n]``; returns the new count. ``states`` is scratch, four
    backpointers a character."""
    count = end - start
    c = units[start] - emit_first
    v_b = start_p[B] + emit_p[4 * c + B]
    v_e = start_p[E] + emit_p[4 * c + E]
    v_m = start_p[M] + emit_p[4 * c + M]
    v_s = start_p[S] + emit_p[4 * c + S]
    for t in range(1, count):
        c = units[start + t] - emit_first
        at = 4 * t
        # max((V[y0] + trans_p[y0][y] + emit, y0) for y0 in PrevStatus[y]): on a tie the later
        # letter, which is the second candidate of each pair here
        em = emit_p[4 * c + B]  # B after E or S
        first, second = v_e + trans_p[E * 4 + B] + em, v_s + trans_p[S * 4 + B] + em
        next_b = first if first > second else second
        states[at + B] = E if first > second else S
        em = emit_p[4 * c + E]  # E after B or M
        first, second = v_b + trans_p[B * 4 + E] + em, v_m + trans_p[M * 4 + E] + em
        next_e = first if first > second else second
        states[at + E] = B if first > second else M
        em = emit_p[4 * c + M]  # M after B or M
        first, second = v_b + trans_p[B * 4 + M] + em, v_m + trans_p[M * 4 + M] + em
        next_m = first if first > second else second
        states[at + M] = B if first > second else M
        em = emit_p[4 * c + S]  # S after E or S
        first, second = v_e + trans_p[E * 4 + S] + em, v_s + trans_p[S * 4 + S] + em
        next_s = first if first > second else second
        states[at + S] = E if first > second else S
        v_b, v_e, v_m, v_s = next_b, next_e, next_m, next_s
    state = np.int64(S if v_s >= v_e else E)  # the path ends in E or S, S on a tie
    # the path backwards, each state into states[4 * t] (the slot of B, free once read)
    for t in range(count - 1, -1, -1):
        step = np.int64(states[4 * t + state]) if t > 0 else 0
        states[4 * t] = state
        state = step
    begin, past = 0, 0
    for i in range(count):
        state = states[4 * i]
        if state == B:
            begin = i
        elif state == E:
            out[n] = i + 1 - begin
            n += 1
            past = i + 1
        elif state == S:
            out[n] = 1
            n += 1
            past = i + 1
    if past < count:
        out[n] = count - past
        n += 1
    return n


@numba.njit(_nrt=False)
def _skip_split(units, start, end, classes, out, n):  # pragma: no cover - compiled
    """``finalseg.re_skip.split``: the pieces of ``units[start:end]`` (no ``HMM_HAN``
    character), matches of ``[a-zA-Z0-9]+(?:\\.\\d+)?%?`` and the text between them."""
    piece = start
    i = start
    while i < end:
        if _class(classes, units[i]) & ALNUM == 0:
            i += 1
            continue
        match = i
        while i < end and _class(classes, units[i]) & ALNUM:
            i += 1
        if i + 1 < end and units[i] == 46 and _class(classes, units[i + 1]) & DIGIT:  # "."
            i += 2
            while i < end and _class(classes, units[i]) & DIGIT:
                i += 1
        if i < end and units[i] == 37:  # "%"
            i += 1
        if piece < match:
            out[n] = match - piece
            n += 1
        out[n] = i - match
        n += 1
        piece = i
    if piece < end:
        out[n] = end - piece
        n += 1
    return n


@numba.njit(_nrt=False)
def _finalseg(
    units, start, end, classes, start_p, trans_p, emit_p, emit_first, states, out, n
):  # pragma: no cover - compiled
    """``finalseg.cut``: runs of ``HMM_HAN`` characters by the HMM, the rest by ``re_skip``."""
    i = start
    while i < end:
        han = _class(classes, units[i]) & HMM_HAN
        j = i + 1
        while j < end and (_class(classes, units[j]) & HMM_HAN) == han:
            j += 1
        if han:
            n = _viterbi(units, i, j, start_p, trans_p, emit_p, emit_first, states, out, n)
        else:
            n = _skip_split(units, i, j, classes, out, n)
        i = j
    return n


@numba.njit(_nrt=False)
def _flush(
    units,
    start,
    end,
    classes,
    roots,
    trie,
    weights,
    start_p,
    trans_p,
    emit_p,
    emit_first,
    states,
    out,
    n,
):  # pragma: no cover - compiled
    """``__cut_DAG``'s buffer of one-character steps ``units[start:end]``: one word if one
    character, the HMM's words if not a dictionary word, else its characters."""
    if end - start == 1:
        out[n] = 1
        return n + 1
    if not _is_word(units, start, end, roots, trie, weights):
        return _finalseg(units, start, end, classes, start_p, trans_p, emit_p, emit_first, states, out, n)
    for _ in range(start, end):
        out[n] = 1
        n += 1
    return n


@numba.njit(_nrt=False)
def _cut_dag(
    units,
    start,
    end,
    classes,
    roots,
    trie,
    weights,
    unknown,
    start_p,
    trans_p,
    emit_p,
    emit_first,
    values,
    ends,
    states,
    out,
    n,
):  # pragma: no cover - compiled
    """``__cut_DAG``: the words of the block ``units[start:end]`` (characters of ``BLOCK``)
    appended to ``out`` from ``out[n]``; returns the new count. ``values``/``ends`` hold
    ``calc``'s route (scratch)."""
    size = end - start
    values[size] = 0.0
    for k in range(size - 1, max(size - AHEAD, 0) - 1, -1):
        _prefetch_walk(units, start + k, end, roots, trie)
    for k in range(size - 1, -1, -1):
        if k >= AHEAD:
            _prefetch_walk(units, start + k - AHEAD, end, roots, trie)
        # get_DAG's ends of the words that start at k, each weighed as calc does:
        # log(FREQ) - log(total) + route[x + 1]; max((value, x)): a tie goes to the longer word
        best_end = -1
        best = 0.0
        entry = roots[units[start + k]]  # of the word so far, 0 for none
        x = k
        while entry != 0:
            weight = _weight(weights, entry)
            if not np.isnan(weight):
                value = weight + values[x + 1]
                if best_end < 0 or value >= best:
                    best, best_end = value, x
            x += 1
            if x == size:
                break
            entry = _child(trie, entry, units[start + x])
        if best_end < 0:  # no word starts here: the character alone, at log(1) - log(total)
            best, best_end = unknown + values[k + 1], k
        values[k] = best
        ends[k] = best_end
    x = 0
    buffered = -1  # where the run of one-character steps starts
    while x < size:
        y = ends[x] + 1
        if y - x == 1:
            if buffered < 0:
                buffered = x
        else:
            if buffered >= 0:
                n = _flush(
                    units, start + buffered, start + x, classes, roots, trie, weights,
                    start_p, trans_p, emit_p, emit_first, states, out, n,
                )  # fmt: skip
                buffered = -1
            out[n] = y - x
            n += 1
        x = y
    if buffered >= 0:
        n = _flush(
            units, start + buffered, end, classes, roots, trie, weights,
            start_p, trans_p, emit_p, emit_first, states, out, n,
        )  # fmt: skip
    return n


def cut_batch(
    data_p,
    nbytes,
    chunk_ends_p,
    nchunks,
    classes_p,
    nclasses,
    roots_p,
    trie_p,
    ntrie,
    weights_p,
    nweights,
    unknown,
    start_p_p,
    trans_p_p,
    emit_p_p,
    emit_chars,
    emit_first,
    recut,
    words_p,
    nwords,
    chunk_words_p,
    units_p,
    values_p,
    ends_p,
    states_p,
    first_p,
    room,
):  # pragma: no cover - compiled
    """``jieba.cut(chunk, HMM=True)`` of each chunk of a batch, as word lengths.

    ``data`` (``nbytes``) is the UTF-8 (with ``surrogatepass``) of every chunk back to back,
    chunk ``i`` ending at code point ``chunk_ends[i]``. The words of a chunk cover it in order,
    so a word is its length in code points: they go to ``words`` (room for ``nwords``, at least
    the code points), and ``chunk_words[i + 1]`` is the count of words up to the end of chunk
    ``i`` (``chunk_words[0]`` is 0). With ``recut``, each word of more than one character is
    cut again (``jieba.cut("|".join(jieba.cut(text)))`` without its ``"|"``s).

    The dictionary: ``classes[c]`` the class bits of code point ``c < nclasses`` (others have
    none). Every prefix of a word of jieba's ``FREQ`` is an entry (see the top of this module):
    ``roots[c]`` that of the one-character prefix ``c`` (0 for none), the others in the blocks of
    ``trie`` (``ntrie`` entries); ``weights[number]`` is its ``log(FREQ) - log(total)``, NaN
    when its ``FREQ`` is 0. ``unknown`` is ``log(1) - log(total)``. The HMM: ``start_p`` (4),
    ``trans_p`` (4 x 4), ``emit_p`` (``emit_chars`` code points from ``emit_first`` x 4 states), states
    in the order B E M S, ``MIN_FLOAT`` where jieba has no entry. The rest is scratch of
    ``room`` (the longest chunk, plus one) entries, ``units`` a chunk's code points; ``states``
    has four times that.
    """
    data = carray(data_p, (max(nbytes, 1),))
    units = carray(units_p, (room,))
    chunk_ends = carray(chunk_ends_p, (max(nchunks, 1),))
    classes = carray(classes_p, (nclasses,))
    roots = carray(roots_p, (nclasses,))
    trie = carray(trie_p, (ntrie,))
    weights = carray(weights_p, (nweights,))
    start_p = carray(start_p_p, (4,))
    trans_p = carray(trans_p_p, (16,))
    emit_p = carray(emit_p_p, (4 * emit_chars,))
    words = carray(words_p, (max(nwords, 1),))
    chunk_words = carray(chunk_words_p, (nchunks + 1,))
    values = carray(values_p, (room,))
    ends = carray(ends_p, (room,))
    states = carray(states_p, (4 * room,))
    first = carray(first_p, (room,))
    n = 0
    chunk_words[0] = 0
    at = 0  # in data
    for chunk in range(nchunks):
        end = chunk_ends[chunk] - (chunk_ends[chunk - 1] if chunk > 0 else 0)
        for u in range(end):  # the chunk's code points
            c = np.uint32(data[at])
            if c < 0x80:
                at += 1
            elif c < 0xE0:
                c = ((c & 0x1F) << 6) | (data[at + 1] & 0x3F)
                at += 2
            elif c < 0xF0:
                c = ((c & 0x0F) << 12) | ((data[at + 1] & 0x3F) << 6) | (data[at + 2] & 0x3F)
                at += 3
            else:
                c = (
                    ((c & 0x07) << 18)
                    | ((data[at + 1] & 0x3F) << 12)
                    | ((data[at + 2] & 0x3F) << 6)
                    | (data[at + 3] & 0x3F)
                )
                at += 4
            units[u] = c
        i = 0
        while i < end:
            if _class(classes, units[i]) & BLOCK == 0:
                # re_skip_default's split of the rest: "\r\n" one word, every other character one
                if units[i] == 13 and i + 1 < end and units[i + 1] == 10:
                    words[n] = 2
                    i += 2
                else:
                    words[n] = 1
                    i += 1
                n += 1
                continue
            j = i + 1
            while j < end and _class(classes, units[j]) & BLOCK:
                j += 1
            if not recut:
                n = _cut_dag(
                    units, i, j, classes, roots, trie, weights, unknown,
                    start_p, trans_p, emit_p, emit_first, values, ends, states, words, n,
                )  # fmt: skip
            else:
                count = _cut_dag(
                    units, i, j, classes, roots, trie, weights, unknown,
                    start_p, trans_p, emit_p, emit_first, values, ends, states, first, 0,
                )  # fmt: skip
                piece = i
                for w in range(count):
                    if first[w] == 1:
                        words[n] = 1
                        n += 1
                    else:
                        n = _cut_dag(
                            units, piece, piece + first[w], classes, roots, trie, weights, unknown,
                            start_p, trans_p, emit_p, emit_first, values, ends, states, words, n,
                        )  # fmt: skip
                    piece += first[w]
            i = j
        chunk_words[chunk + 1] = n
    return 0
