"""numba source of the segmentation kernel (:mod:`simdedup.kernels.jieba_cut`): ``jieba.cut(text,
HMM=True)`` of a batch of texts, from jieba's prefix dictionary and HMM as tables.

The rules are jieba 0.42's (``jieba/__init__.py`` and ``jieba/finalseg/__init__.py``); each
function below names the jieba function it follows. The arithmetic is jieba's: the same float64
operations in the same order, and the same ties (Python's ``max`` over tuples).
"""

import numba
import numpy as np
from numba import carray

# Bits of a character's class (:data:`simdedup.kernels.jieba_cut.CLASS_BITS`).
BLOCK = 1  # re_han_default: runs of these are cut by the dictionary
HMM_HAN = 2  # finalseg.re_han: runs of these are cut by the HMM
ALNUM = 4  # [a-zA-Z0-9] of finalseg.re_skip
DIGIT = 8  # \d of finalseg.re_skip

# The HMM's states in the alphabetical order Python's max() compares them in: B E M S.
B, E, M, S = 0, 1, 2, 3

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
CODE_BITS = np.uint64(21)  # a code point, or a node number, in 21 bits
LOW21 = np.uint64((1 << 21) - 1)
USED = np.uint64(1 << 42)  # marks a taken slot once shifted past the child's 21 bits


@numba.njit(inline="always")
def _child(trie, shift, node, c):  # pragma: no cover - compiled
    """The node of the prefix ``node`` followed by character ``c``, or -1 (not a prefix of
    any word). ``trie`` is open addressing, linear probing: a slot holds ``used | node << 21 |
    c`` shifted left by 21 bits, then the child's number."""
    key = USED | (np.uint64(node) << CODE_BITS) | np.uint64(c)
    mask = np.uint64(len(trie) - 1)
    slot = (key * GOLDEN) >> shift
    while True:
        entry = trie[slot]
        if entry == 0:
            return -1
        if entry >> CODE_BITS == key:
            return np.int64(entry & LOW21)
        slot = (slot + np.uint64(1)) & mask


@numba.njit(inline="always")
def _class(classes, c):  # pragma: no cover - compiled
    return classes[c] if c < len(classes) else 0


@numba.njit
def _is_word(units, start, end, trie, shift, weights):  # pragma: no cover - compiled
    """Whether ``units[start:end]`` is a word of the dictionary (``FREQ.get(buf)`` is not 0)."""
    node = 0
    for i in range(start, end):
        node = _child(trie, shift, node, units[i])
        if node < 0:
            return False
    return not np.isnan(weights[node])


@numba.njit
def _viterbi(units, start, end, start_p, trans_p, emit_p, emit_first, states, out, n):  # pragma: no cover - compiled
    """``finalseg.__cut``: the HMM's words of ``units[start:end]`` (characters of ``HMM_HAN``),
    appended to ``out`` from ``out[n]``; returns the new count. ``states`` is scratch, four
    backpointers a character."""
    chars = len(emit_p) // 4
    count = end - start
    c = units[start] - emit_first
    v_b = start_p[B] + emit_p[B * chars + c]
    v_e = start_p[E] + emit_p[E * chars + c]
    v_m = start_p[M] + emit_p[M * chars + c]
    v_s = start_p[S] + emit_p[S * chars + c]
    for t in range(1, count):
        c = units[start + t] - emit_first
        at = 4 * t
        # max((V[y0] + trans_p[y0][y] + emit, y0) for y0 in PrevStatus[y]): on a tie the later
        # letter, which is the second candidate of each pair here
        em = emit_p[B * chars + c]  # B after E or S
        first, second = v_e + trans_p[E * 4 + B] + em, v_s + trans_p[S * 4 + B] + em
        next_b = first if first > second else second
        states[at + B] = E if first > second else S
        em = emit_p[E * chars + c]  # E after B or M
        first, second = v_b + trans_p[B * 4 + E] + em, v_m + trans_p[M * 4 + E] + em
        next_e = first if first > second else second
        states[at + E] = B if first > second else M
        em = emit_p[M * chars + c]  # M after B or M
        first, second = v_b + trans_p[B * 4 + M] + em, v_m + trans_p[M * 4 + M] + em
        next_m = first if first > second else second
        states[at + M] = B if first > second else M
        em = emit_p[S * chars + c]  # S after E or S
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


@numba.njit
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


@numba.njit
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


@numba.njit
def _flush(
    units, start, end, classes, trie, shift, weights, start_p, trans_p, emit_p, emit_first, states, out, n
):  # pragma: no cover - compiled
    """``__cut_DAG``'s buffer of one-character steps ``units[start:end]``: one word if one
    character, the HMM's words if not a dictionary word, else its characters."""
    if end - start == 1:
        out[n] = 1
        return n + 1
    if not _is_word(units, start, end, trie, shift, weights):
        return _finalseg(units, start, end, classes, start_p, trans_p, emit_p, emit_first, states, out, n)
    for _ in range(start, end):
        out[n] = 1
        n += 1
    return n


@numba.njit
def _cut_dag(
    units,
    start,
    end,
    classes,
    trie,
    shift,
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
    for k in range(size - 1, -1, -1):
        # get_DAG's ends of the words that start at k, each weighed as calc does:
        # log(FREQ) - log(total) + route[x + 1]; max((value, x)): a tie goes to the longer word
        best_end = -1
        best = 0.0
        node = 0
        for x in range(k, size):
            node = _child(trie, shift, node, units[start + x])
            if node < 0:
                break
            weight = weights[node]
            if not np.isnan(weight):
                value = weight + values[x + 1]
                if best_end < 0 or value >= best:
                    best, best_end = value, x
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
                    units, start + buffered, start + x, classes, trie, shift, weights,
                    start_p, trans_p, emit_p, emit_first, states, out, n,
                )  # fmt: skip
                buffered = -1
            out[n] = y - x
            n += 1
        x = y
    if buffered >= 0:
        n = _flush(
            units,
            start + buffered,
            end,
            classes,
            trie,
            shift,
            weights,
            start_p,
            trans_p,
            emit_p,
            emit_first,
            states,
            out,
            n,
        )
    return n


def cut_batch(
    units_p,
    nunits,
    chunk_ends_p,
    nchunks,
    classes_p,
    nclasses,
    trie_p,
    trie_bits,
    weights_p,
    nnodes,
    unknown,
    start_p_p,
    trans_p_p,
    emit_p_p,
    emit_chars,
    emit_first,
    recut,
    words_p,
    chunk_words_p,
    values_p,
    ends_p,
    states_p,
    first_p,
    room,
):  # pragma: no cover - compiled
    """``jieba.cut(chunk, HMM=True)`` of each chunk of a batch, as word lengths.

    ``units`` (``nunits``) are the code points of every chunk back to back, chunk ``i`` ending
    at ``chunk_ends[i]``. The words of a chunk cover it in order, so a word is its length in
    code points: they go to ``words``, and ``chunk_words[i + 1]`` is the count of words up to the
    end of chunk ``i`` (``chunk_words[0]`` is 0). With ``recut``, each word of more than one
    character is cut again (``jieba.cut("|".join(jieba.cut(text)))`` without its ``"|"``s).

    The dictionary: ``classes[c]`` the class bits of code point ``c < nclasses`` (others have
    none); ``trie`` (``2 ** trie_bits`` slots) every prefix of a word of jieba's ``FREQ``
    as a node, node 0 the empty prefix, ``weights[node]`` its ``log(FREQ) - log(total)``, NaN
    when its ``FREQ`` is 0; ``unknown`` is ``log(1) - log(total)``. The HMM: ``start_p`` (4),
    ``trans_p`` (4 x 4), ``emit_p`` (4 x ``emit_chars`` code points from ``emit_first``), states
    in the order B E M S, ``MIN_FLOAT`` where jieba has no entry. The rest is scratch of
    ``room`` (the longest chunk, plus one) entries; ``states`` has four times that.
    """
    units = carray(units_p, (max(nunits, 1),))
    chunk_ends = carray(chunk_ends_p, (max(nchunks, 1),))
    classes = carray(classes_p, (nclasses,))
    trie = carray(trie_p, (1 << trie_bits,))
    weights = carray(weights_p, (nnodes,))
    start_p = carray(start_p_p, (4,))
    trans_p = carray(trans_p_p, (16,))
    emit_p = carray(emit_p_p, (4 * emit_chars,))
    words = carray(words_p, (max(nunits, 1),))
    chunk_words = carray(chunk_words_p, (nchunks + 1,))
    values = carray(values_p, (room,))
    ends = carray(ends_p, (room,))
    states = carray(states_p, (4 * room,))
    first = carray(first_p, (room,))
    shift = np.uint64(64 - trie_bits)
    n = 0
    chunk_words[0] = 0
    i = 0
    for chunk in range(nchunks):
        end = chunk_ends[chunk]
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
                    units, i, j, classes, trie, shift, weights, unknown,
                    start_p, trans_p, emit_p, emit_first, values, ends, states, words, n,
                )  # fmt: skip
            else:
                count = _cut_dag(
                    units, i, j, classes, trie, shift, weights, unknown,
                    start_p, trans_p, emit_p, emit_first, values, ends, states, first, 0,
                )  # fmt: skip
                at = i
                for w in range(count):
                    if first[w] == 1:
                        words[n] = 1
                        n += 1
                    else:
                        n = _cut_dag(
                            units, at, at + first[w], classes, trie, shift, weights, unknown,
                            start_p, trans_p, emit_p, emit_first, values, ends, states, words, n,
                        )  # fmt: skip
                    at += first[w]
            i = j
        chunk_words[chunk + 1] = n
    return 0
