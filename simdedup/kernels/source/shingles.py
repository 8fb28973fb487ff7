"""numba source of the shingle-sketch kernel (:mod:`simdedup.kernels.shingles`): a text's
shingles, as the exact kernel cuts them (:func:`simdedup.kernels.source.exact._text_tokens`),
fed to sketches of their sets, a chunk of UTF-8 at a time.

Each sketch is fast similarity sketching (Dahlgaard, Knudsen and Thorup 2017): in round ``r``
every shingle ``x`` goes to a bin by its hash ``h_r(x)``, and a bin keeps the shingle of the
first round that reached it, the one of smallest hash among that round's; rounds go on until
every bin holds one. Two sets then agree in a bin exactly when the shingle that wins it in
their union is in both: with probability their Jaccard, however few shingles they have (a
short text's sketch holds nearly all its shingles). Each bin keeps ``value_bits`` of its
winner's hash (b-bit minwise hashing, Li and König 2010). The first round needs only the
stream; the later ones, the distinct shingles, kept while there are fewer than ``capacity``
(with more, the first round fills every bin).

A text's shingles are its word 3-grams, or its 5-character shingles (white space deleted) when it
is a text of characters (``cjk_share`` of its characters Han or kana) or has no word; two texts
of characters are compared on their 5-character shingles, any other pair on its word 3-grams.
So the record's sketch has three parts (:mod:`simdedup.shingle_sketch`): ``a_bins`` bins of the
word 3-grams, whatever the text (the part a text of characters and one of words compare); then
``bins - a_bins - 1`` bins of the text's own shingles, its word 3-grams again (hashed apart) or its
5-character shingles; and a last bin that says which (0: words, 1: characters). While reading,
the word 3-grams feed both word sketches and the 5-character shingles a third; :func:`_finish`
keeps what the text turns out to be.

State (``state``, int64): see the ``_AT_`` indices below; ``keys`` and ``winners`` (uint64,
``a_bins + 2 * own bins``: the words' first part, their own part, the characters' own part)
the round each bin was won in and its winner's hash; ``elements`` (uint64, ``2 * capacity``)
the distinct shingles of each kind.
"""

import numba
import numpy as np
from numba import carray

from .common import GOLDEN, _decode, _mix
from .exact import _CHAR_GRAM, _PRIME, _S_CJK, _S_SPACE, _S_WORD, _wide_entry

#: the seeds of the three sketches: words (the part every text has), words (their own part),
#: characters (their own part)
WORD_SEED = np.uint64(0)
OWN_WORD_SEED = np.uint64(0x8EBC6AF09C88C6E3)
CHARACTER_SEED = np.uint64(0xC3A5C85C97CB3127)
VALUE_SEED = np.uint64(0xB492B66FBE98F273)
EMPTY_KEY = ~np.uint64(0)

# where each number of the state is
_AT_WORD_HASH, _AT_WORD_LENGTH, _AT_TOKENS, _AT_T1, _AT_T2 = 0, 1, 2, 3, 4
_AT_SEEN, _AT_C1, _AT_C2, _AT_C3, _AT_C4 = 5, 6, 7, 8, 9
_AT_CHARACTERS, _AT_CJK = 10, 11
_AT_COUNT_WORDS, _AT_COUNT_CHARS, _AT_MANY_WORDS, _AT_MANY_CHARS = 12, 13, 14, 15
STATE_SIZE = 16


@numba.njit(inline="always")
def _round_hash(x, r, seed):  # pragma: no cover - compiled
    return _mix(x ^ (np.uint64(r + 1) * GOLDEN) ^ seed)


@numba.njit(inline="always")
def _offer(h, r, keys, winners, base, bins):  # pragma: no cover - compiled
    """Offer a shingle's round-``r`` hash ``h`` to its bin among ``bins`` from ``base`` (the top
    bits of ``h`` choose it): it wins an empty bin, or one won in this round by a larger hash.
    ``keys`` holds the round a bin was won in (:data:`EMPTY_KEY`: none yet)."""
    b = base + np.int64(((h >> np.uint64(32)) * np.uint64(bins)) >> np.uint64(32))
    won = keys[b]
    if won == EMPTY_KEY or (won == np.uint64(r) and h < winners[b]):
        keys[b] = np.uint64(r)
        winners[b] = h


@numba.njit(inline="always")
def _offer_word(gram, r, keys, winners, a_bins, own_bins):  # pragma: no cover - compiled
    """A word 3-gram to both word sketches."""
    _offer(_round_hash(gram, r, WORD_SEED), r, keys, winners, 0, a_bins)
    _offer(_round_hash(gram, r, OWN_WORD_SEED), r, keys, winners, a_bins, own_bins)


@numba.njit(inline="always")
def _offer_character(gram, r, keys, winners, a_bins, own_bins):  # pragma: no cover - compiled
    """A 5-character shingle to the characters' sketch."""
    _offer(_round_hash(gram, r, CHARACTER_SEED), r, keys, winners, a_bins + own_bins, own_bins)


@numba.njit
def _heap_sort(values, base, n):  # pragma: no cover - compiled
    """Sort ``values[base:base + n]`` in place (a kernel allocates no memory: no ``sort()``)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(values, base, start, n)
    for end in range(n - 1, 0, -1):
        values[base], values[base + end] = values[base + end], values[base]
        _sift_down(values, base, 0, end)


@numba.njit(inline="always")
def _sift_down(values, base, root, n):  # pragma: no cover - compiled
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and values[base + child] < values[base + child + 1]:
            child += 1
        if values[base + root] >= values[base + child]:
            return
        values[base + root], values[base + child] = values[base + child], values[base + root]
        root = child


@numba.njit(inline="always")
def _keep(x, elements, base, state, count_at, many_at, capacity):  # pragma: no cover - compiled
    """Keep the shingle ``x`` for the later rounds (at most ``capacity`` distinct ones)."""
    if state[many_at]:
        return
    n = state[count_at]
    if n == capacity:  # full: keep each value once, and give up if that leaves it over half full
        _heap_sort(elements, base, n)
        distinct = 1
        for i in range(1, n):
            if elements[base + i] != elements[base + distinct - 1]:
                elements[base + distinct] = elements[base + i]
                distinct += 1
        n = distinct
        if n > capacity // 2:
            state[many_at] = 1
            return
    elements[base + n] = x
    state[count_at] = n + 1


@numba.njit(inline="always")
def _word_gram(gram, state, keys, winners, elements, a_bins, own_bins, capacity):  # pragma: no cover - compiled
    _offer_word(gram, 0, keys, winners, a_bins, own_bins)
    _keep(gram, elements, 0, state, _AT_COUNT_WORDS, _AT_MANY_WORDS, capacity)


@numba.njit(inline="always")
def _character_gram(gram, state, keys, winners, elements, a_bins, own_bins, capacity):  # pragma: no cover - compiled
    _offer_character(gram, 0, keys, winners, a_bins, own_bins)
    _keep(gram, elements, capacity, state, _AT_COUNT_CHARS, _AT_MANY_CHARS, capacity)


@numba.njit(inline="always")
def _word_ended(state, keys, winners, elements, a_bins, own_bins, capacity):  # pragma: no cover - compiled
    """A word of the shingles ended: chain it into the 3-gram that ends with it."""
    length = np.uint64(state[_AT_WORD_LENGTH])
    token = _mix(np.uint64(state[_AT_WORD_HASH]) ^ (length * GOLDEN))
    tokens = state[_AT_TOKENS]
    t1, t2 = np.uint64(state[_AT_T1]), np.uint64(state[_AT_T2])
    if tokens >= 2:
        _word_gram(
            _mix((t1 * GOLDEN + t2) * GOLDEN + token), state, keys, winners, elements, a_bins, own_bins, capacity
        )
    state[_AT_TOKENS] = tokens + 1
    state[_AT_T1], state[_AT_T2] = np.int64(t2), np.int64(token)
    state[_AT_WORD_HASH] = 0
    state[_AT_WORD_LENGTH] = 0


@numba.njit(inline="always")
def _update(
    data, begin, end, table, state, keys, winners, elements, a_bins, own_bins, capacity, words_on, chars_on
):  # pragma: no cover - compiled
    """Feed ``data[begin:end]`` (UTF-8, whole characters; surrogates as ``surrogatepass``
    writes them) to the state: its words' 3-grams with ``words_on`` (and the counts of
    characters), its 5-character shingles with ``chars_on``. Returns -1, or the first byte that
    is not UTF-8."""
    i = begin
    while i < end:
        lead = np.int64(data[i])
        if lead < 0x80:
            point = lead
            i += 1
        else:
            point, width = _decode(data, i, end, True)
            if width == 0:
                return i
            i += width
        shingle = np.int64(table[0x10000 + point]) if point < 0x10000 else _wide_entry(point)
        if shingle & _S_SPACE == 0:
            if words_on:
                state[_AT_CHARACTERS] += 1
                state[_AT_CJK] += (shingle & _S_CJK) >> 2
            if chars_on:
                c = _mix(np.uint64(shingle >> 3) ^ GOLDEN)
                seen = state[_AT_SEEN] + 1
                state[_AT_SEEN] = seen
                c1, c2 = np.uint64(state[_AT_C1]), np.uint64(state[_AT_C2])
                c3, c4 = np.uint64(state[_AT_C3]), np.uint64(state[_AT_C4])
                if seen >= _CHAR_GRAM:
                    gram = _mix((((c1 * GOLDEN + c2) * GOLDEN + c3) * GOLDEN + c4) * GOLDEN + c)
                    _character_gram(gram, state, keys, winners, elements, a_bins, own_bins, capacity)
                state[_AT_C1], state[_AT_C2] = np.int64(c2), np.int64(c3)
                state[_AT_C3], state[_AT_C4] = np.int64(c4), np.int64(c)
        if not words_on:
            continue
        if shingle & _S_WORD:
            state[_AT_WORD_HASH] = np.int64(np.uint64(state[_AT_WORD_HASH]) * _PRIME + np.uint64(shingle >> 3))
            state[_AT_WORD_LENGTH] += 1
        elif state[_AT_WORD_LENGTH] > 0:
            _word_ended(state, keys, winners, elements, a_bins, own_bins, capacity)
    return -1


@numba.njit(inline="always")
def _empty(keys, first, bins):  # pragma: no cover - compiled
    for b in range(first, first + bins):
        if keys[b] == EMPTY_KEY:
            return True
    return False


@numba.njit(inline="always")
def _rounds(keys, winners, elements, characters, n, a_bins, own_bins, capacity):  # pragma: no cover - compiled
    """Rounds 1, 2, ... over the ``n`` distinct shingles of a kind (the characters', or the
    words') until each bin of that kind's sketches holds a key."""
    r = 1
    while n > 0:
        if characters:
            if not _empty(keys, a_bins + own_bins, own_bins):
                return
            for j in range(n):
                _offer_character(elements[capacity + j], r, keys, winners, a_bins, own_bins)
        else:
            if not _empty(keys, 0, a_bins) and not _empty(keys, a_bins, own_bins):
                return
            for j in range(n):
                _offer_word(elements[j], r, keys, winners, a_bins, own_bins)
        r += 1


@numba.njit(inline="always")
def _start(state, keys, winners, total):  # pragma: no cover - compiled
    for s in range(STATE_SIZE):
        state[s] = 0
    for b in range(total):
        keys[b] = EMPTY_KEY
        winners[b] = 0


@numba.njit(inline="always")
def _characters_kind(state, cjk_share):  # pragma: no cover - compiled
    """Whether the text read is one of characters, or has no word (as
    :func:`simdedup.kernels.source.exact._text_tokens`)."""
    cjk, characters = state[_AT_CJK], state[_AT_CHARACTERS]
    return state[_AT_TOKENS] == 0 or (cjk > 0 and cjk >= cjk_share * characters)


@numba.njit(inline="always")
def _pack(winners, first, count, out, at, bin_at, value_bits):  # pragma: no cover - compiled
    """``value_bits`` of each of ``count`` winners from ``first`` into bins ``bin_at`` on of ``out[at:]``."""
    mask = np.uint64((1 << value_bits) - 1)
    per_byte = 8 // value_bits
    for k in range(count):
        value = _mix(winners[first + k] ^ VALUE_SEED) & mask
        b = bin_at + k
        out[at + b // per_byte] |= np.uint8(value << np.uint64((b % per_byte) * value_bits))


@numba.njit(inline="always")
def _finish(
    state, keys, winners, elements, bins, a_bins, capacity, cjk_share, value_bits, out, at
):  # pragma: no cover - compiled
    """End a text's sketch: the last word, the rounds until every bin is filled, and the bins
    packed into ``out[at:]`` (``bins * value_bits / 8`` bytes, low bits first; the last bin the
    kind). Returns 1 for a text of characters (or without a word), 0 for one of words, -1 for a
    text without a character but white space (no sketch: ``out`` is left as it was)."""
    own_bins = bins - a_bins - 1
    if state[_AT_WORD_LENGTH] > 0:
        _word_ended(state, keys, winners, elements, a_bins, own_bins, capacity)
    if state[_AT_CHARACTERS] == 0:
        return -1
    characters_kind = _characters_kind(state, cjk_share)
    tokens = state[_AT_TOKENS]
    if 0 < tokens < 3:  # one word 3-gram of all the words
        gram = _mix(np.uint64(state[_AT_T1]) * GOLDEN + np.uint64(state[_AT_T2]))
        _word_gram(gram, state, keys, winners, elements, a_bins, own_bins, capacity)
    kept = 0 if state[_AT_MANY_WORDS] else state[_AT_COUNT_WORDS]  # with many, round 0 filled the bins
    _rounds(keys, winners, elements, False, kept, a_bins, own_bins, capacity)
    if characters_kind:
        seen = state[_AT_SEEN]
        if 0 < seen < _CHAR_GRAM:  # one shingle of all there are: the last ``seen`` characters
            h = np.uint64(0)
            for k in range(_CHAR_GRAM - 1 - seen, _CHAR_GRAM - 1):
                h = h * GOLDEN + np.uint64(state[_AT_C1 + k])
            _character_gram(_mix(h), state, keys, winners, elements, a_bins, own_bins, capacity)
        kept = 0 if state[_AT_MANY_CHARS] else state[_AT_COUNT_CHARS]
        _rounds(keys, winners, elements, True, kept, a_bins, own_bins, capacity)
    for i in range(bins * value_bits // 8):
        out[at + i] = 0
    _pack(winners, 0, a_bins, out, at, 0, value_bits)
    _pack(winners, a_bins + own_bins if characters_kind else a_bins, own_bins, out, at, a_bins, value_bits)
    last = bins - 1
    out[at + last // (8 // value_bits)] |= np.uint8(int(characters_kind) << ((last % (8 // value_bits)) * value_bits))
    return 1 if characters_kind else 0


def sketch_start(state_p, keys_p, winners_p, bins, a_bins):  # pragma: no cover - compiled
    """A text's sketch begins: the state of :func:`sketch_update` for a stream."""
    total = 2 * bins - a_bins - 2
    _start(carray(state_p, (STATE_SIZE,)), carray(keys_p, (total,)), carray(winners_p, (total,)), total)
    return 0


def sketch_update(
    data_p, size, table_p, state_p, keys_p, winners_p, elements_p, bins, a_bins, capacity
):  # pragma: no cover - compiled
    """Feed ``size`` bytes of UTF-8 (whole characters) of a text read as a stream to its
    state (both kinds of shingles: whether it is a text of characters is known at its end).
    Returns -1, or the first byte that is not UTF-8."""
    total = 2 * bins - a_bins - 2
    return _update(
        carray(data_p, (max(size, 1),)),
        0,
        size,
        carray(table_p, (0x20000,)),
        carray(state_p, (STATE_SIZE,)),
        carray(keys_p, (total,)),
        carray(winners_p, (total,)),
        carray(elements_p, (2 * capacity,)),
        a_bins,
        bins - a_bins - 1,
        capacity,
        True,
        True,
    )


def sketch_finish(
    state_p, keys_p, winners_p, elements_p, bins, a_bins, capacity, cjk_share, value_bits, out_p
):  # pragma: no cover - compiled
    """:func:`_finish` of a stream's state into ``out``."""
    total = 2 * bins - a_bins - 2
    return _finish(
        carray(state_p, (STATE_SIZE,)),
        carray(keys_p, (total,)),
        carray(winners_p, (total,)),
        carray(elements_p, (2 * capacity,)),
        bins,
        a_bins,
        capacity,
        cjk_share,
        value_bits,
        carray(out_p, (max(bins * value_bits // 8, 1),)),
        0,
    )


def sketch_texts(
    data_p,
    offsets_p,
    ntexts,
    table_p,
    bins,
    a_bins,
    capacity,
    cjk_share,
    value_bits,
    state_p,
    keys_p,
    winners_p,
    elements_p,
    out_p,
    kinds_p,
):  # pragma: no cover - compiled
    """The sketches of ``ntexts`` whole texts held back to back in ``data`` (text ``t`` at
    ``offsets[t]:offsets[t + 1]``), text ``t``'s at ``out[t * bins * value_bits / 8]`` and its
    kind (:func:`_finish`) at ``kinds[t]``. A first pass takes the words and counts the
    characters; a text of characters takes a second for its 5-character shingles. ``state``,
    ``keys``, ``winners`` and ``elements`` are scratch. Returns -1, or the first text that is
    not UTF-8."""
    total = 2 * bins - a_bins - 2
    own_bins = bins - a_bins - 1
    offsets = carray(offsets_p, (ntexts + 1,))
    data = carray(data_p, (max(offsets[ntexts], 1),))
    table = carray(table_p, (0x20000,))
    state = carray(state_p, (STATE_SIZE,))
    keys = carray(keys_p, (total,))
    winners = carray(winners_p, (total,))
    elements = carray(elements_p, (2 * capacity,))
    per_text = bins * value_bits // 8
    out = carray(out_p, (max(ntexts * per_text, 1),))
    kinds = carray(kinds_p, (max(ntexts, 1),))
    for t in range(ntexts):
        _start(state, keys, winners, total)
        begin, end = offsets[t], offsets[t + 1]
        if (
            _update(data, begin, end, table, state, keys, winners, elements, a_bins, own_bins, capacity, True, False)
            >= 0
        ):
            return t
        if state[_AT_WORD_LENGTH] > 0:  # the last word, before the kind is known
            _word_ended(state, keys, winners, elements, a_bins, own_bins, capacity)
        if _characters_kind(state, cjk_share):
            _update(data, begin, end, table, state, keys, winners, elements, a_bins, own_bins, capacity, False, True)
        kinds[t] = _finish(
            state, keys, winners, elements, bins, a_bins, capacity, cjk_share, value_bits, out, t * per_text
        )
    return -1
