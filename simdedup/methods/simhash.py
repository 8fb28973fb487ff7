"""Simhash records: a document's text tokenized into weighted features, and the features'
simhash (:mod:`simdedup.simhash`) and sketch (:mod:`simdedup.sketch`).

UTF-8 documents of the ``words`` and ``whitespace`` tokenizers go to a compiled kernel a batch
at a time (:mod:`simdedup.kernels.fastpath`), which gives the records the Python path gives; a tokenizer
that makes features faster for many documents at once (:meth:`Tokenizer.features_many`) gets
them together; everything else streams through the tokenizer a chunk at a time.
"""

from __future__ import annotations

import codecs
import itertools
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import numpy as np
import xxhash

from ..errors import SkipDocument
from ..fingerprints import FingerprintRecord
from ..fingerprints.record import SKETCH_OF_SHINGLES
from ..kernels import fastpath
from ..read import (
    MAX_CARRY,
    Document,
    DocumentReader,
    FileBuffer,
    Source,
    file_document,
    text_chunks,
    utf8_size,
)
from ..read.encoding import DECLARATION_BYTES, declares_other_than_utf8, starts_with_markup
from ..read.web import MAX_HEAD_BYTES, looks_like_http
from ..shingle_sketch import check_bytes, sketch_joined
from ..simhash import Simhasher, as_integers
from ..similarity import MAX_DOCUMENT_CHARS, KeptText, check_fold, folding_of
from ..sketch import DEFAULT_BINS
from ..tokenizers import Tokenizer, guard
from .base import Method

NO_FEATURES = "no text to fingerprint (only whitespace or no features)"
NO_TEXT_FEATURES = "no text to fingerprint"
#: documents up to this size go to a tokenizer's ``features_many`` whole; larger ones stream
TOGETHER_BYTES = 1 << 20
#: With exact verification, a document of at least COPY_MIN_BYTES whose bytes this process has
#: already fingerprinted takes that record's fingerprint (:class:`_Copies`), which holds at most
#: COPY_ENTRIES of them.
COPY_MIN_BYTES = 4096
COPY_ENTRIES = 1 << 16
#: what a record's sketch may be of (--sketch-of)
SKETCH_KINDS = ("shingles", "features")


def visible_text(chunks: Iterable[str], html: bool = False) -> Iterator[str]:
    """The text chunks, reduced to the visible text of HTML when ``html`` is set or the reader
    found an HTTP response that says it carries HTML."""
    iterator = iter(chunks)
    first = next(iterator, None)
    if first is None:
        return
    rest = itertools.chain([first], iterator)
    if html or getattr(chunks, "is_html", False):
        from ..read.web import html_text

        yield from html_text(rest)
    else:
        yield from rest


@dataclass
class SimhashMethod(Method):
    """Tokenizes a document and makes its simhash (and sketch) with fixed settings."""

    tokenizer: Tokenizer
    bits: int = 64
    hash_name: str = "xxh3"
    encoding: str = "utf-8"
    sketch_bins: int = DEFAULT_BINS
    weighting: str | None = None  # None: the tokenizer's default
    html: bool = False  # read documents as HTML: only their visible text
    ties: str = "zero"  # what a bit whose votes tie becomes (simdedup.simhash.TIES)
    #: what the record's sketch is of: the text's shingles (the resemblance's,
    #: :mod:`simdedup.shingle_sketch`) or the features' counts (:mod:`simdedup.sketch`)
    sketch_of: str = "shingles"
    #: what the texts are folded by beside case for their shingles and words (--fold)
    fold: str | None = None
    exact: bool = False  # keep each record's text for exact verification (:meth:`verify_exactly`)
    simhasher: Simhasher = field(init=False)
    fast: bool = field(init=False)
    copies: "_Copies" = field(init=False, repr=False, compare=False)
    _files: FileBuffer | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.weighting = self.weighting or self.tokenizer.weighting
        if self.sketch_of not in SKETCH_KINDS:
            raise ValueError(f"sketch-of must be {' or '.join(SKETCH_KINDS)}, not {self.sketch_of!r}")
        shingles = self.sketch_of == "shingles" and self.sketch_bins > 0
        if shingles:
            check_bytes(self.sketch_bins)
        #: bytes of the shingle sketch (0: none) and bins of the features' sketch (0: none)
        self.shingle_bytes = self.sketch_bins if shingles else 0
        self.feature_bins = 0 if shingles else self.sketch_bins
        if self.fold is not None:
            check_fold(self.fold)  # before any input
        #: how texts are folded for their resemblance (simdedup.similarity)
        self.folding = folding_of(self.fold)  # the measure's, whatever the tokenizer folds
        self.simhasher = Simhasher(
            self.bits, self.hash_name, sketch_bins=self.feature_bins, weighting=self.weighting, ties=self.ties
        )
        DocumentReader("", self.encoding)  # fail early on an unknown encoding
        self.fast = (
            not self.html
            and self.ties == "zero"  # the kernel gives ties 0
            and fastpath.eligible(self.tokenizer, self.bits, self.hash_name, self.encoding)
        )
        if self.fast:
            self.whole_bytes = fastpath.MAX_BYTES
        elif self._together_pays():
            self.whole_bytes = TOGETHER_BYTES
        self.copies = _Copies()
        self._settings = {
            "method": "simhash",
            **self.tokenizer.settings(),
            "bits": self.bits,
            "hash": self.hash_name,
            "weighting": self.weighting,
            "sketch": self.sketch_bins,
        }
        if self.ties != "zero":  # written only when not the default, as records before it had none
            self._settings["ties"] = self.ties
        if self.shingle_bytes:  # records before shingle sketches say nothing: of the features
            self._settings["sketch_of"] = SKETCH_OF_SHINGLES
        if self.fold is not None:
            self._settings["fold"] = self.fold

    def _together_pays(self) -> bool:
        return type(self.tokenizer).features_many is not Tokenizer.features_many

    @property
    def settings(self) -> dict[str, Any]:
        return self._settings

    def prepare(self) -> None:
        guard.prepared(self.tokenizer)

    def verify_exactly(self) -> None:
        """Keep each record's text for its exact sets (:mod:`simdedup.similarity`): the measure is
        of the text, whatever tokenizer chose the candidates (not of given features)."""
        self.exact = not isinstance(self, GivenFeaturesMethod)

    def make_record(
        self,
        doc_id: str,
        features: dict[str, float],
        size: int | None,
        text: list[str] | None = None,
        shingles: bytes | None = None,
    ) -> FingerprintRecord:
        """The record of a document's features (``text``: its chunks, kept with :attr:`exact`;
        ``shingles``: the shingle sketch of its text)."""
        value, sketch = self.simhasher(features)
        record = FingerprintRecord(doc_id, value, self.bits, len(features), self.settings, size, shingles or sketch)
        self._add_exact(record, text)
        return record

    def _add_exact(self, record: FingerprintRecord, text: list[str] | bytes | None) -> None:
        """With :attr:`exact`, the text (its chunks, or UTF-8 bytes) for the record."""
        if self.exact and text is not None:
            record.exact = KeptText(text if isinstance(text, bytes) else "".join(text), self.folding)

    def record(self, document: Document) -> FingerprintRecord:
        """The record of one document on the Python path (tokenizer, then simhash; the shingle
        sketch of the text as it streams past)."""
        if document.text is not None:
            kept = _KeptText(visible_text(text_chunks(document.text), self.html), self.exact, self._shingle_stream())
            features = guard.features(self.tokenizer, document.id, kept)
            if not features:
                raise SkipDocument(document.id, NO_TEXT_FEATURES)
            return self.make_record(document.id, features, utf8_size(document.text), kept.chunks, kept.shingles())
        reader = document.reader
        assert reader is not None
        kept = _KeptText(visible_text(reader, self.html), self.exact, self._shingle_stream())
        features = guard.features(self.tokenizer, document.id, kept)
        if not features:
            raise SkipDocument(document.id, NO_FEATURES)
        record = self.make_record(document.id, features, reader.bytes_read, kept.chunks, kept.shingles())
        record.encoding = reader.detected
        return record

    def _shingle_stream(self) -> Any:
        """A stream for the shingle sketch of one text (None without one)."""
        if not self.shingle_bytes:
            return None
        from ..shingle_sketch import new_stream

        return new_stream(self.shingle_bytes, self.folding)

    def _shingle_sketches(self, data: bytes | memoryview, offsets: np.ndarray) -> np.ndarray:
        """The shingle sketches of texts back to back in ``data`` (a row of zeros for a text
        that has none: it is not UTF-8, and takes the Python path, or has no character)."""
        return sketch_joined(data, offsets, self.shingle_bytes, self.folding)[0]

    def fingerprint_batch(self, documents: Iterable[Document]) -> list[FingerprintRecord | Source]:
        """As the base method; UTF-8 documents go to the compiled kernel (:mod:`simdedup.kernels.fastpath`)
        together, in batches of about :data:`~simdedup.kernels.fastpath.BATCH_BYTES`."""
        if not self.fast:
            if not self._together_pays():
                return super().fingerprint_batch(documents)
            return self._together(list(documents))
        documents = list(documents)
        results: list[FingerprintRecord | Source | None] = [None] * len(documents)
        pending: list[tuple[int, bytes]] = []  # (position, bytes read or text encoded)
        pending_bytes = 0
        for position, document in enumerate(documents):
            data = self._kernel_input(document)
            if data is None:
                results[position] = self._one(document)
                continue
            pending.append((position, data))
            pending_bytes += len(data)
            if pending_bytes >= fastpath.BATCH_BYTES:
                self._kernel_records(documents, pending, results)
                pending, pending_bytes = [], 0
        self._kernel_records(documents, pending, results)
        return results  # type: ignore[return-value]

    def finish(self) -> None:
        self._files = None  # the buffer of files read together (memory for the run's next stages)

    @property
    def reads_files(self) -> bool:
        """Whether :meth:`fingerprint_files` takes batches of files (the kernel's batched way):
        not for a subclass that decides otherwise which documents the kernel takes."""
        kind = type(self)
        return (
            self.fast
            and kind.fingerprint_batch is SimhashMethod.fingerprint_batch
            and kind._kernel_input is SimhashMethod._kernel_input
        )

    def fingerprint_files(self, sources: list[Source]) -> list[FingerprintRecord | Source]:
        """:meth:`fingerprint_batch` of the documents of ``sources``, files of one document each
        (:func:`simdedup.read.plain_files`) taken as :func:`~simdedup.read.open_documents`
        would take them: the same results, without objects per file on the way.

        The files are read whole into one reused buffer (:class:`~simdedup.read.FileBuffer`),
        where the kernel reads them, about :data:`~simdedup.kernels.fastpath.BATCH_BYTES` at a
        time; a file the kernel does not take (as :meth:`_kernel_input` decides) becomes the
        document :func:`~simdedup.read.file_document` makes of it and takes the Python path.
        Every document takes the path it takes in :meth:`fingerprint_batch`, exact copies
        (:class:`_Copies`) included.
        """
        if not self.reads_files:
            return self.fingerprint_batch([file_document(s, self.encoding, None) for s in sources])
        files = self._files or FileBuffer(self.whole_bytes, 2 * fastpath.BATCH_BYTES)
        self._files = None  # another thread calling meanwhile reads into its own
        try:
            return self._read_files(files, sources)
        finally:
            files.clear()
            self._files = files

    def _read_files(self, files: FileBuffer, sources: list[Source]) -> list[FingerprintRecord | Source]:
        files.clear()
        results: list[FingerprintRecord | Source | None] = [None] * len(sources)
        batch = _FileBatch()
        copies = self.exact
        for position, source in enumerate(sources):
            start = files.end
            size = files.read(source)
            if size < 0:  # not read whole: it streams
                results[position] = self._one(file_document(source, self.encoding, None))
                continue
            end = start + size
            buffer = files.buffer  # (it may have grown)
            if _python_path_takes(buffer, start, end):  # as _kernel_input decides
                data = files.bytes(start, end)
                files.drop(start)
                results[position] = self._one(file_document(source, self.encoding, data))
                continue
            bom = 0
            if buffer.startswith(codecs.BOM_UTF8, start, end):  # the kernel reads the text after it
                bom = len(codecs.BOM_UTF8)
                files.view[start : end - bom] = files.view[start + bom : end]
                end -= bom
                files.drop(end)
            batch.bytes += size
            batch.count += 1
            document = _FileDocument(position, source, size, bom)
            if copies and size >= COPY_MIN_BYTES:  # as _copied (with defer)
                document.text = files.bytes(start, end)
                data = document.data()
                document.key = key = self.copies.key(data, True)
                copied = self.copies.record(key, data, document.text, True, source.path)
                if copied is not None:
                    self._add_exact(copied, document.text)
                    results[position] = copied
                    files.drop(start)
                elif key in batch.firsts:  # a copy of one before it: looked up again once that is done
                    batch.later.append(document)
                    files.drop(start)
                else:
                    batch.firsts.add(key)
                    batch.documents.append(document)
            else:
                batch.documents.append(document)
            if batch.bytes >= fastpath.BATCH_BYTES:
                self._kernel_files(files, batch, results)
                batch = _FileBatch()
        self._kernel_files(files, batch, results)
        return results  # type: ignore[return-value]

    def _kernel_files(
        self, files: FileBuffer, batch: "_FileBatch", results: list[FingerprintRecord | Source | None]
    ) -> None:
        """The documents of a batch of files (:meth:`fingerprint_files`), their texts back to back
        in ``files``, into ``results``, as :meth:`_kernel_records` makes them; ``files`` is
        emptied."""
        if not batch.count:
            return
        kernel = fastpath.ready(batch.bytes)
        documents = batch.documents
        offsets = np.zeros(len(documents) + 1, dtype=np.int64)
        np.cumsum([d.size - d.bom for d in documents], out=offsets[1:])
        bounds = offsets.tolist()
        for document, start, end in zip(documents, bounds, bounds[1:]):
            if document.text is None and (kernel is None or (self.exact and end - start <= MAX_DOCUMENT_CHARS)):
                document.text = files.bytes(start, end)  # to keep (the buffer is reused)
        if kernel is None:  # the Python path, while this process has seen too little text for the kernel
            for document in documents + batch.later:
                results[document.position] = self._one(file_document(document.source, self.encoding, document.data()))
            files.clear()
            return
        self._file_records(kernel, files.view[: bounds[-1]], offsets, documents, results)
        files.clear()
        rest = []
        for document in batch.later:  # their first is done now (as _copied without defer)
            copied = self.copies.record(document.key, document.data(), document.text, True, document.source.path)  # type: ignore[arg-type]
            if copied is not None:
                self._add_exact(copied, document.text)
                results[document.position] = copied
            else:
                rest.append(document)
        if rest:
            offsets = np.zeros(len(rest) + 1, dtype=np.int64)
            np.cumsum([len(d.text) for d in rest], out=offsets[1:])  # type: ignore[arg-type]
            self._file_records(kernel, b"".join(d.text for d in rest), offsets, rest, results)  # type: ignore[misc]

    def _file_records(
        self,
        kernel: fastpath.Kernel,
        data: memoryview | bytes,
        offsets: np.ndarray,
        documents: list["_FileDocument"],
        results: list[FingerprintRecord | Source | None],
    ) -> None:
        """The records of files' texts held back to back in ``data``, as :meth:`_fingerprint_pending`
        makes them (the kept texts are the documents' :attr:`_FileDocument.text`)."""
        values, features, sketches = kernel.fingerprint_joined(
            data,
            offsets,
            self.tokenizer.name,
            self.feature_bins,
            self.weighting == "binary",
            self.tokenizer.options["shingle"],
            None,
            self.bits,
        )
        if self.shingle_bytes:
            sketches = self._shingle_sketches(data, offsets)
        bins, bits, settings = self.sketch_bins, self.bits, self.settings
        sketch_bytes = sketches.tobytes()
        encoding = "utf-8" if self.encoding == "auto" else None  # what auto finds in UTF-8
        kept = None
        if self.exact:
            folding = self.folding
            kept = KeptText
        bounds = offsets.tolist()
        for row, (document, value, count) in enumerate(zip(documents, as_integers(values), features.tolist())):
            if count < 0:  # not UTF-8 (or beyond the kernel): the Python path says why
                if document.text is None:
                    document.text = bytes(data[bounds[row] : bounds[row + 1]])
                results[document.position] = self._one(file_document(document.source, self.encoding, document.data()))
            elif count == 0:  # the reason of the Python path
                results[document.position] = Source(document.source.path, NO_FEATURES)
            else:
                record = FingerprintRecord(
                    document.source.path,
                    value,
                    bits,
                    count,
                    settings,
                    document.size,
                    sketch_bytes[row * bins : (row + 1) * bins] if bins else None,
                )
                if encoding is not None:
                    record.encoding = encoding
                if kept is not None and document.size - document.bom <= MAX_DOCUMENT_CHARS:
                    record.exact = kept(document.text, folding)
                    if document.key is not None:
                        self.copies.add(document.key, record, True)
                results[document.position] = record

    def _kernel_input(self, document: Document) -> bytes | None:
        """The bytes for the kernel: a file's bytes as read (byte-order mark included), a text's
        UTF-8 (lone surrogates as ``surrogatepass`` writes them); None when the Python path
        should take the document (it says why it skips, reads an HTTP response or markup that
        declares an encoding other than UTF-8, cuts a run without whitespace as it reads, or streams a large
        file)."""
        if document.reason is not None:
            return None
        if document.text is not None:
            data = document.text.encode("utf-8", "surrogatepass")
            return data if len(data) <= fastpath.MAX_BYTES else None
        data = document.data
        return None if data is None or _python_path_takes(data, 0, len(data)) else data

    def _kernel_records(
        self,
        documents: list[Document],
        pending: list[tuple[int, bytes]],
        results: list[FingerprintRecord | Source | None],
    ) -> None:
        """Fingerprint the pending documents with the kernel, into ``results``; on the Python
        path while this process has seen too little text to load the kernel for. With exact
        verification, exact copies of a document fingerprinted before take its record."""
        if not pending:
            return
        kernel = fastpath.ready(sum(len(data) for _, data in pending))
        if kernel is None:
            for position, _ in pending:
                results[position] = self._one(documents[position])
            return
        if not self.exact:
            self._fingerprint_pending(kernel, documents, pending, results)
            return
        keys: dict[int, bytes] = {}  # position -> key of the copies' table, hashed once
        firsts, later = self._copied(documents, pending, results, keys, defer=True)
        self._fingerprint_pending(kernel, documents, firsts, results, keys)
        rest, _ = self._copied(documents, later, results, keys, defer=False)  # their first is done now
        self._fingerprint_pending(kernel, documents, rest, results, keys)

    def _fingerprint_pending(
        self,
        kernel: fastpath.Kernel,
        documents: list[Document],
        pending: list[tuple[int, bytes]],
        results: list[FingerprintRecord | Source | None],
        keys: dict[int, bytes] | None = None,
    ) -> None:
        """The pending documents in one kernel call, into ``results``; those with a key in
        ``keys`` are remembered as copies' records."""
        if not pending:
            return
        files = [documents[position].text is None for position, _ in pending]
        texts = [_without_bom(data) if file else data for (_, data), file in zip(pending, files)]
        flags = [0 if file else fastpath.SURROGATES for file in files]
        values, features, sketches = kernel.fingerprint(
            texts,
            self.tokenizer.name,
            self.feature_bins,
            self.weighting == "binary",
            self.tokenizer.options["shingle"],
            flags,
            self.bits,
        )
        if self.shingle_bytes:
            sketches = self._shingle_sketches(b"".join(texts), np.cumsum([0, *map(len, texts)]))
        for (position, data), file, value, count, sketch, text in zip(
            pending, files, as_integers(values), features.tolist(), sketches, texts
        ):
            document = documents[position]
            if count < 0:  # not UTF-8 (or beyond the kernel): the Python path says why
                results[position] = self._one(document)
            elif count == 0:  # the reasons of the Python path
                results[position] = Source(document.id, NO_FEATURES if file else NO_TEXT_FEATURES)
            else:
                record = FingerprintRecord(
                    document.id,
                    value,
                    self.bits,
                    count,
                    self.settings,
                    len(data),
                    sketch.tobytes() if self.sketch_bins else None,
                )
                record.encoding = "utf-8" if file and self.encoding == "auto" else None  # what auto finds in UTF-8
                if len(text) <= MAX_DOCUMENT_CHARS:
                    self._add_exact(record, text)
                    if keys and position in keys:
                        self.copies.add(keys[position], record, file)
                results[position] = record

    def _copied(
        self,
        documents: list[Document],
        pending: list[tuple[int, bytes]],
        results: list[FingerprintRecord | Source | None],
        keys: dict[int, bytes],
        defer: bool,
    ) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
        """Records for the pending documents whose bytes this process has fingerprinted (into
        ``results``); returns the documents still to fingerprint and, with ``defer``, apart from
        them the copies of one that comes earlier (to look up again once it is done). The keys
        of the documents large enough to look up go to ``keys``. Only with exact verification,
        whose kept texts are what a copy is compared with."""
        rest, later, first = [], [], set()
        for position, data in pending:
            if len(data) < COPY_MIN_BYTES:
                rest.append((position, data))
                continue
            document = documents[position]
            file = document.text is None
            text = _without_bom(data) if file else data
            key = keys.get(position)
            if key is None:
                key = keys[position] = self.copies.key(data, file)
            copied = self.copies.record(key, data, text, file, document.id)
            if copied is not None:
                self._add_exact(copied, text)
                results[position] = copied
            elif defer and key in first:
                later.append((position, data))
            else:
                first.add(key)
                rest.append((position, data))
        return rest, later

    def _together(self, documents: list[Document]) -> list[FingerprintRecord | Source]:
        """The Python path for a tokenizer that makes features faster for many documents at
        once (:meth:`Tokenizer.features_many`): documents read whole (up to
        :data:`TOGETHER_BYTES`) go to it, and to :meth:`Simhasher.many`, about
        :data:`TOGETHER_BYTES` times four at a time; larger ones stream."""
        results: list[FingerprintRecord | Source | None] = [None] * len(documents)
        pending: list[tuple[int, list[str], DocumentReader | None]] = []
        pending_chars = 0
        for position, document in enumerate(documents):
            if document.reason is not None or (document.text is None and document.data is None):
                results[position] = self._one(document)  # skipped, or a file that streams
                continue
            try:
                if document.text is not None:
                    chunks, reader = list(visible_text(text_chunks(document.text), self.html)), None
                else:
                    reader = document.reader
                    chunks = list(visible_text(reader, self.html))  # type: ignore[arg-type]
            except SkipDocument as exc:
                results[position] = Source(document.id, exc.reason)
                continue
            pending.append((position, chunks, reader))
            pending_chars += sum(map(len, chunks))
            if pending_chars >= 4 * TOGETHER_BYTES:
                self._records_together(documents, pending, results)
                pending, pending_chars = [], 0
        self._records_together(documents, pending, results)
        return results  # type: ignore[return-value]

    def _records_together(
        self,
        documents: list[Document],
        pending: list[tuple[int, list[str], DocumentReader | None]],
        results: list[FingerprintRecord | Source | None],
    ) -> None:
        if not pending:
            return
        features = guard.features_many(
            self.tokenizer, [documents[position].id for position, _, _ in pending], [chunks for _, chunks, _ in pending]
        )
        kept = []
        for (position, chunks, reader), f in zip(pending, features):
            if isinstance(f, SkipDocument):
                results[position] = Source(documents[position].id, f.reason)
            elif f:
                kept.append((position, f, reader, chunks))
            else:  # the reasons of the one-document path
                results[position] = Source(
                    documents[position].id, NO_FEATURES if reader is not None else NO_TEXT_FEATURES
                )
        shingles = None
        if self.shingle_bytes and kept:
            texts = ["".join(chunks).encode("utf-8", "surrogatepass") for _, chunks, _ in pending]
            rows = {position: row for row, (position, _, _) in enumerate(pending)}
            made = self._shingle_sketches(b"".join(texts), np.cumsum([0, *map(len, texts)]))
            shingles = {position: made[rows[position]].tobytes() for position, _, _, _ in kept}
        for (position, f, reader, chunks), (value, sketch) in zip(
            kept, self.simhasher.many([f for _, f, _, _ in kept])
        ):
            document = documents[position]
            if shingles is not None:
                sketch = shingles[position]
            size = utf8_size(document.text) if reader is None else reader.bytes_read  # type: ignore[arg-type]
            record = FingerprintRecord(document.id, value, self.bits, len(f), self.settings, size, sketch)
            record.encoding = reader.detected if reader is not None else None
            self._add_exact(record, chunks)
            results[position] = record


@dataclass
class _FileDocument:
    """A file of :meth:`SimhashMethod.fingerprint_files` on its way to the kernel."""

    position: int  # in the batch
    source: Source
    size: int  # bytes as read
    bom: int  # bytes of its UTF-8 byte-order mark, which the kernel does not read
    key: bytes | None = None  # of the copies' table
    text: bytes | None = None  # the bytes the kernel reads, once out of the buffer

    def data(self) -> bytes:
        """The file's bytes as read (its text must be out of the buffer)."""
        assert self.text is not None
        return codecs.BOM_UTF8 + self.text if self.bom else self.text


@dataclass
class _FileBatch:
    """The files of :meth:`SimhashMethod.fingerprint_files` for one kernel call: ``documents``,
    whose texts are in the buffer back to back; ``later``, copies of one of them, looked up
    once it is done; the number and bytes of both (and of copies found at once)."""

    documents: list[_FileDocument] = field(default_factory=list)
    later: list[_FileDocument] = field(default_factory=list)
    firsts: set[bytes] = field(default_factory=set)
    count: int = 0
    bytes: int = 0


class _KeptText:
    """A document's text chunks passed through once; with ``keep``, also kept in ``chunks``
    (None beyond :data:`simdedup.similarity.MAX_DOCUMENT_CHARS` characters); with a ``stream``
    (:class:`simdedup.kernels.shingles.ShingleStream`), also fed to it."""

    def __init__(self, chunks: Iterable[str], keep: bool, stream: Any = None):
        self._chunks = chunks
        self.chunks: list[str] | None = [] if keep else None
        self.chars = 0
        self._stream = stream

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            self.chars += len(chunk)
            if self.chunks is not None:
                self.chunks.append(chunk)
                if self.chars > MAX_DOCUMENT_CHARS:
                    self.chunks = None
            if self._stream is not None:
                self._stream.update(chunk.encode("utf-8", "surrogatepass"))
            yield chunk

    def shingles(self) -> bytes | None:
        """The shingle sketch of the text passed through (None without a stream)."""
        return None if self._stream is None else self._stream.finish()


@dataclass
class GivenFeaturesMethod(SimhashMethod):
    """Records of documents whose features the input gives (``--features-field``: JSON lines
    read with :class:`simdedup.read.FeaturesField`); the tokenizer is
    :class:`simdedup.features.GivenFeatures`. A document given as text is skipped."""

    def fingerprint_batch(self, documents: Iterable[Document]) -> list[FingerprintRecord | Source]:
        results: list[FingerprintRecord | Source] = []
        for document in documents:
            if document.reason is not None:
                results.append(document.skipped)
            elif document.features is None:
                results.append(Source(document.id, "not a JSON line: --features-field reads features from JSON lines"))
            elif not document.features:
                results.append(Source(document.id, "no features (an empty list or object)"))
            else:
                results.append(self.make_record(document.id, document.features, None))
        return results


class _Copies:
    """Fingerprints of documents this process has made, by the 128-bit XXH3 of their bytes (and
    whether they were a file's bytes or a text's UTF-8): corpora hold exact copies (licence
    files, one page mirrored under many addresses), and each is fingerprinted once. A copy is
    taken only when its text equals the first one's, kept for exact verification: a hash
    collision, chance or crafted, is fingerprinted as any other document. At most
    :data:`COPY_ENTRIES` are held, about 550 bytes each with their sketch (the texts are only
    referred to, so they go when exact verification lets them go); then they start again."""

    def __init__(self) -> None:
        # the record without id and text, the text it was made of, and whether from a file
        self._records: dict[bytes, tuple[FingerprintRecord, weakref.ref, bool]] = {}

    @staticmethod
    def key(data: bytes, file: bool) -> bytes:
        return xxhash.xxh3_128_digest(data) + (b"f" if file else b"t")

    def add(self, key: bytes, record: FingerprintRecord, file: bool) -> None:
        """Remember a record with its kept text (:attr:`FingerprintRecord.exact`)."""
        if len(self._records) >= COPY_ENTRIES:
            self._records.clear()  # bounded; the copies that matter are usually near each other
        self._records[key] = (record.replaced(id="", exact=None), weakref.ref(record.exact), file)

    def record(self, key: bytes, data: bytes, text: bytes, file: bool, doc_id: str) -> FingerprintRecord | None:
        """A copy under ``doc_id`` of the record made with this key of the same bytes (``data``
        as read, ``text`` as the kernel reads them), or None when there is none, its text is
        gone or it was made of other bytes."""
        found = self._records.get(key)
        if found is None:
            return None
        record, kept, from_file = found
        first = kept()
        if first is None or from_file != file or record.bytes != len(data) or first.text != text:
            return None
        return record.replaced(id=doc_id)


def _python_path_takes(data: bytes | bytearray, start: int, end: int) -> bool:
    """Whether the file ``data[start:end]`` takes the Python path rather than the kernel (see
    :meth:`SimhashMethod._kernel_input`): empty, binary (a NUL in its first 8 KiB), an HTTP
    response, markup that declares an encoding other than UTF-8, or a run the reader would cut
    inside a word. Only a head that could be one is copied."""
    head = min(end, start + DECLARATION_BYTES)  # where a status line or a declaration is
    return (
        start == end
        or data.find(0, start, min(end, start + 8192)) >= 0
        or (data.startswith(b"HTTP/", start, end) and looks_like_http(bytes(data[start : start + MAX_HEAD_BYTES + 2])))
        or (starts_with_markup(data, start, head) and declares_other_than_utf8(bytes(data[start:head])))
        or _may_be_cut_inside_a_word(data, start, end)
    )


def _without_bom(data: bytes) -> bytes:
    return data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data


#: the ASCII characters str.isspace takes, the most frequent first
_ASCII_SPACES = tuple(bytes([c]) for c in (32, 10, 9, 13, 12, 11, 28, 29, 30, 31))


def _may_be_cut_inside_a_word(data: bytes | bytearray, start: int = 0, end: int | None = None) -> bool:
    """Whether :class:`DocumentReader` could cut the document ``data[start:end]`` elsewhere than
    at whitespace: it does so in a run of :data:`~simdedup.read.MAX_CARRY` characters without
    whitespace (so of at least as many bytes without ASCII whitespace), where the kernel would
    not. The last ASCII whitespace of each stretch of MAX_CARRY bytes is looked for from its
    end (``rfind``: no copy, at memory speed)."""
    end = len(data) if end is None else end
    last = start - 1  # the last whitespace found
    while end - last > MAX_CARRY:
        top = last + MAX_CARRY + 1  # is there whitespace in data[last + 1 : top]?
        found = -1
        for space in _ASCII_SPACES:
            found = max(found, data.rfind(space, max(found, last) + 1, top))
        if found < 0:
            return True
        last = found
    return False


def make(
    *,
    tokenizer: str,
    tokenizer_options: dict[str, Any],
    bits: int,
    hash_name: str,
    weighting: str | None,
    ties: str | None,
    sketch_bins: int,
    sketch_of: str | None,
    encoding: str,
    html: bool,
    given_features: bool,
    fold: str | None = None,
    **_: Any,
) -> SimhashMethod:
    """The method from the feature options (:func:`simdedup.methods.make_method`): simhash of a
    tokenizer's features, or of the features the input gives (``given_features``: no text, so
    the sketch is of the features)."""
    if given_features:
        from ..features import GivenFeatures

        if sketch_of == "shingles":
            raise ValueError("given features have no text to sketch the shingles of: --sketch-of features")
        if fold is not None:
            raise ValueError("given features have no text to fold: --fold does not apply")
        return GivenFeaturesMethod(
            GivenFeatures(),
            bits,
            hash_name,
            encoding=encoding,
            sketch_bins=sketch_bins,
            weighting=weighting,
            ties=ties or "zero",
            sketch_of="features",
        )
    from ..tokenizers import get_tokenizer

    return SimhashMethod(
        get_tokenizer(tokenizer, **tokenizer_options),
        bits,
        hash_name,
        encoding=encoding,
        sketch_bins=sketch_bins,
        weighting=weighting,
        html=html,
        ties=ties or "zero",
        sketch_of=sketch_of or "shingles",
        fold=fold,
    )


def options_of_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The feature options that make records of ``settings`` (:meth:`MethodSpec.feature_options`):
    a record's or an index's; records before ``sketch_of`` carry sketches of features."""
    return {
        "tokenizer": settings["tokenizer"],
        "tokenizer_options": settings.get("options") or {},
        "bits": settings["bits"],
        "hash_name": settings["hash"],
        "weighting": settings.get("weighting"),
        "ties": settings.get("ties"),
        "sketch_bins": settings.get("sketch") or 0,
        "sketch_of": settings.get("sketch_of") or ("features" if settings.get("sketch") else None),
        "given_features": settings["tokenizer"] == "given",
        "fold": settings.get("fold"),
    }
