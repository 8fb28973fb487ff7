"""Invariants of the exact verification rule (issue 29), on generated texts: what the rule must
hold for every member of a class, not for the examples it was tuned on."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup import similarity
from simdedup.similarity import ExactIndex, KeptText, exact_sets, needed, passes, scattered_resemblance

WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
ASCII_PUNCTUATION = st.sampled_from(list(",.;:!?\"'()[]-|+*/") + ["--", "+---+", "| "])
CJK = st.sampled_from(list("床前明月光疑是地上霜举头望低思故乡"))
CJK_PUNCTUATION = st.sampled_from(list("，。、！？；：「」《》"))


def verdict(a: str, b: str, min_similarity: float = 0.88, min_resemblance: float = 0.8) -> bool:
    index = ExactIndex([KeptText(a), KeptText(b)])
    return bool(index.verdicts(np.array([0]), np.array([1]), "combined", min_similarity, min_resemblance)[1][0])


def punctuated(draw, words: list[str]) -> str:
    """The words in order, with ASCII punctuation drawn between them (spaces kept around it)."""
    out = []
    for word in words:
        out.append(word)
        if draw(st.booleans()):
            out.append(draw(ASCII_PUNCTUATION))
    return " ".join(out)


@settings(max_examples=150, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=40), st.data())
def test_ascii_punctuation_between_words_changes_no_set(words, data):
    """Quotes, dashes and table rules between Latin words are typography: a copy re-punctuated
    or redrawn (ASCII against box-drawing rules) has the same sets, so every verdict stands."""
    a, b = punctuated(data.draw, words), punctuated(data.draw, words)
    sa, sb = exact_sets(a), exact_sets(b)
    assert sa.grams.tobytes() == sb.grams.tobytes() and sa.words.tobytes() == sb.words.tobytes()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.lists(CJK, min_size=4, max_size=7), CJK_PUNCTUATION, CJK_PUNCTUATION), min_size=2, max_size=6)
)
def test_chinese_punctuation_is_measured(lines):
    """A poem and the same characters without their marks have the same words and different
    3-grams: the marks after CJK text are tokens. (Re-punctuating may leave the *set* of 3-grams
    as it was when lines repeat, so the comparison is with no marks at all.)"""
    a = "".join("".join(chars) + first for chars, first, _ in lines)
    bare = "".join("".join(chars) for chars, _, _ in lines)
    sa, sb = exact_sets(a), exact_sets(bare)
    assert sa.words.tobytes() == sb.words.tobytes()
    assert sa.grams.tobytes() != sb.grams.tobytes()


@settings(max_examples=150, deadline=None)
@given(st.lists(WORD, min_size=3, max_size=30), st.lists(WORD, min_size=3, max_size=30))
def test_the_verdict_is_symmetric(x, y):
    a, b = " ".join(x), " ".join(y)
    assert verdict(a, b) == verdict(b, a)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.floats(0.5, 1), st.floats(0.5, 1), st.integers(1, 10**6))
def test_the_bag_never_accepts_a_low_resemblance(bag, grams, min_similarity, min_resemblance, fewer):
    """Whatever the word counts, a pair passes only when its resemblance is at least the lower
    of the two paths' thresholds, and the bag's path asks more the higher the bag: same words
    (bag 1) need a resemblance of 1 - BAG_MARGIN, more than the resemblance path's own."""
    ok = passes("combined", np.array([bag]), np.array([grams]), min_similarity, min_resemblance, fewer)[0]
    floor = min(needed(min_resemblance, fewer), needed(scattered_resemblance(bag) - similarity.BAG_MARGIN, fewer))
    if ok:
        assert grams >= floor - 1e-12
        assert grams >= similarity.lowest_needed("combined", min_similarity, min_resemblance) - 1e-12


@given(st.floats(0, 1), st.integers(1, 10**6), st.integers(1, 10**6))
def test_a_shorter_pair_needs_at_least_as_much(threshold, small, large):
    small, large = min(small, large), max(small, large)
    assert needed(threshold, small) >= needed(threshold, large) - 1e-12 >= threshold - 2e-12
