"""A persistent index of fingerprints: add batches, query one document, cluster everything.

An index is a directory: the SQLite catalog (:mod:`simdedup.store.catalog`) and immutable
segment files (:mod:`simdedup.store.segments`). Its fingerprint settings, k, Manku blocks and
verification options are fixed when it is created.

*Equivalence.* Documents of equal fingerprint and sketch share a *unit* (as in
:mod:`simdedup.group`). Each add searches its new units against every segment's tables and
against each other, verifies the candidates as ``cluster`` does, and logs the verified pairs
of units in the catalog. Every verified pair of units that may pair (their documents have
``min_features`` features) is then in the log: of two such units, the one added last was
searched against a segment holding the other, or both came in one batch. :func:`cluster` hands
the log to :func:`simdedup.group.cluster_fingerprints` instead of searching again, which
makes its output byte for byte that of ``simdedup cluster -k K`` over every fingerprint added.

*Safety.* One writer at a time (:class:`WriterLock`); a new segment file is written and
fsynced under a name the catalog does not know, then one catalog transaction makes it and the
add visible. A process killed before the commit leaves an unknown file, which the next writer
removes; after it, the add is complete. Readers take one catalog snapshot. A failure of the file
system is one line naming the index (:func:`~simdedup.store.catalog.writing`), the index as it was.

*Growth.* The segment an add writes also takes in the newest segments while they are not much
larger (:func:`tail_to_merge`): segments stay O(log N) however many adds came before.
"""

from __future__ import annotations

import json
import math
import os
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..errors import IncompatibleSettingsError, SimdedupError
from ..fingerprints import FingerprintSet, load_fingerprints
from ..fingerprints.record import SETTING_KEYS, FingerprintRecord, describe_settings, sketch_kind
from ..group import Cluster, cluster_fingerprints
from ..options import DECISION_FIELDS, ClusterOptions
from ..owned import refuse_inside
from ..pairs import MAX_TABLES, near_pairs, popcount_distance
from ..similarity import MEASURES
from ..verify import PairTest, may_pass
from .catalog import (
    OWN_SEGMENT,
    SEGMENTS,
    Catalog,
    IndexUseError,
    WriterLock,
    create_catalog,
    creating,
    damaged,
    now,
    reading,
    sync_directory,
    writing,
)
from .segments import (
    DamagedIndexError,
    Segment,
    Tables,
    content_order,
    default_blocks,
    first_of_units,
    write_segment,
)

__all__ = [
    "Index",
    "IndexUseError",
    "DamagedIndexError",
    "AddResult",
    "Match",
    "create",
    "add",
    "query",
    "cluster",
    "compact",
    "stats",
]

#: an add merges the newest segments into its own while they are not larger than this many
#: times the rows gathered (:func:`tail_to_merge`)
TIER_RATIO = 2
#: a search of this many contents lets the pages it read of a segment go, table by table (a
#: query's few stay mapped: reading them again would cost more than they hold)
RELEASE_AFTER = 4096


def fingerprint_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of records or of a fingerprinting method in one comparable form."""
    normal = {key: settings.get(key) for key in SETTING_KEYS}
    normal["ties"] = None if normal["ties"] in (None, "zero") else normal["ties"]
    normal["sketch"] = settings.get("sketch") or 0
    return normal


@dataclass
class AddResult:
    """What an add did: the documents added, and the clusters that hold new documents (as
    ``cluster --against`` gives them) over ``fingerprints`` with ``new`` marking the batch
    (without a report, no clusters, and ``fingerprints`` is the batch as given)."""

    added: int
    replaced: int
    pairs: int
    clusters: list[Cluster]
    fingerprints: FingerprintSet
    new: np.ndarray
    repeated: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Match:
    """A document of the index that is a near-duplicate of the query: its distance, and the
    score of the pair (the resemblance, or the bag for sketches of features) as the sketches
    estimate it (None without sketches)."""

    id: str
    distance: int
    score: float | None
    cluster: str  # the id of its cluster in :meth:`Index.cluster`
    quantity: str | None = None  # what the score is (simdedup.verify.decided_by)

    def as_dict(self) -> dict[str, Any]:
        """The match as cluster lines name its fields (``resemblance_estimate``)."""
        out: dict[str, Any] = {"id": self.id, "cluster": self.cluster, "distance": self.distance}
        if self.score is not None and self.quantity is not None:
            out[f"{self.quantity}_estimate"] = self.score
        return out


@dataclass
class _Rows:
    """Rows gathered from segments: their columns side by side."""

    seqs: np.ndarray
    units: np.ndarray
    fps: np.ndarray
    sketches: np.ndarray | None
    features: np.ndarray
    sizes: np.ndarray


class _Indexed:
    """``array[index[i]]`` for the ``i`` asked, without a copy of the whole selection."""

    def __init__(self, array: np.ndarray, index: np.ndarray):
        self.array, self.index = array, index

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, which: Any) -> np.ndarray:
        return self.array[self.index[which]]

    def sub(self, which: np.ndarray) -> "_Indexed":
        return _Indexed(self.array, self.index[which])


class _Merge:
    """Rows of several parts, each a :class:`_Rows` in memory or a :class:`Segment`, with the
    rows taken of each (in that part's content order), merged into content order: the rows of
    a new segment (:class:`~simdedup.store.segments.SegmentRows`). Only the fingerprints, units
    and features are gathered whole; the other columns a stretch at a time."""

    def __init__(self, parts: list[tuple[Any, np.ndarray]], words: int, sketch_bytes: int, options: ClusterOptions):
        self.parts = [(source, np.asarray(rows, dtype=np.int64)) for source, rows in parts]
        self.starts = np.cumsum([0] + [len(rows) for _, rows in self.parts])
        self.rows = int(self.starts[-1])
        self.words, self.sketch_bytes, self.has_sketches = words, sketch_bytes, sketch_bytes > 0
        self.order: np.ndarray | None = None
        fps = self._column("fps")
        if len(self.parts) > 1:  # each part is in content order already
            self.order = content_order(fps, _Taker(self) if self.has_sketches else None)
            fps = fps[self.order]
        self.fps = fps
        self.units = self._column("units")
        self.pairable = options.may_pair(self._column("features"))

    def _column(self, name: str) -> np.ndarray:
        """A whole (small) column, in content order once :attr:`order` is known."""
        parts = [_from(source, name, rows) for source, rows in self.parts]
        column = np.concatenate(parts) if len(parts) != 1 else parts[0]
        return column if self.order is None else column[self.order]

    def chunk(self, name: str, start: int, stop: int) -> np.ndarray:
        if self.order is None and len(self.parts) == 1:
            source, rows = self.parts[0]
            return _from(source, name, rows[start:stop])
        at = np.arange(start, stop) if self.order is None else self.order[start:stop]
        return self._take(name, at)

    def _take(self, name: str, at: np.ndarray) -> np.ndarray:
        """``name``'s values at positions ``at`` of the parts one after another."""
        part = np.searchsorted(self.starts, at, side="right") - 1
        shape = {"fps": (self.words,), "sketches": (self.sketch_bytes,)}.get(name, ())
        out = np.empty((len(at), *shape), dtype=np.uint64 if name == "fps" else np.uint8 if shape else np.int64)
        for number in np.unique(part).tolist():
            source, rows = self.parts[number]
            which = part == number
            out[which] = _from(source, name, rows[at[which] - self.starts[number]])
        return out


def _from(source: Any, name: str, rows: np.ndarray) -> np.ndarray:
    """Column ``name`` at ``rows`` of a :class:`_Rows` or of a :class:`Segment`."""
    if isinstance(source, Segment):
        taken = source.take(name, rows)
        source.release()  # its pages are read once: out of this process's memory
        return taken
    column = getattr(source, name)
    return column[rows]


class _Taker:
    """The sketches of a :class:`_Merge`'s positions, for :func:`content_order`."""

    def __init__(self, merge: _Merge):
        self.merge = merge

    def __getitem__(self, at: np.ndarray) -> np.ndarray:
        return self.merge._take("sketches", np.asarray(at, dtype=np.int64))


#: the widest fingerprint a catalog may name (a wider one is damage, not a method's)
MAX_BITS = 4096


def _counter(value: Any, least: int = 0) -> bool:
    return type(value) is int and value >= least


def checked_settings(directory: str, settings: dict[str, Any]) -> tuple[dict[str, Any], ClusterOptions, int]:
    """The fingerprint settings, verification options and blocks of a catalog's ``settings``,
    each checked as :func:`create` makes them: a value out of range (edited, damaged, another
    program's) is :func:`~simdedup.store.catalog.damaged`, one line, before anything sizes work
    or memory by it.

    Raises:
        DamagedIndexError: a setting is missing, of the wrong type or out of range.
    """
    from ..limits import MAX_SKETCH_BYTES

    def bad(name: str) -> DamagedIndexError:
        return damaged(directory, f"setting {name} = {json.dumps(settings.get(name))[:80]}")

    fingerprints = settings.get("fingerprints")
    if not isinstance(fingerprints, dict) or set(fingerprints) != set(fingerprint_settings({})):
        raise bad("fingerprints")
    bits = fingerprints["bits"]  # 64 or 128 for simhash, 256 for nilsimsa
    if not _counter(bits, 64) or bits % 64 or bits > MAX_BITS or not _counter(fingerprints["sketch"]):
        raise bad("fingerprints")
    if fingerprints["sketch"] > MAX_SKETCH_BYTES or not isinstance(fingerprints["method"], str):
        raise bad("fingerprints")
    verification = settings.get("verification")
    if not isinstance(verification, dict) or not set(verification) <= set(DECISION_FIELDS):
        raise bad("verification")
    # options stored before a field existed take its default
    options = ClusterOptions(**verification, resolved=True, sketch_of=sketch_kind(fingerprints))
    scores = (options.min_similarity, options.min_resemblance)
    if not _counter(options.k) or options.k >= bits or not _counter(options.min_features) or options.bands:
        raise bad("verification")
    if options.similarity not in MEASURES or not all(type(x) in (int, float) and 0 <= x <= 1 for x in scores):
        raise bad("verification")
    blocks = settings.get("blocks")
    if not _counter(blocks, 1) or blocks > bits or (options.k and not options.k < blocks):
        raise bad("blocks")
    if math.comb(blocks, options.k) > MAX_TABLES:
        raise bad("blocks")
    for name, least in (("next_seq", 0), ("next_unit", 0), ("next_segment", 1)):
        if not _counter(settings.get(name), least):
            raise bad(name)
    return fingerprints, options, blocks


class Index:
    """An open index. Use as a context manager, or call :meth:`close`."""

    def __init__(self, directory: str):
        self.directory = directory
        self.catalog = Catalog(directory)
        try:
            with reading(directory):
                self.settings, self.options, blocks = checked_settings(directory, self.catalog.settings)
        except BaseException:
            self.catalog.close()
            raise
        self.bits: int = self.settings["bits"]
        self.words = self.bits // 64
        self.sketch_bytes: int = self.settings["sketch"]
        self.k: int = self.options.k  # type: ignore[assignment]
        self.tables = Tables(self.bits, self.k, blocks)
        self._segments: list[Segment] = []
        self._removed = np.zeros(0, dtype=np.int64)

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        for segment in self._segments:
            segment.close()
        self.catalog.close()

    # --- reading -------------------------------------------------------------------------

    def _open_segments(self) -> None:
        """The segments and removed rows of the current snapshot (a compaction may remove the
        files of the one read just before: read again)."""
        for attempt in range(3):
            rows, self._removed = self.catalog.segments(), self.catalog.removed()
            kept = {(segment.name, segment.checksum): segment for segment in self._segments}
            try:  # segments already open stay open (with the blocks they checked)
                opened = [
                    kept.get((file, checksum))
                    or Segment(os.path.join(self.directory, SEGMENTS, file), file, size, checksum)
                    for _, file, _, size, checksum in rows
                ]
            except DamagedIndexError:
                connection = self.catalog.connection
                if attempt == 2 or not connection.in_transaction:
                    raise
                connection.execute("COMMIT")  # a newer snapshot: did a compaction replace the files?
                connection.execute("BEGIN")
                if [r[0] for r in self.catalog.segments()] == [r[0] for r in rows]:
                    raise
                continue
            for segment in self._segments:
                if segment not in opened:
                    segment.close()
            self._segments = opened
            for segment, (_, file, count, _, _) in zip(opened, rows):
                if segment.rows != count:
                    raise damaged(self.directory, f"{file} holds {segment.rows:,} rows, the catalog says {count:,}")
            return

    def _alive(self, seqs: np.ndarray) -> np.ndarray:
        return ~np.isin(seqs, self._removed) if len(self._removed) else np.ones(len(seqs), dtype=bool)

    def _gather(self, segment: Segment, rows: np.ndarray) -> _Rows:
        sketches = segment.take("sketches", rows) if segment.has_sketches else None
        return _Rows(
            segment.take("seqs", rows),
            segment.take("units", rows),
            segment.take("fps", rows),
            sketches,
            segment.take("features", rows),
            segment.take("sizes", rows),
        )

    def _concat(self, parts: list[_Rows]) -> _Rows:
        words, bins = self.words, self.sketch_bytes
        if not parts:
            return _Rows(
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
                np.zeros((0, words), np.uint64),
                np.zeros((0, bins), np.uint8) if bins else None,
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
            )
        return _Rows(
            *(
                np.concatenate([getattr(p, name) for p in parts]) if getattr(parts[0], name) is not None else None
                for name in ("seqs", "units", "fps", "sketches", "features", "sizes")
            )
        )

    def _rows_of_units(self, units: np.ndarray) -> _Rows:
        """Every row alive of ``units``, in every segment."""
        units = np.unique(np.asarray(units, dtype=np.int64))
        parts = []
        for segment in self._segments:
            lo, hi = segment.ranges("units_sorted", units)
            rows = segment.take("units_rows", _expand(lo, hi)).astype(np.int64)
            part = self._gather(segment, np.sort(rows))
            parts.append(_select(part, self._alive(part.seqs)))
        return self._concat(parts)

    def _units_of_contents(self, fps: np.ndarray, sketches: np.ndarray | None) -> np.ndarray:
        """The unit of each content (fingerprint and sketch) in any segment, removed rows
        included (a content keeps its unit), -1 for a content not there."""
        found = np.full(len(fps), -1, dtype=np.int64)
        for segment in self._segments:
            lo, hi = segment.ranges("fps", fps[:, 0])
            rows = _expand(lo, hi)
            which = np.repeat(np.arange(len(fps)), hi - lo)
            if not len(rows):
                continue
            same = (segment.take("fps", rows) == fps[which]).all(axis=1)
            if sketches is not None:
                same &= (segment.take("sketches", rows) == sketches[which]).all(axis=1)
            found[which[same]] = segment.take("units", rows[same])
        return found

    def _near(self, segment: Segment, fps: np.ndarray, sketches: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``(query, row)``: the pairs of a query content and a row of the tables of ``segment``
        that are within k and verified."""
        parts = []
        for t in range(segment.tables):
            lo, hi = segment.ranges(f"t{t}_keys", self.tables.keys(fps, t))
            positions = _expand(lo, hi)
            if len(positions):
                rows = segment.take(f"t{t}_rows", positions).astype(np.int64)
                parts.append(np.repeat(np.arange(len(fps), dtype=np.int64), hi - lo) * segment.rows + rows)
            if len(fps) >= RELEASE_AFTER:  # a batch's reads touch most pages of each table
                segment.release()
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        codes = np.unique(np.concatenate(parts))
        which, rows = codes // segment.rows, codes % segment.rows
        close = popcount_distance(fps[which], segment.take("fps", rows)) <= self.k
        which, rows = which[close], rows[close]
        if sketches is not None:
            verified = self._verified(sketches[which], segment.take("sketches", rows))
            which, rows = which[verified], rows[verified]
        return which, rows

    def _verified(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether pairs of sketches pass the index's similarity test (as ``cluster`` verifies)."""
        both = np.concatenate([a, b])
        return may_pass(both, np.arange(len(a)), np.arange(len(a), 2 * len(a)), self.options, exact=False)

    def _pairable(self, features: np.ndarray) -> np.ndarray:
        return self.options.may_pair(features)

    def _fingerprint_set(self, rows: _Rows, ids: list[str]) -> FingerprintSet:
        return FingerprintSet(ids, rows.fps, self.bits, self.settings, [], rows.features, rows.sketches, rows.sizes)

    def _clusters(
        self,
        fingerprints: FingerprintSet,
        units: np.ndarray,
        pair_a: np.ndarray,
        pair_b: np.ndarray,
        linking: ClusterOptions,
        new: np.ndarray | None = None,
    ) -> list[Cluster]:
        """Clusters of ``fingerprints`` (whose units are ``units``) with the verified pairs of
        units given (pairs of units not among them are left out)."""
        present, first = np.unique(units, return_index=True)
        docs = []
        for side in (pair_a, pair_b):
            at = np.minimum(np.searchsorted(present, side), max(len(present) - 1, 0))
            docs.append((at, present[at] == side) if len(present) else (at, np.zeros(len(side), bool)))
        known = docs[0][1] & docs[1][1]
        pairs = (first[docs[0][0][known]], first[docs[1][0][known]])
        return cluster_fingerprints(fingerprints, self.options.linking_as(linking), new, pairs=pairs)

    def _live(self, segment: Segment) -> np.ndarray:
        """The rows of ``segment`` not of replaced documents, the whole file checked first."""
        segment.verify_all()
        rows = np.flatnonzero(self._alive(segment.column("seqs")))
        segment.release()
        return rows

    # --- commands ------------------------------------------------------------------------

    def cluster(self, linking: ClusterOptions = ClusterOptions()) -> tuple[list[Cluster], FingerprintSet]:
        """Clusters over every document, from the pair log (no search); as ``cluster -k K``
        with the linkage and output of ``linking`` (:data:`~simdedup.options.LINKING_FIELDS`;
        the index fixed the others). The fingerprint set the members index holds the documents
        that can be in a cluster of two or more (a unit of several documents, or in a logged
        pair), every one with ``singletons``: memory follows the duplicates, not the index."""
        singletons = linking.singletons
        with self.catalog.snapshot():
            self._open_segments()
            pair_a, pair_b = self.catalog.pairs()
            live = [self._live(segment) for segment in self._segments]
            units = [segment.take("units", rows) for segment, rows in zip(self._segments, live)]
            for segment in self._segments:
                segment.release()
            if not singletons:  # a unit of one document in no pair is a cluster of one: left out
                counted, count = np.unique(np.concatenate(units + [np.zeros(0, np.int64)]), return_counts=True)
                wanted = np.union1d(np.union1d(pair_a, pair_b), counted[count > 1])
                del counted, count
                live = [rows[np.isin(of, wanted)] for rows, of in zip(live, units)]
            del units
            parts = []
            for segment, rows in zip(self._segments, live):
                parts.append(self._gather(segment, rows))
                segment.release()
            rows = self._concat(parts)
            del parts, live
            rows = _select(rows, np.argsort(rows.seqs))
            ids = self._ids_checked(rows.seqs)
        fingerprints = self._fingerprint_set(rows, ids)
        return self._clusters(fingerprints, rows.units, pair_a, pair_b, linking), fingerprints

    def _ids_checked(self, wanted: np.ndarray) -> list[str]:
        """The ids of the documents ``wanted`` (sorted seqs), read with every document of the
        catalog, which must be the live rows of the segments."""
        live = np.sort(
            np.concatenate([np.zeros(0, np.int64)] + [s.take("seqs", self._live(s)) for s in self._segments])
        )
        ids: list[str] = []
        done, agree = 0, True
        cursor = self.catalog.connection.execute("SELECT seq, id FROM documents ORDER BY seq")
        while agree and (rows := cursor.fetchmany(1 << 16)):
            seqs = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            agree = np.array_equal(seqs, live[done : done + len(seqs)])
            done += len(seqs)
            ids += [rows[i][1] for i in np.flatnonzero(np.isin(seqs, wanted)).tolist()]
        if not agree or done != len(live) or len(ids) != len(wanted):
            raise DamagedIndexError(f"{self.directory}: the segments and the catalog's documents disagree")
        return ids

    def query_record(self, record: FingerprintRecord) -> list[Match]:
        """The documents of the index that are near-duplicates of a fingerprinted document:
        its exact copies (same fingerprint and sketch), and the documents within k that pass
        verification (when it has ``min_features`` features, and they do), best first."""
        if fingerprint_settings(record.settings) != self.settings:
            raise IncompatibleSettingsError(
                f"{record.id}: fingerprint made with {describe_settings(record.settings)}, "
                f"but the index holds {describe_settings(self.settings)}"
            )
        fps = np.array([[(record.simhash >> (64 * w)) & ((1 << 64) - 1) for w in range(self.words)]], dtype=np.uint64)
        sketches = np.frombuffer(record.sketch, dtype=np.uint8).reshape(1, -1) if self.sketch_bytes else None
        with self.catalog.snapshot():
            self._open_segments()
            copies = self._units_of_contents(fps, sketches)
            units = [copies[copies >= 0]]
            if self._pairable(np.array([record.features]))[0]:
                for segment in self._segments:
                    _, rows = self._near(segment, fps, sketches)
                    units.append(segment.take("units", rows))
            rows = self._rows_of_units(np.concatenate(units))
            # a unit pairs only when all its documents may pair; copies always match
            copy = (rows.fps == fps).all(axis=1)
            if sketches is not None:
                copy &= (rows.sketches == sketches).all(axis=1)
            unpairable = np.unique(rows.units[~self._pairable(rows.features)])
            rows = _select(rows, copy | ~np.isin(rows.units, unpairable))
            if not len(rows.seqs):
                return []
            ids = self.catalog.ids_of(rows.seqs)
            labels = self._cluster_ids(rows.units)
        distances = popcount_distance(rows.fps, np.repeat(fps, len(rows.seqs), axis=0))
        scores, quantity = None, None
        if sketches is not None:
            test = PairTest(np.concatenate([rows.fps, fps]), np.concatenate([rows.sketches, sketches]), self.options)
            scores = np.round(test.scores(np.arange(len(rows.seqs)), np.full(len(rows.seqs), len(rows.seqs)))[0], 3)
            quantity = test.quantity
        matches = [
            Match(i, int(d), None if scores is None else float(scores[n]), labels[u], quantity)
            for n, (i, d, u) in enumerate(zip(ids, distances.tolist(), rows.units.tolist()))
        ]
        return sorted(matches, key=lambda m: (-(m.score or 0.0), m.distance, m.id))

    def _cluster_ids(self, units: np.ndarray) -> dict[int, str]:
        """The cluster id of each of ``units`` in :meth:`cluster`: clusters form within the
        components of the pair log, so each component is clustered alone."""
        from ..cluster_lines import cluster_id

        labels: dict[int, str] = {}
        for unit in np.unique(units).tolist():
            if unit in labels:
                continue
            members, pairs = self.catalog.component([unit])
            rows = self._rows_of_units(np.array(sorted(members), dtype=np.int64))
            ids = self.catalog.ids_of(rows.seqs)
            pair_array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
            fingerprints = self._fingerprint_set(rows, ids)
            for found in self._clusters(fingerprints, rows.units, pair_array[:, 0], pair_array[:, 1], _NAMING):
                name = cluster_id(ids[found.representative])
                for member in found.members:
                    labels[int(rows.units[member])] = name
        return labels

    def _check_rows(self) -> None:
        """The catalog's counts agree with the segments: every row of a segment is a document
        or a replaced one, never both (a deleted or added catalog row is damage); a writer
        checks this before it removes segment files the catalog does not name.

        Raises:
            DamagedIndexError: they disagree.
        """
        connection = self.catalog.connection
        documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
        rows = sum(segment.rows for segment in self._segments)
        if documents + len(self._removed) != rows:
            raise damaged(
                self.directory,
                f"{documents:,} documents and {len(self._removed):,} replaced, but the segments hold {rows:,} rows",
            )

    def _check_all(self) -> None:
        """What ``stats --verify`` checks beyond the segments' blocks: SQLite's integrity check
        of the catalog, its documents against the segments' live rows (:meth:`_ids_checked`),
        and its pairs and counters against the units and rows there are."""
        self.catalog.check()
        self._check_rows()
        self._ids_checked(np.zeros(0, np.int64))
        units = [segment.column("units") for segment in self._segments]
        seqs = [segment.column("seqs") for segment in self._segments]
        live_seqs = np.concatenate([np.zeros(0, np.int64)] + seqs)
        live_units = np.concatenate([np.zeros(0, np.int64)] + units)
        alive = self._alive(live_seqs)
        order = np.argsort(live_seqs[alive])
        documents = self.catalog.connection.execute("SELECT unit FROM documents ORDER BY seq").fetchall()
        if not np.array_equal(np.array([u for (u,) in documents], dtype=np.int64), live_units[alive][order]):
            raise damaged(self.directory, "the documents' units are not their rows' in the segments")
        pair_a, pair_b = self.catalog.pairs()
        settings = self.catalog.settings
        # (a compaction drops the rows of replaced documents, not their units' pairs)
        if not ((0 <= pair_a) & (pair_a < pair_b) & (pair_b < settings["next_unit"])).all():
            raise damaged(self.directory, "a verified pair names a unit the index never had")
        if not np.isin(self._removed, np.concatenate([np.zeros(0, np.int64)] + seqs)).all():
            raise damaged(self.directory, "a replaced row is in no segment")
        numbers = [number for number, *_ in self.catalog.segments()]
        for name, used in (
            ("next_seq", seqs),
            ("next_unit", units),
            ("next_segment", [np.array(numbers, dtype=np.int64)]),
        ):
            values = np.concatenate([np.zeros(0, np.int64)] + used)
            if len(values) and int(values.max()) >= settings[name]:
                raise damaged(self.directory, f"setting {name} = {settings[name]} is not past every one used")
        for segment in self._segments:
            segment.release()

    def stats(self, verify: bool = False) -> dict[str, Any]:
        """Counts and sizes; with ``verify``, every block of every segment and the catalog
        (:meth:`_check_all`) are checked."""
        with self.catalog.snapshot():
            self._open_segments()
            if verify:
                for segment in self._segments:
                    segment.verify_all()
                self._check_all()
            connection = self.catalog.connection
            documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
            pairs = connection.execute("SELECT count(*) FROM pairs").fetchone()[0]
            adds = connection.execute("SELECT count(*) FROM adds").fetchone()[0]
            segment_rows = sum(s.rows for s in self._segments)
        on_disk = sum(
            os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(self.directory) for name in names
        )
        return {
            "documents": documents,
            "rows": segment_rows,
            "removed": len(self._removed),
            "pairs": pairs,
            "adds": adds,
            "segments": len(self._segments),
            "bytes": on_disk,
            "bytes_per_document": round(on_disk / documents, 1) if documents else None,
            "k": self.k,
            "blocks": self.tables.blocks,
            "tables": len(self.tables.chosen),
            "settings": describe_settings(self.settings),
            "verified": verify,
        }

    # --- writing -------------------------------------------------------------------------

    @contextmanager
    def _writer(self, command: str, wait: bool, on_wait: Callable[[str], None] | None) -> Iterator[None]:
        """The one way in for a writer: the lock, then the work, its file-system failures one
        line (exit 1) with the index as it was (see :meth:`_write`)."""
        with writing(self.directory), WriterLock(self.directory, command, wait, on_wait):
            yield

    def _clean(self) -> None:
        """Remove segment files the catalog does not know: left by a writer that was killed
        before its commit, or replaced by a compaction (the writer lock is held)."""
        known = {file for _, file, _, _, _ in self.catalog.segments()}
        self._open_segments()
        self._check_rows()  # a catalog that lost a segment's row must not cost its file
        folder = os.path.join(self.directory, SEGMENTS)
        for name in os.listdir(folder):
            if name not in known and OWN_SEGMENT.match(name):  # a file of the user's stays
                os.unlink(os.path.join(folder, name))

    def _write(
        self, rows: _Rows, order: np.ndarray, absorbed: list[Segment], connection_work: Callable[[Any], None]
    ) -> None:
        """Write ``rows`` (taken in the content order ``order``) and the live rows of the segments
        ``absorbed`` as one new segment (none when there are no rows), then commit it in their
        place with what ``connection_work(connection)`` adds to the transaction, then remove
        their files. The rows are merged a stretch at a time (:class:`_Merge`)."""
        parts: list[tuple[Any, np.ndarray]] = [(rows, order)] if len(order) else []
        dropped: list[int] = []
        for segment in absorbed:
            live = self._live(segment)
            parts.append((segment, live))
            seqs = segment.column("seqs")
            dropped += np.delete(seqs, live).tolist()
            segment.release()
        merged = _Merge(parts, self.words, self.sketch_bytes, self.options)
        del parts
        number = self.catalog.settings["next_segment"]
        file = f"seg-{number:06d}.sdseg"
        folder = os.path.join(self.directory, SEGMENTS)
        if merged.rows:
            temporary = os.path.join(folder, f".{file}.tmp")
            try:
                size, checksum = write_segment(temporary, self.tables, merged)
            except BaseException:
                with suppress(OSError):  # a full disk: give back its room at once
                    os.unlink(temporary)
                raise
            # Once renamed, the file is removed by the next writer if the commit below fails (an
            # I/O error of a commit does not tell whether it reached the disk).
            os.rename(temporary, os.path.join(folder, file))
            sync_directory(folder)
        rows_written = merged.rows
        del merged
        with self.catalog.transaction() as connection:
            if rows_written:
                connection.execute(
                    "INSERT INTO segments VALUES (?, ?, ?, ?, ?)", (number, file, rows_written, size, checksum)
                )
                connection.execute("UPDATE settings SET value = ? WHERE name = 'next_segment'", (str(number + 1),))
            connection.executemany("DELETE FROM segments WHERE file = ?", ((s.name,) for s in absorbed))
            connection_work(connection)
            connection.executemany("DELETE FROM removed WHERE seq = ?", ((seq,) for seq in dropped))
        for segment in absorbed:  # readers still at work keep their mapping of the file
            segment.close()
            with suppress(OSError):  # else the next writer removes it (:meth:`_clean`)
                os.unlink(os.path.join(folder, segment.name))
        self._segments = [segment for segment in self._segments if segment not in absorbed]

    def add(
        self,
        fingerprints: FingerprintSet,
        replace: bool = False,
        files: Iterable[str] = (),
        linking: ClusterOptions = ClusterOptions(),
        wait: bool = True,
        on_wait: Callable[[str], None] | None = None,
        report: bool = True,
        publish: Callable[[AddResult], None] | None = None,
    ) -> AddResult:
        """Add a batch of fingerprints (ids new to the index, or ``replace``); with ``report``,
        the result holds the clusters with new documents (else none), linked and written as
        ``linking`` says. ``publish`` is called
        with the result before the add commits: when it raises, the add does not happen.

        Raises:
            IncompatibleSettingsError: made with other settings than the index's.
            IndexUseError: an id already present (without ``replace``); another writer (without ``wait``).
            OutputError: the index cannot be written (it is left as it was).
        """
        with self._writer("index add", wait, on_wait):
            return self._add(fingerprints, replace, list(files), linking, report, publish)

    def _add(
        self,
        fingerprints: FingerprintSet,
        replace: bool,
        files: list[str],
        linking: ClusterOptions,
        report: bool,
        publish: Callable[[AddResult], None] | None,
    ) -> AddResult:
        catalog = self.catalog
        n = len(fingerprints.ids)
        if n and fingerprint_settings(fingerprints.settings or {}) != self.settings:
            where = files[0] if files else "the fingerprints"
            raise IncompatibleSettingsError(
                f"{where}: fingerprints made with {describe_settings(fingerprints.settings or {})}, but "
                f"{self.directory} holds {describe_settings(self.settings)}"
            )
        if n and (fingerprints.sketches is None) != (self.sketch_bytes == 0):
            raise IncompatibleSettingsError(f"{self.directory}: fingerprints with and without sketches")
        try:
            "\n".join(fingerprints.ids).encode("utf-8")
        except UnicodeEncodeError:
            bad = next(i for i in fingerprints.ids if not _is_unicode(i))
            raise IndexUseError(
                f"{self.directory}: the id {bad!r} is not Unicode text (a lone surrogate): the catalog cannot hold it"
            ) from None
        present = catalog.present(fingerprints.ids)
        if present and not replace:
            raise IndexUseError(
                f"{self.directory}: {len(present)} ids are already in the index (such as "
                f"{present[0][1]!r}); use --replace to replace their fingerprints"
            )
        self._clean()
        self._open_segments()
        settings = catalog.settings
        replaced = np.array(sorted(seq for seq, _ in present), dtype=np.int64)
        self._removed = np.union1d(self._removed, replaced)
        # The batch as given (no copy of its columns) and its content order; its seqs in id
        # order (so the catalog's rows go in as appends).
        order = content_order(fingerprints.fps, fingerprints.sketches)
        by_id = np.array(sorted(range(n), key=fingerprints.ids.__getitem__), dtype=np.int64)
        sizes = np.asarray(fingerprints.sizes if fingerprints.sizes is not None else np.full(n, -1), dtype=np.int64)
        batch = _Rows(
            np.empty(n, np.int64),
            np.zeros(n, np.int64),
            fingerprints.fps,
            fingerprints.sketches,
            np.asarray(fingerprints.features, dtype=np.int64),
            sizes,
        )
        batch.seqs[by_id] = settings["next_seq"] + np.arange(n)
        first = first_of_units(_Merge([(batch, order)], self.words, self.sketch_bytes, self.options))
        starts = np.flatnonzero(first)
        of_row = np.cumsum(first) - 1
        del first
        content_docs = order[starts]
        content_fps = fingerprints.fps[content_docs]
        content_sketches = None if batch.sketches is None else _Indexed(batch.sketches, content_docs)
        units = self._units_of_contents(content_fps, content_sketches)
        existed = units >= 0
        fresh = np.flatnonzero(~existed)
        units[fresh] = settings["next_unit"] + np.arange(len(fresh))
        batch.units[order] = units[of_row]
        del of_row
        pairable = np.logical_or.reduceat(self._pairable(batch.features[order]), starts) if n else np.zeros(0, bool)
        # Verified pairs: new units with each other, and with every segment's tables.
        found_a, found_b, old_units = [], [], [units[existed]]
        eligible = np.flatnonzero(pairable)
        if self.k > 0 and len(eligible) > 1:
            left, right, _ = near_pairs(content_fps[eligible], self.k)
            left, right = eligible[left], eligible[right]
            if content_sketches is not None:
                verified = self._verified(content_sketches[left], content_sketches[right])
                left, right = left[verified], right[verified]
            found_a.append(units[left])
            found_b.append(units[right])
        for segment in self._segments:
            which, rows = self._near(
                segment, content_fps[eligible], None if content_sketches is None else content_sketches.sub(eligible)
            )
            theirs = segment.take("units", rows)
            found_a.append(units[eligible[which]])
            found_b.append(theirs)
            old_units.append(theirs)
        pair_a = np.concatenate(found_a) if found_a else np.zeros(0, np.int64)
        pair_b = np.concatenate(found_b) if found_b else np.zeros(0, np.int64)
        distinct = pair_a != pair_b
        codes = (
            np.unique(
                np.stack([np.minimum(pair_a, pair_b)[distinct], np.maximum(pair_a, pair_b)[distinct]], axis=1), axis=0
            )
            if distinct.any()
            else np.zeros((0, 2), np.int64)
        )
        # The old documents of the clusters that may hold new ones (read before the commit).
        old = self._rows_of_units(np.concatenate(old_units)) if n and report else self._concat([])
        old_ids = catalog.ids_of(old.seqs) if len(old.seqs) else []
        fresh_units = len(fresh)
        # what the search needed goes before the segment is written
        del content_fps, content_docs, content_sketches, units, existed, fresh, eligible, pairable, starts
        del found_a, found_b, old_units, pair_a, pair_b, distinct
        add_number = catalog.connection.execute("SELECT coalesce(max(add_number), 0) + 1 FROM adds").fetchone()[0]

        def commit(connection: Any) -> None:
            import json

            if len(replaced):
                connection.executemany("DELETE FROM documents WHERE seq = ?", ((s,) for s in replaced.tolist()))
                connection.executemany("INSERT INTO removed VALUES (?)", ((s,) for s in replaced.tolist()))
            ids = fingerprints.ids  # the documents in seq order, made as they go in
            catalog.insert_documents(
                settings["next_seq"], (ids[i] for i in _ints(by_id)), _ints(batch.units[by_id]), add_number
            )
            connection.executemany("INSERT OR IGNORE INTO pairs VALUES (?, ?)", codes.tolist())
            connection.execute(
                "INSERT INTO adds VALUES (?, ?, ?, ?, ?)", (add_number, now(), json.dumps(files), n, len(codes))
            )
            connection.execute(
                "UPDATE settings SET value = ? WHERE name = 'next_seq'", (str(settings["next_seq"] + n),)
            )
            connection.execute(
                "UPDATE settings SET value = ? WHERE name = 'next_unit'", (str(settings["next_unit"] + fresh_units),)
            )
            if publish is not None:
                publish(result)

        # Clusters with new documents, as cluster --against: pairs of two old units are not used.
        if report:
            together = self._concat([_select(batch, order), old])
            new = np.zeros(len(together.seqs), dtype=bool)
            new[:n] = True
            fingerprint_set = self._fingerprint_set(together, [fingerprints.ids[i] for i in order.tolist()] + old_ids)
            clusters = self._clusters(fingerprint_set, together.units, codes[:, 0], codes[:, 1], linking, new)
            del together
        else:  # nothing to report: the batch as given, not a copy in content order
            fingerprint_set, new, clusters = fingerprints, np.ones(n, dtype=bool), []
        result = AddResult(n, len(replaced), len(codes), clusters, fingerprint_set, new, list(fingerprints.repeated))
        if n:
            self._write(
                batch,
                order,
                self._segments[len(self._segments) - tail_to_merge([s.rows for s in self._segments], n) :],
                commit,
            )
        elif publish is not None:
            publish(result)
        return result

    def compact(self, wait: bool = True, on_wait: Callable[[str], None] | None = None) -> int:
        """Merge every segment into one without the replaced rows; returns the segments merged."""
        with self._writer("index compact", wait, on_wait):
            self._clean()
            self._open_segments()
            merged = len(self._segments)
            if merged > 1 or len(self._removed):
                self._write(self._concat([]), np.zeros(0, np.int64), list(self._segments), lambda connection: None)
            return merged


#: how :meth:`Index._cluster_ids` links to name the clusters of a query's matches: as ``index
#: cluster`` does by default, every document in a cluster of its own or more
_NAMING = ClusterOptions(singletons=True)


def tail_to_merge(sizes: list[int], rows: int) -> int:
    """How many of the newest segments (of ``sizes`` rows, oldest first) an add's new segment
    of ``rows`` rows takes in: each while it holds at most :data:`TIER_RATIO` times the rows
    gathered. Each segment then holds more rows than :data:`TIER_RATIO` times the next newer
    one, so N rows lie in at most log2(N) + 1 segments, and a row, whose segment grows by half
    at least each time it is rewritten, is rewritten at most log1.5(N) times: an add costs its
    batch's rows times log N, amortized, however many adds came before."""
    taken, gathered = 0, rows
    while taken < len(sizes) and sizes[-1 - taken] <= TIER_RATIO * gathered:
        gathered += sizes[-1 - taken]
        taken += 1
    return taken


def _ints(values: np.ndarray, chunk: int = 1 << 16) -> Iterator[int]:
    """The values as Python ints, a stretch at a time (not a list of them all)."""
    for start in range(0, len(values), chunk):
        yield from values[start : start + chunk].tolist()


def _expand(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The positions of the ranges ``[lo, hi)``, one after another."""
    counts = hi - lo
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _select(rows: _Rows, which: np.ndarray) -> _Rows:
    return _Rows(
        rows.seqs[which],
        rows.units[which],
        rows.fps[which],
        None if rows.sketches is None else rows.sketches[which],
        rows.features[which],
        rows.sizes[which],
    )


# --- one call each -----------------------------------------------------------------------------


def create(
    directory: str,
    settings: dict[str, Any],
    options: ClusterOptions,
    *,
    blocks: int | None = None,
    fingerprints: FingerprintSet | None = None,
    files: Iterable[str] = (),
) -> AddResult | None:
    """Create an index for fingerprints made with ``settings`` (a fingerprinting method's or a
    record's) that verifies pairs as ``options`` say (their k given; the fields of
    :data:`~simdedup.options.DECISION_FIELDS` are fixed for the index, the linkage and output
    are each command's), holding ``fingerprints`` (read from ``files``) when given: all of it,
    or, on any failure, nothing (the directory is as it was, and the same call can be made
    again).

    Raises:
        ValueError: an option out of range for the fingerprints, or one the index cannot keep.
        IndexUseError: the directory exists and is not empty; as :meth:`Index.add`.
        OutputError: the index cannot be written.
    """
    refuse_inside(directory, f"a new index {directory}", itself=False)
    normal = fingerprint_settings(settings)
    if options.k is None and options.min_score is None:
        raise ValueError("an index needs an explicit k")
    options = options.resolve(normal["bits"], sketch_kind(normal), normal["method"] or "simhash")
    if options.bands:
        raise ValueError("an index searches within k only: it takes no sketch bands")
    blocks = default_blocks(options.k, normal["bits"]) if blocks is None else blocks  # type: ignore[arg-type]
    if options.k and not options.k < blocks <= normal["bits"]:
        raise ValueError(f"blocks must be between k + 1 = {options.k + 1} and {normal['bits']}")
    if math.comb(blocks, options.k or 0) > MAX_TABLES:
        raise ValueError(
            f"--blocks {blocks} at k = {options.k} makes {math.comb(blocks, options.k or 0):,} tables; "
            f"at most {MAX_TABLES} (fewer blocks)"
        )
    with creating(directory):
        create_catalog(
            directory,
            {
                "fingerprints": normal,
                "blocks": blocks,
                "verification": {name: getattr(options, name) for name in DECISION_FIELDS},
            },
        )
        if fingerprints is None:
            return None
        with Index(directory) as index:
            return index.add(fingerprints, files=files, report=False)


def add(directory: str, files: list[str], replace: bool = False, **options: Any) -> AddResult:
    """Add the fingerprint files ``files`` to the index (see :meth:`Index.add`)."""
    handles = [open(name, "rb") for name in files]
    try:
        fingerprints = load_fingerprints(zip(files, handles))
    finally:
        for handle in handles:
            handle.close()
    with Index(directory) as index:
        return index.add(fingerprints, replace, files, **options)


def query(
    directory: str, text: str, doc_id: str = "<query>", encoding: str = "utf-8", html: bool = False
) -> list[Match]:
    """The near-duplicates in the index of a document's text."""
    with Index(directory) as index:
        return index.query_record(fingerprinter_for(index.settings, encoding, html).fingerprint_text(doc_id, text))


def cluster(directory: str, linking: ClusterOptions = ClusterOptions()) -> tuple[list[Cluster], FingerprintSet]:
    with Index(directory) as index:
        return index.cluster(linking)


def compact(directory: str) -> int:
    with Index(directory) as index:
        return index.compact()


def stats(directory: str, verify: bool = False) -> dict[str, Any]:
    with Index(directory) as index:
        return index.stats(verify)


def fingerprinter_for(settings: dict[str, Any], encoding: str = "utf-8", html: bool = False) -> Any:
    """A fingerprinting method that makes records with the index's ``settings``.

    Raises:
        SimdedupError: the settings name features no document text gives (``--features-field``).
    """
    from dataclasses import replace

    from ..method_registry import method_spec
    from ..options import FeatureOptions

    try:
        options = FeatureOptions.of_settings(settings)
    except ValueError as exc:
        raise SimdedupError(f"the index holds {exc}") from None
    if options.given_features:
        raise SimdedupError(
            "the index holds fingerprints of given features (--features-field): a document's text cannot be queried"
        )
    takes_html = method_spec(options.method).takes_features  # type: ignore[union-attr]
    made = replace(options, encoding=encoding, html=html and takes_html).method_object()
    if fingerprint_settings(made.settings) != settings:
        raise SimdedupError(f"cannot fingerprint with the index's settings ({describe_settings(settings)})")
    return made


class AddingTo:
    """The index a ``fingerprint --index`` or ``dedup --index`` run adds its records to: opened
    and checked against the method's settings before any document is read (a run of hours must
    not end in "other settings"), added to in one transaction at the end."""

    def __init__(self, directory: str, method_settings: dict[str, Any]):
        self.directory = directory
        self.index = Index(directory)
        if fingerprint_settings(method_settings) != self.index.settings:
            self.index.close()
            raise IncompatibleSettingsError(
                f"{directory} holds fingerprints made with {describe_settings(self.index.settings)}; these options "
                f"make {describe_settings(method_settings)}"
            )

    def add(self, fingerprints: FingerprintSet, on_wait: Callable[[str], None] | None = None) -> AddResult:
        """Add the run's fingerprints (ids new to the index); nothing is reported."""
        try:
            return self.index.add(fingerprints, on_wait=on_wait, report=False)
        finally:
            self.index.close()
