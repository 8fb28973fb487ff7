"""Grouping near pairs into clusters with union-find, and describing each cluster.

Documents with identical fingerprints are grouped first (one :func:`numpy.unique`), so that
100,000 copies of one document cost linear work; the pair search runs on distinct fingerprints
only. Pairs within ``k`` are merged with a union-find (path halving, union by size): single
linkage, so A near B and B near C puts A and C together even when they are far apart. Each
cluster therefore reports its spread: every member's distance to a representative and the
largest such distance.

The representative is the medoid: the distinct fingerprint with the smallest total distance to
all members (counting copies), ties to the smallest id; it is the document with the smallest id
among those with that fingerprint. Clusters of more than :data:`MEDOID_LIMIT` distinct
fingerprints use the most frequent fingerprint instead, to keep the cost linear.

Output does not depend on input order: members are sorted by id, clusters by their first member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .index import near_pairs

MEDOID_LIMIT = 2048


class UnionFind:
    """Disjoint sets over ``0..n-1`` with path halving and union by size."""

    def __init__(self, n: int):
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> bool:
        """Merge the sets of ``a`` and ``b``; False if they were already one set."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True

    def roots(self) -> np.ndarray:
        """The root of every element, as an int64 array."""
        return np.fromiter((self.find(x) for x in range(len(self.parent))), dtype=np.int64, count=len(self.parent))


@dataclass(frozen=True)
class Cluster:
    """A group of near-duplicate documents (indices into the input)."""

    members: tuple[int, ...]  # sorted by id
    representative: int
    distances: tuple[int, ...]  # of each member to the representative

    @property
    def max_distance(self) -> int:
        return max(self.distances)


def _representative(ids: Sequence[str], docs: list[int], doc_fp: list[int], uniq: np.ndarray, values: list[int]) -> int:
    """The medoid document of a cluster (see the module docstring)."""
    counts: dict[int, int] = {}
    for d in docs:
        counts[doc_fp[d]] = counts.get(doc_fp[d], 0) + 1
    distinct = list(counts)
    if len(distinct) == 1:
        best = set(distinct)
    elif len(distinct) <= 64:  # small clusters: Python ints beat numpy's per-call overhead
        totals = [sum((values[u] ^ values[v]).bit_count() * c for v, c in counts.items()) for u in distinct]
        low = min(totals)
        best = {u for u, t in zip(distinct, totals) if t == low}
    elif len(distinct) <= MEDOID_LIMIT:
        index = np.array(distinct)
        block = uniq[index]
        dist = np.bitwise_count(block[:, None, :] ^ block[None, :, :]).sum(axis=2, dtype=np.int64)
        total = dist @ np.array([counts[u] for u in distinct])
        best = set(index[total == total.min()].tolist())
    else:
        top = max(counts.values())
        best = {u for u, c in counts.items() if c == top}
    return min((d for d in docs if doc_fp[d] in best), key=ids.__getitem__)


def find_clusters(
    ids: Sequence[str],
    fps: np.ndarray,
    k: int,
    singletons: bool = False,
    blocks: int | None = None,
) -> list[Cluster]:
    """Cluster documents whose fingerprints are within ``k`` bits, transitively.

    Args:
        ids: document ids (used for ordering and ties).
        fps: ``(n, words)`` uint64 fingerprints, row i for ``ids[i]``.
        k: largest Hamming distance of a duplicate pair.
        singletons: also return one-member clusters.
        blocks: passed to :func:`simdedup.index.near_pairs`.

    Returns:
        Clusters sorted by their first member id; members sorted by id.
    """
    n = len(ids)
    if n == 0:
        return []
    if fps.shape[0] != n:
        raise ValueError("ids and fps differ in length")
    uniq, doc_fp = np.unique(fps, axis=0, return_inverse=True)
    doc_fp = doc_fp.reshape(-1)
    left, right, _ = near_pairs(uniq, k, blocks) if k > 0 else (np.empty(0, int),) * 3
    uf = UnionFind(len(uniq))
    for a, b in zip(left.tolist(), right.tolist()):
        uf.union(a, b)
    doc_root = uf.roots()[doc_fp]
    # Sort documents by id once; a stable sort on the root keeps id order inside each group.
    by_id = np.array(sorted(range(n), key=ids.__getitem__), dtype=np.int64)
    grouped = by_id[np.argsort(doc_root[by_id], kind="stable")]
    bounds = [0, *(np.flatnonzero(np.diff(doc_root[grouped])) + 1).tolist(), n]
    grouped_list, fp_list = grouped.tolist(), doc_fp.tolist()
    values = [sum(int(word) << (64 * w) for w, word in enumerate(row)) for row in uniq.tolist()]
    clusters = []
    for start, end in zip(bounds, bounds[1:]):
        docs = grouped_list[start:end]
        if len(docs) == 1:
            if singletons:
                clusters.append(Cluster((docs[0],), docs[0], (0,)))
            continue
        rep = _representative(ids, docs, fp_list, uniq, values)
        rep_value = values[fp_list[rep]]
        dist = tuple((values[fp_list[d]] ^ rep_value).bit_count() for d in docs)
        clusters.append(Cluster(tuple(docs), rep, dist))
    clusters.sort(key=lambda c: ids[c.members[0]])
    return clusters


def cluster_id(representative_id: str) -> str:
    """A cluster's id: 16 hex digits of the hash of its representative's id.

    It depends on nothing else, so a cluster keeps its id when other documents come and go.
    """
    import xxhash

    return xxhash.xxh3_64_hexdigest(representative_id.encode("utf-8", "surrogatepass"))


def cluster_record(cluster: Cluster, ids: Sequence[str]) -> dict:
    """The JSON-ready description of a cluster."""
    return {
        "cluster": cluster_id(ids[cluster.representative]),
        "size": len(cluster.members),
        "representative": ids[cluster.representative],
        "max_distance": cluster.max_distance,
        "members": [{"id": ids[m], "distance": d} for m, d in zip(cluster.members, cluster.distances)],
    }
