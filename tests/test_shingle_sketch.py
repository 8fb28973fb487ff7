"""The shingle sketch (:mod:`simdedup.shingle_sketch`): the kernel's sketch equals the
definition computed here in numpy from the exact kernel's shingles, whole or streamed in any
chunks, and estimates the exact resemblance within its error."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup import shingle_sketch
from simdedup.similarity import CJK_SHARE, _tables, exact_kernel, exact_sets

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
WORD_SEED = np.uint64(0)
OWN_WORD_SEED = np.uint64(0x8EBC6AF09C88C6E3)
CHARACTER_SEED = np.uint64(0xC3A5C85C97CB3127)
VALUE_SEED = np.uint64(0xB492B66FBE98F273)


def mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def sketch_of_set(elements: np.ndarray, bins: int, seed: np.uint64) -> np.ndarray:
    """Fast similarity sketching by its definition: rounds of hashes until every bin is won by
    the smallest hash of the first round to reach it; the winners' hashes (0 for no element)."""
    winners = np.zeros(bins, dtype=np.uint64)
    won = np.zeros(bins, dtype=bool)
    r = 0
    with np.errstate(over="ignore"):
        while len(elements) and not won.all():
            h = mix(elements ^ (np.uint64(r + 1) * GOLDEN) ^ seed)
            b = (((h >> np.uint64(32)) * np.uint64(bins)) >> np.uint64(32)).astype(np.int64)
            order = np.lexsort((h, b))
            first = np.concatenate(([True], b[order][1:] != b[order][:-1]))
            take = order[first]
            new = ~won[b[take]]
            winners[b[take][new]] = h[take][new]
            won[b[take]] = True
            r += 1
    return winners


def reference(text: bytes, nbytes: int) -> bytes | None:
    """The sketch by its definition (simdedup.shingle_sketch): the first part over the distinct
    word 3-grams of the exact kernel, the own part over the text's own shingles (its
    5-character ones for a text of characters or without a word), 4 bits of each winner's hash,
    the kind last."""
    _, grams, chars = exact_tokens(text)
    if not len(grams) and not len(chars):
        return None
    characters = len(chars) > 0
    bins, first, own = shingle_sketch.layout(nbytes)
    own_part = sketch_of_set(chars, own, CHARACTER_SEED) if characters else sketch_of_set(grams, own, OWN_WORD_SEED)
    winners = np.concatenate((sketch_of_set(grams, first, WORD_SEED), own_part))
    with np.errstate(over="ignore"):
        values = np.append(mix(winners ^ VALUE_SEED) & np.uint64(15), np.uint64(int(characters)))
    return (values[0::2] | (values[1::2] << np.uint64(4))).astype(np.uint8).tobytes()


def exact_tokens(text: bytes) -> tuple[int, np.ndarray, np.ndarray]:
    """The exact kernel's cut of a text: its number of word tokens, its distinct word 3-grams
    and distinct 5-character shingles (which it cuts for a text of characters or without a word)."""
    from simdedup.kernels.exact import _bytes_address

    room = len(text) + 1
    words, grams, sizes = np.empty(room, np.uint64), np.empty(2 * room, np.uint64), np.empty(3, np.int64)
    offsets = np.array([0, len(text)], dtype=np.int64)
    exact_kernel()._functions["exact-tokens"](
        _bytes_address(text),
        offsets.ctypes.data,
        1,
        _tables(True).ctypes.data,
        CJK_SHARE,
        words.ctypes.data,
        grams.ctypes.data,
        sizes.ctypes.data,
    )
    n_words, n_grams, n_chars = sizes.tolist()
    return n_words, np.unique(grams[:n_grams]), np.unique(grams[n_grams : n_grams + n_chars])


def kernel_sketch(text: bytes, nbytes: int = 128) -> bytes | None:
    sketches, has = shingle_sketch.sketch_texts([text], nbytes)
    return sketches[0].tobytes() if has[0] else None


TEXTS = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abc xyz  .,\n\t")),
        st.sampled_from(list("的一是不了人我在有他。，「」")),
        st.sampled_from(list("ｱｲｳＡＢ１２ﬁ½éÉßİ")),
        st.characters(codec="utf-8"),
    ),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.sampled_from([8, 32, 128]))
def test_the_kernel_sketch_is_the_definition(text, nbytes):
    data = text.encode("utf-8", "surrogatepass")
    assert kernel_sketch(data, nbytes) == reference(data, nbytes)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.lists(st.integers(0, 300), max_size=6))
def test_a_stream_in_any_chunks_is_the_whole_text(text, cuts):
    """Chunks end between characters (as a decoder gives them); the stream's sketch is the
    whole text's."""
    pieces, last = [], 0
    for cut in sorted(set(min(c, len(text)) for c in cuts)):
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    chunks = [p.encode("utf-8", "surrogatepass") for p in pieces]
    assert shingle_sketch.sketch_stream(chunks) == kernel_sketch(b"".join(chunks))


def test_a_long_stream_of_few_distinct_shingles_and_of_many():
    """A text of one phrase repeated (few distinct shingles, many elements) and one of many
    distinct shingles go past the kept shingles' capacity; both equal their definition."""
    few = ("one two three " * 200_000).encode()
    many = " ".join(f"w{i}" for i in range(300_000)).encode()
    for text in (few, many):
        chunks = [text[i : i + (1 << 20)] for i in range(0, len(text), 1 << 20)]
        assert shingle_sketch.sketch_stream(chunks) == reference(text, 128)


def test_not_utf8_is_refused_at_its_byte():
    with pytest.raises(UnicodeDecodeError) as raised:
        shingle_sketch.sketch_texts([b"fine", b"bad \xff here"])
    assert raised.value.start == 4


def exact_resemblance(a: bytes, b: bytes) -> float:
    x, y = exact_sets(a), exact_sets(b)
    ka, kb = (x.chars if len(x.chars) else x.grams), (y.chars if len(y.chars) else y.grams)
    return len(np.intersect1d(ka, kb)) / len(np.union1d(ka, kb))


def test_the_estimate_is_within_its_error_of_the_resemblance():
    """Texts with edits: the estimate's error over 400 pairs near the threshold is unbiased and
    about as small as the sketch's size promises (docs/quality.md)."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(5000)]
    errors = []
    for _ in range(400):
        words = [rng.choice(vocabulary) for _ in range(rng.randrange(20, 800))]
        edited = [rng.choice(vocabulary) if rng.random() < 0.07 else w for w in words]
        a, b = " ".join(words).encode(), " ".join(edited).encode()
        sketches, _ = shingle_sketch.sketch_texts([a, b])
        estimate = float(shingle_sketch.resemblance(sketches, np.array([0]), np.array([1]))[0])
        errors.append(estimate - exact_resemblance(a, b))
    errors = np.array(errors)
    assert abs(errors.mean()) < 0.005 and np.sqrt((errors**2).mean()) < 0.03


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=40, max_size=40), min_size=2, max_size=20), st.data())
def test_the_bins_compared_and_agreeing_follow_the_kinds(rows, data):
    """By brute force over 80-bin sketches: two of words compare every bin but the kind, two of
    characters their own parts, any other pair the first parts; agreeing bins hold equal 4 bits."""
    rows = [row[:-1] + bytes([row[-1] & 0x1F]) for row in rows]  # kinds 0 and 1 mostly
    sketches = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), 40)
    left = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=30))
    right = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=len(left), max_size=len(left)))
    bins, first, own = shingle_sketch.layout(40)

    def nibbles(row: bytes) -> list[int]:
        return [(byte >> shift) & 15 for byte in row for shift in (0, 4)]

    expected = []
    for a, b in zip(left, right):
        x, y = nibbles(rows[a]), nibbles(rows[b])
        if x[-1] == y[-1] == 0:
            compared = range(bins - 1)
        elif x[-1] == y[-1] == 1:
            compared = range(first, bins - 1)
        else:
            compared = range(first)
        expected.append((len(compared), sum(x[i] == y[i] for i in compared)))
    count, agree = shingle_sketch.compared(sketches, np.array(left), np.array(right))
    assert list(zip(count.tolist(), agree.tolist())) == expected


def test_a_text_of_characters_and_one_of_words_are_compared_on_their_word_3_grams():
    """An English text under a Japanese heading is a text of characters (1% of its characters
    Han or kana); without the heading, of words: the two are compared on their word 3-grams,
    and the sketch estimates that. Unrelated texts of the two kinds do not resemble."""
    body = " ".join(f"w{i % 97} x{i % 13}" for i in range(80))
    headed, plain = f"\u898b\u51fa\u3057\u306e\u4f8b\n{body}".encode(), f"heading example\n{body}".encode()
    chinese = "\u7684\u4e00\u662f\u4e0d\u4e86\u4eba\u6211\u5728\u6709\u4ed6\u8fd9\u4e2d\u5927".encode()
    sketches, has = shingle_sketch.sketch_texts([headed, plain, chinese])
    assert has.all() and [int(row[-1] >> 4) for row in sketches] == [1, 0, 1]
    estimates = shingle_sketch.resemblance(sketches, np.array([0, 1]), np.array([1, 2]))
    words = [exact_tokens(t)[1] for t in (headed, plain)]
    exact = len(np.intersect1d(*words)) / len(np.union1d(*words))
    assert abs(estimates[0] - exact) < 0.1 and estimates[1] < 0.2
