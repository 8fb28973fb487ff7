"""Connected components in tasks, for more verified pairs than the driver takes: large-star and
small-star (Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii, "Connected Components in
MapReduce and Beyond", SoCC 2014) over edge files in the work directory.

Nodes are cut into ``parts`` partitions by a hash of their number, and a round is two stages of
one task per partition, each reading its range of every file the stage before wrote:

- **large-star**, keyed by node ``u`` (every edge both ways): each neighbour of ``u`` larger than
  ``u`` is linked to the smallest of ``u`` and its neighbours. Out: ``(larger end, smaller end)``,
  to the partition of the larger end.
- **small-star**, keyed by the larger end ``u`` of each edge: ``u`` and its smaller neighbours are
  linked to the smallest of them. Out: each edge both ways, to the partition of its first node.

Both keep every component connected and lower its nodes' links; alternated, they end with each
component a star around its smallest node. A large-star task sees each of its nodes' whole
neighbourhood, so it counts the nodes still *unsettled* (a smaller neighbour and some other
neighbour); when no task finds one, its output edges are ``(node, smallest node of its
component)``: the labels :func:`.groups.components` gives on the driver. The rounds are named by
the edges, so a rerun skips the finished ones; each task's output is one file of int64 pairs,
sorted by the partition it goes to, with the offsets in the task's result.
"""

from __future__ import annotations

import math

import numpy as np

from .engine import Engine, Task
from .workdir import WorkDir

STAGE = "components"
#: edges (each way) a partition is planned for: 16 bytes each, a few copies while a task sorts
EDGES_PER_TASK = 1 << 24
_MIX = np.uint64(0x9E3779B97F4A7C15)
_EDGE_BYTES = 16


def plan_parts(edges: int, workers: int) -> int:
    """Partitions for ``edges`` undirected edges: two per worker, or more to keep each task's
    edges (both ways) under :data:`EDGES_PER_TASK`."""
    return max(2 * workers, math.ceil(2 * edges / EDGES_PER_TASK))


def partition_of(nodes: np.ndarray, parts: int) -> np.ndarray:
    """The partition of each node (a multiplicative hash: consecutive numbers spread)."""
    return (((nodes.astype(np.uint64) * _MIX) >> np.uint64(32)) % np.uint64(parts)).astype(np.int64)


def _distinct_edges(edges: np.ndarray) -> np.ndarray:
    """Rows of ``(m, 2)`` int64 sorted by (first, second), repeats dropped."""
    if not len(edges):
        return edges
    edges = edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    keep = np.ones(len(edges), dtype=bool)
    keep[1:] = (edges[1:] != edges[:-1]).any(axis=1)
    return edges[keep]


def _runs(first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of equal values of a sorted column."""
    starts = np.flatnonzero(np.concatenate(([True], first[1:] != first[:-1])))
    return starts, np.diff(np.append(starts, len(first)))


def large_star(edges: np.ndarray) -> tuple[np.ndarray, int]:
    """Large-star over the directed edges ``(u, v)`` of some nodes ``u`` (each node with all its
    edges): the edges ``(v, m(u))`` for each neighbour ``v > u``, ``m(u)`` the smallest of ``u``
    and its neighbours; and the number of unsettled nodes (a smaller neighbour and another one)."""
    edges = _distinct_edges(edges)
    if not len(edges):
        return edges, 0
    node, other = edges[:, 0], edges[:, 1]
    starts, lengths = _runs(node)
    low = np.minimum(np.minimum.reduceat(other, starts), node[starts])
    unsettled = int(((low < node[starts]) & (lengths > 1)).sum())
    larger = other > node
    return np.column_stack((other[larger], np.repeat(low, lengths)[larger])), unsettled


def small_star(edges: np.ndarray) -> np.ndarray:
    """Small-star over the edges ``(u, w)``, ``w < u``, of some nodes ``u`` (each node with all
    its smaller neighbours): ``u`` and each ``w`` linked to the smallest ``w``, as undirected
    edges ``(a, b)``."""
    edges = _distinct_edges(edges)
    if not len(edges):
        return edges
    node, other = edges[:, 0], edges[:, 1]
    starts, lengths = _runs(node)
    low = np.minimum.reduceat(other, starts)  # every neighbour here is smaller than its node
    to_low = np.repeat(low, lengths)
    linked = other != to_low
    return np.concatenate([np.column_stack((node[starts], low)), np.column_stack((other[linked], to_low[linked]))])


def _write_routed(work: WorkDir, name: str, edges: np.ndarray, parts: int) -> dict:
    """``edges`` as ``NAME.bin``, sorted by the partition of their first node; the offsets (in
    edges) of each partition's range go in the result."""
    where = partition_of(edges[:, 0], parts)
    order = np.argsort(where, kind="stable")
    work.write_bytes(f"{name}.bin", np.ascontiguousarray(edges[order], dtype=np.int64).tobytes())
    offsets = np.searchsorted(where[order], np.arange(parts + 1))
    return {"count": len(edges), "bytes": _EDGE_BYTES * len(edges), "offsets": offsets.tolist()}


def _read_ranges(work: WorkDir, ranges: list[tuple[str, int, int]]) -> np.ndarray:
    pieces = [
        np.frombuffer(work.read_range(f"{name}.bin", _EDGE_BYTES * first, _EDGE_BYTES * last), dtype=np.int64)
        for name, first, last in ranges
        if last > first
    ]
    return np.concatenate(pieces).reshape(-1, 2) if pieces else np.empty((0, 2), dtype=np.int64)


def large_star_task(work: WorkDir, name: str, ranges: list[tuple[str, int, int]], parts: int) -> dict:
    """One partition's large-star: out to the partitions of the larger ends (for small-star)."""
    edges, unsettled = large_star(_read_ranges(work, ranges))
    return {**_write_routed(work, name, edges, parts), "unsettled": unsettled}


def small_star_task(work: WorkDir, name: str, ranges: list[tuple[str, int, int]], parts: int) -> dict:
    """One partition's small-star: out both ways, to the partitions of either end (for large-star)."""
    edges = small_star(_read_ranges(work, ranges))
    return _write_routed(work, name, np.concatenate([edges, edges[:, ::-1]]), parts)


def _ranges_to(names: list[str], results: list[dict], part: int) -> list[tuple[str, int, int]]:
    return [(name, r["offsets"][part], r["offsets"][part + 1]) for name, r in zip(names, results)]


def components(
    engine: Engine, work: WorkDir, n: int, left: np.ndarray, right: np.ndarray, parts: int, name: str
) -> np.ndarray:
    """The smallest node of each node's connected component (edges ``left``-``right``, nodes
    ``0 .. n - 1``), found in rounds of large-star and small-star tasks; ``name`` (a digest of
    the edges) names their files and tasks."""
    label = np.arange(n, dtype=np.int64)
    if not len(left):
        return label
    folder = f"{STAGE}/{name}-p{parts}"
    edges = np.column_stack((left, right)).astype(np.int64)
    both = np.concatenate([edges, edges[:, ::-1]])
    where = partition_of(both[:, 0], parts)
    order = np.argsort(where, kind="stable")
    offsets = np.searchsorted(where[order], np.arange(parts + 1)).tolist()
    # written by the driver on every run: it holds the edges, and a damaged copy is never reused
    work.write_bytes(f"{folder}/input.bin", np.ascontiguousarray(both[order]).tobytes())
    names, results = [f"{folder}/input"], [{"offsets": offsets}]
    round_ = 0
    while True:
        round_ += 1
        for step, function in (("large", large_star_task), ("small", small_star_task)):
            stage_names = [f"{folder}/{round_:03d}-{step}-{p:04d}" for p in range(parts)]
            tasks = [
                Task(
                    f"{name}-p{parts}-{round_:03d}-{step}-{p:04d}",
                    function,
                    (work, stage_name, _ranges_to(names, results, p), parts),
                )
                for p, stage_name in enumerate(stage_names)
            ]
            results = engine.run(work, STAGE, tasks)
            names = stage_names
            if step == "large" and not sum(r["unsettled"] for r in results):
                stars = _read_ranges(work, [(file, 0, r["count"]) for file, r in zip(names, results)])
                label[stars[:, 0]] = stars[:, 1]
                return label
