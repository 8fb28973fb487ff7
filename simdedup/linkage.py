"""Linkage: verified pairs of units (edges) into clusters, without chaining.

- ``single``: union-find (path halving, union by size) over the edges. A near B and B near C
  puts A and C together even when they are far apart (chaining).
- ``star``: the unit with most edges becomes a centre and takes its unassigned neighbours;
  repeat. Every member is verified against its centre.
- ``complete`` (default): edges are taken from the most similar down; two clusters merge only
  when *every* pair across them passes the test (:class:`simdedup.verify.PairTest`). Every pair
  of members is then a duplicate pair, so nothing chains.

Ties between equally similar edges are broken by the units' ranks (their smallest ids), so the
clusters do not depend on input order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .verify import PairTest


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


def link(
    linkage: str, n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, rank: np.ndarray, test: PairTest
) -> np.ndarray:
    """The cluster label of each of ``n`` units: the edges ``left``-``right`` (with their bag
    ``scores``; ``rank``: each unit's order by its smallest id) linked by ``linkage``
    (:data:`simdedup.options.LINKAGES`)."""
    if linkage == "single":
        return _link_single(n, left.tolist(), right.tolist())
    if linkage == "star":
        return _link_star(n, left.tolist(), right.tolist(), rank)
    return _link_complete(n, left, right, scores, rank, test)


def _link_single(n: int, left: list[int], right: list[int]) -> np.ndarray:
    uf = UnionFind(n)
    for a, b in zip(left, right):
        uf.union(a, b)
    return uf.roots()


def _link_star(n: int, left: list[int], right: list[int], rank: np.ndarray) -> np.ndarray:
    neighbours: dict[int, list[int]] = {}
    for a, b in zip(left, right):
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    label = np.arange(n)
    assigned = np.zeros(n, dtype=bool)
    for centre in sorted(neighbours, key=lambda u: (-len(neighbours[u]), rank[u])):
        if assigned[centre]:
            continue
        assigned[centre] = True
        for other in neighbours[centre]:
            if not assigned[other]:
                assigned[other] = True
                label[other] = centre
    return label


#: complete linkage over at least this many verified pairs runs compiled (fewer cost less than
#: loading the kernel)
KERNEL_AFTER_EDGES = 1 << 12


def _link_complete(
    n: int, left: np.ndarray, right: np.ndarray, scores: np.ndarray, rank: np.ndarray, test: PairTest
) -> np.ndarray:
    """Edges taken from the most similar down (ties: the rank of ``left``, then of ``right``);
    each joins its two clusters when every pair across them passes ``test``.

    Testing every pair across at every edge costs about the cube of a family's size. Instead,
    each pair of clusters with an edge between them keeps the number of edges across (when it
    is the product of their sizes, every pair across is verified and they join at once) and
    whether a pair across is known to fail (then they never join: clusters only grow). Only
    when neither settles it are the pairs across tested, and a failure is remembered. When two
    clusters join, the one with fewer edges hands its counts over to the other. Compiled from
    :data:`KERNEL_AFTER_EDGES` edges (:func:`simdedup.kernels.source.linkage.link_complete`, which measures
    exactly where the units have exact sets); the same steps in Python otherwise.
    """
    order = np.lexsort((rank[left] * n + rank[right], -scores))  # the two ranks as one key: a third faster
    left, right = left[order], right[order]
    if len(left) >= KERNEL_AFTER_EDGES:
        from .kernels.linkage import LinkageKernel

        kernel = LinkageKernel.loaded()
        if kernel is not None:
            roots, merged = kernel.link(n, left, right, *test.kernel_arguments())
            if test.exact is not None:
                test.exact.merged += merged
            return roots
    return _link_complete_python(n, left.tolist(), right.tolist(), test)


def _link_complete_python(n: int, left: list[int], right: list[int], test: PairTest) -> np.ndarray:
    """:func:`_link_complete` on the Python path, step by step as the kernel."""
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for a, b in zip(left, right):
        neighbours[a].append(b)
        neighbours[b].append(a)
    clusters = UnionFind(n)  # a cluster is named by its root
    members = [[u] for u in range(n)]
    edges = [len(adjacent) for adjacent in neighbours]
    across = {(min(a, b), max(a, b)): [1, False] for a, b in zip(left, right)}  # [edges across, a pair fails]
    for a, b in zip(left, right):
        a, b = clusters.find(a), clusters.find(b)
        if a == b:
            continue
        pair = across[min(a, b), max(a, b)]
        if pair[1]:
            continue
        if pair[0] != len(members[a]) * len(members[b]):
            ours, theirs = members[a], members[b]
            if not test.passes(np.repeat(ours, len(theirs)), np.tile(theirs, len(ours))).all():
                pair[1] = True
                continue
        keep, gone = (a, b) if edges[a] >= edges[b] else (b, a)
        del across[min(a, b), max(a, b)]
        for member in members[gone]:
            for other in neighbours[member]:
                other = clusters.find(other)
                if other == gone or other == keep:
                    continue
                moved = across.pop((min(gone, other), max(gone, other)), None)
                if moved is None:  # already handed over, through another edge
                    continue
                kept = across.setdefault((min(keep, other), max(keep, other)), [0, False])
                kept[0] += moved[0]
                kept[1] |= moved[1]
        clusters.parent[gone] = keep  # ``keep`` stays the root: the counts are filed under it
        members[keep] += members[gone]
        members[gone] = []
        edges[keep] += edges[gone]
    return clusters.roots()
