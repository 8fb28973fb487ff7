"""``--fold chinese``: traditional characters read as simplified ones (OpenCC's tables) and CJK
punctuation as ASCII, in the resemblance's shingles (exact and sketched) and its words; opt-in,
recorded in every record, refused where there is no text to fold."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.similarity import CHINESE_PUNCTUATION, FOLD_CASE, FOLD_CHINESE, ExactIndex, KeptText, chinese_folds

pytest.importorskip("opencc")

FOLDS = chinese_folds()
TRADITIONAL = sorted(c for c in FOLDS if c not in CHINESE_PUNCTUATION)
SIMPLIFIED_ONLY = "的一是不了人我在有他中大上个到说们为和你地出道也时年得就那要下以生会"


def test_opencc_folds_thousands_of_characters_and_leaves_simplified_ones():
    import opencc

    assert len(TRADITIONAL) > 3000
    assert FOLDS["國"] == "国" and FOLDS["說"] == "说" and FOLDS["裡"] == "里"
    t2s = opencc.OpenCC("t2s")
    for c in random.Random(1).sample(TRADITIONAL, 200):  # each agrees with OpenCC's own t2s, or its variants
        assert t2s.convert(c) in (FOLDS[c], c)
    assert not any(c in FOLDS for c in "国说里这个们")  # simplified characters stay


def test_folding_twice_is_folding_once():
    """A folded text reads as itself folded again, for every character the tables change (麼 as
    么 and 么 as 幺 once made a text and its folded copy two texts)."""
    assert all(FOLDS.get(folded, folded) == folded for folded in FOLDS.values())


def _resemblance(a: str, b: str, folding: int) -> float:
    index = ExactIndex([KeptText(a, folding), KeptText(b, folding)])
    return float(index.jaccard("grams", [0], [1])[0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(TRADITIONAL + list(SIMPLIFIED_ONLY)), min_size=30, max_size=300),
    st.lists(st.sampled_from(sorted(CHINESE_PUNCTUATION)), max_size=20),
    st.randoms(use_true_random=False),
)
def test_a_text_and_its_simplified_and_repunctuated_copy_are_one_text_folded(chars, marks, rng):
    text = list(chars)
    for mark in marks:
        text.insert(rng.randrange(len(text) + 1), mark)
    traditional = "".join(text)
    simplified = "".join(FOLDS.get(c, c) for c in traditional)  # what folding reads both as
    assert _resemblance(traditional, simplified, FOLD_CASE | FOLD_CHINESE) == 1.0
    if traditional != simplified:
        assert _resemblance(traditional, simplified, FOLD_CASE) < 1.0  # off by default


@pytest.fixture
def pair(tmp_path):
    """A Chinese text, and its copy in traditional characters with full stops and commas of ASCII."""
    rng = random.Random(7)
    traditional = "".join(rng.choice(TRADITIONAL[:800] + list(SIMPLIFIED_ONLY)) for _ in range(600))
    simplified = "".join(FOLDS.get(c, c) for c in traditional)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cn.txt").write_text("。".join(simplified[i : i + 40] for i in range(0, 600, 40)))
    (tmp_path / "docs" / "tw.txt").write_text(".".join(traditional[i : i + 40] for i in range(0, 600, 40)))
    return tmp_path


def run(*args):
    done = CliRunner().invoke(cli, [str(a) for a in args])
    assert done.exit_code == 0, done.output
    return done.stdout


def test_every_path_finds_the_copy_only_when_asked(pair):
    docs = pair / "docs"
    assert run("dedup", "--silent", docs) == ""
    found = json.loads(run("dedup", "--silent", "--fold", "chinese", docs))
    assert found["size"] == 2 and found["min_resemblance"] == 1.0
    records = run("fingerprint", "--silent", "--fold", "chinese", docs)
    assert all(json.loads(line)["fold"] == "chinese" for line in records.splitlines())
    (pair / "fp.jsonl").write_text(records)
    assert json.loads(run("cluster", pair / "fp.jsonl"))["size"] == 2
    (pair / "cn.jsonl").write_text(run("fingerprint", "--silent", "--fold", "chinese", docs / "cn.txt"))
    run("index", "create", pair / "idx", "--from", pair / "cn.jsonl", "-k", "3")
    assert run("index", "query", pair / "idx", docs / "tw.txt") == ""  # k = 3 alone: the features are not folded
    run("index", "create", pair / "idx30", "--from", pair / "cn.jsonl", "-k", "30")
    assert json.loads(run("index", "query", pair / "idx30", docs / "tw.txt"))["id"] == str(docs / "cn.txt")
    explained = run("explain", "--fold", "chinese", docs / "cn.txt", docs / "tw.txt")
    assert "exactly (dedup): 1.000" in explained


def test_records_folded_and_not_do_not_mix(pair):
    (pair / "a.jsonl").write_text(run("fingerprint", "--silent", "--fold", "chinese", pair / "docs" / "cn.txt"))
    (pair / "b.jsonl").write_text(run("fingerprint", "--silent", pair / "docs" / "tw.txt"))
    done = CliRunner().invoke(cli, ["cluster", str(pair / "a.jsonl"), str(pair / "b.jsonl")])
    assert done.exit_code != 0 and "fold" in done.stderr


@pytest.mark.parametrize(
    "args", [["--method", "nilsimsa"], ["--features-field", "words"], ["--method", "sentences"]], ids=str
)
def test_fold_is_refused_in_one_line_where_there_is_no_text_of_words(args, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"text": "一二三", "words": ["一", "二"]}) + "\n")
    done = CliRunner().invoke(cli, ["fingerprint", "--fold", "chinese", *args, str(data)])
    assert done.exit_code == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_without_opencc_the_fold_is_one_line_and_nothing_is_read(pair, monkeypatch):
    import importlib.metadata

    real = importlib.metadata.version

    def version(name):
        if name == "opencc":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    done = CliRunner().invoke(cli, ["dedup", "--fold", "chinese", str(pair / "docs")])
    assert done.exit_code == 1 and done.stderr.strip() == (
        "Error: --fold chinese needs OpenCC's tables: pip install 'simdedup[zh-fold]'"
    )
