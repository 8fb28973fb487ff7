"""The alignment ratio ``benchmarks/alignment.py`` measures the dev sets' pairs with (issue 29):
exact against a brute-force LCS, symmetric, lowered by reordering, over the tokens the exact
kernel cuts."""

import sys
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import alignment  # noqa: E402

from simdedup.similarity import exact_sets  # noqa: E402

# lengths drawn evenly up to 200 (past 64, the bit-parallel words carry into each other); few
# symbols, for long common subsequences
tokens = st.integers(0, 200).flatmap(lambda n: st.lists(st.integers(0, 3), min_size=n, max_size=n))


def brute_force_lcs(a, b):
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal, row[0] = 0, 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def as_array(values):
    return np.array(values, dtype=np.int64)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens)
def test_lcs_is_the_dynamic_programme(a, b):
    assert alignment.lcs_length(as_array(a), as_array(b)) == brute_force_lcs(a, b)


@settings(max_examples=200, deadline=None)
@given(tokens, tokens)
def test_ratio_is_symmetric_and_one_only_for_equal_sequences(a, b):
    forward, backward = alignment.ratio(as_array(a), as_array(b)), alignment.ratio(as_array(b), as_array(a))
    assert forward == backward
    assert 0.0 <= forward <= 1.0
    assert (forward == 1.0) == (a == b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=2, max_size=120), st.randoms(use_true_random=False))
def test_reordering_the_words_lowers_the_ratio(words, random):
    shuffled = list(words)
    random.shuffle(shuffled)
    value = alignment.ratio(as_array(words), as_array(shuffled))
    assert value == 1.0 if shuffled == words else value < 1.0


def test_scattered_substitutions_keep_a_high_ratio_and_reordering_does_not():
    words = as_array(range(1000))
    substituted = words.copy()
    substituted[::10] += 5000  # 10% of the words replaced, scattered
    assert alignment.ratio(words, substituted) == 0.9
    halves = np.concatenate((words[1::2], words[::2]))  # the same words, in another order
    assert alignment.ratio(words, halves) == (2 * 500 / 2000)


# Latin words (upper case lowered), digits, separators, punctuation and table drawing, CJK
# characters and punctuation, kana, a code point beyond the BMP
text_pieces = st.sampled_from("The quick fox 42 x_1 É | - ─ , . 。 、 中 文 か ナ 𠀀".split() + [" ", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(text_pieces, max_size=40))
def test_words_are_the_exact_kernels_tokens(pieces):
    text = "".join(pieces)
    words, every = alignment.token_sequences(text, {})
    found = exact_sets(text)
    if found is None:
        assert len(words) == 0
        return
    # the same tokens: as many distinct, each as often (the kernel keeps hashes and counts)
    assert sorted(Counter(words.tolist()).values()) == sorted(found.counts.tolist())
    assert len(every) >= len(words)
