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
CHARACTER_SEED = np.uint64(0xC3A5C85C97CB3127)
VALUE_SEED = np.uint64(0xB492B66FBE98F273)


def mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def reference(text: bytes, nbytes: int) -> bytes | None:
    """The sketch by its definition: the distinct shingles of the exact kernel (5-character ones
    for a text of characters or without a word), rounds of hashes until every bin is won by the smallest hash of
    the first round to reach it, 4 bits of each winner's hash."""
    words, grams, chars = exact_tokens(text)
    if not words and not len(chars):
        return None
    characters = len(chars) > 0  # a text of characters, or one without a word
    elements = chars if characters else grams
    seed = CHARACTER_SEED if characters else np.uint64(0)
    bins = shingle_sketch.bins_of(nbytes)
    winners = np.zeros(bins, dtype=np.uint64)
    won = np.zeros(bins, dtype=bool)
    with np.errstate(over="ignore"):
        r = 0
        while not won.all():
            h = mix(elements ^ (np.uint64(r + 1) * GOLDEN) ^ seed)
            b = ((h >> np.uint64(32)) * np.uint64(bins)) >> np.uint64(32)
            order = np.lexsort((h, b))
            first = np.concatenate(([True], b[order][1:] != b[order][:-1]))
            take = order[first]
            new = ~won[b[take].astype(np.int64)]
            winners[b[take][new].astype(np.int64)] = h[take][new]
            won[b[take].astype(np.int64)] = True
            r += 1
        values = mix(winners ^ VALUE_SEED) & np.uint64(15)
    packed = (values[0::2] | (values[1::2] << np.uint64(4))).astype(np.uint8)
    return packed.tobytes()


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
@given(st.lists(st.binary(min_size=16, max_size=16), min_size=2, max_size=20), st.data())
def test_agreements_count_equal_nibbles(rows, data):
    sketches = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), 16)
    left = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=30))
    right = data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=len(left), max_size=len(left)))
    expected = [
        sum(((x >> s) & 15) == ((y >> s) & 15) for x, y in zip(rows[a], rows[b]) for s in (0, 4))
        for a, b in zip(left, right)
    ]
    assert shingle_sketch.agreements(sketches, np.array(left), np.array(right)).tolist() == expected


def test_texts_of_characters_and_of_words_agree_by_chance_only():
    chinese = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着".encode()
    english = b"one two three four five six seven eight nine ten eleven twelve thirteen"
    sketches, has = shingle_sketch.sketch_texts([chinese, english])
    assert has.all()
    assert shingle_sketch.resemblance(sketches, np.array([0]), np.array([1]))[0] < 0.2
