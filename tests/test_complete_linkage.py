"""Complete linkage against a plain reference of its definition, ties included, on the compiled
loop and on the Python path.

The definition (simdedup.group): documents with the same fingerprint and sketch form a unit;
units are ordered by fingerprint and sketch, ranked by their smallest id. Candidate pairs are
units (earlier, later in that order) within k bits, each unit with at least ``min_features``;
with sketches a candidate is an edge when its similarity is at least ``min_similarity``. Edges
are taken from the most similar down, ties by the rank of the earlier unit, then of the later
one; an edge joins its two clusters when every pair across them passes the test (similarity,
or distance <= k without sketches). Here that is done literally: every pair tested at every
edge.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdedup.linkage as linkage
from simdedup.group import find_clusters
from simdedup.kernels.linkage import LinkageKernel
from simdedup.options import ClusterOptions
from simdedup.sketch import similarity


def reference_clusters(ids, fps, sketches, k, min_similarity, features, min_features, new):
    """Clusters (sets of ids) by the definition above."""
    units: dict[tuple, list[int]] = {}
    for doc, fp in enumerate(fps):
        key = (tuple(int(w) for w in fp), None if sketches is None else bytes(sketches[doc]))
        units.setdefault(key, []).append(doc)

    def order(key):
        fp, sketch = key
        return fp + (() if sketch is None else tuple(np.frombuffer(sketch, dtype=np.uint64).tolist()))

    keys = sorted(units, key=order)
    docs = [units[key] for key in keys]
    rank = {u: r for r, u in enumerate(sorted(range(len(keys)), key=lambda u: min(ids[d] for d in docs[u])))}
    eligible = [min_features == 0 or min(features[d] for d in docs[u]) >= min_features for u in range(len(keys))]
    is_new = [new is None or any(new[d] for d in docs[u]) for u in range(len(keys))]
    bits = 64 * len(fps[0])

    def distance(u, v):
        return sum(bin(a ^ b).count("1") for a, b in zip(keys[u][0], keys[v][0]))

    @functools.cache
    def score(u, v):
        if sketches is None:
            return 1.0 - distance(u, v) / bits
        return similarity(keys[u][1], keys[v][1])

    def passes(u, v):
        return distance(u, v) <= k if sketches is None else score(u, v) >= min_similarity

    edges = [
        (u, v)
        for u, v in itertools.combinations(range(len(keys)), 2)
        if k > 0
        and eligible[u]
        and eligible[v]
        and (is_new[u] or is_new[v])
        and distance(u, v) <= k
        and (sketches is None or score(u, v) >= min_similarity)
    ]
    edges.sort(key=lambda e: (-score(*e), rank[e[0]], rank[e[1]]))
    cluster_of = {u: frozenset([u]) for u in range(len(keys))}
    for u, v in edges:
        a, b = cluster_of[u], cluster_of[v]
        if a != b and all(passes(x, y) for x in a for y in b):
            for x in a | b:
                cluster_of[x] = a | b
    found = set()
    for members in set(cluster_of.values()):
        group = frozenset(ids[d] for u in members for d in docs[u])
        if len(group) > 1 and (new is None or any(new[d] for u in members for d in docs[u])):
            found.add(group)
    return found


def simdedup_clusters(ids, fps, sketches, k, min_similarity, features, min_features, new):
    found = find_clusters(
        ids,
        np.array(fps, dtype=np.uint64),
        ClusterOptions(
            k=k,
            similarity="bag",
            # without sketches every pair within k passes: no threshold applies
            min_similarity=min_similarity if sketches is not None else ClusterOptions().min_similarity,
            min_features=min_features,
        ),
        sketches=sketches,
        features=features,
        new=new,
    )
    return {frozenset(ids[m] for m in c.members) for c in found}


@st.composite
def families(draw, most: int):
    """Documents whose fingerprints are a few bits from a few bases and whose sketches differ
    from a few bases in a few bins, drawn from a small alphabet: many candidates, many exact
    copies and many equal scores."""
    n = draw(st.integers(1, most))
    words = draw(st.sampled_from([1, 2]))
    bases = draw(st.lists(st.tuples(*[st.integers(0, 2**64 - 1)] * words), min_size=1, max_size=3))
    bins = draw(st.sampled_from([0, 8, 16]))
    sketch_bases = draw(st.lists(st.binary(min_size=bins, max_size=bins), min_size=1, max_size=3))
    fps, sketches = [], []
    for _ in range(n):
        fp = list(draw(st.sampled_from(bases)))
        for bit in draw(st.lists(st.integers(0, 64 * words - 1), max_size=4)):
            fp[bit // 64] ^= 1 << (bit % 64)
        fps.append(fp)
        sketch = bytearray(draw(st.sampled_from(sketch_bases)))
        for position in draw(st.lists(st.integers(0, max(bins - 1, 0)), max_size=bins // 2)) if bins else []:
            sketch[position] = draw(st.integers(0, 2))
        sketches.append(bytes(sketch))
    ids = draw(st.permutations([f"d{i:03d}" for i in range(n)]))
    sketch_array = np.frombuffer(b"".join(sketches), dtype=np.uint8).reshape(n, bins) if bins else None
    k = draw(st.integers(0, 8))
    min_similarity = draw(st.sampled_from([0.0, 0.5, 0.6, 0.75, 0.87, 1.0]))
    features = draw(st.lists(st.integers(0, 20), min_size=n, max_size=n))
    min_features = draw(st.sampled_from([0, 0, 10]))
    new = draw(st.none() | st.lists(st.booleans(), min_size=n, max_size=n))
    return ids, fps, sketch_array, k, min_similarity, features, min_features, new


@pytest.fixture(params=["compiled", "python"])
def path(request, monkeypatch):
    """The compiled loop, whatever the number of edges, and the Python path (SIMDEDUP_FASTPATH=0)."""
    if request.param == "python":
        monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
    else:
        if LinkageKernel.loaded() is None:
            pytest.skip("the linkage kernel cannot be loaded here")
        monkeypatch.setattr(linkage, "KERNEL_AFTER_EDGES", 0)
    return request.param


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=families(most=14))
def test_small_families_match_the_definition(case, path):
    assert simdedup_clusters(*case) == reference_clusters(*case)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=families(most=160))
def test_large_families_match_the_definition(case, path):
    assert simdedup_clusters(*case) == reference_clusters(*case)


def test_dense_template_family_every_pair_inside_a_cluster_verified(path):
    """200 near-copies, every pair within k, about a quarter of the pairs verified."""
    rng = np.random.default_rng(18)
    n = 200
    base = int(rng.integers(0, 1 << 63))
    fps = [[base ^ sum(1 << int(b) for b in rng.choice(64, 3, replace=False))] for _ in range(n)]
    sketches = np.tile(rng.integers(0, 256, 128, dtype=np.uint8), (n, 1))
    for row in sketches:
        changed = rng.choice(128, rng.choice([8, 9, 9, 10]), replace=False)
        row[changed] = rng.integers(0, 256, len(changed))
    ids = [f"page-{i:03d}" for i in range(n)]
    case = (ids, fps, sketches, 6, 0.87, [200] * n, 10, None)
    found = simdedup_clusters(*case)
    assert found == reference_clusters(*case)
    index = {doc_id: i for i, doc_id in enumerate(ids)}
    for group in found:
        for a, b in itertools.combinations(sorted(group), 2):
            assert similarity(bytes(sketches[index[a]]), bytes(sketches[index[b]])) >= 0.87
