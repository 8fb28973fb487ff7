"""The stages composed: documents → fingerprint records, records → clusters.

Fingerprinting streams (one record per document, constant memory, in input order even on
several processes). Clustering is a barrier: it needs every fingerprint before it can answer.
"""

from __future__ import annotations

import codecs
import itertools
import os
import stat
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from . import fastpath, workers
from .cluster import Cluster, find_clusters
from .corpus import CHUNK_BYTES, MAX_CARRY, DocumentReader, Source, documents, is_compressed, text_chunks
from .web import looks_like_http
from .errors import RecordError, SkipDocument
from .fingerprint import Fingerprinter
from .index import as_words
from .records import FingerprintRecord, json_lines, read_fingerprint_files
from .similarity import BUDGET_BYTES as EXACT_BUDGET_BYTES, DEFAULT_MEASURE, DEFAULT_MIN_RESEMBLANCE, MAX_DOCUMENT_CHARS, MEASURES
from .sketch import DEFAULT_BINS
from .tokenizers import Tokenizer


_NO_FEATURES = "no text to fingerprint (only whitespace or no features)"


def visible_text(chunks: Iterable[str], html: bool = False) -> Iterator[str]:
    """The text chunks, reduced to the visible text of HTML when ``html`` is set or the reader
    found an HTTP response that says it carries HTML."""
    iterator = iter(chunks)
    first = next(iterator, None)
    if first is None:
        return
    rest = itertools.chain([first], iterator)
    if html or getattr(chunks, "is_html", False):
        from .web import html_text

        yield from html_text(rest)
    else:
        yield from rest


class Method:
    """How documents become fingerprint records; subclasses make one kind of fingerprint.

    Subclasses set ``bits``, ``encoding`` and :attr:`settings` and implement
    :meth:`record_from_reader` and :meth:`fingerprint_text`.
    """

    bits: int
    encoding: str

    @property
    def settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Load what the method needs before documents arrive (inherited by worker processes)."""

    def record_from_reader(self, reader: DocumentReader) -> FingerprintRecord:
        raise NotImplementedError

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        raise NotImplementedError

    def fingerprint_file(self, path: str) -> FingerprintRecord:
        """Fingerprint the file at ``path``; its id is the path as given.

        Raises:
            SkipDocument: unreadable, empty, binary or undecodable file, or nothing to fingerprint.
        """
        return self.record_from_reader(DocumentReader(path, self.encoding))

    def __call__(self, source: Source) -> FingerprintRecord | Source:
        """A record, or the source with the reason it was skipped."""
        return self.fingerprint_batch([source])[0]

    def fingerprint_batch(self, sources: list[Source]) -> list[FingerprintRecord | Source]:
        """A record, or the source with the reason it was skipped, for each source in order."""
        return [self._one(document) for source in sources for document in documents(source)]

    def _one(self, source: Source) -> FingerprintRecord | Source:
        if source.reason is not None:
            return source
        try:
            if source.text is not None:
                return self.fingerprint_text(source.path, source.text)
            return self.fingerprint_file(source.path)
        except SkipDocument as exc:
            return Source(source.path, exc.reason)


@dataclass
class DocumentFingerprinter(Method):
    """Reads a document, tokenizes it and makes its simhash (and sketch) with fixed settings."""

    tokenizer: Tokenizer
    bits: int = 64
    hash_name: str = "xxh3"
    encoding: str = "utf-8"
    sketch_bins: int = DEFAULT_BINS
    weighting: str | None = None  # None: the tokenizer's default
    html: bool = False  # read documents as HTML: only their visible text
    ties: str = "zero"  # what a bit whose votes tie becomes (simdedup.fingerprint.TIES)
    exact: bool = False  # keep each record's text for exact verification (:meth:`verify_exactly`)
    fingerprinter: Fingerprinter = field(init=False)
    fast: bool = field(init=False)

    def __post_init__(self) -> None:
        self.weighting = self.weighting or self.tokenizer.weighting
        self.fingerprinter = Fingerprinter(self.bits, self.hash_name, sketch_bins=self.sketch_bins,
                                           weighting=self.weighting, ties=self.ties)
        DocumentReader("", self.encoding)  # fail early on an unknown encoding
        self.fast = (not self.html and self.ties == "zero"  # the kernel gives ties 0
                     and fastpath.eligible(self.tokenizer, self.bits, self.hash_name, self.encoding))
        self._settings = {"method": "simhash", **self.tokenizer.settings(), "bits": self.bits,
                          "hash": self.hash_name, "weighting": self.weighting, "sketch": self.sketch_bins}
        if self.ties != "zero":  # written only when not the default, as records before it had none
            self._settings["ties"] = self.ties

    @property
    def settings(self) -> dict[str, Any]:
        return self._settings

    def prepare(self) -> None:
        self.tokenizer.prepare()

    def verify_exactly(self) -> None:
        """Keep each record's text for its exact sets (:mod:`simdedup.similarity`) when they describe its
        features: the `words` tokenizer without shingles, documents read as text."""
        self.exact = (type(self) is DocumentFingerprinter and self.tokenizer.name == "words"
                      and self.tokenizer.option("shingle") == 1)

    def record(self, doc_id: str, features: dict[str, float], size: int | None,
               text: list[str] | None = None) -> FingerprintRecord:
        value, sketch = self.fingerprinter(features)
        record = FingerprintRecord(doc_id, value, self.bits, len(features), self.settings, size, sketch)
        self._add_exact(record, text)
        return record

    def _add_exact(self, record: FingerprintRecord, text: list[str] | bytes | None) -> None:
        """With :attr:`exact`, the text (its chunks, or ASCII bytes) for the record."""
        if self.exact and text is not None:
            from .similarity import KeptText

            record.exact = KeptText(text if isinstance(text, bytes) else "".join(text),
                                    self.tokenizer.option("lowercase"))

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        """Fingerprint a text held in memory.

        Raises:
            SkipDocument: the text has no features.
        """
        if self.fast:
            result = self.fingerprint_batch([Source(doc_id, text=text)])[0]
            if isinstance(result, Source):
                raise SkipDocument(doc_id, result.reason or _NO_FEATURES)
            return result
        return self._text_record(doc_id, text)

    def _text_record(self, doc_id: str, text: str) -> FingerprintRecord:
        """:meth:`fingerprint_text` on the Python path."""
        kept = _KeptText(visible_text(text_chunks(text), self.html), self.exact)
        features = self.tokenizer.features(kept)
        if not features:
            raise SkipDocument(doc_id, "no text to fingerprint")
        return self.record(doc_id, features, _utf8_size(text), kept.chunks)

    def record_from_reader(self, reader: DocumentReader) -> FingerprintRecord:
        text = _KeptText(visible_text(reader, self.html), self.exact)
        features = self.tokenizer.features(text)
        if not features:
            raise SkipDocument(reader.path, _NO_FEATURES)
        record = self.record(reader.path, features, reader.bytes_read, text.chunks)
        record.encoding = reader.detected
        return record

    def fingerprint_batch(self, sources: list[Source]) -> list[FingerprintRecord | Source]:
        """As the base method; UTF-8 documents go to the compiled kernel (:mod:`simdedup.fastpath`)
        together, in batches of about :data:`~simdedup.fastpath.BATCH_BYTES`."""
        if not self.fast:
            if type(self.tokenizer).features_many is Tokenizer.features_many:  # nothing to gain
                return super().fingerprint_batch(sources)
            return self._together([document for source in sources for document in documents(source)])
        sources = [document for source in sources for document in documents(source)]
        results: list[FingerprintRecord | Source | None] = [None] * len(sources)
        pending: list[tuple[int, bytes, int]] = []  # (position, bytes read or text encoded, size in bytes)
        pending_bytes = 0
        for position, source in enumerate(sources):
            data, size, reader = self._fast_input(source)
            if data is not None:
                pending.append((position, data, size))
                pending_bytes += len(data)
                if pending_bytes >= fastpath.BATCH_BYTES:
                    self._fast_records(sources, pending, results)
                    pending, pending_bytes = [], 0
            elif reader is not None or source.text is not None:  # the Python path, with what was read
                results[position] = self._python_record(source, reader)
            else:
                results[position] = self._one(source)
        self._fast_records(sources, pending, results)
        return results  # type: ignore[return-value]

    def _python_record(self, source: Source, reader: DocumentReader | None) -> FingerprintRecord | Source:
        """The Python path for a source already read (``reader``) or held as text."""
        try:
            if reader is not None:
                return self.record_from_reader(reader)
            return self._text_record(source.path, source.text)  # type: ignore[arg-type]
        except SkipDocument as exc:
            return Source(source.path, exc.reason)

    def _together(self, sources: list[Source]) -> list[FingerprintRecord | Source]:
        """The Python path for a tokenizer that makes features faster for many documents at
        once (:meth:`Tokenizer.features_many`): documents up to :data:`TOGETHER_BYTES` are read
        whole and go to it, and to :meth:`Fingerprinter.many`, about :data:`TOGETHER_BYTES`
        times four at a time; larger ones stream."""
        results: list[FingerprintRecord | Source | None] = [None] * len(sources)
        pending: list[tuple[int, list[str], DocumentReader | None]] = []
        pending_chars = 0
        for position, source in enumerate(sources):
            try:
                if source.reason is not None:
                    results[position] = source
                    continue
                if source.text is not None:
                    chunks, reader = list(visible_text(text_chunks(source.text), self.html)), None
                else:
                    data = None if is_compressed(source.path) else _whole_file(source, TOGETHER_BYTES)
                    if data is None:  # compressed, large, not a regular file or unreadable: it streams
                        results[position] = self._one(source)
                        continue
                    reader = DocumentReader(source.path, self.encoding, data=data)
                    chunks = list(visible_text(reader, self.html))
            except SkipDocument as exc:
                results[position] = Source(source.path, exc.reason)
                continue
            pending.append((position, chunks, reader))
            pending_chars += sum(map(len, chunks))
            if pending_chars >= 4 * TOGETHER_BYTES:
                self._records_together(sources, pending, results)
                pending, pending_chars = [], 0
        self._records_together(sources, pending, results)
        return results  # type: ignore[return-value]

    def _records_together(self, sources: list[Source], pending: list[tuple[int, list[str], DocumentReader | None]],
                          results: list[FingerprintRecord | Source | None]) -> None:
        if not pending:
            return
        features = self.tokenizer.features_many([chunks for _, chunks, _ in pending])
        kept = []
        for (position, _, reader), f in zip(pending, features):
            if f:
                kept.append((position, f, reader))
            else:  # the reasons of the one-document path
                results[position] = Source(sources[position].path,
                                           _NO_FEATURES if reader is not None else "no text to fingerprint")
        for (position, f, reader), (value, sketch) in zip(kept, self.fingerprinter.many([f for _, f, _ in kept])):
            source = sources[position]
            if reader is None:
                size = _utf8_size(source.text)  # type: ignore[arg-type]
            else:
                size = reader.bytes_read
            record = FingerprintRecord(source.path, value, self.bits, len(f), self.settings, size, sketch)
            record.encoding = reader.detected if reader is not None else None
            results[position] = record

    def _fast_input(self, source: Source) -> tuple[bytes | None, int, DocumentReader | None]:
        """``(bytes for the kernel, size, None)`` (a file's bytes as read, byte-order mark
        included; a text's UTF-8, lone surrogates as ``surrogatepass`` writes them), or
        ``(None, 0, reader)`` with the bytes read for the Python path, or ``(None, 0, None)``
        when the Python path should read the source."""
        if source.reason is not None:
            return None, 0, None
        if source.text is not None:
            data = source.text.encode("utf-8", "surrogatepass")
            return (data, len(data), None) if len(data) <= fastpath.MAX_BYTES else (None, 0, None)
        data = None if is_compressed(source.path) else _whole_file(source, fastpath.MAX_BYTES)
        if data is None:
            return None, 0, None  # the Python path streams it, or says why it cannot
        if not data or b"\0" in data[:8192] or looks_like_http(data) or _may_be_cut_inside_a_word(data):
            # the Python path says why it skips, or reads the response, or cuts as it reads
            return None, 0, DocumentReader(source.path, self.encoding, data=data)
        return data, len(data), None

    def _fast_records(self, sources: list[Source], pending: list[tuple[int, bytes, int]],
                      results: list[FingerprintRecord | Source | None]) -> None:
        """Fingerprint the pending ASCII documents in one kernel call, into ``results``; on the
        Python path while this process has seen too little text to load the kernel for."""
        if not pending:
            return
        kernel = fastpath.ready(sum(len(data) for _, data, _ in pending))
        if kernel is None:
            for position, data, _ in pending:
                results[position] = self._python_pending(sources[position], data)
            return
        files = [sources[position].text is None for position, _, _ in pending]
        texts = [_without_bom(data) if file else data for (_, data, _), file in zip(pending, files)]
        values, features, sketches = kernel.fingerprint(texts, self.tokenizer.name, self.sketch_bins,
                                                        self.weighting == "binary", self.tokenizer.options["shingle"],
                                                        [0 if file else fastpath.SURROGATES for file in files])
        for (position, data, size), file, value, count, sketch, text in zip(pending, files, values.tolist(),
                                                                            features.tolist(), sketches, texts):
            doc_id = sources[position].path
            if count < 0:  # not UTF-8 (or beyond the kernel): the Python path says why
                results[position] = self._python_pending(sources[position], data)
            elif count == 0:  # the reasons of the Python path
                results[position] = Source(doc_id, _NO_FEATURES if file else "no text to fingerprint")
            else:
                record = FingerprintRecord(doc_id, value, self.bits, count, self.settings, size,
                                           sketch.tobytes() if self.sketch_bins else None)
                record.encoding = "utf-8" if file and self.encoding == "auto" else None  # what auto finds in UTF-8
                if len(text) <= MAX_DOCUMENT_CHARS:
                    self._add_exact(record, text)
                results[position] = record

    def _python_pending(self, source: Source, data: bytes) -> FingerprintRecord | Source:
        """The Python path for a document read for the kernel (``data``: as :meth:`_fast_input` gave it)."""
        reader = None if source.text is not None else DocumentReader(source.path, self.encoding, data=data)
        return self._python_record(source, reader)


class _KeptText:
    """A document's text chunks passed through once; with ``keep``, also kept in ``chunks``
    (None beyond :data:`simdedup.similarity.MAX_DOCUMENT_CHARS` characters)."""

    def __init__(self, chunks: Iterable[str], keep: bool):
        self._chunks = chunks
        self.chunks: list[str] | None = [] if keep else None
        self.chars = 0

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            self.chars += len(chunk)
            if self.chunks is not None:
                self.chunks.append(chunk)
                if self.chars > MAX_DOCUMENT_CHARS:
                    self.chunks = None
            yield chunk


@dataclass
class GivenFeaturesFingerprinter(DocumentFingerprinter):
    """Records of documents whose features the input gives (``--features-field``: JSON lines
    read with :class:`simdedup.corpus.FeaturesField`); the tokenizer is
    :class:`simdedup.features.GivenFeatures`. A document given as text is skipped."""

    def fingerprint_batch(self, sources: list[Source]) -> list[FingerprintRecord | Source]:
        results: list[FingerprintRecord | Source] = []
        for document in (document for source in sources for document in documents(source)):
            if document.reason is not None:
                results.append(document)
            elif document.features is None:
                results.append(Source(document.path, "not a JSON line: --features-field reads features from JSON lines"))
            elif not document.features:
                results.append(Source(document.path, "no features (an empty list or object)"))
            else:
                results.append(self.record(document.path, document.features, None))
        return results


def _utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8, without encoding a copy of all of it at once."""
    if text.isascii():
        return len(text)
    return sum(len(text[start : start + CHUNK_BYTES].encode("utf-8", "surrogatepass"))
               for start in range(0, len(text), CHUNK_BYTES))


def _without_bom(data: bytes) -> bytes:
    return data[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data


_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True  # the ASCII characters str.isspace takes


def _may_be_cut_inside_a_word(data: bytes) -> bool:
    """Whether :class:`DocumentReader` could cut the document elsewhere than at whitespace: it
    does so in a run of :data:`~simdedup.corpus.MAX_CARRY` characters without whitespace (so of
    at least as many bytes without ASCII whitespace), where the kernel would not."""
    if len(data) <= MAX_CARRY:
        return False
    view = np.frombuffer(data, dtype=np.uint8)
    last_space = -1
    for start in range(0, len(view), CHUNK_BYTES):  # a slice at a time: bounded memory
        spaces = np.concatenate(([last_space], start + np.flatnonzero(_ASCII_SPACE[view[start : start + CHUNK_BYTES]])))
        if np.diff(spaces).max(initial=0) > MAX_CARRY:
            return True
        last_space = int(spaces[-1])
    return len(view) - last_space > MAX_CARRY


TOGETHER_BYTES = 1 << 20


def _whole_file(source: Source, limit: int) -> bytes | None:
    """The bytes of the source's file, or None when it is not a regular file, is over ``limit``
    or cannot be read (the streaming path then reads it, or reports why it cannot)."""
    try:
        if not source.regular:  # not seen as a regular file: stat first, as opening a FIFO takes its data
            if not stat.S_ISREG(os.stat(source.path).st_mode):
                return None
        return _read_regular_file(source.path, limit)
    except OSError:
        return None


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_regular_file(path: str, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path``, or None when it is not one or is over ``limit``.

    One open, fstat and read: the cheapest way through many small files. Non-blocking, so that
    a FIFO put in the file's place since the walk does not stall the run.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        chunks = []
        want = status.st_size + 1
        while True:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            if len(chunk) < want:  # a short read of a regular file: its end
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            want = 1 << 20  # it grew since the fstat
    finally:
        os.close(fd)


@dataclass
class NilsimsaFingerprinter(Method):
    """Nilsimsa digests of the documents' raw bytes (:mod:`simdedup.nilsimsa`)."""

    encoding: str = "utf-8"
    bits: int = 256

    def __post_init__(self) -> None:
        DocumentReader("", self.encoding)  # fail early on an encoding that is unknown or not text

    @property
    def settings(self) -> dict[str, Any]:
        return {"method": "nilsimsa", "bits": 256}

    def _record(self, doc_id: str, blocks: Iterable[bytes]) -> FingerprintRecord:
        from .nilsimsa import NilsimsaAccumulator

        acc = NilsimsaAccumulator()
        for block in blocks:
            acc.update(block)
        # Under 3 bytes there is no trigram: the digest is all zeros, as the reference's.
        return FingerprintRecord(doc_id, int.from_bytes(acc.digest(), "big"), 256, acc.trigrams, self.settings,
                                 acc.length)

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        return self._record(doc_id, (chunk.encode("utf-8", "surrogatepass") for chunk in text_chunks(text)))

    def record_from_reader(self, reader: DocumentReader) -> FingerprintRecord:
        return self._record(reader.path, reader.raw_blocks())


@dataclass
class SentencesFingerprinter(Method):
    """Signature of the ``n`` longest sentences (:mod:`simdedup.sentences`)."""

    n: int = 3
    encoding: str = "utf-8"
    bits: int = 64

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("the number of sentences must be at least 1")
        DocumentReader("", self.encoding)

    @property
    def settings(self) -> dict[str, Any]:
        return {"method": "sentences", "options": {"n": self.n}, "bits": 64}

    def _record(self, doc_id: str, chunks: Iterable[str], size: int | None) -> FingerprintRecord:
        from .sentences import longest_sentences, signature

        count, longest = longest_sentences(chunks, self.n)
        if not longest:
            raise SkipDocument(doc_id, "no sentence to sign")
        return FingerprintRecord(doc_id, signature(longest), 64, count, self.settings, size)

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        return self._record(doc_id, text_chunks(text), _utf8_size(text))

    def record_from_reader(self, reader: DocumentReader) -> FingerprintRecord:
        record = self._record(reader.path, reader, None)
        record.bytes = reader.bytes_read
        return record


@dataclass
class Batch:
    """What one batch of sources gave, in source order: records and skipped sources (with their
    reasons). When rendered where it was made, the records are JSON lines in ``lines`` and
    ``results`` keeps only the skipped sources."""

    results: list[FingerprintRecord | Source]
    notes: list[str]  # "ID: read as ENCODING" for documents whose encoding was detected
    size: int  # bytes of the documents fingerprinted
    count: int  # records made
    lines: bytes = b""

    @property
    def skipped(self) -> list[Source]:
        return [r for r in self.results if isinstance(r, Source)]

    @property
    def records(self) -> list[FingerprintRecord]:
        return [r for r in self.results if not isinstance(r, Source)]

    @classmethod
    def of(cls, results: list[FingerprintRecord | Source], render: bool) -> "Batch":
        records = [r for r in results if not isinstance(r, Source)]
        notes = [f"{r.id}: read as {r.encoding}" for r in records if r.encoding]
        size = sum(r.bytes or 0 for r in records)
        if not render:
            return cls(results, notes, size, len(records))
        lines = json_lines(records)
        return cls([r for r in results if isinstance(r, Source)], notes, size, len(records), lines)


_worker: tuple[Method, bool] | None = None


def _init_worker(fingerprinter: Method, render: bool) -> None:
    global _worker
    _worker = (fingerprinter, render)


def _work(task: list[Source] | tuple[list[str], list[int | None]]) -> Batch:
    assert _worker is not None
    fingerprinter, render = _worker
    if isinstance(task, tuple):
        task = [Source(path, size=size, regular=True) for path, size in zip(*task)]
    return Batch.of(fingerprinter.fingerprint_batch(task), render)


def _task(sources: list[Source]) -> list[Source] | tuple[list[str], list[int | None]]:
    """A batch as it goes to a worker: regular files as their paths and sizes, which pickle
    about fifteen times faster than the Source objects (many small files)."""
    if all(s.regular and s.reason is None and s.text is None and s.line is None and s.span is None for s in sources):
        return [s.path for s in sources], [s.size for s in sources]
    return sources


def default_jobs() -> int:
    """Number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fingerprint_sources(
    sources: Iterable[Source], fingerprinter: Method, jobs: int = 1
) -> Iterator[FingerprintRecord | Source]:
    """Fingerprint every source, in order; a skipped one comes back as a Source with a reason.

    With ``jobs > 1`` documents are fingerprinted on that many processes; the results, and so
    the output, are the same as with one.
    """
    for batch in fingerprint_batches(sources, fingerprinter, jobs):
        yield from batch.results


def fingerprint_batches(sources: Iterable[Source], fingerprinter: Method, jobs: int = 1,
                        render: bool = False) -> Iterator[Batch]:
    """Fingerprint the sources :data:`BATCH_SOURCES` at a time, in order.

    With ``render``, each batch carries its records as JSON lines instead of objects, made by
    the worker process that fingerprinted them: the parent only writes bytes, so ``jobs``
    workers keep ``jobs`` cores busy.
    """
    fingerprinter.prepare()  # loaded once here, inherited by forked workers
    if jobs > 1 and getattr(fingerprinter, "fast", False):
        fastpath.preload()  # once, before the fork, instead of once in every worker
    batches = _batches(sources, BATCH_SOURCES)
    if jobs <= 1:
        for batch in batches:
            yield Batch.of(fingerprinter.fingerprint_batch(batch), render)
        return
    yield from workers.in_order(map(_task, batches), jobs, _work, _init_worker, (fingerprinter, render))


#: sources fingerprinted together: one kernel call, or one task for a worker process
BATCH_SOURCES = 64


def _batches(sources: Iterable[Source], size: int) -> Iterator[list[Source]]:
    iterator = iter(sources)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def source_digest(source: Source, encoding: str) -> bytes:
    """Content hash of a document's whitespace-normalised text (:mod:`simdedup.exact`).

    Raises:
        SkipDocument: the file cannot be read as text.
    """
    from .exact import content_digest

    (source,) = documents(source)  # (a single JSON line is parsed here; not a stretch of lines)
    if source.reason is not None:
        raise SkipDocument(source.path, source.reason)
    return content_digest(text_chunks(source.text) if source.text is not None else DocumentReader(source.path, encoding))


def exact_duplicates(sources: Iterable[Source], encoding: str, seen: Any,
                     duplicates: dict[str, str]) -> Iterator[Source]:
    """The sources whose normalised text was not seen before (:mod:`simdedup.exact`).

    A source whose text was seen is left out and recorded in ``duplicates`` as ``path -> first
    path`` ("" when ``seen`` is a bloom filter, which cannot say). A source that cannot be read
    is passed on, so that fingerprinting reports why.
    """
    for source in itertools.chain.from_iterable(map(documents, sources)):
        if source.reason is None:
            try:
                earlier = seen.check(source_digest(source, encoding), source.path)
            except SkipDocument:
                earlier = None
            if earlier is not None:
                duplicates[source.path] = earlier
                continue
        yield source


def add_exact_duplicates(records: Iterable[FingerprintRecord], duplicates: dict[str, str]) -> Iterator[FingerprintRecord]:
    """``records``, then a copy of the first record for each exact duplicate found before."""
    by_id: dict[str, FingerprintRecord] = {}
    for record in records:
        by_id[record.id] = record
        yield record
    for path, first in duplicates.items():
        original = by_id.get(first)
        if original is not None:
            size = os.path.getsize(path) if os.path.isfile(path) else original.bytes
            yield replace(original, id=path, bytes=size)


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


def collect_records(records: Iterable[tuple[str, FingerprintRecord]]) -> FingerprintSet:
    """Gather ``(where, record)`` pairs into a :class:`FingerprintSet` (first id wins)."""
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
    for where, record in records:
        if record.id in seen:
            repeated.append(f"{where}: {record.id}")
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


@dataclass(frozen=True)
class ClusterOptions:
    """How ``cluster`` decides; None values take the defaults for the input (:meth:`resolve`)."""

    k: int | None = None
    min_similarity: float = 0.88
    linkage: str = "complete"
    min_features: int = 10
    singletons: bool = False
    min_score: int | None = None  # nilsimsa only: k = 128 - min_score
    similarity: str = DEFAULT_MEASURE  # simdedup.similarity.MEASURES
    min_resemblance: float = DEFAULT_MIN_RESEMBLANCE

    #: k when the records carry sketches (the sketch gives the precision, a larger k the recall)
    #: and when they do not (Manku et al.'s setting for 64-bit fingerprints).
    DEFAULT_K_VERIFIED = 10
    DEFAULT_K_PLAIN = 3
    #: (largest number of documents, k): the default k with sketches shrinks for large corpora,
    #: where the tables for k = 10 cost minutes (k = 10: 137 s for 4·10^5 distinct fingerprints;
    #: k = 8: 20 s; k = 6: 7 s). On the dev sets k = 8 loses under 0.005 F1.
    VERIFIED_K_BY_SIZE = ((200_000, 10), (2_000_000, 8))
    DEFAULT_K_VERIFIED_LARGE = 6

    @classmethod
    def default_verified_k(cls, n: int) -> int:
        for limit, k in cls.VERIFIED_K_BY_SIZE:
            if n <= limit:
                return k
        return cls.DEFAULT_K_VERIFIED_LARGE
    #: nilsimsa score of a near-duplicate by default (see README, "Other methods")
    DEFAULT_MIN_SCORE = 90

    def resolve(self, bits: int, verified: bool, method: str = "simhash", n: int = 0) -> "ClusterOptions":
        """These options with k filled in and checked for the fingerprints' width and method.

        Raises:
            ValueError: an option out of range or not meant for the method.
        """
        k, min_features = self.k, self.min_features
        if self.min_score is not None and method != "nilsimsa":
            raise ValueError("--min-score is for nilsimsa fingerprints; use -k")
        if method == "sentences":
            if k not in (None, 0):
                raise ValueError("sentence signatures only match exactly: k must be 0")
            k, min_features = 0, 0
        elif method == "nilsimsa":
            if self.min_score is not None and k is not None:
                raise ValueError("give -k or --min-score, not both")
            if not -128 <= (self.min_score if self.min_score is not None else 0) <= 128:
                raise ValueError("--min-score must be between -128 and 128")
            if k is None:
                k = 128 - (self.DEFAULT_MIN_SCORE if self.min_score is None else self.min_score)
            min_features = 0
        elif k is None:
            k = self.default_verified_k(n) if verified else self.DEFAULT_K_PLAIN
            k = k * bits // 64
        if method != "nilsimsa":  # a nilsimsa score of S or more is any distance up to 128 - S
            check_k(k, bits)
        if not 0.0 <= self.min_similarity <= 1.0 or not 0.0 <= self.min_resemblance <= 1.0:
            raise ValueError("min-similarity and min-resemblance must be between 0 and 1")
        if self.similarity not in MEASURES:
            raise ValueError(f"similarity must be one of {', '.join(MEASURES)}")
        return replace(self, k=k, min_features=min_features)


def cluster_fingerprints(fingerprints: FingerprintSet, options: ClusterOptions = ClusterOptions(),
                         new: np.ndarray | None = None,
                         pairs: tuple[np.ndarray, np.ndarray] | None = None) -> list[Cluster]:
    """Clusters of a loaded fingerprint set (see :func:`simdedup.cluster.find_clusters`).

    With ``new`` (bool per document), only clusters with a new document, and no pair of two old
    documents (an incremental run against an old corpus). With ``pairs``, the candidate pairs of
    documents found before (a persistent index), instead of a search.

    Raises:
        ValueError: an option out of range for the fingerprints.
    """
    bands = options.k is None  # a k given is the whole candidate search: only the pairs within k
    options = options.resolve(fingerprints.bits, fingerprints.sketches is not None, fingerprints.method,
                              len(fingerprints.ids))
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
        new=new,
        exact=fingerprints.exact,
        similarity=options.similarity,
        min_resemblance=options.min_resemblance,
        bands=bands,
        pairs=pairs,
    )


def max_k(bits: int) -> int:
    """Largest meaningful k: beyond half the bits, unrelated fingerprints match."""
    return bits // 2 - 1


def check_k(k: int, bits: int) -> None:
    if not 0 <= k <= max_k(bits):
        raise ValueError(f"k must be between 0 and {max_k(bits)} for {bits}-bit fingerprints, not {k}")
