"""numba source of the exact-similarity kernels (:mod:`simdedup.kernels.exact`): the exact
tokens of a text, the distinct values of sorted hashes, and the merges of sorted runs that
measure and judge pairs."""

import numba
import numpy as np
from numba import carray
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from .common import GOLDEN, ONE, _decode, _mask64, _mix, _past_non_ascii, _popcount, _space_bytes8, _word_bytes8

# ---- exact similarities (simdedup.similarity) ---------------------------------------------------

_PRIME = np.uint64(0x100000001B3)
# kinds of code points in the exact tables (as simdedup.similarity._tables): a separator, part of a
# run, a token of its own that is a word (a CJK character, or any code point beyond the table), one
# that is punctuation
_SPACE, _RUN, _ONE_WORD, _ONE_PUNCT = 0, 1, 2, 3


# flags of code points in the shingle half of the tables (as simdedup.similarity._tables): white
# space (not a character of the text's shingles), a word character (``\\w``), a CJK character
_S_SPACE, _S_WORD, _S_CJK = 1, 2, 4
#: the shingle entry of a code point beyond the tables' range (an ideograph there is CJK and a word
#: character; anything else, emoji mostly, a character that is no word)
_FIRST_WIDE_IDEOGRAPH, _LAST_WIDE_IDEOGRAPH = 0x20000, 0x3134F
_CHAR_GRAM = 5


@numba.njit(inline="always")
def _chained(token, grams, tokens, t1, t2):  # pragma: no cover - compiled
    """Store the 3-gram that ends at ``token`` at ``grams[tokens - 2]`` (``t1``, ``t2``: the
    hashes of the two tokens before it, 0 before the text; one mix of their polynomial, as the
    tokens' hashes are mixed already). Returns the new ``tokens, t1, t2``."""
    at = np.uint64(max(tokens - 2, 0))  # unsigned: numba tests signed indices
    grams[at] = _mix((t1 * GOLDEN + t2) * GOLDEN + token)
    return tokens + 1, t2, token


@numba.njit(inline="always")
def _wide_entry(point):  # pragma: no cover - compiled
    """The shingle entry of a code point beyond the tables."""
    if _FIRST_WIDE_IDEOGRAPH <= point <= _LAST_WIDE_IDEOGRAPH:
        return point << 3 | _S_WORD | _S_CJK
    return point << 3


@numba.njit(inline="always")
def _text_tokens(data, pointer, base, size, table, swar, cjk_share, words, grams, sizes):  # pragma: no cover - compiled
    """The word hashes (in text order) and shingle hashes of one text in UTF-8 (the ``size``
    bytes of ``data``, which start at ``pointer[base]``; ``swar``: whether the tables' ASCII word
    characters and white space are ``\\w`` and ``str.isspace``'s, as 64 bytes at a time need; surrogates as ``surrogatepass`` writes them) into ``words`` (room for
    ``size``) and ``grams`` (room for ``2 * size``): its word 3-grams, then, for a text of
    characters, its 5-character shingles; their numbers go to ``sizes[0]``, ``sizes[1]`` and
    ``sizes[2]`` (0 for a text of words). Returns -1, or
    the first byte where Python's decoder stops (nothing overlong, nothing beyond U+10FFFF).

    ``table[c]`` (c < 0x10000) is code point c's word entry: the code point it counts as
    (lower-cased or not) << 2 | its kind; ``table[0x10000 + c]`` its shingle entry: the code
    point it counts as (its NFKC form, lower-cased or not, where that is one code point) << 3 |
    its flags.

    Words (the bag): a token is a run of code points of kind run, or one code point of kind word
    (a CJK character; beyond the table: a word); its hash mixes the polynomial hash of its code
    points with its length.

    Shingles, as the labelled sets' golds define them. Every text is a string of words (maximal
    runs of word characters: a run of another script inside it is one unit), and has runs of 3
    words (punctuation is typography there). A text whose characters (white space apart) are
    at least ``cjk_share`` CJK, or that has no word character, is also a string of characters,
    and has its 5-character substrings with white space deleted (punctuation is part of such
    text); two such texts are compared on those (:func:`_verdict`). One shingle of all when
    there are fewer. The first pass hashes words and word 3-grams as each token ends, and
    counts the characters (a run of ASCII, where both kinds of token are the same, in a loop of
    its own, and 64 bytes of ASCII between tokens at once: a bit mask gives each word's first
    and last byte, a branch per word instead of per byte); a text of characters takes a second
    pass for its 5-grams.
    """
    sizes[0] = sizes[1] = sizes[2] = 0
    n_words = 0
    run = length = np.uint64(0)  # the bag's current run
    word = word_length = np.uint64(0)  # the shingles' current word
    tokens = 0  # words of the shingles
    t1 = t2 = np.uint64(0)
    characters = cjk = 0
    long_word = False  # in a word of 64 bytes of ASCII or more
    ascii_at = 0 if swar else size  # no 64 bytes of ASCII start before this
    i = 0
    while i < size:
        past = 1
        if length == 0 and word_length == 0 and i >= ascii_at and i + 64 <= size:
            past = _past_non_ascii(pointer, base + i)
            ascii_at = i + past
        if past == 0:
            runs, spaces = _mask64(pointer, base + i, 1), _mask64(pointer, base + i, 2)
            after = 64
            if runs >> np.uint64(63):  # a word that may go on past the 64 bytes is left for later
                if runs == ~np.uint64(0):  # one of 64 bytes or more: byte by byte, to its end
                    long_word = True
                    ascii_at = i + 1
                else:
                    after = 64 - np.int64(leading_zeros(~runs))  # past the last byte of no word
                    runs &= (ONE << np.uint64(after)) - ONE
                    spaces |= ~((ONE << np.uint64(after)) - ONE)
            if not long_word:
                characters += 64 - _popcount(spaces)
                firsts = runs & ~(runs << ONE)
                lasts = runs & ~(runs >> ONE)
                while firsts:
                    first = i + np.int64(trailing_zeros(firsts))
                    last = i + np.int64(trailing_zeros(lasts))
                    firsts &= firsts - ONE
                    lasts &= lasts - ONE
                    run = np.uint64(0)
                    for k in range(first, last + 1):
                        run = run * _PRIME + np.uint64(np.int64(table[np.int64(data[np.uint64(k)])]) >> 2)
                    token = _mix(run ^ (np.uint64(last + 1 - first) * GOLDEN))
                    words[np.uint64(n_words)] = token
                    n_words += 1
                    tokens, t1, t2 = _chained(token, grams, tokens, t1, t2)
                run = np.uint64(0)
                i += after
                continue
        lead = np.int64(data[np.uint64(i)])
        if lead < 0x80 and length == word_length and run == word:
            # ASCII, with the bag's run and the shingles' word in step: there a code point is
            # the same in both (a word character is a run's, white space is white space, any
            # other is punctuation, and its NFKC form is itself), so one run makes both tokens
            while True:
                entry = np.int64(table[lead])
                kind = entry & 3
                if kind == _RUN:
                    run = run * _PRIME + np.uint64(entry >> 2)
                    length += ONE
                    characters += 1
                else:
                    characters += kind != _SPACE
                    if length > 0:
                        token = _mix(run ^ (length * GOLDEN))
                        words[np.uint64(n_words)] = token
                        n_words += 1
                        tokens, t1, t2 = _chained(token, grams, tokens, t1, t2)
                        run = length = np.uint64(0)
                        if long_word:  # back to 64 bytes at a time
                            long_word = False
                            i += 1
                            break
                i += 1
                if i == size:
                    break
                lead = np.int64(data[np.uint64(i)])
                if lead >= 0x80:
                    break
            word, word_length = run, length
            continue
        if lead < 0x80:
            entry = np.int64(table[lead])
            shingle = np.int64(table[0x10000 + lead])
            i += 1
        else:
            point, width = _decode(data, i, size, True)  # surrogates pass
            if width == 0:
                return i
            i += width
            if point < 0x10000:
                entry = np.int64(table[point])
                shingle = np.int64(table[0x10000 + point])
            else:
                entry = point << 2 | _ONE_WORD
                shingle = _wide_entry(point)
        if shingle & _S_SPACE == 0:
            characters += 1
            cjk += (shingle & _S_CJK) >> 2
        if shingle & _S_WORD:
            word = word * _PRIME + np.uint64(shingle >> 3)
            word_length += ONE
        elif word_length > 0:
            tokens, t1, t2 = _chained(_mix(word ^ (word_length * GOLDEN)), grams, tokens, t1, t2)
            word = word_length = np.uint64(0)
        kind = entry & 3
        if kind == _RUN:
            run = run * _PRIME + np.uint64(entry >> 2)
            length += ONE
            continue
        if length > 0:
            words[np.uint64(n_words)] = _mix(run ^ (length * GOLDEN))
            n_words += 1
            run = length = np.uint64(0)
        if kind == _ONE_WORD:
            words[np.uint64(n_words)] = _mix(np.uint64(entry >> 2) ^ GOLDEN)
            n_words += 1
    if length > 0:
        words[np.uint64(n_words)] = _mix(run ^ (length * GOLDEN))
        n_words += 1
    if word_length > 0:
        tokens, t1, t2 = _chained(_mix(word ^ (word_length * GOLDEN)), grams, tokens, t1, t2)
    sizes[0] = n_words
    if 0 < tokens < 3:  # one shingle of all
        grams[0] = _mix(t1 * GOLDEN + t2)
    sizes[1] = max(tokens - 2, min(tokens, 1))
    if tokens == 0 or (cjk > 0 and cjk >= cjk_share * characters):
        sizes[2] = _character_grams(data, size, table, grams[sizes[1] :])
    return -1


@numba.njit(inline="always")
def _character_grams(data, size, table, grams):  # pragma: no cover - compiled
    """The 5-character shingles of a text (valid UTF-8: the first pass read it all) into
    ``grams``; returns how many (one of all its characters when there are fewer, 0 without any).
    ``c1`` .. ``c4``: the hashes of the four characters before this one, oldest first."""
    c1 = c2 = c3 = c4 = np.uint64(0)
    seen = 0
    i = 0
    while i < size:
        lead = np.int64(data[np.uint64(i)])
        if lead < 0x80:
            shingle = np.int64(table[0x10000 + lead])
            i += 1
        else:
            point, width = _decode(data, i, size, True)
            i += width
            shingle = np.int64(table[0x10000 + point]) if point < 0x10000 else _wide_entry(point)
        if shingle & _S_SPACE:
            continue
        c = _mix(np.uint64(shingle >> 3) ^ GOLDEN)
        seen += 1
        if seen >= _CHAR_GRAM:
            grams[np.uint64(seen - _CHAR_GRAM)] = _mix((((c1 * GOLDEN + c2) * GOLDEN + c3) * GOLDEN + c4) * GOLDEN + c)
        c1, c2, c3, c4 = c2, c3, c4, c
    if seen == 0:
        return 0
    if seen < _CHAR_GRAM:  # all there are: the last ``seen`` of c1 .. c4
        h = np.uint64(0)
        for k in range(_CHAR_GRAM - 1 - seen, _CHAR_GRAM - 1):
            h = h * GOLDEN + (c1 if k == 0 else c2 if k == 1 else c3 if k == 2 else c4)
        grams[0] = _mix(h)
        return 1
    return seen - _CHAR_GRAM + 1


def exact_tokens(
    data_p, offsets_p, ntexts, table_p, cjk_share, words_p, grams_p, sizes_p
):  # pragma: no cover - compiled
    """:func:`_text_tokens` of each of ``ntexts`` texts held back to back in ``data`` (text
    ``t`` at ``offsets[t]:offsets[t + 1]``): its tokens at ``words[s]`` and ``grams[2 * s]``,
    ``s = offsets[t] + t`` (room for each text's bytes, and one); its three numbers at
    ``sizes[3 * t]``. Returns -1, or the first text that is not UTF-8 (then ``sizes[3 * t]``
    is the byte where Python's decoder stops in it, and the texts after it are not read)."""
    offsets = carray(offsets_p, (ntexts + 1,))
    room = offsets[ntexts] + ntexts
    data = carray(data_p, (max(offsets[ntexts], 1),))
    table = carray(table_p, (0x20000,))
    words = carray(words_p, (max(room, 1),))
    grams = carray(grams_p, (max(2 * room, 1),))
    sizes = carray(sizes_p, (max(3 * ntexts, 1),))
    swar = True  # the ASCII kinds are those of \\w and white space: eight bytes at a time
    for b in range(0x80):
        kind = np.int64(table[b]) & 3
        if (kind == _RUN) != (_word_bytes8(np.uint64(b)) != 0) or (kind == _SPACE) != (
            _space_bytes8(np.uint64(b)) != 0
        ):
            swar = False
    for t in range(ntexts):
        begin, end = offsets[t], offsets[t + 1]
        at = begin + t
        found = _text_tokens(
            data[begin:end],
            data_p,
            begin,
            end - begin,
            table,
            swar,
            cjk_share,
            words[at:],
            grams[2 * at :],
            sizes[3 * t : 3 * t + 3],
        )
        if found >= 0:
            sizes[3 * t] = found
            return t
    return -1


@numba.njit(inline="always")
def _distinct(hashes, source, n, target, counts, counted):  # pragma: no cover - compiled
    """Write the distinct values of the sorted ``hashes[source:source + n]`` at ``hashes[target:]``
    (``target <= source``: each value is read before anything is written over it) and, when
    ``counted``, how often each occurs at ``counts[target:]``; returns how many there are.

    Without branches on the data (a repeat is as likely as not, so a branch would be
    mispredicted half the time): each value is written after the last distinct one, which
    moves on when it differs; ``counts`` first takes where each distinct value starts."""
    if n == 0:
        return 0
    hashes[target] = hashes[source]
    at = target
    if counted:
        counts[at] = 0
    for i in range(1, n):
        value = hashes[source + i]
        new = value != hashes[at]
        at += np.int64(new)
        hashes[at] = value
        if counted:
            start = counts[at]
            counts[at] = np.uint32(i) if new else start
    if counted:
        for j in range(target, at):
            counts[j] = counts[j + 1] - counts[j]
        counts[at] = np.uint32(n) - counts[at]
    return at - target + 1


def exact_distinct(words_p, counts_p, grams_p, offsets_p, ntexts, sizes_p, out_p):  # pragma: no cover - compiled
    """The sets of texts whose tokens :func:`exact_tokens` cut (``offsets`` and ``sizes`` as
    it took and gave them), their words and shingles sorted since: each text's distinct words
    (their counts in ``counts``), distinct word 3-grams and distinct 5-character shingles
    written back to back from the start of ``words``, ``counts`` and ``grams``, a text after
    the other; a text without a word has none. Their numbers go to ``out[3 * t]`` on."""
    offsets = carray(offsets_p, (ntexts + 1,))
    room = offsets[ntexts] + ntexts
    words = carray(words_p, (max(room, 1),))
    counts = carray(counts_p, (max(room, 1),))
    grams = carray(grams_p, (max(2 * room, 1),))
    sizes = carray(sizes_p, (max(3 * ntexts, 1),))
    out = carray(out_p, (max(3 * ntexts, 1),))
    at_words = at_grams = 0
    for t in range(ntexts):
        start = offsets[t] + t
        tokens, n_grams, n_chars = sizes[3 * t], sizes[3 * t + 1], sizes[3 * t + 2]
        if tokens == 0:  # no word: no sets
            out[3 * t] = out[3 * t + 1] = out[3 * t + 2] = 0
            continue
        n_words = _distinct(words, start, tokens, at_words, counts, True)
        distinct_grams = _distinct(grams, 2 * start, n_grams, at_grams, counts, False)
        distinct_chars = _distinct(grams, 2 * start + n_grams, n_chars, at_grams + distinct_grams, counts, False)
        out[3 * t], out[3 * t + 1], out[3 * t + 2] = n_words, distinct_grams, distinct_chars
        at_words += n_words
        at_grams += distinct_grams + distinct_chars
    return 0


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


def exact_shared(
    hashes_p, weights_p, offsets_p, ndocs, left_p, right_p, npairs, weighted, out_p
):  # pragma: no cover - compiled
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
def _exact_runs(
    units, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p, gram_totals_p
):  # pragma: no cover - compiled
    """The exact sets of ``units`` documents as :class:`simdedup.similarity.ExactIndex` keeps
    them, over raw pointers: ``(bag hashes, weights, offsets, totals, gram hashes, offsets,
    totals)``; the shingles are two runs a document (word 3-grams, 5-character shingles)."""
    bag_offsets = carray(bag_offsets_p, (units + 1,))
    gram_offsets = carray(gram_offsets_p, (2 * units + 1,))
    return (
        carray(bag_hashes_p, (max(bag_offsets[units], 1),)),
        carray(bag_weights_p, (max(bag_offsets[units], 1),)),
        bag_offsets,
        carray(bag_totals_p, (max(units, 1),)),
        carray(gram_hashes_p, (max(gram_offsets[units], 1),)),
        gram_offsets,
        carray(gram_totals_p, (max(2 * units, 1),)),
    )


@numba.njit(inline="always")
def _verdict(a, b, runs, measure, min_similarity, min_resemblance, floor, evidence):  # pragma: no cover - compiled
    """``(passes, bag similarity)`` of two documents with exact sets (``runs``: :func:`_exact_runs`;
    the bag is NaN under ``resemblance``, which needs none):
    :func:`simdedup.similarity.passes` (``measure`` numbered as ``simdedup.kernels.exact.MEASURE_CODES``),
    with the 3-grams merged only as far as the verdict needs. ``floor``: the margin of the bag's
    path below the resemblance scattered edits leave; both resemblance thresholds are raised for
    a pair with few 3-grams (:func:`simdedup.similarity.needed`, ``evidence``)."""
    bag_hashes, bag_weights, bag_offsets, bag_totals, gram_hashes, gram_offsets, gram_totals = runs
    similarity = np.nan  # the resemblance alone needs no bag
    if measure != 2:
        shared = _shared(bag_hashes, bag_weights, bag_offsets, a, b, True, -1.0, 0)
        similarity = shared / (bag_totals[a] + bag_totals[b] - shared)
    if measure == 1:
        return similarity >= min_similarity, similarity
    a, b = _shingle_runs(gram_totals, a, b)
    fewer = min(gram_totals[a], gram_totals[b])
    scale = fewer / (fewer + evidence)
    threshold = 1.0 - (1.0 - min_resemblance) * scale
    if measure == 0 and similarity >= min_similarity:  # then either part of the rule will do
        kept = (2.0 * similarity / (1.0 + similarity)) ** 3  # (simdedup.similarity.scattered_resemblance)
        threshold = min(threshold, 1.0 - (1.0 - (kept / (2.0 - kept) - floor)) * scale)
    both = gram_totals[a] + gram_totals[b]
    if both == 0:
        return False, similarity
    shared = _shared(gram_hashes, bag_weights, gram_offsets, a, b, False, threshold, both)
    return shared / (both - shared) >= threshold, similarity


@numba.njit(inline="always")
def _shingle_runs(gram_totals, a, b):  # pragma: no cover - compiled
    """The runs of shingles documents ``a`` and ``b`` are compared on: their 5-character
    shingles when both are texts of characters, else their word 3-grams
    (:func:`simdedup.similarity.ExactIndex.shingle_runs`)."""
    if gram_totals[2 * a + 1] > 0 and gram_totals[2 * b + 1] > 0:
        return 2 * a + 1, 2 * b + 1
    return 2 * a, 2 * b


def exact_verdicts(
    bag_hashes_p,
    bag_weights_p,
    bag_offsets_p,
    bag_totals_p,
    gram_hashes_p,
    gram_offsets_p,
    gram_totals_p,
    ndocs,
    left_p,
    right_p,
    npairs,
    measure,
    min_similarity,
    min_resemblance,
    floor,
    evidence,
    similarity_p,
    passing_p,
):  # pragma: no cover - compiled
    """:func:`_verdict` of each pair ``left[p]``, ``right[p]`` of the ``ndocs`` documents (all
    with exact sets): whether it passes into ``passing``, its bag similarity into ``similarity``."""
    runs = _exact_runs(
        ndocs, bag_hashes_p, bag_weights_p, bag_offsets_p, bag_totals_p, gram_hashes_p, gram_offsets_p, gram_totals_p
    )
    left = carray(left_p, (max(npairs, 1),))
    right = carray(right_p, (max(npairs, 1),))
    similarity = carray(similarity_p, (max(npairs, 1),))
    passing = carray(passing_p, (max(npairs, 1),))
    for p in range(npairs):
        ok, similarity[p] = _verdict(left[p], right[p], runs, measure, min_similarity, min_resemblance, floor, evidence)
        passing[p] = ok
    return 0
