"""The similarity measures (bag, resemblance, combined), exact verification in dedup and
explain, and the sketch-band candidates: against brute force over Python sets."""

from __future__ import annotations

import functools
import itertools
import json
import random
import re
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import compared_shingles, resemblance
from hypothesis import given, settings
from hypothesis import strategies as st

import simdedup
from simdedup import shingle_sketch, similarity
from simdedup.cli import cli
from simdedup.kernels import load
from simdedup.kernels.exact import ExactKernel
from simdedup.options import ClusterOptions
from simdedup.similarity import ExactIndex, KeptText, exact_sets, passes

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
WORDS = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


@functools.lru_cache(maxsize=4096)  # the references ask again for each pair of a text
def _word_counts(text: str) -> Counter:
    return Counter(WORDS.findall(text.lower()))


def brute_bag(a: str, b: str) -> float:
    ca, cb = _word_counts(a), _word_counts(b)
    keys = ca.keys() | cb.keys()
    return sum(min(ca[k], cb[k]) for k in keys) / sum(max(ca[k], cb[k]) for k in keys)


def brute_resemblance(a: str, b: str) -> float:
    return resemblance(a, b)


ALPHABET = st.sampled_from(list("abcAB 中文字，。!?-+|─│\n_1é") + ["ab ", "cd ", "中文 "])
TEXTS = st.lists(ALPHABET, min_size=1, max_size=40).map("".join).filter(lambda t: WORDS.search(t) is not None)


FORMS = st.sampled_from(["sets", "text", "utf-8", "none", "no words"])


def as_given(text: str, form: str):
    """A document as ExactIndex takes it: its sets, or its kept text (str, or UTF-8) that the
    index makes them from in its own arrays; or a document without sets (none, or a kept text
    without a word)."""
    if form == "none":
        return None
    if form == "no words":
        return KeptText(" ,\u3002 ")
    return exact_sets(text) if form == "sets" else KeptText(text if form == "text" else text.encode())


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXTS, min_size=2, max_size=6), st.data())
def test_exact_measures_equal_brute_force(texts, data):
    """Whether the index is given the sets or the texts (then made in place, several at a time,
    in shared arrays: runs written past their end and then overwritten by the next), the texts
    made together in batches of any size, documents without sets among them."""
    forms = data.draw(st.lists(FORMS, min_size=len(texts), max_size=len(texts)))
    batch = data.draw(st.sampled_from([1, 8, 64, similarity.TEXTS_BYTES]))
    kept, similarity.TEXTS_BYTES = similarity.TEXTS_BYTES, batch
    try:
        index = ExactIndex(as_given(t, f) for t, f in zip(texts, forms))
    finally:
        similarity.TEXTS_BYTES = kept
    pairs = data.draw(
        st.lists(st.tuples(st.integers(0, len(texts) - 1), st.integers(0, len(texts) - 1)), min_size=1, max_size=10)
    )
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    bag, grams = index.jaccard("bag", a, b), index.jaccard("grams", a, b)
    assert index.has.tolist() == [f not in ("none", "no words") for f in forms]
    for (i, j), x, y in zip(pairs, bag.tolist(), grams.tolist()):
        if not (index.has[i] and index.has[j]):
            assert np.isnan(x) and np.isnan(y)
            continue
        assert x == pytest.approx(brute_bag(texts[i], texts[j]))
        assert y == pytest.approx(brute_resemblance(texts[i], texts[j]))


def test_an_index_whose_arrays_grow_while_texts_are_added_measures_the_same(monkeypatch):
    """The arrays start small here, so they move as they grow while texts are written into
    them at the addresses the index keeps: the measures are those of brute force."""
    r = random.Random(4)
    vocab = ["ab", "cd", "中", "文", "é1", ",", "─", "x"]
    texts = [" ".join(r.choice(vocab) for _ in range(r.randrange(1, 300))) for _ in range(60)]
    monkeypatch.setattr(similarity, "START_BYTES", 64)
    index = ExactIndex(as_given(t, ("sets", "text", "utf-8")[i % 3]) for i, t in enumerate(texts))
    assert len(index.kinds["grams"][0]) > 64
    a, b = np.arange(59), np.arange(1, 60)
    for i, j, x, y in zip(
        a.tolist(), b.tolist(), index.jaccard("bag", a, b).tolist(), index.jaccard("grams", a, b).tolist()
    ):
        assert x == pytest.approx(brute_bag(texts[i], texts[j]))
        assert y == pytest.approx(brute_resemblance(texts[i], texts[j]))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(100, 3000),
    st.lists(st.integers(0, 400), min_size=1, max_size=5),
    st.randoms(use_true_random=False),
    st.sampled_from(["combined", "bag", "resemblance"]),
    st.data(),
)
def test_verdicts_that_stop_merging_early_are_those_of_the_whole_measures(length, edits, rng, measure, data):
    """Long texts (the merge stops early only after 64 steps) that are edits of one another,
    against thresholds drawn around their exact measures, the measures themselves among them
    (a pair exactly at a threshold passes)."""
    vocabulary = [f"w{i}" for i in range(rng.randint(5, 300))] + [",", "."]
    base = [rng.choice(vocabulary) for _ in range(length)]
    texts = [" ".join(base)]
    for count in edits:
        copy = list(base)
        for _ in range(count):
            copy[rng.randrange(len(copy))] = rng.choice(vocabulary)
        texts.append(" ".join(copy))
    index = ExactIndex([exact_sets(t) for t in texts])
    a, b = np.triu_indices(len(texts), 1)
    bag, grams = index.measures(a, b)
    pick = st.sampled_from([*bag.tolist(), *grams.tolist(), 0.5, 0.8, 0.88, 0.95]).map(
        lambda x: data.draw(st.sampled_from([x, np.nextafter(x, 2.0), np.nextafter(x, -1.0)]))
    )
    min_similarity, min_resemblance = data.draw(pick), data.draw(pick)
    known, ok = index.verdicts(a, b, measure, min_similarity, min_resemblance)
    fewer = index.shingles(a, b)  # a pair with fewer shingles needs more (similarity.needed)
    assert known.all()
    assert ok.tolist() == passes(measure, bag, grams, min_similarity, min_resemblance, fewer).tolist()


def test_no_word_token_has_no_sets():
    assert exact_sets("  ,.!  \n") is None
    index = ExactIndex([exact_sets("some words here"), None])
    assert np.isnan(index.jaccard("bag", [0], [1])[0])
    texts = ["one two", "  ,.!  \n", "", "one two three", "a\udcffb"]
    index = ExactIndex(KeptText(t) for t in texts)
    assert index.has.tolist() == [True, False, False, True, True]
    assert index.jaccard("bag", [0, 0, 4], [3, 1, 4]).tolist()[0] == pytest.approx(2 / 3)
    assert np.isnan(index.jaccard("bag", [0], [1])[0]) and index.jaccard("bag", [4], [4]).tolist() == [1.0]


@pytest.mark.parametrize("lowercase", [True, False])
def test_the_exact_tables_read_from_the_cache_are_those_made(tmp_path, monkeypatch, lowercase):
    """Kept once, read back by later runs; a damaged file is made again, never used. (The
    process's own tables, whose address the kernels keep, are left as they are.)"""
    monkeypatch.setattr("simdedup.cache.cache_dirs", lambda: [tmp_path])
    tables = similarity._tables.__wrapped__  # not the process's cached ones
    made = similarity._made_tables(lowercase)
    assert (tables(lowercase) == made).all()  # made, then kept
    (kept,) = tmp_path.glob(f"exact-table-{int(lowercase)}-*")
    assert (tables(lowercase) == made).all()  # read back
    kept.write_bytes(kept.read_bytes()[:-4] + b"\xff\xff\xff\xff")
    assert (tables(lowercase) == made).all()  # damaged: made again
    assert made[ord("A")] >> 2 == (ord("a") if lowercase else ord("A")) and made[ord("A")] & 3 == 1
    assert made[ord("\u4e2d")] & 3 == 2 and made[ord(",")] & 3 == 3 and made[ord(" ")] & 3 == 0


def test_a_text_not_in_utf8_raises_the_decoders_error():
    with pytest.raises(UnicodeDecodeError):
        ExactIndex([KeptText("fine"), KeptText(b"bad \xff byte")])


def test_clusters_that_let_the_texts_go_are_those_that_keep_them(tmp_path):
    """dedup hands its texts over to be let go as they are measured: the same clusters."""
    from simdedup.fingerprints import collect_records
    from simdedup.group import cluster_fingerprints
    from simdedup.methods import make_method
    from simdedup.options import ClusterOptions

    r = random.Random(5)
    base = lines_of_words(7, 40)
    for i in range(12):
        copy = [line if r.random() > 0.04 * (i % 4) else "changed words here now" for line in base]
        (tmp_path / f"d{i:02}.txt").write_text("\n".join(copy if i % 3 else r.sample(copy, len(copy))))
    (tmp_path / "other.txt").write_text("\n".join(lines_of_words(8, 40)))
    method = make_method("simhash")
    method.verify_exactly()
    found = []
    for release in (False, True):
        fingerprints = collect_records(simdedup.fingerprint([str(tmp_path)], method))
        options = ClusterOptions().for_fingerprints(fingerprints)
        clusters = cluster_fingerprints(fingerprints, options, release_texts=release)
        assert (fingerprints.exact is None) == release
        found.append([(c.members, c.scores, c.measured) for c in clusters])
    assert found[0] == found[1]
    ((members, _, _),) = found[0]  # some of the copies: the most edited and shuffled fail
    assert 3 <= len(members) < 13


def lines_of_words(seed: int, n: int = 60) -> list[str]:
    r = random.Random(seed)
    vocab = [f"w{r.randrange(10**6)}" for _ in range(400)]
    return [" ".join(r.choice(vocab) for _ in range(6)) for _ in range(n)]


def dedup(paths, *options) -> list[dict]:
    result = CliRunner().invoke(cli, ["dedup", *map(str, options), *map(str, paths)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_reordered_text_is_not_a_duplicate_by_default(tmp_path):
    lines = lines_of_words(1)
    shuffled = lines[:]
    random.Random(2).shuffle(shuffled)
    words = " ".join(lines).split()
    random.Random(3).shuffle(words)
    a, b, c = tmp_path / "a.txt", tmp_path / "lines.txt", tmp_path / "words.txt"
    a.write_text("\n".join(lines))
    b.write_text("\n".join(shuffled))  # same lines, other order: half the 3-grams kept
    c.write_text(" ".join(words))  # same words, no order left
    # Same words, half the 3-grams: far below what edits scattered over the words would leave
    # (similarity.scattered_resemblance(1.0) == 1), so the bag path does not take the lines either
    assert dedup([a, b, c]) == []
    as_bags = dedup([a, b, c], "--similarity", "bag")
    assert [[m["id"] for m in r["members"]] for r in as_bags] == [[str(a), str(b), str(c)]]


def test_punctuation_and_table_drawing_count_for_resemblance(tmp_path):
    rows = ["名称", "类型", "默认值", "说明", "尺寸", "字符串", "中等", "组件大小"] * 3
    boxed = "\n".join(f"│{x}│{y}│" for x, y in zip(rows, rows[1:]))
    ascii_ = "\n".join(f"|{x}|{y}|" for x, y in zip(rows, rows[1:])).replace("|", "+--|")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(boxed, encoding="utf-8")
    b.write_text(ascii_, encoding="utf-8")
    assert brute_bag(boxed, ascii_) == 1.0 and brute_resemblance(boxed, ascii_) < 0.5
    assert dedup([a, b]) == []
    assert dedup([a, b], "--similarity", "resemblance") == []
    assert len(dedup([a, b], "--similarity", "bag")) == 1


def test_explain_shows_every_measure(tmp_path):
    lines = lines_of_words(4)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(lines))
    b.write_text("\n".join(reversed(lines)))
    text_a, text_b = a.read_text(), b.read_text()
    result = CliRunner().invoke(cli, ["explain", "--json", str(a), str(b)])
    assert result.exit_code == 0
    got = json.loads(result.stdout)
    assert got["bag"] == round(brute_bag(text_a, text_b), 3) == 1.0
    assert got["resemblance"] == round(brute_resemblance(text_a, text_b), 3)
    assert abs(got["resemblance_estimate"] - got["resemblance"]) < 0.1
    text = CliRunner().invoke(cli, ["explain", str(a), str(b)]).stdout
    assert f"resemblance: Jaccard of the word 3-grams, exactly (dedup): {got['resemblance']:.3f}" in text
    assert f"bag: exact weighted Jaccard of the features (not what decides): {got['bag']:.3f}" in text
    assert got["shingles"] == "word 3-grams"


def test_dedup_output_is_the_same_at_any_jobs(tmp_path):
    base = lines_of_words(5, 200)
    for i in range(12):
        r = random.Random(i)
        doc = base[:]
        for _ in range(i):
            doc[r.randrange(len(doc))] = " ".join(lines_of_words(100 + i, 1))
        (tmp_path / f"d{i:02}.txt").write_text("\n".join(doc))
    one = CliRunner().invoke(cli, ["dedup", "-j", "1", str(tmp_path)]).stdout
    two = CliRunner().invoke(cli, ["dedup", "-j", "2", str(tmp_path)]).stdout
    assert one == two and one


def test_an_explicit_k_is_the_whole_candidate_search(tmp_path):
    """By default pairs that share a band of their sketches are candidates too; with -k only
    the pairs within k bits are (here -k 0: exact fingerprint copies only)."""
    base = lines_of_words(6, 100)
    near = base[:]
    near[3] = "changed line here now"
    (tmp_path / "a.txt").write_text("\n".join(base))
    (tmp_path / "b.txt").write_text("\n".join(near))
    assert len(dedup([tmp_path])) == 1
    assert dedup([tmp_path], "-k", "0") == []


def test_verify_sketch_is_what_cluster_does_on_stored_fingerprints(tmp_path):
    """Both estimate the resemblance from the sketches of shingles: a near copy passes, the
    same words in another order do not (their bag would)."""
    words = " ".join(lines_of_words(7)).split()
    (tmp_path / "a.txt").write_text(" ".join(words))
    (tmp_path / "b.txt").write_text(" ".join(words[:-1]))
    (tmp_path / "c.txt").write_text(" ".join(sorted(words)))  # same words, no order left
    runner = CliRunner()
    fingerprints = runner.invoke(cli, ["fingerprint", str(tmp_path)]).stdout
    clustered = runner.invoke(cli, ["cluster"], input=fingerprints).stdout
    assert runner.invoke(cli, ["dedup", "--verify", "sketch", str(tmp_path)]).stdout == clustered
    assert [[m["id"] for m in json.loads(line)["members"]] for line in clustered.splitlines()] == [
        [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    ]
    assert '"resemblance_estimate":' in clustered


def test_exact_verification_runs_without_importing_numba(tmp_path):
    """A fresh process verifies exactly from the kept machine code, without numba (0.25 s to
    import, and its cache of each kernel more), and finds what this process finds."""
    import subprocess
    import sys

    words = " ".join(lines_of_words(7)).split()
    (tmp_path / "a.txt").write_text(" ".join(words))
    (tmp_path / "b.txt").write_text(" ".join(words[:-1]))
    (tmp_path / "c.txt").write_text(" ".join(sorted(words)))  # same words, other 3-grams
    expected = [sorted(c) for c in simdedup.dedup(str(tmp_path))]  # kernels compiled and kept by now
    code = (
        f"import sys, simdedup; print([sorted(c) for c in simdedup.dedup({str(tmp_path)!r})], 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert expected == [[str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]]
    assert out == f"{expected} False\n"


def test_without_the_exact_kernels_dedup_says_so_and_verifies_with_sketches(tmp_path, monkeypatch):
    words = " ".join(lines_of_words(7)).split()
    (tmp_path / "a.txt").write_text(" ".join(words))
    (tmp_path / "b.txt").write_text(" ".join(words[:-2]))
    monkeypatch.setitem(load._loaded, ExactKernel, False)  # as when numba or llvmlite cannot make them
    for tokenizer in ("words", "whitespace"):  # every tokenizer's texts are measured
        result = CliRunner().invoke(cli, ["dedup", "--tokenizer", tokenizer, str(tmp_path)])
        assert result.exit_code == 0
        assert "the sketches verify instead" in result.stderr
        sketched = CliRunner().invoke(cli, ["dedup", "--tokenizer", tokenizer, "--verify", "sketch", str(tmp_path)])
        assert result.stdout == sketched.stdout != ""


VOCABULARY = "the a of file option page see value name list".split()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, len(VOCABULARY) - 1), min_size=1, max_size=80), min_size=2, max_size=30),
    st.sampled_from([2, 16, similarity.BOUND_BUCKETS]),
    st.integers(1, 200),
)
def test_upper_bounds_are_never_below_the_exact_measures(docs, buckets, limit):
    """Whatever the buckets, and for documents of ``limit`` elements or more, which have no
    counts (as beyond 65,535, where they could overflow)."""
    texts = [" ".join(VOCABULARY[i] for i in doc) for doc in docs]  # few words, many repeats
    index = ExactIndex([exact_sets(t) for t in texts])
    a, b = np.triu_indices(len(texts))
    for kind in ("bag", "grams"):
        exact, bound = index.jaccard(kind, a, b), index.upper_bounds(kind, a, b)
        assert (bound >= exact).all()
        assert (bound[a == b] == 1.0).all()
        hashes, weights, offsets, totals = index.kinds[kind]
        units = np.arange(len(totals))  # grams: two runs a document, each a document of its own
        counts = index_kernel().bucket_counts((hashes, weights, offsets), units, kind == "bag", totals, buckets, limit)
        small = totals < limit
        assert (counts[small].sum(axis=1) == totals[small]).all()
        x, y = index.shingle_runs(a, b) if kind == "grams" else (a, b)
        limited = index_kernel().bucket_bounded(counts, totals, x, y, limit)
        assert (limited >= exact).all() and (limited[a == b] == 1.0).all()


def test_upper_bounds_settle_pairs_that_share_frequent_words_but_not_rare_ones():
    """Pages of one template (the same 60 frequent words) each with its own 60 rare words: the
    bound sees that they share half their words, not all."""
    template = " ".join(f"common{i}" for i in range(60))
    texts = [template + " " + " ".join(f"rare{page}x{i}" for i in range(60)) for page in range(10)]
    index = ExactIndex([exact_sets(t) for t in texts])
    a, b = np.triu_indices(len(texts), 1)
    bound = index.upper_bounds("bag", a, b)
    assert (bound >= index.jaccard("bag", a, b)).all() and (bound < 0.88).all()


def test_bounds_of_many_documents_take_fewer_buckets_and_still_hold(monkeypatch):
    """The counts of one kind stay within BOUND_BYTES: here 2 buckets for 10 documents."""
    monkeypatch.setattr(similarity, "BOUND_BYTES", 2 * 2 * 10 + 3)
    texts = [" ".join(VOCABULARY[(i * j) % len(VOCABULARY)] for j in range(12 + i)) for i in range(10)]
    index = ExactIndex([exact_sets(t) for t in texts])
    a, b = np.triu_indices(len(texts))
    for kind in ("bag", "grams"):
        assert (index.upper_bounds(kind, a, b) >= index.jaccard(kind, a, b)).all()
        assert index._buckets[kind][1].shape == ((10, 2) if kind == "bag" else (20, 2))  # grams: two runs a document


def index_kernel():
    return similarity.exact_kernel()


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10**6),
    st.lists(st.integers(0, 30), min_size=12, max_size=16),
    st.sampled_from(["combined", "bag", "resemblance"]),
    st.sampled_from(["", "中文字，", "Ab é_1 "]),
)
def test_verdicts_the_bounds_settle_are_those_the_merges_give(seed, edits, measure, script):
    """A family of edited copies of one page (Latin, CJK or mixed words; some pairs pass, some
    fail near the thresholds): the verdicts of every pair, with the pairs the upper bounds
    settle left unmerged, are the verdicts of all pairs merged."""
    from simdedup.verify import PairTest

    r = random.Random(seed)
    base = [
        w + script[i % len(script)] if script else w for i, w in enumerate(" ".join(lines_of_words(seed, 20)).split())
    ]
    texts = []
    for n in edits:
        words = base[:]
        for at in r.sample(range(len(words)), n):
            words[at] = f"edit{r.randrange(50)}"
        texts.append(" ".join(words))
    index = ExactIndex([KeptText(t) for t in texts])
    a, b = (x.astype(np.int64) for x in np.triu_indices(len(texts), 1))
    fps = np.zeros((len(texts), 1), dtype=np.uint64)
    sketches = np.zeros((len(texts), 16), dtype=np.uint8)
    found = {}
    for name, after in (("bounded", 0), ("merged", 10**12)):
        previous, similarity.BOUND_AFTER_PAIRS = similarity.BOUND_AFTER_PAIRS, after
        try:
            fresh = ExactIndex([KeptText(t) for t in texts])
            test = PairTest(
                fps, sketches, ClusterOptions(k=31, similarity=measure).resolve(64, "features", texts=True), fresh
            )
            ok = test.passes(a, b)
            found[name] = ok, test.scores(a[ok], b[ok])[0]
            assert bool(fresh._buckets) == (after == 0)
        finally:
            similarity.BOUND_AFTER_PAIRS = previous
    (ok, scores), (all_ok, all_scores) = found["bounded"], found["merged"]
    assert ok.tolist() == all_ok.tolist()
    quantity = "bag" if measure == "bag" else "grams"
    assert scores.tolist() == all_scores.tolist() == index.jaccard(quantity, a[ok], b[ok]).tolist()


def test_bounds_leave_dedup_output_unchanged(tmp_path, monkeypatch):
    """A template family: 120 versions of one page, each with up to 40 of its 200 lines
    replaced, so that most of its 7,140 candidate pairs fail. The pairs the bounds settle
    must be settled as the merges settle them."""
    base = lines_of_words(8, 200)
    for i in range(120):
        r = random.Random(i)
        doc = base[:]
        for line in r.sample(range(len(doc)), r.randrange(41)):
            doc[line] = " ".join(lines_of_words(1000 * i + line, 1))
        (tmp_path / f"page{i:03}.txt").write_text("\n".join(doc))
    bound_calls = []
    upper_bounds = similarity.ExactIndex.upper_bounds
    monkeypatch.setattr(
        similarity.ExactIndex,
        "upper_bounds",
        lambda self, *args: bound_calls.append(len(args[1])) or upper_bounds(self, *args),
    )
    runner = CliRunner()
    for linkage in ("complete", "single"):
        bounded = runner.invoke(cli, ["dedup", "-k", "30", "--linkage", linkage, str(tmp_path)]).stdout
        assert max(bound_calls) >= similarity.BOUND_AFTER_PAIRS
        with monkeypatch.context() as unbounded:
            unbounded.setattr(similarity, "BOUND_AFTER_PAIRS", 10**12)
            bound_calls.clear()
            merged = runner.invoke(cli, ["dedup", "-k", "30", "--linkage", linkage, str(tmp_path)]).stdout
            assert bound_calls == []
        clustered = sum(json.loads(line)["size"] for line in bounded.splitlines())
        assert bounded == merged and 0 < clustered < 120, linkage


def test_a_copy_whose_words_repeat_more_is_found_on_its_3grams(tmp_path):
    """Repeated words weigh in the bag similarity, not in the set of 3-grams: a page and its
    copy with one line repeated many times pass on resemblance, however low the sketches'
    estimate of their bag similarity is."""
    lines = lines_of_words(9, 80)
    page, copy = "\n".join(lines), "\n".join(lines + [lines[0]] * 120)
    assert brute_bag(page, copy) < 0.5 < 0.95 < brute_resemblance(page, copy)
    (tmp_path / "page.txt").write_text(page)
    (tmp_path / "copy.txt").write_text(copy)
    assert [[m["id"] for m in r["members"]] for r in dedup([tmp_path])] == [
        [str(tmp_path / "copy.txt"), str(tmp_path / "page.txt")]
    ]
    assert dedup([tmp_path], "--similarity", "bag") == []


def literal_complete_linkage(ids, fps, k, sketches, kept, measure, min_similarity, min_resemblance, sketch_of):
    """Complete linkage by its definition, every pair across tested at every edge: candidates
    within k, verified exactly (brute force) where both texts are kept, else by the sketches'
    estimate (of the resemblance for sketches of shingles, of the bag for sketches of features);
    edges in the order of the sketches' estimate, the highest first, ties by the smaller id first."""
    from simdedup.similarity import BAG_MARGIN, EVIDENCE_GRAMS
    from simdedup.sketch import similarity

    n = len(ids)

    @functools.cache
    def estimated(a, b):
        if sketch_of == "shingles":
            return float(shingle_sketch.resemblance(sketches, np.array([a]), np.array([b]))[0])
        return similarity(bytes(sketches[a]), bytes(sketches[b]))

    @functools.cache
    def measured(a, b):
        return brute_bag(kept[a], kept[b]), brute_resemblance(kept[a], kept[b])

    def passes(a, b):
        a, b = min(a, b), max(a, b)
        if kept[a] is None or kept[b] is None:
            return estimated(a, b) >= (min_resemblance if sketch_of == "shingles" else min_similarity)
        bag, grams = measured(a, b)
        if measure == "bag":
            return bag >= min_similarity
        fewer = min(map(len, compared_shingles(kept[a], kept[b])))

        def needed(threshold):  # a short pair needs more: 1 - (1 - t) * n / (n + EVIDENCE_GRAMS)
            return 1 - (1 - threshold) * fewer / (fewer + EVIDENCE_GRAMS)

        if measure == "resemblance":
            return grams >= needed(min_resemblance)

        scattered = (2 * bag / (1 + bag)) ** 3  # the 3-grams scattered substitutions leave
        return grams >= needed(min_resemblance) or (
            bag >= min_similarity and grams >= needed(scattered / (2 - scattered) - BAG_MARGIN)
        )

    rank = {d: r for r, d in enumerate(sorted(range(n), key=ids.__getitem__))}
    edges = [
        (a, b)
        for a, b in itertools.combinations(range(n), 2)
        if bin(int(fps[a, 0]) ^ int(fps[b, 0])).count("1") <= k and passes(a, b)
    ]
    edges.sort(key=lambda e: (-round(estimated(*e), 12), rank[e[0]], rank[e[1]]))
    cluster_of = {d: frozenset([d]) for d in range(n)}
    for a, b in edges:
        x, y = cluster_of[a], cluster_of[b]
        if x != y and all(passes(u, v) for u in x for v in y):
            for d in x | y:
                cluster_of[d] = x | y
    return sorted(tuple(sorted(c, key=ids.__getitem__)) for c in set(cluster_of.values()) if len(c) > 1)


@pytest.mark.parametrize("sketch_of", ["shingles", "features"])
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("measure", ["combined", "bag", "resemblance"])
def test_exact_complete_linkage_compiled_and_python_match_the_definition(
    tmp_path, monkeypatch, measure, seed, sketch_of
):
    """Complete linkage with exact verification, compiled and in Python, against its literal
    definition, on a template family with edited, reordered and padded copies, where one
    document in five has no kept text (verified on its sketch, of either kind)."""
    import simdedup
    from simdedup import group, linkage

    rng = random.Random(seed)
    base = lines_of_words(10 + seed, 60)
    texts = []
    for i in range(40):
        doc = base[:]
        for line in rng.sample(range(len(doc)), rng.randrange(12)):
            doc[line] = " ".join(lines_of_words(5000 + 100 * i + line, 1))
        kind = rng.randrange(4)
        if kind == 1:
            rng.shuffle(doc)  # the same words: passes on words, not on 3-grams
        elif kind == 2:
            doc += [doc[0]] * 30  # repeats: passes on 3-grams, not on words
        texts.append("\n".join(doc))
        (tmp_path / f"p{i:02}.txt").write_text(texts[-1])
    records = list(simdedup.fingerprint([str(tmp_path)], sketch_of=sketch_of))
    ids = [r.id for r in records]
    fps = np.array([[r.simhash] for r in records], dtype=np.uint64)
    sketches = np.array([np.frombuffer(r.sketch, dtype=np.uint8) for r in records])
    texts = [(tmp_path / f"p{i:02}.txt").read_text() for i in range(len(ids))]
    kept = [None if i % 5 == 0 else text for i, text in enumerate(texts)]

    def clusters(after: int) -> list[tuple[int, ...]]:
        monkeypatch.setattr(linkage, "KERNEL_AFTER_EDGES", after)
        found = group.find_clusters(
            ids,
            fps,
            ClusterOptions(k=31, similarity=measure),
            sketches=sketches,
            sketch_of=sketch_of,
            exact=[None if t is None else KeptText(t) for t in kept],
        )
        return sorted(c.members for c in found)

    expected = literal_complete_linkage(ids, fps, 31, sketches, kept, measure, 0.88, 0.8, sketch_of)
    assert clusters(0) == expected == clusters(10**9)
    assert expected and sum(map(len, expected)) < 40  # some join, some do not
