"""The block-table search against a brute-force oracle."""

import random
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.pairs import as_words, block_masks, choose_blocks, near_pairs, table_masks


def oracle(values, k):
    return {
        (i, j)
        for i in range(len(values))
        for j in range(i + 1, len(values))
        if (values[i] ^ values[j]).bit_count() <= k
    }


def found(values, k, bits=64, blocks=None):
    left, right, dist = near_pairs(as_words(values, bits), k, blocks)
    pairs = list(zip(left.tolist(), right.tolist()))
    assert len(pairs) == len(set(pairs)), "a pair reported twice"
    assert pairs == sorted(pairs) and all(i < j for i, j in pairs), "as near_pairs promises"
    for (i, j), d in zip(pairs, dist.tolist()):
        assert d == (values[i] ^ values[j]).bit_count()
    return set(pairs)


def flip(value, positions):
    for p in positions:
        value ^= 1 << p
    return value


def planted(rng, bits, k, groups=30):
    """Random fingerprints plus copies at distance exactly k-1, k and k+1."""
    values = []
    for _ in range(groups):
        base = rng.getrandbits(bits)
        values.append(base)
        for d in (max(k - 1, 0), k, k + 1):
            values.append(flip(base, rng.sample(range(bits), d)))
    values += [rng.getrandbits(bits) for _ in range(groups)]
    rng.shuffle(values)
    return values


@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 6, 8])
def test_planted_pairs_at_k_and_k_plus_one(bits, k):
    rng = random.Random(bits * 100 + k)
    values = planted(rng, bits, k)
    expected = oracle(values, k)
    assert found(values, k, bits) == expected
    # the planted copies at exactly k are in, those at k+1 are out
    at_k = [p for p in expected if (values[p[0]] ^ values[p[1]]).bit_count() == k]
    assert at_k


@pytest.mark.parametrize("blocks", [0, 4, 5, 6, 7])
def test_every_block_count_is_exact(blocks):
    rng = random.Random(blocks)
    values = planted(rng, 64, 3, groups=60)
    assert found(values, 3, 64, blocks) == oracle(values, 3)


def test_pairs_where_differences_cluster_in_one_block():
    # All differing bits in the lowest block: the tables that drop that block must catch them.
    rng = random.Random(7)
    base = [rng.getrandbits(64) for _ in range(50)]
    values = base + [flip(v, [0, 1, 2]) for v in base] + [flip(v, [60, 61, 62, 63]) for v in base]
    assert found(values, 3) == oracle(values, 3)


def test_identical_fingerprints_pair_up():
    values = [5, 5, 5, 9]
    assert found(values, 0) == {(0, 1), (0, 2), (1, 2)}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=40),
    st.integers(0, 6),
    st.data(),
)
def test_block_tables_equal_brute_force(values, k, data):
    # mix in near copies so there are pairs to find
    extra = [flip(v, data.draw(st.lists(st.integers(0, 63), max_size=k + 1, unique=True))) for v in values[:10]]
    values = values + extra
    assert found(values, k) == oracle(values, k)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**128 - 1), max_size=30), st.integers(0, 10))
def test_block_tables_equal_brute_force_128(values, k):
    values = values + [v ^ 1 ^ (1 << 127) for v in values[:8]]
    assert found(values, k, 128) == oracle(values, k)


def test_masks_partition_the_bits():
    for bits, blocks in ((64, 4), (64, 6), (128, 5)):
        masks = block_masks(bits, blocks)
        total = 0
        for m in masks:
            value = sum(int(w) << (64 * i) for i, w in enumerate(m))
            assert total & value == 0
            total |= value
        assert total == (1 << bits) - 1
        assert len(table_masks(bits, 3, blocks)) == comb(blocks, 3)


def test_choose_blocks_grows_with_n():
    assert choose_blocks(1_000, 3) in (0, 4)
    assert choose_blocks(10_000_000, 3) >= 5
    assert choose_blocks(10_000_000, 3) > choose_blocks(10_000, 3)
    # very large k falls back to comparing all pairs rather than thousands of tables
    assert choose_blocks(1_000, 30) == 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        near_pairs(np.zeros((3, 1), dtype=np.uint64), 65)
    # k = bits is every pair (a nilsimsa score of -128)
    left, right, distance = near_pairs(np.array([[0], [2**64 - 1], [5]], dtype=np.uint64), 64)
    assert (left.tolist(), right.tolist(), distance.tolist()) == ([0, 0, 1], [1, 2, 2], [64, 2, 62])
    with pytest.raises(ValueError):
        table_masks(64, 3, 3)


def test_crowded_fingerprints_switch_to_all_pairs_unless_a_family():
    """Keys that collide in every table (fingerprints that agree on their first half) make all
    pairs cheaper than the tables; a family of near copies among spread-out fingerprints does
    not, as the search compares it once, not once per table. Either way, every pair."""
    import simdedup.pairs as pairs

    rng = random.Random(11)
    base = rng.getrandbits(64)
    colliding = list({flip(base, rng.sample(range(32, 64), 12)) for _ in range(1500)})
    blocks = choose_blocks(len(colliding), 8)
    assert blocks > 0  # spread-out fingerprints would use tables here
    assert pairs._clustered(as_words(colliding, 64), table_masks(64, 8, blocks), 8)
    assert found(colliding, 8) == oracle(colliding, 8)
    family = _family(np.random.default_rng(11), 1_500, 20_000, 3)
    blocks = choose_blocks(len(family), 8)
    assert not pairs._clustered(family, table_masks(64, 8, blocks), 8)
    left, right, _ = near_pairs(family, 8)
    assert np.array_equal(left * len(family) + right, _brute_codes(family, 8))


@pytest.mark.parametrize("step", [1, 2, 7])
def test_candidates_checked_in_small_steps_keep_every_pair(monkeypatch, step):
    """Runs of equal keys are cut into vectorised steps; the cuts lose and add nothing, also
    when one position has more candidates than a step (crowded keys)."""
    import simdedup.pairs as pairs

    monkeypatch.setattr(pairs, "_CANDIDATES_AT_ONCE", step)
    rng = random.Random(13)
    values = planted(rng, 64, 3, groups=40) + [0b1011] * 5 + [0b1011 ^ (1 << 40)] * 3
    for blocks in (4, 5, 8):
        assert found(values, 3, 64, blocks=blocks) == oracle(values, 3)
    wide = planted(rng, 128, 5, groups=20)
    assert found(wide, 5, 128, blocks=7) == oracle(wide, 5)


from simdedup.kernels.pairs import PairKernel  # noqa: E402

needs_pair_kernel = pytest.mark.skipif(PairKernel.loaded() is None, reason="the pair kernel did not load")


@needs_pair_kernel
@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 10))
def test_the_pair_kernel_equals_brute_force(bits, data, k):
    """Every table through the compiled kernels (one or two words a fingerprint): the same
    pairs as the oracle."""
    import simdedup.pairs as pairs

    values = data.draw(st.lists(st.integers(0, 2**bits - 1), max_size=40))
    extra = [flip(v, data.draw(st.lists(st.integers(0, bits - 1), max_size=k + 1, unique=True))) for v in values[:10]]
    values = values + extra + values[:3]  # identical fingerprints too
    saved, pairs.KERNEL_AFTER_CANDIDATES = pairs.KERNEL_AFTER_CANDIDATES, 0
    try:
        for blocks in (None, 0, k + 1, k + 3):  # 0: all pairs, as one run of the kernel
            assert found(values, k, bits, blocks=blocks) == oracle(values, k)
    finally:
        pairs.KERNEL_AFTER_CANDIDATES = saved


@needs_pair_kernel
def test_the_pair_kernel_makes_room_for_many_pairs():
    """One run of 400 equal keys holds 79,800 pairs, more than the first buffer (65,536)."""
    values = np.array([5] * 300 + [4] * 100, dtype=np.uint64)
    order = np.arange(400, dtype=np.int64)
    left, right = PairKernel.loaded().pairs(values, order, np.zeros(400, dtype=np.uint64), 1)
    assert len(left) == 400 * 399 // 2
    assert set(zip(left.tolist(), right.tolist())) == {(i, j) for i in range(400) for j in range(i + 1, 400)}
    left, _ = PairKernel.loaded().pairs(values, order, np.zeros(400, dtype=np.uint64), 0)
    assert len(left) == 300 * 299 // 2 + 100 * 99 // 2


def _family(rng, members: int, spread: int, flips: int, bits: int = 64) -> np.ndarray:
    template = int(rng.integers(0, 2**63)) << (bits - 63) | 1
    family = [
        flip(template, rng.choice(bits, size=int(rng.integers(0, flips + 1)), replace=False).tolist())
        for _ in range(members)
    ]
    spread_out = [int.from_bytes(rng.bytes(bits // 8), "little") for _ in range(spread)]
    return as_words(family + spread_out, bits)


def _brute_codes(values: np.ndarray, k: int) -> np.ndarray:
    n = len(values)
    codes = [
        i * n + np.flatnonzero(np.bitwise_count(values[i + 1 :] ^ values[i]).sum(axis=1) <= k) + i + 1
        for i in range(n - 1)
    ]  # the oracle, vectorised a row at a time
    return np.sort(np.concatenate(codes))


def _search_in_chunks(values: np.ndarray, k: int, blocks: int, crowd: int) -> tuple[np.ndarray, np.ndarray]:
    """The search as an engine runs it: the tables, then each crowd they leave in chunk-pair
    tasks that keep a pair where every level's table is its canonical one."""
    from simdedup.pairs import crowd_pairs, table_pairs, tables

    bits = 64 * values.shape[1]
    rows = np.arange(len(values), dtype=np.int64)
    lefts, rights = [], []
    for chosen in tables(bits, k, blocks):
        found = table_pairs(values, rows, bits, k, blocks, chosen, crowd)
        lefts.append(found.left)
        rights.append(found.right)
        for run in found.crowds:
            left, right = crowd_pairs(run, k, crowd)
            lefts.append(left)
            rights.append(right)
    return np.concatenate(lefts), np.concatenate(rights)


@pytest.mark.parametrize(
    "bits,k,blocks,crowd,members,kernels",
    [
        (64, 6, 8, 300, 1_500, True),
        (64, 6, 8, 300, 1_500, False),
        (64, 6, 8, 4096, 1_500, True),
        (128, 12, 14, 300, 700, True),
        (128, 12, 14, 300, 700, False),
        (128, 12, 14, 4096, 1_500, True),
    ],
)
def test_a_family_that_crowds_every_table_gives_each_pair_once(bits, k, blocks, crowd, members, kernels, monkeypatch):
    """A template family of fingerprints a few bits apart, among spread-out ones, fills one key
    of every table: each pair is kept in its canonical table only; with a small crowd, the runs
    are searched again on their remaining bits and then compared chunk by chunk (the canonical
    tables of every level checked in a kernel, or with numpy without kernels), as an engine
    does. The result is the brute-force set, each pair once. In one process a crowd that is a
    family is set aside and compared once, all its pairs at a time: the same set."""
    from simdedup.pairs import search

    if not kernels:
        monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")

    values = _family(np.random.default_rng(crowd), members, 1_000, 5, bits)
    n = len(values)
    expected = _brute_codes(values, k)
    assert len(expected) > 100_000
    left, right = _search_in_chunks(values, k, blocks, crowd)
    assert (left < right).all() and np.array_equal(np.sort(left * n + right), expected)  # each pair once
    left, right = search(values, k, blocks, crowd)
    assert (left < right).all() and np.array_equal(np.sort(left * n + right), expected)  # once each too
    left, right, dist = near_pairs(values, k, blocks=blocks)
    assert (left < right).all() and np.array_equal(left * n + right, expected)
    assert (dist == np.bitwise_count(values[left] ^ values[right]).sum(axis=1)).all()
    left, right, _ = near_pairs(values, k)  # the blocks chosen, or all pairs
    assert np.array_equal(left * n + right, expected)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.lists(st.integers(0, n - 1), min_size=1, max_size=8, unique=True), max_size=12)
        )
    )
)
def test_merged_crowds_are_the_components_of_the_crowds(case):
    """Against a plain union of sets: crowds that share a row, directly or through others, are
    one; others stay apart."""
    from simdedup.pairs import merged_crowds

    n, crowds = case
    groups: list[set[int]] = []
    for crowd in crowds:
        touching = [g for g in groups if g & set(crowd)]
        merged = set(crowd).union(*touching)
        groups = [g for g in groups if not g & set(crowd)] + [merged]
    found = merged_crowds([np.array(c, dtype=np.int64) for c in crowds], n)
    assert sorted(sorted(m.tolist()) for m in found) == sorted(sorted(g) for g in groups)
    assert all((np.diff(m) > 0).all() for m in found)


def _drifting_chain(rng, steps: int, copies: int, bits: int = 64) -> np.ndarray:
    """A page drifting over ``steps`` versions, two bits a version, each version with
    ``copies`` copies one bit or none from it: each version is near the next, far from most."""
    version = int(rng.integers(0, 2**63)) << (bits - 63) | 1
    rows = []
    for _ in range(steps):
        version = flip(version, rng.choice(bits, size=2, replace=False).tolist())
        rows += [
            flip(version, rng.choice(bits, size=int(rng.integers(0, 2)), replace=False).tolist()) for _ in range(copies)
        ]
    return as_words(rows, bits)


@pytest.mark.parametrize("bits,k,blocks", [(64, 3, 6), (128, 6, 8)])
def test_families_chained_by_drift_are_compared_apart_and_give_every_pair(bits, k, blocks):
    """Families that share rows merge; when the merged crowd would compare more pairs than its
    families apart (a chain of versions, whose far ends are no pair), each family is compared
    apart. Either way the pairs are the brute-force set, each once."""
    from simdedup.pairs import search

    values = _drifting_chain(np.random.default_rng(bits), 24, 300, bits)
    n = len(values)
    expected = _brute_codes(values, k)
    left, right = search(values, k, blocks)
    assert (left < right).all() and np.array_equal(np.sort(left * n + right), expected)


def test_a_merged_family_is_compared_whole_or_as_its_families_whichever_compares_fewer():
    from simdedup.pairs import _family_compares

    run = np.arange(500, dtype=np.int64)
    repeated = _family_compares([run, run[::-1].copy(), run], 1_000)  # one family in three tables
    assert [r.tolist() for r in repeated] == [run.tolist()]
    chained = _family_compares([np.arange(0, 600), np.arange(300, 900), np.arange(600, 1_000)], 1_000)
    assert [(r[0], r[-1]) for r in chained] == [(0, 599), (300, 899), (600, 999)]
    overlapping = _family_compares([np.arange(0, 600), np.arange(50, 650)], 1_000)
    assert [(r[0], r[-1]) for r in overlapping] == [(0, 649)]
