"""The measuring side of ``make eval`` / ``make eval-data``: exact gold, splitting, scoring."""

import itertools
import json
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import eval_data  # noqa: E402
import gold  # noqa: E402
import scoring  # noqa: E402

shingle_sets = st.lists(st.sets(st.integers(0, 12).map(str), max_size=10), max_size=14)


def brute_force(sets, threshold):
    return [
        (i, j, len(a & b), len(a | b))
        for (i, a), (j, b) in itertools.combinations(enumerate(sets), 2)
        if a | b and gold.at_least(len(a & b), len(a | b), threshold)
    ]


@settings(max_examples=300, deadline=None)
@given(shingle_sets, st.sampled_from([Fraction(7, 10), Fraction(4, 5), Fraction(1, 2), Fraction(1, 1)]))
def test_similar_pairs_is_every_pair_at_the_threshold(sets, threshold):
    assert gold.similar_pairs(sets, threshold) == brute_force(sets, threshold)


def test_similar_pairs_on_near_duplicate_texts():
    base = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat " * 3
    texts = [base, base.replace("lazy", "sleepy", 1), "completely different words that share nothing at all here"]
    sets = [gold.word3(t) for t in texts]
    assert gold.similar_pairs(sets) == brute_force(sets, gold.NEAR_MISS)
    assert [(i, j) for i, j, *_ in gold.similar_pairs(sets)] == [(0, 1)]


def test_shingles_follow_the_gold_definitions():
    assert gold.word3("Ｆｏｏ bar, BAZ qux") == {"foo bar baz", "bar baz qux"}  # NFKC, lowercase, \w+ runs
    # whitespace deleted, punctuation kept (NFKC folds the full-width comma to ASCII)
    assert gold.char5("中文 文档，\n好") == {"中文文档,", "文文档,好"}
    assert gold.by_language("中文文档写得很好") == gold.char5("中文文档写得很好")
    assert gold.by_language("plain english words here") == gold.word3("plain english words here")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["## Heading\n", "text line\n", "\n", "```\n", "# Title\n", "x" * 700 + "\n", "长" * 300 + "\n"]
        ),
        max_size=80,
    )
)
def test_split_parts_fit_and_keep_every_word(lines):
    text = eval_data.clean("".join(lines) or "empty\n")
    parts = eval_data.split_document(text, "md")
    assert all(len(part.encode()) <= eval_data.MAX_BYTES for part in parts)
    assert re.findall(r"\w+", "".join(parts)) == re.findall(r"\w+", text)


def write_set(folder: Path, gold_pairs):
    (folder / "docs").mkdir(parents=True)
    for doc in "abcde":
        (folder / "docs" / f"{doc}.txt").write_text(doc)
    folder.joinpath("pairs.jsonl").write_text(
        "".join(
            json.dumps({"a": a, "b": b, "dup": dup, "inter": 1, "union": 1, "sim": 1.0}) + "\n"
            for a, b, dup in gold_pairs
        )
    )


def test_score_counts_implied_pairs_and_closure(tmp_path):
    write_set(tmp_path, [("a", "b", True), ("b", "c", True), ("d", "e", False)])
    result = scoring.score(tmp_path, [["a", "b", "c"], ["d", "e"]])
    # 4 implied pairs (ab ac bc de), 2 of them gold; the closure {a, b, c} has 3 pairs, all implied
    assert (result["precision"], result["recall"]) == (0.5, 1.0)
    assert result["closure_f1"] == pytest.approx(2 * 0.75 * 1.0 / 1.75)
    assert (result["clusters"], result["largest_cluster"], result["gold_pairs"]) == (2, 3, 2)


SHARED = Path(os.environ.get("SIMDEDUP_EVAL", ROOT.parent / "shared" / "eval"))


@pytest.mark.skipif(not (SHARED / "score.py").exists(), reason="the team's shared sets are not here")
def test_score_agrees_with_the_shared_scorer(tmp_path):
    folder = SHARED / "dev-zh"
    ids = sorted(p.stem for p in (folder / "docs").iterdir())
    pairs = scoring.gold_pairs(folder)
    clusters = [[a, b] for a, b in pairs[::2]] + [ids[:3]]  # half the gold, plus a wrong cluster
    predicted = tmp_path / "clusters.jsonl"
    predicted.write_text("".join(json.dumps({"members": c}) + "\n" for c in clusters))
    shared = json.loads(
        subprocess.run(
            [sys.executable, str(SHARED / "score.py"), str(folder), str(predicted), "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    ours = scoring.score(folder, scoring.read_clusters(predicted))
    for key in ("precision", "recall", "f1", "closure_f1"):
        assert round(ours[key], 4) == shared[key]
    assert (ours["largest_cluster"], ours["gold_pairs"]) == (shared["largest_cluster"], shared["gold_pairs"])
