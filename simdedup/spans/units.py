"""Units of text a reader recognises: paragraphs, lines and sentences, as character offsets.

- **paragraph**: the lines between blank lines (lines of white space only; a line ended by
  U+2029, the paragraph separator, ends its paragraph too).
- **line**: a line as it reads. A line that a formatter wrapped (man pages, mail, changelogs)
  goes on in the next, so the break between two lines of a paragraph ends a line only when
  the first ends a sentence or the second starts a list item, either is a rule (three
  characters or more of ASCII punctuation, dashes or box drawing), the second is less indented than the first (not the paragraph's first line: that
  may be indented alone), the first is a heading (its letters all capitals) and the second more
  indented, or the next line's first word would have fitted on the first (a formatter that
  fills lines breaks one only where the next word does not fit; the paragraph's longest line
  is its width) and the text does not visibly go on (a lower-case letter after a letter,
  digit or comma; Chinese or Japanese on both sides), or the first line is a heading
  (capitals only).
- **sentence**: lines cut after sentence ends: ``。！？｡‼⁇⁈⁉`` (full- and half-width; ``!``
  and ``?`` after a Chinese or Japanese character), with the closing quotes and brackets
  after them; ``. ! ? …`` with their closers, then white space and no lower-case letter
  next, unless the ``.`` ends an abbreviation (``e.g.``, ``Dr.``, an initial). A dot inside a
  token (``unittest.TestCase``, ``http://cmpp.linuxforum.net``, ``3.14``) ends nothing.

The units nest: every line end is a sentence end and every paragraph end a line end, so a
span of whole units of any kind is a span of whole sentences. Offsets count code points; a
unit starts and ends at a character that is not white space, so never inside a code point
or a word of a spaced script, and never inside a grapheme cluster (the marks that extend a
character go with it, and a unit starts with the white space a mark extends).

This module is the reference, in Python; :mod:`simdedup.spans.kernel` cuts the same units of
UTF-8 text in compiled code (the tests compare the two on random text of many scripts).
:func:`weights` says which units are long enough to be removed at all
(:data:`DEFAULT_MIN_WORDS`).
"""

from __future__ import annotations

import unicodedata

UNITS = ("paragraph", "line", "sentence")
DEFAULT_UNIT = "paragraph"
#: a unit of fewer words than this is never removed: headings, bullets, short lines of code,
#: a wrapped sentence's last words, "Thank you." (a Chinese or Japanese character counts as
#: half a word, about what a word of those languages takes: 20 characters pass)
DEFAULT_MIN_WORDS = 10

BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines' line boundaries
PARAGRAPH_SEPARATOR = "\u2029"
#: Chinese and Japanese (kana, Han ideographs; as simdedup.similarity counts them)
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
HANGUL = (0xAC00, 0xD7AF)
#: East Asian wide and full-width characters: two columns
WIDE_RANGES = (
    (0x1100, 0x115F),
    (0x2E80, 0x303E),
    (0x3041, 0x33FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA000, 0xA4CF),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFF60),
    (0xFFE0, 0xFFE6),
    (0x1F300, 0x1F64F),
    (0x1F900, 0x1F9FF),
    (0x20000, 0x3FFFD),
)
#: what extends the grapheme cluster before it besides marks (Mn, Me, Mc): the zero-width
#: (non-)joiners, the half-width katakana sound marks, emoji modifiers, tags
EXTENDER_RANGES = ((0x200C, 0x200D), (0xFF9E, 0xFF9F), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F))
CLOSERS = "\"')]}\u2019\u201d\u00bb\u203a\u300d\u300f\uff09\u3011\u300b\u3009\u3015\u3017\u3019\u301b\uff63\uff3d\uff5d\uff02\uff07"
CJK_ENDS = "\u3002\uff01\uff1f\uff61\u203c\u2047\u2048\u2049"  # 。！？｡‼⁇⁈⁉
LATIN_ENDS = ".!?\u2026\u203c\u2047\u2048\u2049"
OPENERS = "\"'([{\u2018\u201c\u00ab"
BULLETS = "-*+>\u2022\u2023\u25e6\u2043\u2219\u00b7\u25cf\u25cb\u25aa\u25a0\u25a1\u2013\u2014\u2010"
ROMAN = "ivxlcIVXLC"
CJK_NUMERALS = "一二三四五六七八九十百"
#: after these a line visibly goes on (with a letter or digit)
GOES_ON = ",;:(-\u2013\u2014\u3001\uff0c\uff1b\uff1a"
#: words that end in a dot without ending a sentence (lower-cased, without the dot)
ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st mt vs etc cf al fig figs eq eqs no nos vol vols pp ch sec
    sect art approx ca incl esp dept univ assn bros inc ltd co corp est gen gov jan feb mar apr
    jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun min max ref refs ed eds rev
    resp viz ibid op seq""".split()
)

UnitSpans = list[tuple[int, int]]


def _in(c: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    code = ord(c)
    return any(low <= code <= high for low, high in ranges)


def is_cjk(c: str) -> bool:
    return _in(c, CJK_RANGES)


def is_hangul(c: str) -> bool:
    return HANGUL[0] <= ord(c) <= HANGUL[1]


def is_word(c: str) -> bool:
    """A character of a word, as the regular expression ``\\w`` (and the tokenizers) take it."""
    return c.isalnum() or c == "_"


def columns(c: str) -> int:
    return 2 if _in(c, WIDE_RANGES) else 1


def extends(c: str) -> bool:
    """Whether ``c`` extends the grapheme cluster of the character before it."""
    return unicodedata.category(c) in ("Mn", "Me", "Mc") or _in(c, EXTENDER_RANGES)


def units(text: str, unit: str = DEFAULT_UNIT) -> UnitSpans:
    """The units of ``text`` of kind ``unit`` (:data:`UNITS`), in order, as ``(start, end)``
    character offsets (see the module's docstring)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
    found: UnitSpans = []
    for paragraph in _paragraphs(text):
        if unit == "paragraph":
            found.append((paragraph[0][0], paragraph[-1][1]))
            continue
        for start, end in _lines_of(text, paragraph):
            if unit == "line":
                found.append((start, end))
            else:
                found += _sentences(text, start, end)
    return found


def _physical_lines(text: str) -> list[tuple[int, int, bool]]:
    """Each line's content (white space trimmed; None for a blank line) and whether a
    paragraph separator ends it."""
    lines = []
    start = i = 0
    n = len(text)
    while i <= n:
        if i == n or text[i] in BREAKS:
            lines.append((*_trimmed(text, start, i), i < n and text[i] == PARAGRAPH_SEPARATOR))
            if i < n - 1 and text[i] == "\r" and text[i + 1] == "\n":
                i += 1
            start = i + 1
        i += 1
    return lines


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` without the white space around it (start == end: nothing left); a
    mark after white space extends that white space's cluster, so the two start it."""
    begin = start
    while begin < end and text[begin].isspace():
        begin += 1
    while end > begin and text[end - 1].isspace():
        end -= 1
    if begin == end:
        return begin, begin
    if begin > start and extends(text[begin]) and text[begin - 1] not in BREAKS:
        begin -= 1
    return begin, end


def _paragraphs(text: str) -> list[list[tuple[int, int]]]:
    """The lines (contents) of each paragraph."""
    paragraphs: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for start, end, separator in _physical_lines(text):
        if start < end:
            current.append((start, end))
        if (start == end or separator) and current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return paragraphs


def _indent(text: str, position: int) -> int:
    """Columns of white space before ``position`` on its line (a tab is eight)."""
    column = 0
    while position > 0 and text[position - 1] not in BREAKS:
        position -= 1
        column += 8 if text[position] == "\t" else 1
    return column


def _width(text: str, start: int, end: int) -> int:
    return sum(columns(c) for c in text[start:end])


def _lines_of(text: str, lines: list[tuple[int, int]]) -> UnitSpans:
    """The lines, as they read, of a paragraph whose physical lines are ``lines``."""
    indents = [_indent(text, start) for start, _ in lines]
    widths = [indent + _width(text, start, end) for indent, (start, end) in zip(indents, lines)]
    width = max(widths)
    found = []
    first = lines[0][0]
    for k in range(len(lines) - 1):
        # a line less indented than one that is not its paragraph's first starts another item
        # (a term after its definition, a hanging indent's next entry, code that dedents)
        dedent = k > 0 and indents[k + 1] < indents[k]
        if dedent or _hard_break(text, lines[k], lines[k + 1], widths[k], width, indents[k + 1] > indents[k]):
            found.append((first, lines[k][1]))
            first = lines[k + 1][0]
    found.append((first, lines[-1][1]))
    return found


def _rule(piece: str) -> bool:
    """A line of three characters or more, each white space, ASCII punctuation, a dash or a
    box-drawing character: ----, ====, ***, ───."""
    return len(piece) >= 3 and all(_rule_character(c) for c in piece)


def _rule_character(c: str) -> bool:
    return c.isspace() or (c.isascii() and not c.isalnum()) or "\u2010" <= c <= "\u2015" or "\u2500" <= c <= "\u259f"


def _run(piece: str, at: int, allowed: str | None, test: object = None, end: int | None = None) -> int:
    """How many characters from ``at`` on (before ``end``) are in ``allowed`` (or pass ``test``)."""
    end = len(piece) if end is None else end
    i = at
    while i < end and (piece[i] in allowed if allowed is not None else test(piece[i])):  # type: ignore[operator]
        i += 1
    return i - at


def list_item(piece: str) -> bool:
    """Whether a line (its content) starts a list item: a bullet, a number or letter with a
    dot or bracket, then white space; a Chinese enumeration (一、 (二) 3、)."""

    def spaced(at: int) -> bool:
        return at < len(piece) and piece[at].isspace()

    first = piece[0]
    if first in BULLETS and spaced(1):
        return True
    digits = _run(piece, 0, "0123456789")
    if 1 <= digits <= 3 and digits < len(piece) and piece[digits] in ".)" and spaced(digits + 1):
        return True
    if first.isascii() and first.isalpha() and len(piece) > 1 and piece[1] in ".)" and spaced(2):
        return True
    roman = _run(piece, 0, ROMAN)
    if 1 <= roman <= 5 and roman < len(piece) and piece[roman] in ".)" and spaced(roman + 1):
        return True
    if first == "(":
        inner = _run(piece, 1, None, is_word)
        if 1 <= inner <= 3 and 1 + inner < len(piece) and piece[1 + inner] == ")" and spaced(2 + inner):
            return True
    numerals = _run(piece, 0, CJK_NUMERALS)
    if (1 <= digits <= 3 or 1 <= numerals <= 4) and max(digits, numerals) < len(piece):
        if piece[max(digits, numerals)] == "\u3001":
            return True
    if first in "(\uff08":
        inner = _run(piece, 1, CJK_NUMERALS + "0123456789")
        if 1 <= inner <= 3 and 1 + inner < len(piece) and piece[1 + inner] in ")\uff09":
            return True
    return False


def _hard_break(
    text: str, line: tuple[int, int], following: tuple[int, int], line_width: int, width: int, deeper: bool
) -> bool:
    """Whether a line (as it reads) ends at the end of the physical line ``line``, followed
    in its paragraph by ``following`` (``deeper``: more indented), in a paragraph ``width``
    columns wide."""
    piece, after = text[line[0] : line[1]], text[following[0] : following[1]]
    if _rule(piece) or _rule(after) or list_item(after):
        return True
    heading = _heading(piece)
    if heading and deeper:
        return True  # a term, its definition indented below it
    if line[1] in sentence_cuts(text, line[0], line[1], after[0]):
        return True
    first = after[0]
    if is_cjk(first) or is_hangul(first):
        fits = line_width + columns(first) <= width
    else:
        word = _run(after, 0, None, lambda c: not c.isspace())
        fits = line_width + 1 + _width(after, 0, word) <= width
    if not fits:
        return False
    return heading or not _goes_on(piece[-1], first)


def _heading(piece: str) -> bool:
    """Capitals only (NAME, SEE ALSO, BZ_DATA_ERROR): a letter in upper case, none in lower
    case and none without case (``ASCII`` in a Chinese sentence does not make it a heading)."""
    letters = [c for c in piece if c.isalpha()]
    return any(c.isupper() for c in letters) and all(c.isupper() for c in letters)


def _goes_on(last: str, first: str) -> bool:
    """Whether the text visibly goes on from a line ending in ``last`` to one starting with
    ``first``: a lower-case letter after a letter, digit or comma; Chinese or Japanese on both
    sides of the break."""
    if not (is_word(last) or last in GOES_ON):
        return False
    return first.islower() or (is_cjk(first) and (is_cjk(last) or is_hangul(last)))


def sentence_cuts(text: str, start: int, end: int, after: str) -> list[int]:
    """Where sentences end in ``text[start:end]`` (a line as it reads), in order: the offsets
    after each end (with its closers and marks); ``after`` is the character that follows the
    line (empty at the end of a paragraph), which decides an end at ``end``."""
    cuts = []
    i = start
    while i < end:
        c = text[i]
        if c in CJK_ENDS or (c in "!?" and i > 0 and is_cjk(text[i - 1])):
            j = i + 1 + _run(text, i + 1, CJK_ENDS + "!?", end=end)
            j += _run(text, j, CLOSERS, end=end)
            j += _run(text, j, None, extends, end=end)
            cuts.append(j)
            i = j
            continue
        if c in LATIN_ENDS:
            run = _run(text, i, LATIN_ENDS, end=end)
            j = i + run + _run(text, i + run, CLOSERS, end=end)
            if j == end or text[j].isspace():
                following = after if j == end else _next_visible(text, j, end)
                if _latin_end(text, i, run, following):
                    cuts.append(j)
            i = j
            continue
        i += 1
    return cuts


def _next_visible(text: str, position: int, end: int) -> str:
    while position < end and text[position].isspace():
        position += 1
    return text[position] if position < end else ""


def _latin_end(text: str, at: int, run: int, following: str) -> bool:
    """Whether the marks ``text[at:at + run]`` (``.!?…``, white space after them) end a
    sentence, ``following`` being the next character that is not white space."""
    if following and following.islower():
        return False
    if text[at : at + run] != ".":
        return True
    word_start = at
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    while word_start < at and text[word_start] in OPENERS:
        word_start += 1
    word = text[word_start:at]
    if len(word) == 1 and word.isalpha():
        return False  # an initial: J. Smith
    if word.isascii() and word.lower() in ABBREVIATIONS:
        return False
    parts = word.split(".")
    return not (len(parts) > 1 and all(1 <= len(p) <= 2 and p.isalpha() for p in parts))  # e.g. U.S. Ph.D.


def _sentences(text: str, start: int, end: int) -> UnitSpans:
    """The sentences of the line (as it reads) ``text[start:end]``."""
    found: UnitSpans = []
    position = start
    for cut in sentence_cuts(text, start, end, ""):
        if cut < end:
            begin, finish = _trimmed(text, position, cut)
            if begin < finish:
                found.append((begin, finish))
            position = cut
    begin, finish = _trimmed(text, position, end)
    if begin < finish:
        found.append((begin, finish))
    return found


def weights(text: str, spans: UnitSpans) -> list[float]:
    """Each unit's length in words: runs of letters and digits (``\\w``) of spaced scripts,
    and each Chinese or Japanese character as half a word."""
    found = []
    for start, end in spans:
        words = halves = 0
        in_word = False
        for c in text[start:end]:
            if is_cjk(c):
                halves += 1
                in_word = False
            elif is_word(c):
                words += not in_word
                in_word = True
            else:
                in_word = False
        found.append(words + halves / 2)
    return found


def normalized(piece: str) -> str:
    """A unit's text as its exact key is made: white space runs as one space (line breaks,
    indentation and re-wrapping do not count)."""
    return " ".join(piece.split())
