"""Invariants of the exact verification rule (issue 29), on generated texts: what the rule must
hold for every member of a class, not for the examples it was tuned on."""

from __future__ import annotations

from pathlib import Path

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


# ---- dedup against the definition, on generated families of the classes that fooled word counts


def _family(rng, kind: str, n: int) -> tuple[str, str]:
    """Two texts of one class, each family with words and characters of its own."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 8))) for _ in range(60)]
    han = [chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(40)]
    words = [rng.choice(vocabulary) for _ in range(rng.randint(20, 200))]
    if kind == "re-punctuated Chinese":  # a short poem or quote, its punctuation changed
        lines = ["".join(rng.choice(han) for _ in range(rng.randint(5, 9))) for _ in range(rng.randint(2, 8))]
        marks = [rng.choice("，。、！？；") for _ in lines]
        other = [m if rng.random() < 0.6 else rng.choice("，。、！？；") for m in marks]
        return "".join(x + m for x, m in zip(lines, marks)), "".join(x + m for x, m in zip(lines, other))
    if kind == "table drawn two ways":  # the cells in order, ASCII rules against box drawing
        rows = [words[i : i + 3] for i in range(0, len(words), 3)]
        ascii_table = "\n".join("| " + " | ".join(r) + " |\n+-----+" for r in rows)
        box = "\n".join("│ " + " │ ".join(r) + " │\n├─────┤" for r in rows)
        return ascii_table, box
    if kind == "same words reordered":
        lines = [" ".join(words[i : i + 6]) for i in range(0, len(words), 6)]
        return "\n".join(lines), "\n".join(rng.sample(lines, len(lines)))
    if kind == "English under a Japanese heading":
        heading = "".join(rng.choice(han + list("のをにはがで")) for _ in range(rng.randint(3, 12)))
        body = " ".join(words)
        return f"1.{n}. {heading}\n\n{body}\n", f"1.{n}. {' '.join(rng.sample(vocabulary, 3))}\n\n{body}\n"
    edited = list(words)  # light edits, scattered
    for _ in range(rng.randint(0, max(1, len(words) // 10))):
        edited[rng.randrange(len(edited))] = rng.choice(vocabulary)
    return " ".join(words), " ".join(edited)


def test_dedup_pairs_exactly_the_pairs_the_definition_calls_near_duplicates(tmp_path):
    """Seeded families of each class, two texts each: dedup puts a family's pair together if and
    only if its shingle Jaccard (tests/helpers.py, from the definition) is at least 0.8, whatever
    its word counts say."""
    import json
    import random

    from click.testing import CliRunner
    from helpers import resemblance

    from simdedup.cli import cli

    rng = random.Random(29)
    kinds = [
        "re-punctuated Chinese",
        "table drawn two ways",
        "same words reordered",
        "English under a Japanese heading",
    ]
    expected, names = {}, {}
    for n in range(120):
        kind = kinds[n % 4] if n < 80 else "light edits"
        a, b = _family(rng, kind, n)
        for side, text in (("a", a), ("b", b)):
            (tmp_path / f"{n}{side}.txt").write_text(text, encoding="utf-8")
        expected[n] = resemblance(a, b) >= 0.8
        names[n] = kind
    result = CliRunner().invoke(cli, ["dedup", "--silent", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    together = set()
    for line in result.stdout.splitlines():
        members = {int(Path(m["id"]).stem[:-1]) for m in json.loads(line)["members"]}
        assert len(members) == 1  # no family meets another
        together |= members
    wrong = {n: names[n] for n in expected if (n in together) != expected[n]}
    assert not wrong
    assert 0 < sum(expected.values()) < len(expected)  # both verdicts occur
