"""Simhash by hand with an injected trivial feature hash, plus the real hash's stability."""

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.hashing import get_feature_hash
from simdedup.simhash import Simhasher, hamming, integer_weights, simhash

# Feature "a" hashes to 0b0011, "b" to 0b0101, "c" to 0b1000 (width 64).
TRIVIAL = {"a": 0b0011, "b": 0b0101, "c": 0b1000}.__getitem__


def test_single_feature_copies_its_hash():
    assert simhash({"a": 1}, 64, TRIVIAL) == 0b0011


def test_votes_are_weighted():
    # bit0: a+b = +2 -> 1; bit1: a-b = 0 -> tie -> 0; bit2: b-a = 0 -> 0; bit3: -2 -> 0
    assert simhash({"a": 1, "b": 1}, 64, TRIVIAL) == 0b0001
    # with b heavier, bit2 wins for b and bit1 loses
    assert simhash({"a": 1, "b": 2}, 64, TRIVIAL) == 0b0101
    # c with weight 5 outvotes a+b on bit3; bit0: a+b-c = -3 -> 0
    assert simhash({"a": 1, "b": 1, "c": 5}, 64, TRIVIAL) == 0b1000


def test_tie_gives_zero_and_empty_is_zero():
    assert simhash({"a": 1, "c": 1}, 64, TRIVIAL) == 0  # every bit ties or loses
    assert simhash({}, 64, TRIVIAL) == 0


def test_high_bits_of_128():
    top = 1 << 127
    fp = simhash({"x": 1}, 128, {"x": top | 1}.__getitem__)
    assert fp == top | 1


def test_float_weights_are_exact_fixed_point():
    weights = integer_weights([0.5, 0.25, 1 / 3])
    assert weights.tolist() == [1 << 23, 1 << 22, round((1 << 24) / 3)]
    assert integer_weights([1e-12]).tolist() == [1]  # positive never rounds to zero
    assert integer_weights([3, 4]).tolist() == [3, 4]  # counts stay counts
    with pytest.raises(ValueError):
        integer_weights([-1.0])


def test_fractional_weights_decide_votes():
    # "a" 0.3 vs "b" 0.2: bit1 goes to a, bit2 to b is outvoted
    assert simhash({"a": 0.3, "b": 0.2}, 64, TRIVIAL) == 0b0011


def test_hamming():
    assert hamming(0b1011, 0b0001) == 2


def test_fingerprinter_equals_simhash():
    fp = Simhasher(64)
    features = {"hello": 2, "world": 1}
    assert fp(features).simhash == simhash(features, 64)
    assert Simhasher(64, hashfunc=TRIVIAL)({"a": 1, "b": 2}).simhash == 0b0101
    assert fp(features).sketch is None
    assert Simhasher(64)({"\udc80": 1}).simhash == simhash({"\udc80": 1}, 64)  # lone surrogate


def test_xxh3_values_are_pinned():
    # xxh3 of a feature is fixed by the xxHash specification; these pin the encoding too.
    h64 = get_feature_hash("xxh3", 64)
    assert h64("abc") == 8696274497037089104
    assert h64("中文") == get_feature_hash("xxh3", 64)("中文")
    assert get_feature_hash("xxh3", 128)("abc") >> 64 > 0


def test_unknown_hash_and_bits():
    with pytest.raises(ValueError):
        get_feature_hash("sha1", 64)
    with pytest.raises(ValueError):
        get_feature_hash("xxh3", 32)


CODE = "from simdedup.simhash import simhash; print(simhash({'alpha': 3, 'beta': 1, '中文': 2}, 128))"


def test_stable_across_processes_with_different_hash_seeds():
    outputs = {
        subprocess.run(
            [sys.executable, "-c", CODE],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


_weights = st.one_of(st.integers(0, 6), st.floats(0, 50, allow_nan=False), st.sampled_from([1e-12, 0.5, 2.5]))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.dictionaries(st.text("abcdé中", min_size=1, max_size=3), _weights, max_size=12), max_size=8),
    st.sampled_from([64, 128]),
    st.sampled_from([0, 8, 128]),
    st.sampled_from(["feature", "binary"]),
)
def test_many_documents_at_once_equal_one_at_a_time(documents, bits, bins, weighting):
    """Simhasher.many does the sums for a batch at once: the same fingerprints and sketches,
    whole and fractional weights, empty documents and zero weights included."""
    fingerprinter = Simhasher(bits, sketch_bins=bins, weighting=weighting)
    assert fingerprinter.many(documents) == [fingerprinter(features) for features in documents]


def test_many_reports_a_bad_weight_as_one_document_does():
    fingerprinter = Simhasher(64)
    with pytest.raises(ValueError, match="finite and non-negative"):
        fingerprinter.many([{"a": 1.0}, {"b": -1.0}])


def test_many_sketches_with_large_counts_expand_in_pieces():
    from simdedup.sketch import EXPAND_BATCH

    fingerprinter = Simhasher(64, sketch_bins=16)
    # more elements than are expanded at once, the cut falling inside b's copies
    documents = [{"a": EXPAND_BATCH // 2 + 75_712, "b": EXPAND_BATCH // 2}, {"c": 3}, {"a": 2.5}]
    assert sum(documents[0].values()) > EXPAND_BATCH > documents[0]["a"]
    assert fingerprinter.many(documents) == [fingerprinter(features) for features in documents]
