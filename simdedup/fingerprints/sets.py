"""Fingerprints gathered for clustering: read from fingerprint files, or collected from the
records a run makes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable, Sequence

import numpy as np

from ..errors import REPEATED_IDS, Warnings
from ..method_registry import DEFAULT_METHOD
from ..pairs import as_words
from ..similarity import BUDGET_BYTES as EXACT_BUDGET_BYTES
from .columns import read_fingerprint_files
from .record import FingerprintRecord, sketch_kind


@dataclass
class FingerprintSet:
    """Fingerprints loaded for clustering."""

    ids: list[str]
    fps: np.ndarray  # (n, words) uint64
    bits: int
    settings: dict[str, Any] | None
    repeated: list[str]  # records left out, their id seen before: "FILE:LINE: id" as read, the id as collected
    features: np.ndarray  # number of features of each document
    sketches: np.ndarray | None  # (n, bins) uint8, when the records carry sketches
    sizes: np.ndarray | list[int] | None = None  # bytes of each document, -1 when unknown
    sources: np.ndarray | None = None  # the file each record was read from, an index into ``files``
    files: list[str] | None = None  # the names of the files the records were read from
    exact: list[Any] | None = None  # simdedup.similarity.KeptText (or None) of each document read in this run
    exact_dropped: int = 0  # documents whose text was left out: over the memory budget

    @property
    def method(self) -> str:
        return (self.settings or {}).get("method") or DEFAULT_METHOD

    @property
    def sketch_of(self) -> str | None:
        """What the records' sketches are of: ``"shingles"``, ``"features"`` (records made
        before shingle sketches say nothing), or None without sketches."""
        return None if self.sketches is None else sketch_kind(self.settings) or "features"


def load_fingerprints(files: Iterable[tuple[str, BinaryIO]]) -> FingerprintSet:
    """Read fingerprint lines from named binary streams.

    Of records with one id, one is kept (:func:`left_out`) and the others are listed in ``repeated``.

    Raises:
        RecordError: a malformed line, or settings that differ from the first record's.
    """
    columns = read_fingerprint_files(files)
    ids, values, features, sizes = columns.ids, columns.values, columns.features, columns.sizes
    sketches, file_index = columns.sketches, columns.file_index
    shared = rows_sharing_an_id(ids)
    dropped = left_out(
        shared,
        [ids[i] for i in shared.tolist()],
        lambda rows: [
            record_key(values[i], features[i], sizes[i], None if sketches is None else sketches[i])
            for i in rows.tolist()
        ],
    )
    repeated = [f"{columns.files[columns.file_index[i]]}:{columns.lines[i]}: {ids[i]}" for i in dropped.tolist()]
    if len(dropped):
        keep = np.ones(len(ids), dtype=bool)
        keep[dropped] = False
        ids = [doc_id for doc_id, kept in zip(ids, keep.tolist()) if kept]
        values, features, sizes, file_index = values[keep], features[keep], sizes[keep], file_index[keep]
        if sketches is not None:
            sketches = sketches[keep]
    return FingerprintSet(
        ids, values, columns.bits, columns.settings, repeated, features, sketches, sizes, file_index, columns.files
    )


#: what is said of a record left out for its id (after ``FILE:LINE: ID`` or the id)
REPEATED_ID = "id repeated; this record is left out (one record of each id is kept, chosen by content, not input order)"


def warn_repeated(say: Callable[[str], None], wheres: Iterable[str]) -> None:
    """Say, in proportion (:class:`simdedup.errors.Warnings`), that the records at ``wheres``
    were left out for an id another record carries."""
    Warnings(say).warn_all(wheres, REPEATED_ID, REPEATED_IDS)


def record_key(value: np.ndarray, features: int, size: int, sketch: Any = None, text: Any = None) -> tuple:
    """What orders records that share an id: the fingerprint (a row of 64-bit words, word 0
    low), then the features, size, sketch and kept text's digest (:class:`simdedup.similarity.KeptText`;
    the same where a worker process keeps the text, :class:`simdedup.similarity.HeldText`)."""
    return (
        value.tolist()[::-1],
        int(features),
        int(size),
        b"" if sketch is None else bytes(sketch),
        0 if text is None else text.digest(),
    )


def rows_sharing_an_id(ids: Sequence[str]) -> np.ndarray:
    """The rows whose id another row has too."""
    if len(set(ids)) == len(ids):
        return np.empty(0, dtype=np.int64)
    counts: dict[str, int] = {}
    for doc_id in ids:
        counts[doc_id] = counts.get(doc_id, 0) + 1
    return np.array([row for row, doc_id in enumerate(ids) if counts[doc_id] > 1], dtype=np.int64)


def left_out(rows: np.ndarray, ids: Sequence[str], key_of: Callable[[np.ndarray], list[tuple]]) -> np.ndarray:
    """Of ``rows`` (with their ``ids``; ``key_of(rows)`` gives their :func:`record_key`), those
    left out because another carries their id: of each id, the record with the smallest key is
    kept, so the same record whatever the order of the inputs (records with equal keys are the
    same record to every output; the first is kept). Every engine decides with this."""
    if not len(rows):
        return rows
    best: dict[str, tuple[tuple, int]] = {}
    for row, doc_id, key in zip(rows.tolist(), ids, key_of(rows)):
        if doc_id not in best or key < best[doc_id][0]:
            best[doc_id] = (key, row)
    kept = {row for _, row in best.values()}
    return np.array([row for row in rows.tolist() if row not in kept], dtype=np.int64)


class TextBudget:
    """The memory budget of exact verification, as every engine applies it: texts are taken in
    row order while they fit; from the first that would pass the budget on, none is (those
    documents are verified with their sketches). So the texts kept are a prefix of the input
    however the work is shared (:class:`simdedup.run.TextsInWorkers`)."""

    limit = EXACT_BUDGET_BYTES

    def __init__(self, used: int = 0):
        self.used = used
        self.ended = False

    def admit(self, nbytes: int) -> bool:
        """Whether a text of ``nbytes`` is kept; counted when it is."""
        if self.ended or self.used + nbytes > self.limit:
            self.ended = True
            return False
        self.used += nbytes
        return True


def collect_records(records: Iterable[FingerprintRecord], budget: TextBudget | None = None) -> FingerprintSet:
    """Gather records into a :class:`FingerprintSet`; of records with one id, one is kept
    (:func:`left_out`) and the ids of the others are listed in ``repeated``. The texts kept
    are those ``budget`` admits (a new one by default)."""
    ids: list[str] = []
    values: list[int] = []
    features: list[int] = []
    sizes: list[int] = []
    sketches = bytearray()
    exact: list[Any] = []
    budget, exact_dropped = budget or TextBudget(), 0
    bits, settings = 64, None
    for record in records:
        ids.append(record.id)
        values.append(record.simhash)
        features.append(record.features)
        sizes.append(-1 if record.bytes is None else record.bytes)
        if record.sketch:
            sketches += record.sketch
        if record.exact is not None and not budget.admit(record.exact.nbytes):
            exact_dropped += 1
            record.exact = None
        exact.append(record.exact)
        bits, settings = record.bits, record.settings
    words = as_words(values, bits)
    sketch_array = None
    if sketches:
        sketch_array = np.frombuffer(sketches, dtype=np.uint8).reshape(len(ids), -1)
    shared = rows_sharing_an_id(ids)
    dropped = left_out(
        shared,
        [ids[i] for i in shared.tolist()],
        lambda rows: [
            record_key(words[i], features[i], sizes[i], None if sketch_array is None else sketch_array[i], exact[i])
            for i in rows.tolist()
        ],
    )
    repeated = [ids[i] for i in dropped.tolist()]
    feature_array = np.array(features, dtype=np.int64)
    if len(dropped):
        keep = np.ones(len(ids), dtype=bool)
        keep[dropped] = False
        rows = np.flatnonzero(keep).tolist()
        ids, sizes, exact = [ids[i] for i in rows], [sizes[i] for i in rows], [exact[i] for i in rows]
        words, feature_array = words[keep], feature_array[keep]
        if sketch_array is not None:
            sketch_array = sketch_array[keep]
    return FingerprintSet(
        ids,
        words,
        bits,
        settings,
        repeated,
        feature_array,
        sketch_array,
        sizes,
        exact=exact if any(e is not None for e in exact) else None,
        exact_dropped=exact_dropped,
    )
