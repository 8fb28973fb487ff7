"""Units a reader recognises (simdedup.spans.units) and the kernel that cuts them: the kernel
gives the reference's units, keys and band keys on random text of many scripts; no unit ends
inside a code point, a grapheme cluster or a word of a spaced script; the units nest."""

from __future__ import annotations

import numpy as np
import pytest
import regex
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.kernels.units import UnitsKernel
from simdedup.spans.candidates import band_keys
from simdedup.spans.units import UNITS, is_cjk, normalized, units, weights

#: pieces that meet at unit boundaries: ends of every script, closers, marks, joiners, breaks
PIECES = [
    *"abc XYZ 09.!?…。！？｡」）』\"')]\n\n\r\t-•*1)(、，,;:",
    "\r\n",
    " ",
    "\u3000",
    "\u2029",
    "\u2028",
    "\u0301",
    "\u200d",
    "\ufe0f",
    "\U0001f600",
    "\U0001f3fb",
    "Dr.",
    "e.g.",
    "U.S.",
    " J. ",
    "3.14",
    "http://cmpp.linuxforum.net",
    "unittest.TestCase",
    "中文",
    "日本語",
    "한국어",
    "ع",
    "\u0928\u093f",  # Devanagari with a vowel sign
    "ﾊﾟ",  # half-width katakana and its sound mark
    "Ὀδυσσεύς",
    "NAME",
    "ASCII",
    "\u24b6",  # circled A: upper case, no letter
    "\u01c5",  # a title-case letter
    "word",
    "\ud800",  # a lone surrogate, as a JSON string may hold
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
kernel = UnitsKernel.loaded()
needs_kernel = pytest.mark.skipif(kernel is None, reason="the units kernel cannot load here")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=4), st.sampled_from(UNITS), st.integers(0, 3))
def test_kernel_cuts_as_the_reference(documents, unit, min_words):
    data = [_utf8(t) for t in documents]
    offsets = np.cumsum([0] + [len(d) for d in data])
    cut = kernel.cut(b"".join(data), offsets, unit, min_words)
    rows = cut.units.tolist()
    expected = []
    for d, text in enumerate(documents):
        spans = units(text, unit)
        for (start, end), weight in zip(spans, weights(text, spans)):
            if weight >= min_words:
                expected.append(
                    (d, offsets[d] + len(_utf8(text[:start])), offsets[d] + len(_utf8(text[:end])), start, end)
                )
    assert [tuple(r[:5]) for r in rows] == expected
    previous = 0
    for row, key, bands in zip(rows, cut.hashes.tolist(), cut.keys.tolist()):
        text = documents[row[0]][row[3] : row[4]]
        assert cut.texts[previous : row[5]] == _utf8(normalized(text))
        digest = xxhash.xxh3_128_intdigest(_utf8(normalized(text)))
        assert key == [digest & (2**64 - 1), digest >> 64]
        assert bands == band_keys(normalized(text))
        previous = row[5]


def _clusters(text: str) -> set[int]:
    """The offsets between grapheme clusters (the regex module's \\X, UAX #29)."""
    bounds = {0}
    for match in regex.finditer(r"\X", text):
        bounds.add(match.end())
    return bounds


def _inside_a_word(text: str, at: int) -> bool:
    """Whether ``at`` falls between two characters of one word of a spaced script."""
    if not 0 < at < len(text):
        return False
    a, b = text[at - 1], text[at]
    spaced = lambda c: (c.isalnum() or c == "_") and not is_cjk(c)  # noqa: E731
    return spaced(a) and spaced(b)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(UNITS))
def test_units_end_between_clusters_and_words(text, unit):
    """Every unit starts and ends at a grapheme cluster boundary, outside any spaced word,
    at a character that is not white space; units are in order and do not overlap."""
    clusters = _clusters(text)
    position = 0
    for start, end in units(text, unit):
        assert position <= start < end <= len(text)
        assert start in clusters and end in clusters, (text, start, end)
        assert not _inside_a_word(text, start) and not _inside_a_word(text, end)
        assert not text[end - 1].isspace()
        position = end


@settings(max_examples=300, deadline=None)
@given(texts)
def test_units_nest(text):
    """Every paragraph end is a line end and every line end a sentence end, so a span of whole
    units of any kind is whole sentences."""
    ends = {unit: {end for _, end in units(text, unit)} for unit in UNITS}
    starts = {unit: {start for start, _ in units(text, unit)} for unit in UNITS}
    assert ends["paragraph"] <= ends["line"] <= ends["sentence"]
    assert starts["paragraph"] <= starts["line"] <= starts["sentence"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Smith went to the U.S. on Jan. 5. He read example.com. Then 3.14 was pi.",
            ["Dr. Smith went to the U.S. on Jan. 5.", "He read example.com.", "Then 3.14 was pi."],
        ),
        ("see unittest.TestCase and http://cmpp.linuxforum.net for more.", None),
        ("第一句话。第二句！「引用。」后面还有文字。", ["第一句话。", "第二句！", "「引用。」", "后面还有文字。"]),
        ("半角の句点｡次の文", ["半角の句点｡", "次の文"]),
        ("Is it? yes it is. e.g. this one", ["Is it? yes it is. e.g. this one"]),
    ],
)
def test_sentences(text, expected):
    found = [text[a:b] for a, b in units(text, "sentence")]
    assert found == (expected if expected is not None else [text])


def test_lines_join_what_a_formatter_wrapped():
    page = (
        "NAME\n"
        "       ls - list directory contents\n"
        "\n"
        "DESCRIPTION\n"
        "       List information about the FILEs (the current directory by default).  Sort\n"
        "       entries alphabetically if none of -cftuvSUX nor --sort is specified.\n"
        "       - first item of a list\n"
        "       - second item\n"
        "这是一个很长的句子，它被折行了，因为终端的宽度只有八十列，所以这里\n"
        "断开了。"
    )
    lines = [page[a:b] for a, b in units(page, "line")]
    assert lines[:3] == ["NAME", "ls - list directory contents", "DESCRIPTION"]
    assert lines[3].startswith("List information") and lines[3].endswith("is specified.")
    assert lines[4:6] == ["- first item of a list", "- second item"]
    assert lines[6].endswith("所以这里\n断开了。")  # a wrapped Chinese sentence is one line


def test_unit_lengths():
    text = "one two-three\n\n中文字符八个中文字符八个"  # twelve characters: six words
    assert weights(text, units(text)) == [3, 6]


def _wrapped(words: list[str], indent: int, width: int) -> list[str]:
    """``words`` filled greedily into lines of at most ``width`` columns after ``indent`` spaces."""
    lines, line = [], ""
    for word in words:
        if line and indent + len(line) + 1 + len(word) > width:
            lines.append(" " * indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, " " * indent + line]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[A-Z][A-Z_]{2,20}", fullmatch=True),
            st.lists(
                st.sampled_from("if the stream is not a valid compressed file it returns an error code".split()),
                min_size=3,
                max_size=40,
            ),
        ),
        min_size=2,
        max_size=6,
    ),
    st.integers(2, 8),
    st.integers(40, 80),
)
def test_definition_lists_are_lines(items, indent, width):
    """A definition list as formatters write it (terms, then their definitions indented and
    wrapped): each term is a line of its own and each definition one line, however it wraps;
    a sentence ends at each as well."""
    lines, terms, definitions = [], [], []
    for term, words in items:
        terms.append(term)
        definitions.append(" ".join(words))
        lines += [term, *_wrapped(words, indent, width)]
    text = "\n".join(lines) + "\n"
    for unit in ("line", "sentence"):
        found = [" ".join(text[a:b].split()) for a, b in units(text, unit)]
        assert found == [piece for pair in zip(terms, definitions) for piece in pair]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["中文", "句子", "编码", "ASCII", "UTF-8", "URL", "7", "的", "，"]), min_size=20, max_size=80
    ),
    st.integers(2, 6),
    st.integers(20, 40),
)
def test_wrapped_chinese_is_one_line(pieces, indent, width):
    """A Chinese sentence wrapped at any width is one line and one sentence, whatever
    capitals (ASCII, URL) a line holds: a heading is capitals only."""
    sentence = "".join(pieces) + "。"
    rows, row = [], ""
    for c in sentence:  # wrapped at `width` columns, a wide character taking two
        if len(row) + sum(1 for ch in row if ord(ch) > 0x2E80) + 2 > width:
            rows.append(" " * indent + row)
            row = ""
        row += c
    text = "\n".join([*rows, " " * indent + row]) + "\n"
    for unit in ("line", "sentence"):
        assert ["".join(text[a:b].split()) for a, b in units(text, unit)] == ["".join(sentence.split())]
