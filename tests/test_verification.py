"""Sketches, verified candidates, linkage modes and the short-text rule."""

import io
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.errors import RecordError
from simdedup.fingerprints import read_fingerprint_files
from simdedup.group import find_clusters
from simdedup.options import ClusterOptions
from simdedup.pairs import as_words
from simdedup.simhash import Simhasher
from simdedup.sketch import decode, encode, make_sketch, pair_similarity, similarity
from simdedup.tokenizers import get_tokenizer


def weighted_jaccard(a: Counter, b: Counter) -> float:
    return sum((a & b).values()) / sum((a | b).values())


def sketch_of(counter: Counter, bins=128) -> bytes:
    fp = Simhasher(64, sketch_bins=bins)
    return fp(counter).sketch


def edited(rng, tokens, rate):
    out = list(tokens)
    for i in rng.sample(range(len(out)), int(rate * len(out))):
        out[i] = f"edit{rng.randrange(10**6)}"
    return out


@pytest.mark.parametrize("rate", [0.0, 0.02, 0.05, 0.1, 0.3, 0.6])
def test_sketch_estimates_weighted_jaccard(rate):
    rng = random.Random(int(rate * 100))
    errors = []
    for trial in range(20):
        base = [f"w{rng.randrange(800)}" for _ in range(600)]
        a, b = Counter(base), Counter(edited(rng, base, rate))
        errors.append(similarity(sketch_of(a), sketch_of(b)) - weighted_jaccard(a, b))
    errors = np.array(errors)
    assert abs(errors.mean()) < 0.03  # unbiased
    assert np.sqrt((errors**2).mean()) < 0.06  # about 0.03-0.04 expected with 128 bins


def test_counts_matter():
    # same set, different multiplicities: weighted Jaccard 3/5
    a = Counter({"x": 3, "y": 1})
    b = Counter({"x": 1, "y": 1})
    assert weighted_jaccard(a, b) == 0.5
    assert 0.2 < similarity(sketch_of(a, 512), sketch_of(b, 512)) < 0.8
    assert similarity(sketch_of(a), sketch_of(Counter(a))) == 1.0


def test_batched_expansion_equals_one_batch():
    rng = random.Random(5)
    hashes = np.array([rng.getrandbits(64) for _ in range(300)], dtype=np.uint64)
    counts = np.array([rng.randrange(1, 50) for _ in range(300)], dtype=np.int64)
    whole = make_sketch(hashes, counts)
    assert make_sketch(hashes, counts, expand_batch=37) == whole


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40, unique=True))
def test_sketch_properties(values):
    hashes = np.array(values, dtype=np.uint64)
    sk = make_sketch(hashes, None, 64)
    assert len(sk) == 64
    assert decode(encode(sk)) == sk
    # order of features does not matter
    assert make_sketch(hashes[::-1].copy(), None, 64) == sk
    other = make_sketch(hashes[: max(1, len(values) // 2)], None, 64)
    assert similarity(sk, other) == similarity(other, sk)
    assert similarity(sk, sk) == 1.0


def test_pair_similarity_matches_scalar():
    rng = random.Random(1)
    rows = np.array(
        [
            np.frombuffer(
                make_sketch(np.array([rng.getrandbits(64) for _ in range(50)], dtype=np.uint64), None), np.uint8
            )
            for _ in range(5)
        ]
    )
    left, right = np.array([0, 1, 2]), np.array([3, 4, 0])
    got = pair_similarity(rows, left, right)
    want = [similarity(rows[a].tobytes(), rows[b].tobytes()) for a, b in zip(left, right)]
    assert np.allclose(got, want)


def test_bad_bins():
    with pytest.raises(ValueError):
        make_sketch(np.zeros(1, dtype=np.uint64), None, 100)


# --- records --------------------------------------------------------------------------------

LINE = '{"id":"a","simhash":"00000000000000ff","bits":64,"features":3,"sketch":"%s"}'


def read_record(line: str, name: str = "f"):
    ((record,),) = read_fingerprint_files([(name, io.BytesIO(line.encode() + b"\n"))]).records()
    return record


def test_record_round_trip_with_sketch():
    sk = bytes(range(128))
    record = read_record(LINE % encode(sk))
    assert record.sketch == sk and record.settings["sketch"] == 128
    assert read_record(record.to_json()).sketch == sk


def test_bad_sketch_is_a_record_error():
    lines = "\n".join([LINE % encode(bytes(128))] * 6 + [LINE % "not base64 !!"])
    with pytest.raises(RecordError, match="f:7: field 'sketch'"):
        read_record(lines)


# --- verification and linkage ---------------------------------------------------------------


def docs_to_arrays(texts):
    tok = get_tokenizer("words")
    fp = Simhasher(64, sketch_bins=128)
    values, sketches, features = [], [], []
    for text in texts:
        f = tok.text_features(text)
        result = fp(f)
        values.append(result.simhash)
        sketches.append(np.frombuffer(result.sketch, np.uint8))
        features.append(len(f))
    return as_words(values, 64), np.array(sketches), np.array(features)


def clusters(ids, texts, **options):
    fps, sketches, features = docs_to_arrays(texts)
    # the library's options with the plain rule these tests were written for: single linkage,
    # the bag measure, no threshold unless given
    plain = {"k": 31, "linkage": "single", "similarity": "bag", "min_similarity": 0.0, "min_features": 0}
    found = find_clusters(ids, fps, ClusterOptions(**{**plain, **options}), sketches=sketches, features=features)
    return [[ids[m] for m in c.members] for c in found]


def chain(rng, length=5, size=400, rate=0.08):
    """Documents each ``rate`` of words away from the previous: neighbours similar, ends not."""
    tokens = [f"w{rng.randrange(10**6)}" for _ in range(size)]
    texts = [" ".join(tokens)]
    for _ in range(length - 1):
        tokens = edited(rng, tokens, rate)
        texts.append(" ".join(tokens))
    return texts


def test_complete_linkage_does_not_chain_but_single_does():
    texts = chain(random.Random(2))
    ids = [f"d{i}" for i in range(len(texts))]
    single = clusters(ids, texts, min_similarity=0.8, linkage="single")
    complete = clusters(ids, texts, min_similarity=0.8, linkage="complete")
    assert single == [ids]  # one chained cluster
    assert len(complete) >= 2
    # every pair inside a complete-linkage cluster is verified
    fps, sketches, _ = docs_to_arrays(texts)
    for group in complete:
        idx = [ids.index(g) for g in group]
        for a in idx:
            for b in idx:
                assert similarity(sketches[a].tobytes(), sketches[b].tobytes()) >= 0.8


def test_star_members_verified_against_centre():
    texts = chain(random.Random(3))
    ids = [f"d{i}" for i in range(len(texts))]
    star = clusters(ids, texts, min_similarity=0.8, linkage="star")
    assert all(len(g) <= 3 for g in star)  # a centre and at most its two neighbours


def test_verification_rejects_dissimilar_candidates():
    rng = random.Random(4)
    a = " ".join(f"w{rng.randrange(10**6)}" for _ in range(300))
    b = " ".join(f"w{rng.randrange(10**6)}" for _ in range(300))
    # k = 31 makes most pairs candidates; the sketch must refuse the unrelated one
    assert clusters(["a", "b", "c"], [a, b, a + " extra"], min_similarity=0.87) == [["a", "c"]]
    # with no threshold, a candidate (here: one whose fingerprints are apart) verifies
    a_like = a.split()[:150] + b.split()[150:]
    assert clusters(["a", "m"], [a, " ".join(a_like)], min_similarity=0.0, linkage="single") == [["a", "m"]]


def test_short_texts_join_only_exact_copies():
    ids = ["s1", "s2", "s3", "s4"]
    texts = ["the cat sat", "the cat sat", "the cat sat down", "The  cat, sat!"]
    # s4 has the same tokens as s1 (case and punctuation are dropped): an exact copy
    got = clusters(ids, texts, min_similarity=0.5, min_features=10, linkage="single")
    assert got == [["s1", "s2", "s4"]]
    # with the rule off, the near one joins too
    assert clusters(ids, texts, min_similarity=0.5, min_features=0, linkage="single") == [ids]


SHORT_WORDS = ["tea", "cup", "water", "leaf", "pot", "hot", "green", "cold", "milk", "sugar"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(SHORT_WORDS), min_size=2, max_size=9, unique=True),
    st.integers(1, 40),
    st.sampled_from(SHORT_WORDS),
)
def test_short_texts_kept_for_exact_verification_pair_by_the_exact_rule(words, repeats, word):
    """Below --min-features (here at most 9 distinct words, repeated), a pair whose texts are
    kept is verified exactly, where a pair of few 3-grams needs a higher resemblance
    (similarity.needed), instead of never pairing: a word appended to 9 distinct 3-grams
    passes, to 5 it does not."""
    from simdedup.similarity import ExactIndex, KeptText, passes

    words = words * repeats
    copy = words + [word]
    texts = [" ".join(words), " ".join(copy)]
    fps, sketches, features = docs_to_arrays(texts)
    kept = [KeptText(t) for t in texts]
    found = find_clusters(
        ["a", "b"],
        fps,
        ClusterOptions(k=31, linkage="single", similarity="combined"),
        sketches=sketches,
        features=features,
        exact=kept,
    )
    index = ExactIndex(kept)
    bag, grams = index.measures(np.array([0]), np.array([1]))
    fewer = index.shingles(np.array([0]), np.array([1]))
    assert (len(found) == 1) == bool(passes("combined", bag, grams, 0.88, 0.8, fewer)[0])


def test_verified_output_independent_of_order():
    rng = random.Random(9)
    texts = chain(rng, 6, rate=0.05) + chain(rng, 4, rate=0.05)
    ids = [f"id{i}" for i in range(len(texts))]
    first = clusters(ids, texts, min_similarity=0.85)
    order = list(range(len(texts)))
    rng.shuffle(order)
    second = clusters([ids[i] for i in order], [texts[i] for i in order], min_similarity=0.85)
    assert first == second


def test_binary_weighting_counts_each_feature_once():
    counts = Counter({"the": 50, "rare": 1})
    once = Simhasher(64, weighting="binary")(counts)
    assert once.simhash == Simhasher(64)(dict.fromkeys(counts, 1)).simhash
    # the sketch keeps the counts whatever the weighting
    assert Simhasher(64, sketch_bins=128, weighting="binary")(counts).sketch == sketch_of(counts)
    with pytest.raises(ValueError):
        Simhasher(64, weighting="tfidf")


def test_default_k_by_what_the_sketches_are_of():
    """Sketches of shingles: k = 3 at any size (their bands find the pairs at the threshold);
    sketches of features (records made before them): k shrinks for large corpora; no sketch:
    Manku's k; a given k is kept. 128-bit fingerprints double it."""
    from simdedup.options import ClusterOptions

    sizes = (10, 200_000, 200_001, 3_000_000)
    assert [ClusterOptions().resolve(64, "features", "simhash", n).k for n in sizes] == [10, 10, 8, 6]
    assert [ClusterOptions().resolve(64, "shingles", "simhash", n).k for n in sizes] == [3, 3, 3, 3]
    assert ClusterOptions().resolve(128, "shingles", "simhash", 10).k == 6
    assert ClusterOptions().resolve(64, None, "simhash", 3_000_000).k == 3  # plain simhash: Manku's k
    assert ClusterOptions(k=12).resolve(64, "features", "simhash", 3_000_000).k == 12  # a given k is kept
    assert ClusterOptions().resolve(64, "shingles").bands and not ClusterOptions(k=3).resolve(64, "shingles").bands


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1), st.booleans(), st.data())
def test_band_pairs_join_the_candidates_as_their_definition_says(n, seed, searched, data):
    """The candidates and the pairs of units that agree on a whole band of their sketches
    (share_a_band), each once, in order: whether the candidates come in order from the search
    or in any order with repeats (from an index), and whatever units are eligible."""
    from simdedup.verify import BAND_BINS, share_a_band, with_band_pairs

    rng = np.random.default_rng(seed)
    # copies of three sketches with a few bins changed: some bands agree, others not
    sketches = rng.integers(0, 256, size=(3, 4 * BAND_BINS), dtype=np.uint8)[rng.integers(0, 3, n)]
    sketches[np.arange(n)[:, None], rng.integers(0, 4 * BAND_BINS, size=(n, 3))] = rng.integers(0, 256, (n, 3))
    eligible = np.flatnonzero(rng.random(n) < data.draw(st.sampled_from([0.5, 1.0])))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
    pairs = [(min(a, b), max(a, b)) for a, b in pairs if a != b]
    if searched:
        pairs = sorted(set(pairs))
    left, right = np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64)
    got_left, got_right = with_band_pairs(left, right, sketches, eligible)
    got = list(zip(got_left.tolist(), got_right.tolist()))
    banded = {
        (a, b)
        for a in eligible.tolist()
        for b in eligible.tolist()
        if a < b and share_a_band(sketches[a].tobytes(), sketches[b].tobytes())
    }
    assert got == sorted(set(pairs) | banded)
