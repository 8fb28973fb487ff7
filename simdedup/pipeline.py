"""The stages composed: documents → fingerprint records, records → clusters.

Fingerprinting streams (one record per document, constant memory, in input order even on
several processes). Clustering is a barrier: it needs every fingerprint before it can answer.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from .cluster import Cluster, find_clusters
from .corpus import DocumentReader, Source
from .errors import SkipDocument
from .fingerprint import Fingerprinter
from .index import as_words
from .records import FingerprintRecord, read_fingerprint_files
from .sketch import DEFAULT_BINS
from .tokenizers import Tokenizer


@dataclass
class DocumentFingerprinter:
    """Reads a document, tokenizes it and fingerprints it with fixed settings."""

    tokenizer: Tokenizer
    bits: int = 64
    hash_name: str = "xxh3"
    encoding: str = "utf-8"
    sketch_bins: int = DEFAULT_BINS
    fingerprinter: Fingerprinter = field(init=False)

    def __post_init__(self) -> None:
        self.fingerprinter = Fingerprinter(self.bits, self.hash_name, sketch_bins=self.sketch_bins)
        DocumentReader("", self.encoding)  # fail early on an unknown encoding

    @property
    def settings(self) -> dict[str, Any]:
        return {**self.tokenizer.settings(), "bits": self.bits, "hash": self.hash_name, "sketch": self.sketch_bins}

    def record(self, doc_id: str, features: dict[str, float], size: int | None) -> FingerprintRecord:
        value, sketch = self.fingerprinter(features)
        return FingerprintRecord(doc_id, value, self.bits, len(features), self.settings, size, sketch)

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        """Fingerprint a text held in memory.

        Raises:
            SkipDocument: the text has no features.
        """
        features = self.tokenizer.text_features(text)
        if not features:
            raise SkipDocument(doc_id, "no text to fingerprint")
        return self.record(doc_id, features, len(text.encode("utf-8", "surrogatepass")))

    def fingerprint_file(self, path: str) -> FingerprintRecord:
        """Fingerprint the file at ``path``; its id is the path as given.

        Raises:
            SkipDocument: unreadable, empty, binary or undecodable file, or no features.
        """
        reader = DocumentReader(path, self.encoding)
        features = self.tokenizer.features(reader)
        if not features:
            raise SkipDocument(path, "no text to fingerprint (only whitespace or no features)")
        return self.record(path, features, reader.bytes_read)

    def __call__(self, source: Source) -> FingerprintRecord | Source:
        """A record, or the source with the reason it was skipped."""
        if source.reason is not None:
            return source
        try:
            return self.fingerprint_file(source.path)
        except SkipDocument as exc:
            return Source(source.path, exc.reason)


_worker: DocumentFingerprinter | None = None


def _init_worker(fingerprinter: DocumentFingerprinter) -> None:
    global _worker
    _worker = fingerprinter


def _work(source: Source) -> FingerprintRecord | Source:
    assert _worker is not None
    return _worker(source)


def default_jobs() -> int:
    """Number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fingerprint_sources(
    sources: Iterable[Source], fingerprinter: DocumentFingerprinter, jobs: int = 1
) -> Iterator[FingerprintRecord | Source]:
    """Fingerprint every source, in order; a skipped one comes back as a Source with a reason.

    With ``jobs > 1`` documents are fingerprinted on that many processes; the results, and so
    the output, are the same as with one.
    """
    fingerprinter.tokenizer.prepare()  # loaded once here, inherited by forked workers
    if jobs <= 1:
        for source in sources:
            yield fingerprinter(source)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with context.Pool(jobs, _init_worker, (fingerprinter,)) as pool:
        yield from pool.imap(_work, sources, chunksize=8)


@dataclass
class FingerprintSet:
    """Fingerprints loaded for clustering."""

    ids: list[str]
    fps: np.ndarray  # (n, words) uint64
    bits: int
    settings: dict[str, Any] | None
    repeated: list[str]  # "where: id" of records dropped because their id was seen before
    features: np.ndarray  # number of features of each document
    sketches: np.ndarray | None  # (n, bins) uint8, when the records carry sketches


def load_fingerprints(files: Iterable[tuple[str, BinaryIO]]) -> FingerprintSet:
    """Read fingerprint lines from named binary streams.

    A record whose id was already read is dropped and listed in ``repeated`` (the first wins).

    Raises:
        RecordError: a malformed line, or settings that differ from the first record's.
    """
    return collect_records(read_fingerprint_files(files))


def collect_records(records: Iterable[tuple[str, FingerprintRecord]]) -> FingerprintSet:
    """Gather ``(where, record)`` pairs into a :class:`FingerprintSet` (first id wins)."""
    ids: list[str] = []
    values: list[int] = []
    features: list[int] = []
    sketches: list[bytes] = []
    seen: set[str] = set()
    repeated: list[str] = []
    bits, settings = 64, None
    for where, record in records:
        if record.id in seen:
            repeated.append(f"{where}: {record.id}")
            continue
        seen.add(record.id)
        ids.append(record.id)
        values.append(record.simhash)
        features.append(record.features)
        if record.sketch:
            sketches.append(record.sketch)
        bits, settings = record.bits, record.settings
    sketch_array = None
    if sketches:
        sketch_array = np.frombuffer(b"".join(sketches), dtype=np.uint8).reshape(len(sketches), -1)
    return FingerprintSet(ids, as_words(values, bits), bits, settings, repeated,
                          np.array(features, dtype=np.int64), sketch_array)


@dataclass(frozen=True)
class ClusterOptions:
    """How ``cluster`` decides; None values take the defaults for the input (:meth:`resolve`)."""

    k: int | None = None
    min_similarity: float = 0.87
    linkage: str = "complete"
    min_features: int = 10
    singletons: bool = False

    #: k when the records carry sketches (the sketch gives the precision, a larger k the recall)
    #: and when they do not (Manku et al.'s setting for 64-bit fingerprints).
    DEFAULT_K_VERIFIED = 10
    DEFAULT_K_PLAIN = 3

    def resolve(self, bits: int, verified: bool) -> "ClusterOptions":
        """These options with k filled in and checked for the fingerprint width.

        Raises:
            ValueError: ``k`` or ``min_similarity`` out of range.
        """
        k = self.k
        if k is None:
            k = self.DEFAULT_K_VERIFIED if verified else self.DEFAULT_K_PLAIN
            k = k * bits // 64
        check_k(k, bits)
        if not 0.0 <= self.min_similarity <= 1.0:
            raise ValueError("min-similarity must be between 0 and 1")
        return ClusterOptions(k, self.min_similarity, self.linkage, self.min_features, self.singletons)


def cluster_fingerprints(fingerprints: FingerprintSet, options: ClusterOptions = ClusterOptions()) -> list[Cluster]:
    """Clusters of a loaded fingerprint set (see :func:`simdedup.cluster.find_clusters`).

    Raises:
        ValueError: an option out of range for the fingerprints.
    """
    options = options.resolve(fingerprints.bits, fingerprints.sketches is not None)
    return find_clusters(
        fingerprints.ids,
        fingerprints.fps,
        options.k,  # type: ignore[arg-type]
        options.singletons,
        sketches=fingerprints.sketches,
        features=fingerprints.features,
        min_similarity=options.min_similarity,
        linkage=options.linkage,
        min_features=options.min_features,
    )


def max_k(bits: int) -> int:
    """Largest meaningful k: beyond half the bits, unrelated fingerprints match."""
    return bits // 2 - 1


def check_k(k: int, bits: int) -> None:
    if not 0 <= k <= max_k(bits):
        raise ValueError(f"k must be between 0 and {max_k(bits)} for {bits}-bit fingerprints, not {k}")
