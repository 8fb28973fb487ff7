"""The exact sets read from UTF-8 bytes: the words and their counts are those of the algorithm
they replaced, byte for byte (that one decoded the text, encoded it to UTF-32 and cut it with
per-code-point class and lower-case tables, kept here as the oracle); the shingles are those of
their definition, written here from ``str`` methods and ``unicodedata`` (word 3-grams of every
text; 5-character shingles, white space deleted, of a text of characters), compared by their
numbers and, for pairs, by their Jaccard. Also the same answer for bytes that are not UTF-8: the
error that decoding them first raised."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from helpers import resemblance, shingles, word_like_texts
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.similarity import ExactIndex, ExactSets, KeptText, exact_sets

# ---- the oracle: exact_sets and its kernel before they read UTF-8 ----------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_PRIME = np.uint64(0x100000001B3)
_SPACE, _WORD, _ONE = 0, 1, 2
_CJK = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))


def _old_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    chars = [chr(c) for c in range(0x10000)]
    word = np.array([c.isalnum() or c == "_" for c in chars])
    space = np.array([c.isspace() for c in chars])
    cls = np.where(word, _WORD, np.where(space, _SPACE, _ONE)).astype(np.uint8)
    for low, high in _CJK:
        cls[low : high + 1] = _ONE
    punct = ~word & ~space
    lower = np.array([ord(low) if len(low := c.lower()) == 1 else ord(c) for c in chars], dtype=np.uint32)
    return cls, lower, punct


OLD_TABLES = _old_tables()


@numba.njit(inline="always")
def _mix(x):
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit
def _old_token_arrays(points, classes, lower, punctuation, lowercase):
    size = len(points)
    tokens = np.empty(size, dtype=np.uint64)
    is_word = np.empty(size, dtype=np.bool_)
    count = 0
    run = np.uint64(0)
    length = np.uint64(0)
    after_cjk = False
    limit = np.uint32(len(classes))
    for i in range(size + 1):
        kind = np.uint8(0)
        punct = False
        code = np.uint64(0)
        if i < size:
            point = points[i]
            code = np.uint64(point)
            kind = np.uint8(_ONE)
            if point < limit:
                kind = classes[point]
                punct = punctuation[point]
                if lowercase:
                    code = np.uint64(lower[point])
        if kind == _WORD:
            run = run * _PRIME + code
            length += np.uint64(1)
            continue
        if length > 0:
            tokens[count] = _mix(run ^ (length * _GOLDEN))
            is_word[count] = True
            count += 1
            run = np.uint64(0)
            length = np.uint64(0)
            after_cjk = False
        if kind == _ONE and (after_cjk or not punct):  # punctuation only after a one-code-point word
            tokens[count] = _mix(code ^ _GOLDEN)
            is_word[count] = not punct
            count += 1
            after_cjk = after_cjk or not punct
    return tokens[:count], is_word[:count]


def old_exact_sets(text: str, lowercase: bool = True) -> ExactSets | None:
    classes, lower, punctuation = OLD_TABLES
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    tokens, is_word = _old_token_arrays(points, classes, lower, punctuation, lowercase)
    words = np.sort(tokens[is_word])
    if len(words) == 0:
        return None
    first = np.flatnonzero(np.concatenate(([True], words[1:] != words[:-1])))
    counts = np.diff(np.append(first, len(words))).astype(np.uint32)
    return ExactSets(words[first], counts, np.empty(0, np.uint64), np.empty(0, np.uint64))


# ---- the comparisons ------------------------------------------------------------------------


def same(got: ExactSets | None, expected: ExactSets | None, text: str, lowercase: bool) -> bool:
    if got is None or expected is None:
        return got is expected
    grams, characters = shingles(text, lowercase)
    return (
        all(
            a.dtype == b.dtype and a.tobytes() == b.tobytes()
            for a, b in ((got.words, expected.words), (got.counts, expected.counts))
        )
        and (len(got.grams), len(got.chars)) == (len(grams), len(characters))
        and all(np.all(h[1:] > h[:-1]) for h in (got.grams, got.chars))  # sorted, distinct
    )


def assert_as_before(text: str) -> None:
    """Every way a text comes in: str, its UTF-8 (``surrogatepass``), kept as either."""
    data = text.encode("utf-8", "surrogatepass")
    for lowercase in (True, False):
        expected = old_exact_sets(text, lowercase)
        assert same(exact_sets(text, lowercase), expected, text, lowercase)
        assert same(exact_sets(data, lowercase), expected, text, lowercase)
        assert same(KeptText(data, lowercase).sets(), expected, text, lowercase)
        assert same(KeptText(text, lowercase).sets(), expected, text, lowercase)


# Astral letters, digits and ideographs, emoji, combining marks, full-width forms, kana, Hangul,
# CJK punctuation, box drawing, Unicode spaces, characters whose lower case is two characters
# (U+0130) or another one (sigma, Kelvin sign, full-width A), case-ignorable ones, the BOM.
SPECIAL = (
    "\u0130Ii\u0131\u03a3\u03c3\u03c2\u1e9e\u00df\ufb01\u212a\u2126\u01c5\u0345\u0307\u0301\u0308"
    "'\u2019.,!?-+|_\u00b7\u00ad\u200d\ufeff\uff21\uff41\uff11\uff0c\u3001\u3002\u30fb\u2500\u2502"
    "\u4e2d\u6587\u3042\u30ab\uac00\uff76\U00020000\U0001d400\U0001d7d8\U0001f600\U00010400"
    " \t\n\u3000\u00a0\u2028\u0085\x1c0\u0661\u00bd\u2460"
)
characters = st.one_of(
    st.sampled_from(SPECIAL),
    st.characters(max_codepoint=0x7F),
    st.characters(codec="utf-8"),  # any code point but surrogates
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),  # lone surrogates
    st.characters(min_codepoint=0x3000, max_codepoint=0x30FF),  # CJK punctuation and kana
)
texts = st.one_of(
    st.text(characters, max_size=200),
    st.text(st.sampled_from(" .,;!?-\u3002\uff0c\u2500"), max_size=10),  # no word at all
    st.lists(st.sampled_from(["ab", "Ab", "\u0130x", "\u4e2d", "\U0001f600", ",", " ", "\u0301"]), max_size=8).map(
        "".join
    ),
)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_sets_of_any_text_are_as_before(text):
    assert_as_before(text)


@settings(max_examples=150, deadline=None)
@given(word_like_texts())
def test_the_sets_of_word_like_text_are_as_before(text):
    # mostly ASCII, cut 64 bytes at a time, with words that cross those bytes' edges
    assert_as_before(text)


@settings(max_examples=100, deadline=None)
@given(word_like_texts(ascii_only=True), st.booleans())
def test_word_like_text_at_the_cjk_share_is_read_as_before(text, above):
    # ideographs just at the share (or one short of it) after ASCII text: a character
    # miscounted 64 bytes at a time tips the text into the other kind
    others = sum(not c.isspace() for c in text)
    ideographs = -(-others // 99) - (0 if above else 1)
    assert_as_before(text + " " + "\u4e2d" * ideographs)


def test_every_code_point_of_the_tables_and_beyond_is_cut_and_lowered_as_before():
    """All BMP code points (surrogates too) side by side, each alone between spaces, and each
    after a letter and before a digit; astral ones at the edges of the planes."""
    bmp = [chr(c) for c in range(0x10000)]
    astral = [chr(c) for c in (0x10000, 0x1F600, 0x20000, 0x2FFFF, 0xE0001, 0x10FFFF)]
    assert_as_before("".join(bmp + astral))
    assert_as_before(" ".join(bmp + astral))
    assert_as_before(" ".join(f"a{c}1" for c in bmp[::7] + astral))


@pytest.mark.parametrize("text", ["", " ", ",", "a", "a b", "a, b", "a b c", "\u4e2d\u6587", ". a .", "\U0001f600"])
def test_texts_of_fewer_tokens_than_a_gram(text):
    assert_as_before(text)


# byte sequences Python's UTF-8 decoder refuses even with surrogatepass: stray continuation
# bytes, overlong forms, beyond U+10FFFF, bytes that never occur, sequences cut short, a
# surrogate cut short or followed by a non-continuation byte
MALFORMED = [
    b"\x80",
    b"\xbf",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\xc2A",
    b"\xe0\x80\x80",
    b"\xe0\x9f\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xff",
    b"\xfe",
    b"\xe2\x82",
    b"\xe2\x82A",
    b"\xf0\x9f\x98",
    b"\xf0\x9f\x98A",
    b"\xed\xa0",
    b"\xed\xa0A",
]
# and ones it takes: surrogates (surrogatepass), the BOM, the largest code point
WELL_FORMED = [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\x9f\xbf", b"\xef\xbb\xbf", b"\xf4\x8f\xbf\xbf", b"\xc2\x80"]


def error_of(call):
    try:
        call()
    except UnicodeDecodeError as exc:
        return str(exc)
    return None


def assert_bytes_as_before(data: bytes) -> None:
    expected_error = error_of(lambda: data.decode("utf-8", "surrogatepass"))
    for lowercase in (True, False):
        assert error_of(lambda: exact_sets(data, lowercase)) == expected_error
        assert error_of(lambda: KeptText(data, lowercase).sets()) == expected_error
        if expected_error is None:
            text = data.decode("utf-8", "surrogatepass")
            assert same(exact_sets(data, lowercase), old_exact_sets(text, lowercase), text, lowercase)


@pytest.mark.parametrize("piece", MALFORMED + WELL_FORMED)
@pytest.mark.parametrize("where", ["alone", "in words", "at the end"])
def test_malformed_bytes_raise_what_decoding_them_raised(piece, where):
    data = {"alone": piece, "in words": b"ab " + piece + b" cd", "at the end": "x \u4e2d".encode() + piece}[where]
    assert_bytes_as_before(data)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.binary(max_size=4),
            st.sampled_from(MALFORMED + WELL_FORMED),
            texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
        ),
        max_size=8,
    ).map(b"".join)
)
def test_any_bytes_give_the_sets_or_the_error_of_decoding_them(data):
    assert_bytes_as_before(data)


# texts of words and of characters, alone and mixed: English with Japanese headings, Chinese with
# English names, full-width forms that NFKC maps onto ASCII, re-punctuated copies
mixed_pieces = st.sampled_from(
    ["the", "The", "shell", "prompt", "\uff34\uff48\uff45", "GNOME", "1.1", ",", "\u3002", "\uff0c", "!", " ", "\n"]
    + ["\u30b7\u30a7\u30eb", "\u74b0\u5883", "\u4e2d\u6587", "\u8f93\u5165", "\u304c", "\U00020000", "\U0001f600"]
    # letters that meet ASCII inside a word: the same in words and shingles (Kelvin sign, e acute),
    # or not (a dotted capital I, a combining accent, a full-width letter)
    + ["\u212a", "\u00e9", "\u0130", "\u0301", "\uff41", "_", "x"]
)
mixed_texts = st.lists(mixed_pieces, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(mixed_texts, mixed_texts, st.data())
def test_resemblance_is_the_jaccard_of_the_shingles_its_definition_gives(a, b, data):
    """A pair and its edit: the measure the index takes equals the definition's (hashes of
    64 bits: a collision among a few hundred shingles is beyond reach)."""
    if data.draw(st.booleans()):  # b an edit of a: closer pairs, around every threshold
        cut = data.draw(st.integers(0, len(a)))
        b = a[:cut] + b[: len(b) // 4] + a[cut:]
    sets = [exact_sets(t) for t in (a, b)]
    if None in sets:
        return
    index = ExactIndex(sets)
    assert index.jaccard("grams", np.array([0]), np.array([1]))[0] == pytest.approx(resemblance(a, b), abs=1e-12)
    assert index.jaccard("grams", np.array([1]), np.array([0]))[0] == pytest.approx(resemblance(b, a), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(40, 60), st.integers(0, 300), st.sampled_from([" ", "\t", "\n", "\x1c", "\u3000"]))
def test_the_share_of_cjk_counts_characters_and_not_white_space(letters, spaces, space):
    """A text is one of characters by the share of CJK among its characters, white space
    apart (similarity.CJK_SHARE), however much white space it holds: around the share, ASCII
    words, one ideograph and white space of every kind."""
    assert_as_before("\u4e2d" + space * spaces + " ".join(["ab"] * letters) + space * spaces)
