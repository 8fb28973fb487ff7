"""Union-find, cluster grouping, representatives and spread."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.cluster_lines import cluster_id, cluster_record
from simdedup.group import find_clusters
from simdedup.linkage import UnionFind
from simdedup.options import ClusterOptions
from simdedup.pairs import as_words


def clusters_of(ids, values, k, bits=64, singletons=False):
    found = find_clusters(ids, as_words(values, bits), ClusterOptions(k=k, linkage="single", singletons=singletons))
    return [[ids[m] for m in c.members] for c in found], found


def test_union_find_basics():
    uf = UnionFind(5)
    assert uf.union(0, 1)
    assert uf.union(3, 4)
    assert not uf.union(1, 0)
    assert uf.find(0) == uf.find(1) != uf.find(2)
    roots = uf.roots().tolist()
    assert roots[3] == roots[4] and len(set(roots)) == 3


def test_chain_is_merged_and_spread_reported():
    # a - b - c each one bit apart at k=1; a and c are 2 apart: single linkage joins them
    ids = ["a", "b", "c", "z"]
    values = [0b000, 0b001, 0b011, (1 << 63) | (1 << 40) | (1 << 20)]
    members, found = clusters_of(ids, values, 1)
    assert members == [["a", "b", "c"]]
    c = found[0]
    assert ids[c.representative] == "b"  # medoid of the chain
    assert c.distances == (1, 0, 1) and c.max_distance == 1


def test_identical_copies_and_representative_tie():
    ids = ["d3", "d1", "d2"]
    values = [42, 42, 42]
    members, found = clusters_of(ids, values, 0)
    assert members == [["d1", "d2", "d3"]]
    assert ids[found[0].representative] == "d1"  # ties go to the smallest id


def test_many_copies_are_cheap():
    n = 100_000
    ids = [f"doc{i:06d}" for i in range(n)]
    fps = np.full((n, 1), 12345, dtype=np.uint64)
    found = find_clusters(ids, fps, ClusterOptions(k=3, linkage="single"))
    assert len(found) == 1 and len(found[0].members) == n


def test_singletons_and_order():
    ids = ["b", "a", "c"]
    values = [0, 1, 2**63 | 2**62 | 0b11100]
    members, _ = clusters_of(ids, values, 1, singletons=True)
    assert members == [["a", "b"], ["c"]]
    assert clusters_of(ids, values, 1)[0] == [["a", "b"]]


def test_cluster_record_and_id():
    ids = ["x", "y"]
    _, found = clusters_of(ids, [0, 3], 2)
    record = cluster_record(found[0], ids)
    assert record == {
        "cluster": cluster_id("x"),
        "size": 2,
        "representative": "x",
        "max_distance": 2,
        "members": [{"id": "x", "distance": 0}, {"id": "y", "distance": 2}],
    }
    assert len(cluster_id("x")) == 16 and cluster_id("x") != cluster_id("y")


def test_large_cluster_representative_is_a_member():
    rng = random.Random(3)
    base = rng.getrandbits(64)
    values = [base ^ (1 << rng.randrange(64)) for _ in range(300)]
    ids = [f"v{i}" for i in range(300)]
    _, found = clusters_of(ids, values, 2)
    assert len(found) == 1
    c = found[0]
    rep = values[c.representative]
    assert c.distances == tuple((values[m] ^ rep).bit_count() for m in c.members)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=1, max_size=30), st.integers(0, 4), st.randoms())
def test_result_independent_of_input_order(values, k, rng):
    ids = [f"id{i}" for i in range(len(values))]
    first = clusters_of(ids, values, k, singletons=True)
    order = list(range(len(values)))
    rng.shuffle(order)
    second = clusters_of([ids[i] for i in order], [values[i] for i in order], k, singletons=True)
    assert first[0] == second[0]
    rep1 = [ids[c.representative] for c in first[1]]
    rep2 = [[ids[i] for i in order][c.representative] for c in second[1]]
    assert rep1 == rep2


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**12 - 1), min_size=1, max_size=25), st.integers(0, 3))
def test_clusters_are_components_of_the_pair_graph(values, k):
    ids = [f"{i:03d}" for i in range(len(values))]
    members, _ = clusters_of(ids, values, k, singletons=True)
    label = {m: n for n, group in enumerate(members) for m in group}
    assert sorted(label) == ids  # a partition
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            if (values[i] ^ values[j]).bit_count() <= k:
                assert label[ids[i]] == label[ids[j]]
    # every cluster is connected through pairs within k
    for group in members:
        idx = [ids.index(g) for g in group]
        reached, todo = {idx[0]}, [idx[0]]
        while todo:
            a = todo.pop()
            for b in idx:
                if b not in reached and (values[a] ^ values[b]).bit_count() <= k:
                    reached.add(b)
                    todo.append(b)
        assert reached == set(idx)


def test_mismatched_lengths():
    with pytest.raises(ValueError):
        find_clusters(["a"], np.zeros((2, 1), dtype=np.uint64), ClusterOptions(k=1))
    assert find_clusters([], np.zeros((0, 1), dtype=np.uint64), ClusterOptions(k=3)) == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=60))
def test_unique_rows_equals_numpy(raw):
    from simdedup.group import unique_rows

    rows = np.array(raw, dtype=np.uint64)
    distinct, of_row = unique_rows(rows)
    expected, inverse = np.unique(rows, axis=0, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(of_row, inverse.reshape(-1))
