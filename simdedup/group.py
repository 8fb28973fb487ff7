"""Grouping near pairs into clusters, verified, without chaining, and describing each cluster.

1. Documents with identical fingerprints (and identical sketches, when there are sketches) form
   one *unit*: 100,000 copies of one document cost linear work, and the pair search runs on
   distinct units only.
2. Candidate pairs are units whose fingerprints are within ``k`` bits (:mod:`simdedup.pairs`),
   and with ``bands`` also units whose sketches share a band. Units of documents with fewer than
   ``min_features`` features whose texts were not kept never pair up: they only group with
   exact copies (an estimate from a few features is noise; exactly, a short pair needs a higher
   resemblance instead, :func:`simdedup.similarity.needed`).
3. Verification (:mod:`simdedup.verify`) keeps the candidates whose similarity passes.
4. Linkage (:mod:`simdedup.linkage`) turns these edges into clusters, without chaining by
   default (complete linkage).

Each cluster reports its spread: every member's Hamming distance (and estimated similarity) to
the representative and the largest distance. The representative is the medoid: the member
fingerprint with the smallest total distance to all members (counting copies), ties to the
smallest id; clusters of more than :data:`MEDOID_LIMIT` distinct fingerprints use the most
frequent one instead, to keep the cost linear.

Output does not depend on input order: members are sorted by id, clusters by their first member;
ties between equally similar edges are broken by the units' smallest ids.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .linkage import link
from .options import LINKAGES, ClusterOptions
from .pairs import distinct, near_pairs
from .similarity import KeptText
from .verify import PairTest, unit_exact_sets, with_band_pairs

if TYPE_CHECKING:
    from .fingerprints import FingerprintSet

MEDOID_LIMIT = 2048
#: verification and linkage run on the units that may be in a cluster of two or more only, their
#: sketches gathered (False: on every unit, every unit's sketch gathered; the tests compare both)
NEEDED_UNITS_ONLY = True


@dataclass(frozen=True)
class Cluster:
    """A group of near-duplicate documents (indices into the input)."""

    members: tuple[int, ...]  # sorted by id
    representative: int
    distances: tuple[int, ...]  # of each member to the representative
    #: with sketches or texts, each member's score to the representative: the number that
    #: decides a pair (:attr:`quantity`: "resemblance" or "bag"), and whether it was measured
    #: exactly (else estimated from the sketches)
    scores: tuple[float, ...] | None = None
    measured: tuple[bool, ...] | None = None
    quantity: str | None = None
    #: under --similarity combined, which a bag passes too: each member's exact bag (None: not measured)
    bags: tuple[float | None, ...] | None = None

    @property
    def max_distance(self) -> int:
        return max(self.distances)


class StageTimes:
    """Where a run's time goes: seconds per stage, in order, with counts beside them (``-v``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, list[str]] = {}
        self._started = time.perf_counter()
        self._stage: str | None = None

    def start(self, stage: str) -> None:
        """End the current stage and start ``stage``."""
        now = time.perf_counter()
        if self._stage is not None:
            self.seconds[self._stage] = self.seconds.get(self._stage, 0.0) + now - self._started
        self._stage, self._started = stage, now

    def count(self, stage: str, number: int, what: str) -> None:
        self.counts.setdefault(stage, []).append(f"{number:,} {what}")

    def line(self) -> str:
        """One line: every stage with its seconds and counts."""
        self.start("")
        return ", ".join(
            f"{stage} {seconds:.2f} s" + (f" ({', '.join(self.counts[stage])})" if stage in self.counts else "")
            for stage, seconds in self.seconds.items()
            if stage
        )


@dataclass
class _Units:
    """Distinct (fingerprint, sketch) rows and which documents share each."""

    fps: np.ndarray  # (u, words) uint64
    sketches: np.ndarray | None  # (u, bins) uint8, when made (:meth:`sketches_of`)
    of_doc: np.ndarray  # unit of each document
    rank: np.ndarray  # order of each unit by its smallest document id
    first: np.ndarray  # a document of each unit
    doc_sketches: np.ndarray | None  # (n, bins) uint8: the documents' sketches

    def sketches_of(self, units: np.ndarray) -> np.ndarray | None:
        return None if self.doc_sketches is None else self.doc_sketches[self.first[units]]


def _units(ids: Sequence[str], fps: np.ndarray, sketches: np.ndarray | None, by_id: np.ndarray) -> _Units:
    """The units, their sketches not copied (a unit's are its first document's)."""
    if fps.shape[1] == 1 and sketches is None:
        _, first, of_doc = np.unique(fps[:, 0], return_index=True, return_inverse=True)
    else:
        first, of_doc = unique_units(fps, sketches)
    first_seen = np.full(len(first), len(ids), dtype=np.int64)
    np.minimum.at(first_seen, of_doc[by_id], np.arange(len(ids)))
    # Units have distinct first positions below len(ids), so counting gives their order (no sort).
    taken = np.zeros(len(ids), dtype=np.int64)
    taken[first_seen] = 1
    rank = np.cumsum(taken)[first_seen] - 1
    return _Units(fps[first], None, of_doc, rank, first, sketches)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (in sorted order) and the index of each row's distinct row.

    Like ``np.unique(rows, axis=0, return_inverse=True)`` in a fraction of its memory and time
    (see :func:`unique_units`).
    """
    first, of_row = unique_units(rows, None)
    return rows[first], of_row


def unique_units(fps: np.ndarray, sketches: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of the columns of ``fps`` followed by those of ``sketches`` viewed as
    uint64 (as one array of rows, never made), in sorted order: the first row of each, and the
    index of each row's distinct row. Rows are sorted on their first column (mostly distinct: a
    fingerprint), and only the runs that share it are sorted on all their columns and compared.
    """
    columns = [fps[:, w] for w in range(fps.shape[1])]
    if sketches is not None:
        wide = np.ascontiguousarray(sketches).view(np.uint64)
        columns += [wide[:, w] for w in range(wide.shape[1])]
    first = columns[0]
    order = np.argsort(first, kind="stable")
    ordered = first[order]
    same = ordered[1:] == ordered[:-1]
    del ordered
    new_group = np.ones(len(first), dtype=bool)
    new_group[1:] = ~same
    if len(columns) > 1 and same.any():
        in_run = np.zeros(len(first), dtype=bool)
        in_run[1:] |= same
        in_run[:-1] |= same
        at = np.flatnonzero(in_run)
        runs = order[at]
        order[at] = runs = runs[np.lexsort([c[runs] for c in columns][::-1])]  # stable: as a lexsort of all rows
        differs = np.zeros(len(at) - 1, dtype=bool)
        for column in columns[1:]:  # column by column: no copy of the sorted rows
            values = column[runs]
            differs |= values[1:] != values[:-1]
        new_group[at[1:][differs]] = True  # across two runs, the first column differs already
    group = np.cumsum(new_group) - 1
    of_row = np.empty(len(first), dtype=np.int64)
    of_row[order] = group
    return order[new_group], of_row


def _representative(
    ids: Sequence[str], docs: list[int], of_doc: dict[int, int], fps: np.ndarray, values: dict[int, int]
) -> int:
    """The medoid document of a cluster (see the module docstring)."""
    counts: dict[int, int] = {}
    for d in docs:
        counts[of_doc[d]] = counts.get(of_doc[d], 0) + 1
    distinct = list(counts)
    if len(distinct) == 1:
        best = set(distinct)
    elif len(distinct) <= 64:  # small clusters: Python ints beat numpy's per-call overhead
        totals = [sum((values[u] ^ values[v]).bit_count() * c for v, c in counts.items()) for u in distinct]
        low = min(totals)
        best = {u for u, t in zip(distinct, totals) if t == low}
    elif len(distinct) <= MEDOID_LIMIT:
        index = np.array(distinct)
        block = fps[index]
        dist = np.bitwise_count(block[:, None, :] ^ block[None, :, :]).sum(axis=2, dtype=np.int64)
        total = dist @ np.array([counts[u] for u in distinct])
        best = set(index[total == total.min()].tolist())
    else:
        top = max(counts.values())
        best = {u for u, c in counts.items() if c == top}
    return min((d for d in docs if of_doc[d] in best), key=ids.__getitem__)


def find_clusters(
    ids: Sequence[str],
    fps: np.ndarray,
    options: ClusterOptions,
    *,
    blocks: int | None = None,
    sketches: np.ndarray | None = None,
    sketch_of: str = "features",
    features: np.ndarray | None = None,
    new: np.ndarray | None = None,
    exact: Sequence[KeptText | None] | None = None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    times: StageTimes | None = None,
    release_texts: bool = False,
    hand_over: Any = None,
    texts_in_workers: Any = None,
) -> list[Cluster]:
    """Cluster near-duplicate documents as ``options`` decide (resolved here for the
    fingerprints' width when they are not: :meth:`ClusterOptions.resolve`).

    Args:
        ids: document ids (used for ordering and ties).
        fps: ``(n, words)`` uint64 fingerprints, row i for ``ids[i]``.
        options: how pairs are found, verified and linked, and whether single documents are
            clusters too (``singletons``).
        blocks: passed to :func:`simdedup.pairs.near_pairs`.
        sketches: ``(n, bytes)`` uint8 sketches to verify candidates with, or None (then every
            pair within k is an edge).
        sketch_of: what ``sketches`` are of (``"shingles"`` or ``"features"``), for options
            that are not resolved.
        features: number of features of each document (for ``min_features``): documents with
            fewer, and no kept text, only group with exact copies.
        new: for incremental runs, which documents are new (bool per document): pairs of two
            old documents are not looked at, and only clusters with a new document are returned.
        exact: the text of each document (:class:`simdedup.similarity.KeptText`; None for a
            document without), to verify with exact similarities instead of the sketches.
        pairs: candidate pairs of documents (two arrays of rows) found before, used instead of
            the search (a persistent index keeps its verified pairs): they must hold a pair of
            every two units within k that may pair, as the search would find them.
        times: where the time goes, stage by stage, with the pair counts (``dedup -v``).
        release_texts: empty ``exact`` (a list) and let each text go once its sets are made,
            for a caller that needs the texts no more: memory then holds about the larger of
            the texts and the sets, not both.
        hand_over: instead of ``sketches``, an object whose ``sketches`` this call takes (the
            attribute is None afterwards) and lets go once the sketches of the units that may
            pair are gathered: memory then holds both only for a moment. (An argument would
            stay held by the caller's frame until the call returns.)
        texts_in_workers: where ``exact`` holds handles of texts that worker processes keep,
            they (:class:`simdedup.run.TextsInWorkers`), which make the sets.

    Returns:
        Clusters sorted by their first member id; members sorted by id.
    """
    if not options.resolved:
        sketched = sketches is not None or (hand_over is not None and hand_over.sketches is not None)
        options = options.resolve(
            64 * fps.shape[1], sketch_of if sketched else None, n=len(ids), texts=exact is not None
        )
    k, linkage = options.k, options.linkage
    n = len(ids)
    if linkage not in LINKAGES:
        raise ValueError(f"linkage must be one of {', '.join(LINKAGES)}")
    if n == 0:
        return []
    if hand_over is not None:
        sketches, hand_over.sketches = hand_over.sketches, None
    if fps.shape[0] != n or (sketches is not None and len(sketches) != n):
        raise ValueError("ids, fps and sketches differ in length")
    times = times or StageTimes()
    times.start("units")
    by_id = np.array(sorted(range(n), key=ids.__getitem__), dtype=np.int64)
    exact_keys = None
    if exact is not None:  # documents of one unit have one text
        exact_keys = np.array([0 if e is None else e.digest() for e in exact], dtype=np.uint64).reshape(-1, 1)
    units = _units(ids, fps if exact_keys is None else np.hstack([fps, exact_keys]), sketches, by_id)
    if exact_keys is not None:  # the digest was part of the unit only
        units.fps = np.ascontiguousarray(units.fps[:, :-1])
    if exact is not None or options.bands:  # measured or banded: every unit's sketch
        units.sketches = units.sketches_of(np.arange(len(units.fps)))
    count = len(units.fps)
    eligible = np.arange(count)
    if features is not None and options.min_features > 0:
        measured = None if exact is None else np.array([e is not None for e in exact], dtype=bool)
        pairable = options.may_pair(features, measured)
        every = np.ones(count, dtype=bool)  # a unit may pair when each of its documents may
        np.logical_and.at(every, units.of_doc, pairable)
        eligible = np.flatnonzero(every)
    times.start("pair search")
    if pairs is not None:
        left, right = _unit_pairs(pairs, units.of_doc, eligible, count)
    elif k > 0 and len(eligible) > 1:
        left, right, _ = near_pairs(units.fps[eligible], k, blocks)
        left, right = eligible[left], eligible[right]
    else:
        left = right = np.empty(0, dtype=np.int64)
    if options.bands and units.sketches is not None and len(eligible) > 1:
        classes = None
        if exact_keys is not None:  # units that texts alone tell apart count once towards the band limit
            classes = unique_units(units.fps, units.sketches)[1]
        left, right = with_band_pairs(left, right, units.sketches, eligible, options.sketch_of, classes)
    if new is not None:
        unit_new = np.zeros(count, dtype=bool)
        unit_new[units.of_doc[np.asarray(new, dtype=bool)]] = True
        involves_new = unit_new[left] | unit_new[right]
        left, right = left[involves_new], right[involves_new]
    times.count("pair search", len(left), "candidate pairs")
    unit_exact = None
    if exact is not None and units.sketches is not None:
        times.start("exact sets")
        left, right, unit_exact = unit_exact_sets(
            units.sketches,
            units.of_doc,
            left,
            right,
            exact,
            options,
            release_texts,
            texts_in_workers,
        )
        times.count("exact sets", int(unit_exact.has.sum()), "documents")
    times.start("verification")
    unit_fps, unit_sketches, rank, sub, at = units.fps, units.sketches, units.rank, None, None
    if unit_sketches is None and units.doc_sketches is not None and not NEEDED_UNITS_ONLY:
        unit_sketches = units.sketches = units.sketches_of(np.arange(count))
    if unit_sketches is None and units.doc_sketches is not None:
        # Only a unit of a candidate pair or of several documents can be in a cluster of two or
        # more: verification and linkage run on these alone, with their sketches gathered.
        keep = np.bincount(units.of_doc, minlength=count) > 1
        keep[left] = keep[right] = True
        sub = np.flatnonzero(keep)
        del keep
        at = np.full(count, -1, dtype=np.int64)
        at[sub] = np.arange(len(sub))
        left, right = at[left], at[right]
        unit_fps, unit_sketches = units.fps[sub], units.sketches_of(sub)
        if hand_over is not None:
            units.doc_sketches = sketches = None
        rank = np.empty(len(sub), dtype=np.int64)  # the same order, counted among them
        rank[np.argsort(units.rank[sub])] = np.arange(len(sub))
    test = PairTest(unit_fps, unit_sketches, options, unit_exact)
    left, right, scores = test.verified(left, right)
    if unit_exact is not None:
        times.count("verification", unit_exact.merged, "pairs merged")
    times.count("verification", len(left), "verified")
    times.start("linkage")
    merged = unit_exact.merged if unit_exact is not None else 0
    label = link(linkage, len(unit_fps), left, right, scores, rank, test)
    if sub is not None:  # every other unit is a cluster of its own
        label, sub_label = np.arange(count), label
        label[sub] = sub[sub_label]
    if unit_exact is not None:
        times.count("linkage", unit_exact.merged - merged, "pairs merged")
    times.start("clusters")
    clusters = _describe(ids, fps, units, label[units.of_doc], by_id, options.singletons, test, at)
    if new is not None:
        clusters = [c for c in clusters if any(new[m] for m in c.members)]
    times.count("clusters", len(clusters), "clusters")
    times.start("")
    return clusters


def _unit_pairs(
    pairs: tuple[np.ndarray, np.ndarray], of_doc: np.ndarray, eligible: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of documents as the distinct pairs of their units (both eligible), left < right,
    in order: the form :func:`simdedup.pairs.near_pairs` gives."""
    a = of_doc[np.asarray(pairs[0], dtype=np.int64)]
    b = of_doc[np.asarray(pairs[1], dtype=np.int64)]
    may_pair = np.zeros(count, dtype=bool)
    may_pair[eligible] = True
    keep = (a != b) & may_pair[a] & may_pair[b]
    code = np.unique(np.minimum(a, b)[keep] * count + np.maximum(a, b)[keep])
    return code // count, code % count


def _describe(
    ids: Sequence[str],
    fps: np.ndarray,
    units: _Units,
    doc_label: np.ndarray,
    by_id: np.ndarray,
    singletons: bool,
    test: PairTest,
    at: np.ndarray | None = None,
) -> list[Cluster]:
    """The clusters of the labelled documents; ``at``: each unit's number in ``test`` (None:
    the unit's own)."""
    if not singletons:  # most documents of a large corpus have no duplicate: drop them first
        by_id = by_id[np.bincount(doc_label)[doc_label[by_id]] >= 2]
    if len(by_id) == 0:
        return []
    # A stable sort on the label keeps id order inside each group.
    grouped = by_id[np.argsort(doc_label[by_id], kind="stable")]
    bounds = [0, *(np.flatnonzero(np.diff(doc_label[grouped])) + 1).tolist(), len(grouped)]
    grouped_list, of_doc = grouped.tolist(), units.of_doc
    needed = distinct(of_doc[grouped])
    values = dict(
        zip(
            needed.tolist(),
            (sum(int(word) << (64 * w) for w, word in enumerate(row)) for row in units.fps[needed].tolist()),
        )
    )
    unit_of = dict(zip(grouped_list, of_doc[grouped].tolist()))
    clusters = []
    members: list[int] = []  # the units of every member and of its representative, for the
    representatives: list[int] = []  # similarities, computed for all clusters in one call
    itself: list[bool] = []  # whether the member is the representative
    for start, end in zip(bounds, bounds[1:]):
        docs = grouped_list[start:end]
        if len(docs) == 1:
            if test.sketches is None:
                clusters.append(Cluster((docs[0],), docs[0], (0,)))
            else:  # a document resembles itself exactly
                clusters.append(Cluster((docs[0],), docs[0], (0,), (1.0,), (True,), test.quantity))
            continue
        rep = _representative(ids, docs, unit_of, units.fps, values)
        rep_unit = unit_of[rep]
        dist = tuple((values[unit_of[d]] ^ values[rep_unit]).bit_count() for d in docs)
        members += [unit_of[d] for d in docs]
        representatives += [rep_unit] * len(docs)
        itself += [d == rep for d in docs]
        clusters.append(Cluster(tuple(docs), rep, dist, None))
    if test.sketches is not None and members:
        members_at, representatives_at = np.array(members), np.array(representatives)
        if at is not None:
            members_at, representatives_at = at[members_at], at[representatives_at]
        values, exact = test.scores(members_at, representatives_at)
        # A document resembles itself exactly, and so does one of its unit where units are told
        # apart by their texts (dedup: the same text); without texts, a unit is the same
        # fingerprint and sketch, which tell only an estimate.
        exact |= np.array(itself) | ((members_at == representatives_at) & (test.exact is not None))
        raw, measured = values.tolist(), exact.tolist()
        bags = None
        if test.measure == "combined" and test.exact is not None:  # the number that may have decided too
            bag_values = test.exact.jaccard("bag", members_at, representatives_at)
            bag_values[np.array(itself)] = 1.0
            bags = [None if np.isnan(b) else round(float(b), 3) for b in bag_values.tolist()]
        position = 0
        for i, cluster in enumerate(clusters):
            if cluster.scores is None:
                size = len(cluster.members)
                scores = tuple(round(s, 3) for s in raw[position : position + size])
                clusters[i] = replace(
                    cluster,
                    scores=scores,
                    measured=tuple(measured[position : position + size]),
                    quantity=test.quantity,
                    bags=None if bags is None else tuple(bags[position : position + size]),
                )
                position += size
    clusters.sort(key=lambda c: ids[c.members[0]])
    return clusters


def cluster_fingerprints(
    fingerprints: "FingerprintSet",
    options: ClusterOptions = ClusterOptions(),
    new: np.ndarray | None = None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    times: StageTimes | None = None,
    release_texts: bool = False,
    release_sketches: bool = False,
    texts_in_workers: Any = None,
) -> list[Cluster]:
    """Clusters of a loaded fingerprint set (see :func:`find_clusters`), with ``options``
    resolved for it unless they are already (:meth:`ClusterOptions.for_fingerprints`).

    With ``new`` (bool per document), only clusters with a new document, and no pair of two old
    documents (an incremental run against an old corpus). With ``pairs``, the candidate pairs of
    documents found before (a persistent index), instead of a search. With ``release_texts``,
    the texts kept for exact verification are let go as they are measured
    (``fingerprints.exact`` is None afterwards); with ``release_sketches``, the sketches once
    those of the units that may pair are gathered (``fingerprints.sketches`` is None afterwards).
    ``texts_in_workers``: the worker processes that keep the texts (:class:`simdedup.run.TextsInWorkers`).

    Raises:
        ValueError: an option out of range for the fingerprints.
    """
    if not options.resolved:
        options = options.for_fingerprints(fingerprints)
    exact = fingerprints.exact
    if release_texts and exact is not None:
        exact, fingerprints.exact = list(exact), None  # this list is then the texts' only holder
    return find_clusters(
        fingerprints.ids,
        fingerprints.fps,
        options,
        sketches=None if release_sketches else fingerprints.sketches,
        features=fingerprints.features,
        new=new,
        exact=exact,
        pairs=pairs,
        times=times,
        release_texts=release_texts,
        hand_over=fingerprints if release_sketches else None,
        texts_in_workers=texts_in_workers,
    )
