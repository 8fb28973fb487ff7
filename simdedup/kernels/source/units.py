"""numba source of the units kernel (:mod:`simdedup.kernels.units`): paragraphs, lines or
sentences of UTF-8 documents, as :mod:`simdedup.spans.units` cuts them (that module is the
reference; every rule here is its rule, in the same order), each long enough unit's offsets,
its text with white space runs as one space, and the XXH3-128 of that."""

import numba
import numpy as np
from numba import carray

from .common import GOLDEN, LOW32, _decode, _mix, xxh3_128

# flags of a code point in the table (as simdedup.kernels.units makes it)
SPACE, BREAK, WORD, ALNUM, ALPHA, LOWER, UPPER, EXTEND = 1, 2, 4, 8, 16, 32, 64, 128
WIDE, CJK, HANGUL, CLOSER, CJK_END, LATIN_END, OPENER, BULLET = 256, 512, 1024, 2048, 4096, 8192, 16384, 32768
GOES_ON, ROMAN, CJK_NUMERAL, DIGIT = 65536, 131072, 262144, 524288
PARAGRAPH, LINE, SENTENCE = 0, 1, 2
# the candidates' shingles, as simdedup.similarity takes them: word 3-grams, or 5-character ones
# for a text at least this share of whose visible characters are Chinese or Japanese
_CHAR_GRAM = 5
_CJK_SHARE = 0.01
_PRIME = np.uint64(0x100000001B3)
_LOW32 = LOW32
_EMPTY = np.uint64(1 << 40)  # above every 32-bit value
# what the kernel returns (and leaves in state[3] the document to resume from)
DONE, NEED_UNITS, NEED_LINES, INVALID = 0, 1, 2, 3
# the unit records: fields of out_units per unit
U_DOC, U_BYTE_START, U_BYTE_END, U_CHAR_START, U_CHAR_END, U_TEXT_END, U_WORDS = 0, 1, 2, 3, 4, 5, 6
U_FIELDS = 7
# the lines of a paragraph: fields of lines per line
L_BYTE_START, L_BYTE_END, L_CHAR_START, L_CHAR_END, L_WIDTH, L_INDENT = 0, 1, 2, 3, 4, 5
L_FIELDS = 6


@numba.njit(inline="always")
def _char(data, i):  # pragma: no cover - compiled
    """The character at ``data[i]``, in text already checked to be UTF-8 (surrogates as
    ``surrogatepass`` writes them), as ``code point << 3 | length``: numba compiles a helper
    that returns a tuple into a loop three times slower, and inlines one level of helpers."""
    c = np.int64(data[i])
    if c < 0x80:
        return c << 3 | 1
    if c < 0xE0:
        return (((c & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F)) << 3 | 2
    if c < 0xF0:
        return (((c & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F)) << 3 | 3
    return (
        ((c & 0x07) << 18)
        | ((np.int64(data[i + 1]) & 0x3F) << 12)
        | ((np.int64(data[i + 2]) & 0x3F) << 6)
        | (np.int64(data[i + 3]) & 0x3F)
    ) << 3 | 4


@numba.njit(inline="always")
def _back(data, i, start):  # pragma: no cover - compiled
    """Where the character before byte ``i`` (> ``start``) starts."""
    j = i - 1
    while j > start and (data[j] & 0xC0) == 0x80:
        j -= 1
    return j


@numba.njit(inline="always")
def _flags(table, code):  # pragma: no cover - compiled
    return np.int64(table[code])


@numba.njit(inline="always")
def _columns(table, code):  # pragma: no cover - compiled
    return 2 if np.int64(table[code]) & WIDE else 1


@numba.njit
def _trimmed(data, table, start, end, cstart, base):  # pragma: no cover - compiled
    """``(byte start, byte end, char start, char end)`` of ``data[start:end]`` (whose first
    character is character ``cstart``) without the white space around it (start == end:
    nothing left); a mark after white space starts the unit with that white space."""
    begin, cbegin = start, cstart
    while begin < end:
        v = _char(data, begin)
        code, size = v >> 3, v & 7
        if not _flags(table, code) & SPACE:
            break
        begin += size
        cbegin += 1
    if begin == end:
        return begin, begin, cbegin, cbegin
    i, ci = begin, cbegin
    finish, cfinish = begin, cbegin
    while i < end:  # the end: after the last character that is not white space
        v = _char(data, i)
        code, size = v >> 3, v & 7
        i, ci = i + size, ci + 1
        if not _flags(table, code) & SPACE:
            finish, cfinish = i, ci
    v = _char(data, begin)
    code, size = v >> 3, v & 7
    if begin > start and _flags(table, code) & EXTEND:
        before = _back(data, begin, base)
        v = _char(data, before)
        previous, _ = v >> 3, v & 7
        if not _flags(table, previous) & BREAK:
            begin, cbegin = before, cbegin - 1
    return begin, finish, cbegin, cfinish


@numba.njit
def _latin_end(data, table, abbreviations, at, single_dot, following, base, end):  # pragma: no cover - compiled
    """Whether the marks at byte ``at`` (``.!?…``, white space after them; ``single_dot``: one
    ``.``) end a sentence, ``following`` being the next character that is not white space
    (-1: none)."""
    if following >= 0 and _flags(table, following) & LOWER:
        return False
    if not single_dot:
        return True
    word_start = at
    while word_start > base:
        before = _back(data, word_start, base)
        v = _char(data, before)
        code, _ = v >> 3, v & 7
        if _flags(table, code) & SPACE:
            break
        word_start = before
    while word_start < at:
        v = _char(data, word_start)
        code, size = v >> 3, v & 7
        if not _flags(table, code) & OPENER:
            break
        word_start += size
    # the word before the dot: its length, an initial, its ASCII letters packed, its parts
    chars = 0
    ascii = True
    packed = np.uint64(0)
    first_alpha = False
    part = 0  # characters of the current part (between dots)
    parts = 1
    parts_ok = True
    i = word_start
    while i < at:
        v = _char(data, i)
        code, size = v >> 3, v & 7
        flags = _flags(table, code)
        if chars == 0:
            first_alpha = (flags & ALPHA) != 0
        if code >= 0x80:
            ascii = False
        elif chars < 8:
            lower = code + 32 if 0x41 <= code <= 0x5A else code
            packed |= np.uint64(lower) << np.uint64(8 * chars)
        if code == 0x2E:
            if not 1 <= part <= 2:
                parts_ok = False
            parts += 1
            part = 0
        else:
            part += 1
            if not flags & ALPHA:
                parts_ok = False
        chars += 1
        i += size
    if chars == 1 and first_alpha:
        return False  # an initial
    if ascii and 1 <= chars <= 8:
        low, high = 0, len(abbreviations)
        while low < high:
            middle = (low + high) // 2
            if abbreviations[middle] < packed:
                low = middle + 1
            else:
                high = middle
        if low < len(abbreviations) and abbreviations[low] == packed:
            return False
    if parts > 1 and parts_ok and 1 <= part <= 2:
        return False  # e.g. U.S. Ph.D.
    return True


@numba.njit
def _next_visible(data, table, i, end):  # pragma: no cover - compiled
    """The first character at or after byte ``i`` (before ``end``) that is not white space, or -1."""
    while i < end:
        v = _char(data, i)
        code, size = v >> 3, v & 7
        if not _flags(table, code) & SPACE:
            return code
        i += size
    return -1


@numba.njit
def _next_cut(data, table, abbreviations, i, ci, end, after, base):  # pragma: no cover - compiled
    """The next sentence end of the line (as it reads) that goes on to byte ``end``, from byte
    ``i`` (character ``ci``) on, as ``sentence_cuts`` of the reference finds them: ``(cut byte,
    cut char, byte to go on from, char to go on from)``, the cut -1 when there is none
    (``after``: the character after the line, -1 for none)."""
    while i < end:
        v = _char(data, i)
        code, size = v >> 3, v & 7
        flags = _flags(table, code)
        cjk_end = (flags & CJK_END) != 0
        if not cjk_end and (code == 0x21 or code == 0x3F) and i > base:
            v = _char(data, _back(data, i, base))
            previous, _ = v >> 3, v & 7
            cjk_end = (_flags(table, previous) & CJK) != 0
        if cjk_end:
            j, cj = i + size, ci + 1
            while j < end:  # more ends, then closers, then marks
                v = _char(data, j)
                code, size = v >> 3, v & 7
                if not (_flags(table, code) & CJK_END or code == 0x21 or code == 0x3F):
                    break
                j, cj = j + size, cj + 1
            while j < end:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                if not _flags(table, code) & CLOSER:
                    break
                j, cj = j + size, cj + 1
            while j < end:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                if not _flags(table, code) & EXTEND:
                    break
                j, cj = j + size, cj + 1
            return j, cj, j, cj
        if flags & LATIN_END:
            single_dot = code == 0x2E
            j, cj = i + size, ci + 1
            while j < end:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                if not _flags(table, code) & LATIN_END:
                    break
                single_dot = False
                j, cj = j + size, cj + 1
            while j < end:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                if not _flags(table, code) & CLOSER:
                    break
                j, cj = j + size, cj + 1
            spaced = j == end
            if not spaced:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                spaced = (_flags(table, code) & SPACE) != 0
            if spaced:
                following = after if j == end else _next_visible(data, table, j, end)
                if _latin_end(data, table, abbreviations, i, single_dot, following, base, end):
                    return j, cj, j, cj
            i, ci = j, cj
            continue
        i, ci = i + size, ci + 1
    return -1, -1, end, ci


@numba.njit
def _scan(data, table, start, end):  # pragma: no cover - compiled
    """``(a rule, a heading)`` of ``data[start:end]``: a rule has three characters or more, each
    white space, ASCII punctuation, a dash or box drawing; a heading's letters are all
    capitals, and there is one."""
    ruled = heading = True
    upper = False
    chars = 0
    i = start
    while i < end:
        v = _char(data, i)
        code, size = v >> 3, v & 7
        flags = np.int64(table[code])
        ruled &= (
            (flags & SPACE) != 0
            or (code < 0x80 and not flags & ALNUM)
            or 0x2010 <= code <= 0x2015
            or 0x2500 <= code <= 0x259F
        )
        if flags & ALPHA:  # letters only: a circled capital is upper case and no letter
            upper |= (flags & UPPER) != 0
            heading &= (flags & UPPER) != 0
        chars += 1
        i += size
    return chars >= 3 and ruled, heading and upper


@numba.njit(inline="always")
def _spaced(table, codes, at):  # pragma: no cover - compiled
    return at < 10 and codes[at] >= 0 and (np.int64(table[codes[at]]) & SPACE) != 0


@numba.njit
def _list_item(data, table, start, end, codes):  # pragma: no cover - compiled
    """Whether the line ``data[start:end]`` (trimmed) starts a list item (``list_item``);
    ``codes``: room for 10 code points (the kernel allocates nothing)."""
    i = start
    for k in range(10):
        codes[k] = -1
        if i < end:
            v = _char(data, i)
            code, size = v >> 3, v & 7
            codes[k] = code
            i += size
    first = codes[0]
    if _flags(table, first) & BULLET and _spaced(table, codes, 1):
        return True
    digits = 0
    while digits < 9 and codes[digits] >= 0x30 and codes[digits] <= 0x39:
        digits += 1
    if 1 <= digits <= 3 and (codes[digits] == 0x2E or codes[digits] == 0x29) and _spaced(table, codes, digits + 1):
        return True
    if (
        first < 0x80
        and _flags(table, first) & ALPHA
        and (codes[1] == 0x2E or codes[1] == 0x29)
        and _spaced(table, codes, 2)
    ):
        return True
    roman = 0
    while roman < 9 and codes[roman] >= 0 and _flags(table, codes[roman]) & ROMAN:
        roman += 1
    if 1 <= roman <= 5 and (codes[roman] == 0x2E or codes[roman] == 0x29) and _spaced(table, codes, roman + 1):
        return True
    if first == 0x28:
        inner = 0
        while inner < 8 and codes[1 + inner] >= 0 and _flags(table, codes[1 + inner]) & WORD:
            inner += 1
        if 1 <= inner <= 3 and codes[1 + inner] == 0x29 and _spaced(table, codes, 2 + inner):
            return True
    numerals = 0
    while numerals < 9 and codes[numerals] >= 0 and _flags(table, codes[numerals]) & CJK_NUMERAL:
        numerals += 1
    if 1 <= digits <= 3 or 1 <= numerals <= 4:
        if codes[max(digits, numerals)] == 0x3001:
            return True
    if first == 0x28 or first == 0xFF08:
        inner = 0
        while inner < 8 and codes[1 + inner] >= 0 and _flags(table, codes[1 + inner]) & (CJK_NUMERAL | DIGIT):
            inner += 1
        if 1 <= inner <= 3 and (codes[1 + inner] == 0x29 or codes[1 + inner] == 0xFF09):
            return True
    return False


@numba.njit
def _hard_break(data, table, abbreviations, lines, k, width, base, end, codes):  # pragma: no cover - compiled
    """Whether a line (as it reads) ends at the end of line ``k`` of the paragraph (``_hard_break``)."""
    if k > 0 and lines[k + 1, L_INDENT] < lines[k, L_INDENT]:
        return True  # less indented than a line that is not the paragraph's first: another item
    start, finish = lines[k, L_BYTE_START], lines[k, L_BYTE_END]
    after_start, after_end = lines[k + 1, L_BYTE_START], lines[k + 1, L_BYTE_END]
    rule, heading = _scan(data, table, start, finish)
    after_rule, _ = _scan(data, table, after_start, after_end)
    if rule or after_rule or _list_item(data, table, after_start, after_end, codes):
        return True
    if heading and lines[k + 1, L_INDENT] > lines[k, L_INDENT]:
        return True  # a heading (a term), its definition indented below it
    v = _char(data, after_start)
    first, _ = v >> 3, v & 7
    i, ci = start, lines[k, L_CHAR_START]
    while i < finish:
        cut, _, i, ci = _next_cut(data, table, abbreviations, i, ci, finish, first, base)
        if cut == finish:
            return True
    line_width = lines[k, L_WIDTH]
    if _flags(table, first) & (CJK | HANGUL):
        fits = line_width + _columns(table, first) <= width
    else:
        word = 0
        i = after_start
        while i < after_end:
            v = _char(data, i)
            code, size = v >> 3, v & 7
            if _flags(table, code) & SPACE:
                break
            word += _columns(table, code)
            i += size
        fits = line_width + 1 + word <= width
    if not fits:
        return False
    if heading:
        return True
    v = _char(data, _back(data, finish, base))
    last, _ = v >> 3, v & 7
    last_flags, first_flags = _flags(table, last), _flags(table, first)
    if not last_flags & (WORD | GOES_ON):
        return True
    goes_on = (first_flags & LOWER) != 0 or ((first_flags & CJK) != 0 and (last_flags & (CJK | HANGUL)) != 0)
    return not goes_on


@numba.njit(inline="always")
def _take(h, mins):  # pragma: no cover - compiled
    """A shingle's hash into its bin of a one-permutation MinHash: the bin its high half
    picks, the low half competing for the bin's minimum."""
    k = ((h >> np.uint64(32)) * np.uint64(len(mins))) >> np.uint64(32)
    value = h & _LOW32
    if value < mins[k]:
        mins[k] = value


@numba.njit
def _band_keys(mins, dense, keys, row):  # pragma: no cover - compiled
    """``keys[row]`` from the bins ``mins``: an empty bin takes the next filled one's minimum
    (cyclically), perturbed by the distance; band ``b`` is the bins ``b, b + bands, ...``
    hashed together."""
    bins = len(mins)
    filled = source = -1
    for k in range(bins):
        if mins[k] != _EMPTY:
            filled = k
    for step in range(bins):  # from the last filled bin leftwards: each bin knows the next filled one
        k = filled - step
        if k < 0:
            k += bins
        if filled < 0:
            dense[k] = 0
        elif mins[k] != _EMPTY:
            source = k
            dense[k] = mins[k]
        else:
            distance = source - k if source > k else source + bins - k
            dense[k] = _mix(mins[source] + np.uint64(distance) * GOLDEN) & _LOW32
    bands = keys.shape[1]
    for band in range(bands):
        key = np.uint64(band)
        for k in range(band, bins, bands):
            key = _mix(key * GOLDEN + dense[k])
        keys[row, band] = np.uint32(key >> np.uint64(32))


@numba.njit
def _character_shingles(data, table, start, finish, mins):  # pragma: no cover - compiled
    """The 5-character substrings (white space left out, ASCII letters lower-cased) of
    ``data[start:finish]`` into the MinHash ``mins``; one of all when there are fewer."""
    for k in range(len(mins)):
        mins[k] = _EMPTY
    p1 = p2 = p3 = p4 = np.uint64(0)
    visible = 0
    i = start
    while i < finish:
        v = _char(data, i)
        code, size = v >> 3, v & 7
        if not np.int64(table[code]) & SPACE:
            c = np.uint64(code + 32 if 0x41 <= code <= 0x5A else code)
            visible += 1
            if visible >= _CHAR_GRAM:
                _take(_mix((((p1 * GOLDEN + p2) * GOLDEN + p3) * GOLDEN + p4) * GOLDEN + c), mins)
            p1, p2, p3, p4 = p2, p3, p4, c
        i += size
    if 0 < visible < _CHAR_GRAM:
        _take(_mix((((p1 * GOLDEN + p2) * GOLDEN + p3) * GOLDEN + p4) * GOLDEN), mins)


@numba.njit
def _emit(
    data, table, doc, start, finish, cstart, cfinish, min_halves, out, n_units, text_size
):  # pragma: no cover - compiled
    """Record the unit ``data[start:finish]`` if it has ``min_halves`` half-words: its offsets,
    its text with white space runs as one space (at ``text[text_size:]``; its hash is made
    when its document is done) and its band keys (:func:`_band_keys`), all in one pass.
    Returns ``(units, text bytes)`` after it, or ``(-1, -1)`` when out of room.

    The band keys are those of a MinHash of the unit's shingles as the resemblance takes them
    (ASCII letters lower-cased): word 3-grams (words: runs of ``\\w``), or, for a text at
    least :data:`_CJK_SHARE` of whose visible characters are Chinese or Japanese, 5-character
    substrings without white space (in a second pass: only such texts pay for them); one
    shingle of all when there are fewer."""
    units, text, keys, scratch = out
    if n_units >= units.shape[0] or text_size + (finish - start) > len(text):
        return -1, -1
    sketch = keys.shape[1] > 0
    word_mins, char_mins, dense = scratch[0], scratch[1], scratch[2]
    if sketch:
        for k in range(len(word_mins)):
            word_mins[k] = _EMPTY
    begin = text_size
    words = halves = visible = tokens = 0
    counted = in_word = pending = False  # in a word counted for the length; in a word of the shingles
    t1 = t2 = word = np.uint64(0)
    i = start
    while i <= finish:
        real = i < finish
        if real:
            v = _char(data, i)
            code, size = v >> 3, v & 7
            flags = np.int64(table[code])
        else:
            code, size, flags = 0, 1, SPACE  # the end: a last word ends
        lowered = np.uint64(code + 32 if 0x41 <= code <= 0x5A else code)
        if real and not flags & SPACE:
            visible += 1
            if pending:
                text[text_size] = 0x20
                text_size += 1
                pending = False
            for b in range(size):
                text[text_size + b] = data[i + b]
            text_size += size
        elif real:
            pending = text_size > begin
        if flags & CJK:
            halves += 1
            counted = False
        elif real and flags & WORD:
            if not counted:
                words += 1
            counted = True
        else:
            counted = False
        if real and flags & WORD:
            word = word * _PRIME + lowered if in_word else lowered + _PRIME
            in_word = True
        elif in_word:
            in_word = False
            if sketch:
                token = _mix(word)
                tokens += 1
                if tokens >= 3:
                    _take(_mix((t1 * GOLDEN + t2) * GOLDEN + token), word_mins)
                t1, t2 = t2, token
        i += size
    if 2 * words + halves < min_halves:
        return n_units, begin
    if sketch:
        if halves > 0 and halves >= _CJK_SHARE * visible:
            _character_shingles(data, table, start, finish, char_mins)
            _band_keys(char_mins, dense, keys, n_units)
        else:
            if 0 < tokens < 3:
                _take(_mix((t1 * GOLDEN + t2) * GOLDEN), word_mins)
            _band_keys(word_mins, dense, keys, n_units)
    units[n_units, U_DOC] = doc
    units[n_units, U_BYTE_START] = start
    units[n_units, U_BYTE_END] = finish
    units[n_units, U_CHAR_START] = cstart
    units[n_units, U_CHAR_END] = cfinish
    units[n_units, U_TEXT_END] = text_size
    units[n_units, U_WORDS] = 2 * words + halves
    return n_units + 1, text_size


@numba.njit
def _paragraph(
    data, table, abbreviations, unit, lines, m, doc, base, end, min_halves, out, n_units, text_size, codes
):  # pragma: no cover - compiled
    """The units of a paragraph of ``m`` lines (``lines``). Returns ``(units, text bytes)``
    after them, or ``(-1, -1)`` when out of room."""
    if unit == PARAGRAPH:
        return _emit(
            data,
            table,
            doc,
            lines[0, L_BYTE_START],
            lines[m - 1, L_BYTE_END],
            lines[0, L_CHAR_START],
            lines[m - 1, L_CHAR_END],
            min_halves,
            out,
            n_units,
            text_size,
        )
    width = 0
    for k in range(m):
        width = max(width, lines[k, L_WIDTH])
    first = 0
    for k in range(m):
        if k < m - 1 and not _hard_break(data, table, abbreviations, lines, k, width, base, end, codes):
            continue
        start, finish = lines[first, L_BYTE_START], lines[k, L_BYTE_END]
        cstart, cfinish = lines[first, L_CHAR_START], lines[k, L_CHAR_END]
        first = k + 1
        if unit == LINE:
            n_units, text_size = _emit(
                data, table, doc, start, finish, cstart, cfinish, min_halves, out, n_units, text_size
            )
            if n_units < 0:
                return -1, -1
            continue
        position, cposition = start, cstart
        i, ci = start, cstart
        while position < finish:
            cut, ccut, i, ci = _next_cut(data, table, abbreviations, i, ci, finish, -1, base)
            if cut < 0 or cut >= finish:
                cut, ccut = finish, cfinish
            begin, stop, cbegin, cstop = _trimmed(data, table, position, cut, cposition, base)
            position, cposition = cut, ccut
            if begin < stop:
                n_units, text_size = _emit(
                    data, table, doc, begin, stop, cbegin, cstop, min_halves, out, n_units, text_size
                )
                if n_units < 0:
                    return -1, -1
    return n_units, text_size


def cut_units(
    data_p,
    offsets_p,
    ndocs,
    unit,
    min_halves,
    table_p,
    abbreviations_p,
    nabbreviations,
    lines_p,
    line_room,
    codes_p,
    units_p,
    unit_room,
    text_p,
    text_room,
    text_address,
    hashes_p,
    scratch_p,
    nbins,
    keys_p,
    nbands,
    state_p,
):  # pragma: no cover - compiled
    """The units of documents ``offsets[d]:offsets[d + 1]`` of ``data`` (UTF-8), from document
    ``state[0]`` on, that have at least ``min_halves`` half-words (a spaced word is two, a
    Chinese or Japanese character one): their records in ``units`` (:data:`U_FIELDS` each),
    their texts with white space runs as one space back to back in ``text`` and the XXH3-128 of
    each (low, high) in ``hashes``. ``state``: [document to start at, units, text bytes, the
    document to resume from]; a document's units are kept only once it is done, so that a call
    out of room (:data:`NEED_UNITS`; :data:`NEED_LINES` when a paragraph has more lines
    than ``line_room``) goes on from that document with more room (``text`` has room for
    every byte of ``data``). :data:`INVALID`: the document is not UTF-8."""
    state = carray(state_p, 4)
    offsets = carray(offsets_p, ndocs + 1)
    data = carray(data_p, max(offsets[ndocs], 1))
    table = carray(table_p, 0x110000)
    abbreviations = carray(abbreviations_p, max(nabbreviations, 1))[:nabbreviations]
    lines = carray(lines_p, (line_room, L_FIELDS))
    codes = carray(codes_p, 10)
    units = carray(units_p, (unit_room, U_FIELDS))
    text = carray(text_p, max(text_room, 1))[:text_room]
    hashes = carray(hashes_p, (max(unit_room, 1), 2))
    scratch = carray(scratch_p, (3, max(nbins, 1)))[:, :nbins]  # minima of word and character shingles, densified
    keys = carray(keys_p, (max(unit_room, 1), max(nbands, 1)))[:, :nbands]
    out = (units, text, keys, scratch)
    n_units, text_size = state[1], state[2]
    for doc in range(state[0], ndocs):
        base, end = offsets[doc], offsets[doc + 1]
        i = base
        while i < end:  # valid UTF-8 (surrogates as surrogatepass writes them) before anything
            c = data[i]
            if c < 0x80:
                i += 1
                continue
            code, size = _decode(data, i, end, True)
            if size == 0:
                state[3] = doc
                return INVALID
            i += size
        doc_units, doc_text = n_units, text_size
        m = 0  # lines of the current paragraph
        i, ci = base, 0
        status = DONE
        while True:
            # a physical line: data[i:j], ended by a break of b bytes; its content (white space
            # trimmed: begin == stop when there is none) and width, in one pass
            j, cj = i, ci
            separator = False
            b = 0
            begin = stop = before_at = before_code = -1
            cbegin = cstop = indent = columns = width = first_flags = 0
            while j < end:
                v = _char(data, j)
                code, size = v >> 3, v & 7
                flags = np.int64(table[code])
                if flags & BREAK:
                    separator = code == 0x2029
                    b = size
                    if code == 0x0D and j + 1 < end and data[j + 1] == 0x0A:
                        b = 2
                    break
                if begin < 0 and flags & SPACE:
                    indent += 8 if code == 0x09 else 1
                    before_at, before_code = j, code
                else:
                    if begin < 0:
                        begin, cbegin, first_flags = j, cj, flags
                    columns += 2 if flags & WIDE else 1
                    if not flags & SPACE:
                        stop, cstop, width = j + size, cj + 1, columns
                j, cj = j + size, cj + 1
            if begin < 0:
                begin = stop = j
            elif before_at >= 0 and first_flags & EXTEND:  # a mark after white space: the two start it
                begin, cbegin = before_at, cbegin - 1
                indent -= 8 if before_code == 0x09 else 1
                width += 2 if np.int64(table[before_code]) & WIDE else 1
            if begin < stop:
                if m >= line_room:
                    status = NEED_LINES
                    break
                lines[m, L_BYTE_START], lines[m, L_BYTE_END] = begin, stop
                lines[m, L_CHAR_START], lines[m, L_CHAR_END] = cbegin, cstop
                lines[m, L_WIDTH] = indent + width
                lines[m, L_INDENT] = indent
                m += 1
            if (begin == stop or separator or j >= end) and m:
                n_units, text_size = _paragraph(
                    data,
                    table,
                    abbreviations,
                    unit,
                    lines,
                    m,
                    doc,
                    base,
                    end,
                    min_halves,
                    out,
                    n_units,
                    text_size,
                    codes,
                )
                m = 0
                if n_units < 0:
                    status = NEED_UNITS
                    break
            if j >= end:
                break
            i, ci = j + b, cj + (2 if b == 2 else 1)
        if status != DONE:
            state[1], state[2], state[3] = doc_units, doc_text, doc
            return status
        for u in range(doc_units, n_units):
            begin = units[u - 1, U_TEXT_END] if u > 0 else 0
            low, high = xxh3_128(text_address + begin, units[u, U_TEXT_END] - begin)
            hashes[u, 0], hashes[u, 1] = low, high
        state[1], state[2] = n_units, text_size
    state[0] = ndocs
    return DONE
