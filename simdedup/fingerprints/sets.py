"""Fingerprints gathered for clustering: read from fingerprint files, or collected from the
records a run makes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable

import numpy as np

from ..index import as_words
from ..similarity import BUDGET_BYTES as EXACT_BUDGET_BYTES
from .columns import read_fingerprint_files
from .record import FingerprintRecord


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
        return (self.settings or {}).get("method") or "simhash"


def load_fingerprints(files: Iterable[tuple[str, BinaryIO]]) -> FingerprintSet:
    """Read fingerprint lines from named binary streams.

    A record whose id was already read is dropped and listed in ``repeated`` (the first wins).

    Raises:
        RecordError: a malformed line, or settings that differ from the first record's.
    """
    columns = read_fingerprint_files(files)
    keep = _first_of_each_id(columns.ids)
    ids, values, features, sizes = columns.ids, columns.values, columns.features, columns.sizes
    sketches, file_index = columns.sketches, columns.file_index
    repeated = []
    if keep is not None:
        dropped = np.ones(len(ids), dtype=bool)
        dropped[keep] = False
        repeated = [f"{columns.files[columns.file_index[i]]}:{columns.lines[i]}: {ids[i]}" for i in np.flatnonzero(dropped)]
        ids = [ids[i] for i in keep]
        values, features, sizes, file_index = values[keep], features[keep], sizes[keep], file_index[keep]
        if sketches is not None:
            sketches = sketches[keep]
    return FingerprintSet(ids, values, columns.bits, columns.settings, repeated, features, sketches, sizes,
                          file_index, columns.files)


def _first_of_each_id(ids: list[str]) -> list[int] | None:
    """Indices of the first record of each id, or None when no id repeats."""
    if len(set(ids)) == len(ids):
        return None
    seen: set[str] = set()
    keep = []
    for i, doc_id in enumerate(ids):
        if doc_id not in seen:
            seen.add(doc_id)
            keep.append(i)
    return keep


def collect_records(records: Iterable[FingerprintRecord]) -> FingerprintSet:
    """Gather records into a :class:`FingerprintSet`; a record whose id came before is left out,
    its id listed in ``repeated`` (the first wins)."""
    ids: list[str] = []
    values: list[int] = []
    features: list[int] = []
    sizes: list[int] = []
    sketches = bytearray()
    exact: list[Any] = []
    exact_bytes, exact_dropped = 0, 0
    seen: set[str] = set()
    repeated: list[str] = []
    bits, settings = 64, None
    for record in records:
        if record.id in seen:
            repeated.append(record.id)
            continue
        seen.add(record.id)
        ids.append(record.id)
        values.append(record.simhash)
        features.append(record.features)
        sizes.append(-1 if record.bytes is None else record.bytes)
        if record.sketch:
            sketches += record.sketch
        if record.exact is not None and exact_bytes + record.exact.nbytes > EXACT_BUDGET_BYTES:
            exact_dropped += 1
            record.exact = None
        exact_bytes += record.exact.nbytes if record.exact is not None else 0
        exact.append(record.exact)
        bits, settings = record.bits, record.settings
    sketch_array = None
    if sketches:
        sketch_array = np.frombuffer(sketches, dtype=np.uint8).reshape(len(ids), -1)
    return FingerprintSet(ids, as_words(values, bits), bits, settings, repeated,
                          np.array(features, dtype=np.int64), sketch_array, sizes,
                          exact=exact if any(e is not None for e in exact) else None, exact_dropped=exact_dropped)
