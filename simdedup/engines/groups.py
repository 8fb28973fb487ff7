"""Stages 3 and 4: the rows cut into independent groups, then clustered group by group.

A *group* is a union of connected components of the graph the one-process run links over, so
clustering each group alone with :func:`simdedup.group.find_clusters` gives exactly the
clusters the whole run gives (every step of every linkage only looks at verified pairs and at
members of one cluster). Groups are made coarse on purpose, from what the driver holds cheaply:

- rows with one fingerprint are in one group (the one-process units also tell sketches and
  texts apart: finer, so contained);
- two fingerprints within ``k`` are joined when some pair of their documents could be verified:
  their sketches' estimate passes the test (``--verify sketch``, ``cluster``) or exact
  verification may pass them (:func:`simdedup.verify.may_pass`);
  a document with fewer than ``--min-features`` features never pairs.

Connected components by label propagation with pointer jumping (the minimum row of a component
names it), on the driver (beyond ``Plan.driver_pairs`` verified pairs, the same labels come from
tasks: :mod:`.components`); the linkage runs in tasks, one call for a batch of whole groups, and
writes the records with their sort keys (the first member's id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cluster_lines import cluster_records, record_line
from ..fingerprints.sets import FingerprintSet, TextBudget, left_out
from ..group import Cluster, cluster_fingerprints, unique_rows, unique_units
from ..options import ClusterOptions
from ..verify import decided_by, may_pass, with_band_pairs
from ..write import json_text_bytes
from .fingerprints import read_part, read_texts
from .workdir import WorkDir


def kept_rows(hashes: np.ndarray, ids_of: Any, key_of: Any) -> np.ndarray:
    """Which rows keep their id: of rows with one id, the one
    :func:`simdedup.fingerprints.sets.left_out` keeps. ``ids_of(rows)`` and ``key_of(rows)``
    give the ids and record keys of the rows whose 64-bit id hash is not unique, the only ones
    compared."""
    keep = np.ones(len(hashes), dtype=bool)
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(counts[inverse] > 1)
    if len(shared):
        keep[left_out(shared, ids_of(shared), key_of)] = False
    return keep


def budget_mask(nbytes: np.ndarray) -> np.ndarray:
    """Which kept texts (``nbytes`` in row order, -1: none) the one-process run keeps under its
    memory budget (:class:`simdedup.fingerprints.sets.TextBudget`): those before the first
    that would pass it."""
    has = nbytes >= 0
    over = np.flatnonzero(np.cumsum(np.where(has, nbytes, 0)) > TextBudget.limit)
    if len(over):
        has[over[0] :] = False
    return has


@dataclass
class Values:
    """The distinct fingerprints of the kept rows, and what the pair search needs of them."""

    values: np.ndarray  # (u, words) uint64, sorted
    of_row: np.ndarray  # the value of each kept row
    searched: np.ndarray  # values with a row of enough features: the pair search's input


def distinct_values(fps: np.ndarray, pairable: np.ndarray) -> Values:
    """The distinct fingerprints of the rows, those of a row that may pair searched
    (:meth:`simdedup.options.ClusterOptions.may_pair`)."""
    values, of_row = unique_rows(fps) if fps.shape[1] > 1 else _unique_column(fps)
    eligible = np.zeros(len(values), dtype=bool)
    eligible[of_row[pairable]] = True
    return Values(values, of_row, np.flatnonzero(eligible))


def _unique_column(fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, of_row = np.unique(fps[:, 0], return_inverse=True)
    return values.reshape(-1, 1), of_row.ravel()


def band_value_pairs(
    fps: np.ndarray, sketches: np.ndarray, pairable: np.ndarray, values: Values, decision: ClusterOptions
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of values (numbers of distinct fingerprints) with rows whose sketches share a
    band, as the one-process run finds them over its units (:func:`simdedup.verify.with_band_pairs`):
    the distinct fingerprint and sketch of the rows, those whose every row may pair."""
    first, of_row = unique_units(fps, sketches)
    every = np.ones(len(first), dtype=bool)
    np.logical_and.at(every, of_row, pairable)
    empty = np.zeros(0, dtype=np.int64)
    a, b = with_band_pairs(empty, empty, sketches[first], np.flatnonzero(every), decision.sketch_of)
    a, b = values.of_row[first[a]], values.of_row[first[b]]
    keep = a != b
    code = np.unique(np.minimum(a, b)[keep] * len(values.values) + np.maximum(a, b)[keep])
    return code // len(values.values), code % len(values.values)


#: sketch combinations of pairs of values with several sketches tested at once
COMBINATIONS_AT_ONCE = 1 << 20


def verified_pairs(
    left: np.ndarray,
    right: np.ndarray,
    values: Values,
    sketches: np.ndarray | None,
    eligible_rows: np.ndarray,
    decision: ClusterOptions,
    exact: bool,
) -> np.ndarray:
    """Which value pairs (``left``, ``right``: value numbers) some pair of their rows with
    enough features could pass: any combination of the two values' distinct sketches."""
    of_row = values.of_row
    if sketches is None or not len(left):
        return np.ones(len(left), dtype=bool)
    rows = np.flatnonzero(eligible_rows)
    keyed = np.hstack(
        [of_row[rows].astype(np.uint64).reshape(-1, 1), np.ascontiguousarray(sketches[rows]).view(np.uint64)]
    )
    variants, _ = unique_rows(keyed)  # sorted by value number, then sketch
    owner = variants[:, 0].astype(np.int64)
    variant_sketches = np.ascontiguousarray(variants[:, 1:]).view(np.uint8)
    first = np.searchsorted(owner, np.arange(len(values.values)))
    count = np.searchsorted(owner, np.arange(len(first)), side="right") - first

    def test(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return may_pass(variant_sketches, a, b, decision, exact)

    single = (count[left] == 1) & (count[right] == 1)
    out = np.zeros(len(left), dtype=bool)
    out[single] = test(first[left[single]], first[right[single]])
    several = np.flatnonzero(~single)  # values with several sketches: every combination
    combinations = count[left[several]] * count[right[several]]
    ends = np.cumsum(combinations)
    start = 0
    while start < len(several):  # pairs whose combinations come to about COMBINATIONS_AT_ONCE
        stop = max(
            start + 1,
            int(np.searchsorted(ends, ends[start] - combinations[start] + COMBINATIONS_AT_ONCE, side="right")),
        )
        pairs, sizes = several[start:stop], combinations[start:stop]
        offsets = np.cumsum(sizes) - sizes
        j = np.arange(int(sizes.sum())) - np.repeat(offsets, sizes)  # combination j of its pair
        across = np.repeat(count[right[pairs]], sizes)
        passed = test(
            np.repeat(first[left[pairs]], sizes) + j // across, np.repeat(first[right[pairs]], sizes) + j % across
        )
        out[pairs] = np.logical_or.reduceat(passed, offsets)
        start = stop
    return out


def components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The smallest node of each node's connected component (edges ``left``-``right``)."""
    label = np.arange(n, dtype=np.int64)
    if not len(left):
        return label
    while True:
        low = np.minimum(label[left], label[right])
        new = label.copy()
        np.minimum.at(new, left, low)
        np.minimum.at(new, right, low)
        np.minimum.at(new, label, new.copy())  # the node a node pointed to takes its new label too
        while True:  # pointer jumping
            jumped = new[new]
            if np.array_equal(jumped, new):
                break
            new = jumped
        if np.array_equal(new, label):
            return label
        label = new


def batches(sizes: np.ndarray, rows_per_task: int) -> list[np.ndarray]:
    """Consecutive groups (by number) cut into batches of about ``rows_per_task`` rows."""
    cuts = [0]
    total = 0
    for i, size in enumerate(sizes.tolist()):
        total += size
        if total >= rows_per_task:
            cuts.append(i + 1)
            total = 0
    if cuts[-1] != len(sizes):
        cuts.append(len(sizes))
    return [np.arange(a, b) for a, b in zip(cuts, cuts[1:])]


# --- the tasks ----------------------------------------------------------------------------


def _records(cluster: Cluster, ids: list[str], sizes: np.ndarray, decision: ClusterOptions) -> bytes:
    return b"".join(
        json_text_bytes(record_line(record)) + b"\n" for record in cluster_records(cluster, ids, sizes, decision)
    )


def _load(
    work: WorkDir, part_starts: np.ndarray, rows: np.ndarray, texts: np.ndarray | None, folding: int
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, list | None]:
    """ids, fingerprints, features, sizes, sketches and kept texts (where ``texts`` says) of
    the global ``rows`` (sorted), read from the parts that hold them."""
    part_of = np.searchsorted(part_starts, rows, side="right") - 1
    ids: list[str] = []
    fps, features, sizes, sketches, exact = [], [], [], [], []
    for part in np.unique(part_of).tolist():
        mine = part_of == part
        local = rows[mine] - part_starts[part]
        columns = read_part(work, part)
        ids += [columns.ids[i] for i in local.tolist()]
        fps.append(columns.values[local])
        features.append(columns.features[local])
        sizes.append(columns.sizes[local])
        if columns.sketches is not None:
            sketches.append(columns.sketches[local])
        if texts is not None:
            wanted = texts[mine]
            read = read_texts(work, part, local, folding)
            exact += [t if w else None for t, w in zip(read, wanted.tolist())]
    return (
        ids,
        np.concatenate(fps),
        np.concatenate(features),
        np.concatenate(sizes),
        np.concatenate(sketches) if sketches else None,
        exact if texts is not None else None,
    )


def linkage_task(
    work: WorkDir,
    name: str,
    part_starts: np.ndarray,
    rows: np.ndarray,
    texts: np.ndarray | None,
    decision: ClusterOptions,
    folding: int,
) -> dict:
    """Cluster a batch of whole groups (``rows``, sorted) in one call: a union of groups is
    itself a union of components, so one call gives what one call per group would. Writes the
    records with their keys to ``records/NAME``."""
    ids, fps, features, sizes, sketches, exact = _load(work, part_starts, rows, texts, folding)
    fingerprints = FingerprintSet(ids, fps, 64 * fps.shape[1], None, [], features, sketches, sizes, exact=exact)
    clusters = cluster_fingerprints(fingerprints, decision)
    return write_records(work, name, [(ids[c.members[0]], _records(c, ids, sizes, decision)) for c in clusters])


def singletons_task(
    work: WorkDir, name: str, part: int, local: np.ndarray, decision: ClusterOptions, texts: bool = False
) -> dict:
    """The one-member clusters (``--singletons``) of the rows ``local`` of a part that are in no group."""
    columns = read_part(work, part)
    out = []
    alone = Cluster((0,), 0, (0,))
    if columns.sketches is not None:  # a document resembles itself exactly
        alone = Cluster((0,), 0, (0,), (1.0,), (True,), decided_by(decision, texts))
    for row in local.tolist():
        ids = [columns.ids[row]]
        out.append((ids[0], _records(alone, ids, columns.sizes[row : row + 1], decision)))
    return write_records(work, name, out)


def write_records(work: WorkDir, name: str, records: list[tuple[str, bytes]], sample: int = 64) -> dict:
    """Records sorted by key, stored as ``records/NAME.npz``; returns their number, bytes and a
    sample of the keys (for the output ranges)."""
    records.sort(key=lambda item: item[0])
    keys = [key.encode("utf-8", "surrogatepass") for key, _ in records]
    lines = [line for _, line in records]
    step = max(1, len(keys) // sample)
    work.write_arrays(
        f"records/{name}.npz",
        keys=np.frombuffer(b"".join(keys), dtype=np.uint8),
        key_ends=np.cumsum([len(k) for k in keys], dtype=np.int64),
        lines=np.frombuffer(b"".join(lines), dtype=np.uint8),
        line_ends=np.cumsum([len(line) for line in lines], dtype=np.int64),
    )
    return {"count": len(records), "bytes": sum(map(len, lines)), "sample": [key for key, _ in records[::step]]}


def output_task(
    work: WorkDir, names: list[str], low: str | None, high: str | None, target: WorkDir, part_name: str
) -> dict:
    """One output part: the records of every ``records/NAME`` with ``low <= key < high``, merged
    in key order (the order of the one-process output), written to ``target``."""
    import bisect
    import heapq

    runs = []
    for name in names:
        arrays = work.read_arrays(f"records/{name}.npz")
        key_ends, line_ends = arrays["key_ends"], arrays["line_ends"]
        key_blob, line_blob = arrays["keys"].tobytes(), arrays["lines"].tobytes()
        key_starts = np.concatenate(([0], key_ends[:-1])).tolist()
        keys = [key_blob[a:b].decode("utf-8", "surrogatepass") for a, b in zip(key_starts, key_ends.tolist())]
        first = 0 if low is None else bisect.bisect_left(keys, low)
        last = len(keys) if high is None else bisect.bisect_left(keys, high)
        line_starts = np.concatenate(([0], line_ends[:-1]))
        runs.append([(keys[i], line_blob[line_starts[i] : line_ends[i]]) for i in range(first, last)])
    data = b"".join(line for _, line in heapq.merge(*runs, key=lambda item: item[0]))
    target.write_bytes(part_name, data)
    return {"count": sum(map(len, runs)), "bytes": len(data)}


def output_bounds(samples: list[str], parts: int) -> list[str | None]:
    """``parts + 1`` bounds of the output parts (None: open), from a sample of the keys."""
    keys = sorted(set(samples))
    inner = [keys[(i * len(keys)) // parts] for i in range(1, parts)] if keys else []
    inner = sorted(set(inner))
    return [None, *inner, None]
