"""The first stage: every document read, cut into units (:mod:`.units`), and each unit long
enough to be removed given its offsets, its exact key and, for near-duplicates, a sketch; in
batches of sources, on ``jobs`` worker processes, in input order.

A unit's exact key is the XXH3-128 of its text with white space runs as one space (line breaks,
indentation and re-wrapping do not count); two units with the same key have the same shingles,
so they are near-duplicates too. Its band keys are those of a MinHash of its shingles
(:mod:`.candidates`): units that share one are candidates of near-duplicates.

Offsets are into the document's text as Python reads it (code points) and into its UTF-8 (a
file's own bytes, after a byte-order mark). Documents of up to :data:`WHOLE_BYTES` that are
UTF-8 go to the kernel as read; any other is decoded as ``fingerprint`` decodes it.
"""

from __future__ import annotations

import codecs
import itertools
import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from .. import workers
from ..errors import SkipDocument, Warnings
from ..read import Document, Inputs, Source, open_documents, read_sources
from .candidates import band_keys
from .options import SpanOptions
from .units import normalized, units, weights

#: sources read and cut together: one kernel call, one task of a worker process
BATCH_SOURCES = 64
#: files up to this size are read whole, in one system call
WHOLE_BYTES = 16 << 20
#: a longer document is skipped (it is held whole while it is cut)
MAX_DOCUMENT_BYTES = 256 << 20


@dataclass
class UnitBatch:
    """The units of a batch of sources: per document (read, in order) its id, size in UTF-8
    bytes and in characters, and the XXH3-64 of its UTF-8; per unit ``units`` (n, 5): its
    document (in the batch), byte start and end, character start and end; ``hashes`` (n, 2,
    uint64): its exact key; ``bands`` (n, 20, uint32; (n, 0) without ``near``): its band keys.
    Skipped sources come with their reasons."""

    ids: list[str]
    sizes: np.ndarray
    chars: np.ndarray
    digests: np.ndarray
    units: np.ndarray
    hashes: np.ndarray
    bands: np.ndarray
    skipped: list[Source] = field(default_factory=list)

    @property
    def size(self) -> int:
        return int(self.sizes.sum())

    def __reduce__(self) -> tuple:  # from a worker, its fields as a tuple (pickle protocol 5 sends the arrays aside)
        return UnitBatch, (
            self.ids,
            self.sizes,
            self.chars,
            self.digests,
            self.units,
            self.hashes,
            self.bands,
            self.skipped,
        )


def utf8_of(document: Document) -> bytes:
    """The document's text in UTF-8 (lone surrogates of a JSON string as ``surrogatepass``
    writes them), decoded as ``fingerprint`` decodes it.

    Raises:
        SkipDocument: it cannot be read as text, or is longer than :data:`MAX_DOCUMENT_BYTES`.
    """
    if document.reason is not None:
        raise SkipDocument(document.id, document.reason)
    if document.text is not None:
        data = document.text.encode("utf-8", "surrogatepass")
    elif document.reader is not None:
        parts, size = [], 0
        for chunk in document.reader:
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise SkipDocument(document.id, f"longer than {MAX_DOCUMENT_BYTES >> 20} MiB: not cut into units")
            parts.append(chunk)
        data = "".join(parts).encode("utf-8", "surrogatepass")
    else:
        raise SkipDocument(document.id, "the document gives its features, not a text")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise SkipDocument(document.id, f"longer than {MAX_DOCUMENT_BYTES >> 20} MiB: not cut into units")
    return data


def text_of(document: Document) -> str:
    """The document's text, as :func:`utf8_of` reads it."""
    return utf8_of(document).decode("utf-8", "surrogatepass")


def _as_read(document: Document, encoding: str) -> bytes | None:
    """The bytes of a file read whole, when they may be its text as they are (UTF-8 after a
    byte-order mark, checked by the kernel); None when it takes the reader."""
    from ..methods.simhash import _python_path_takes

    data = document.data
    if encoding not in ("utf-8", "auto"):
        return None
    if data is None or document.reason is not None or _python_path_takes(data, 0, len(data)):
        return None
    return data[3:] if data.startswith(codecs.BOM_UTF8) else data


def unit_batch(sources: list[Source], options: SpanOptions, encoding: str = "utf-8") -> UnitBatch:
    """One batch of sources read (files in ``encoding``; ``auto`` as ``fingerprint`` says) and
    cut into units: the work of a worker process."""
    texts: list[bytes] = []
    read: list[Document] = []
    skipped: list[Source] = []
    for document in open_documents(sources, encoding, WHOLE_BYTES):
        data = _as_read(document, encoding)
        try:
            texts.append(data if data is not None else utf8_of(document))
        except SkipDocument as exc:
            skipped.append(Source(document.id, exc.reason, origin=document.origin))
            continue
        read.append(document)
    cut = _cut(texts, options)
    if cut.invalid:  # read as they were, but not UTF-8: decoded as fingerprint decodes them
        return _again(read, texts, cut.invalid, skipped, options)
    return _batch([d.id for d in read], texts, cut, skipped, options)


def _again(
    read: list[Document], texts: list[bytes], invalid: list[int], skipped: list[Source], options: SpanOptions
) -> UnitBatch:
    """The batch again, the documents that were not UTF-8 as read decoded as ``fingerprint``
    decodes them (or skipped, saying why)."""
    bad = set(invalid)
    ids, decoded = [], []
    for d, (document, data) in enumerate(zip(read, texts)):
        if d in bad:
            try:
                data = utf8_of(document)
            except SkipDocument as exc:
                skipped.append(Source(document.id, exc.reason, origin=document.origin))
                continue
        ids.append(document.id)
        decoded.append(data)
    return _batch(ids, decoded, _cut(decoded, options), skipped, options)


@dataclass
class _Cut:
    units: np.ndarray  # (n, 5): doc, byte start, byte end, char start, char end
    hashes: np.ndarray
    bands: np.ndarray
    invalid: list[int]


def _cut(texts: list[bytes], options: SpanOptions) -> _Cut:
    """The long enough units of ``texts`` (the kernel's, or the reference's where the kernel
    cannot load)."""
    from ..kernels.units import UnitsKernel

    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    kernel = UnitsKernel.loaded()
    if kernel is not None:
        found = kernel.cut(b"".join(texts), offsets, options.unit, options.min_words, options.near)
        rows = found.units[:, :5]
        rows[:, 1] -= offsets[rows[:, 0]]
        rows[:, 2] -= offsets[rows[:, 0]]
        return _Cut(rows, found.hashes, found.keys, found.invalid)
    return _reference_cut(texts, options)


def _reference_cut(texts: list[bytes], options: SpanOptions) -> _Cut:
    import xxhash

    rows, hashes, bands = [], [], []
    invalid = []
    for d, data in enumerate(texts):
        try:
            text = data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            invalid.append(d)
            continue
        spans = units(text, options.unit)
        byte_at = _byte_offsets(text)
        for (start, end), weight in zip(spans, weights(text, spans)):
            if weight < options.min_words:
                continue
            piece = normalized(text[start:end])
            key = xxhash.xxh3_128_intdigest(piece.encode("utf-8", "surrogatepass"))
            rows.append((d, byte_at(start), byte_at(end), start, end))
            hashes.append((key & (2**64 - 1), key >> 64))
            if options.near:
                bands.append(band_keys(piece))
    return _Cut(
        np.array(rows, dtype=np.int64).reshape(-1, 5),
        np.array(hashes, dtype=np.uint64).reshape(-1, 2),
        np.array(bands, dtype=np.uint32).reshape(len(rows), -1),
        invalid,
    )


def _byte_offsets(text: str) -> Callable[[int], int]:
    """The UTF-8 offset of each character offset of ``text``."""
    if text.isascii():
        return lambda position: position
    sizes = np.fromiter((len(c.encode("utf-8", "surrogatepass")) for c in text), dtype=np.int64, count=len(text))
    at = np.concatenate(([0], np.cumsum(sizes)))
    return lambda position: int(at[position])


def _batch(ids: list[str], texts: list[bytes], cut: _Cut, skipped: list[Source], options: SpanOptions) -> UnitBatch:
    import xxhash

    sizes = np.array([len(t) for t in texts], dtype=np.int64)
    chars = np.array([_characters(t) for t in texts], dtype=np.int64)
    digests = np.array([xxhash.xxh3_64_intdigest(t) for t in texts], dtype=np.uint64)
    bands = cut.bands if options.near else np.zeros((len(cut.units), 0), dtype=np.uint32)
    return UnitBatch(ids, sizes, chars, digests, cut.units, cut.hashes, bands, skipped)


def _characters(data: bytes) -> int:
    """Code points in UTF-8 (every byte that does not continue one starts one)."""
    if data.isascii():
        return len(data)
    return int(np.count_nonzero((np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80))


# --- the run, on worker processes --------------------------------------------------------------

_options: tuple[SpanOptions, str] | None = None


def _init_worker(options: SpanOptions, encoding: str) -> None:
    global _options
    _options = (options, encoding)


def _work(task: list[Source]) -> UnitBatch:
    assert _options is not None
    return unit_batch(task, *_options)


def _batches(sources: Iterable[Source], size: int) -> Iterator[list[Source]]:
    iterator = iter(sources)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _no_note(text: str) -> None:
    pass


@dataclass
class UnitRun:
    """The first stage over the documents ``paths`` name: iterate once for the
    :class:`UnitBatch` objects, in input order. Skipped documents are told to ``note`` as
    warnings (a few per file, then a count; each with ``verbose``) and listed in
    :attr:`skipped`."""

    paths: tuple[str, ...]
    options: SpanOptions = field(default_factory=SpanOptions)
    inputs: Inputs = field(default_factory=Inputs)
    jobs: int = 1
    note: Callable[[str], None] = _no_note
    verbose: bool = False
    exclude: tuple[tuple[int, int], ...] = ()  # files never to read: the run's own output
    overwritten: dict[tuple[int, int], str] | None = None  # files the outputs write over
    skipped: list[str] = field(default_factory=list, init=False)
    tables: list[tuple[str, str]] = field(default_factory=list, init=False)

    def __iter__(self) -> Iterator[UnitBatch]:
        plan = read_sources(
            self.paths, self.inputs, False, self.tables, self.exclude, self.overwritten, self.note, self.verbose
        )
        sources: Iterator[Source] = iter(plan.sources)
        jobs = self.jobs
        if jobs > 1:  # a pool is not worth it for a handful of documents
            head = list(itertools.islice(sources, 4 * jobs))
            jobs = max(1, min(jobs, len(head) // 4))
            sources = itertools.chain(head, sources)
        warnings = Warnings(self.note, self.verbose, " (-v shows them all)")
        batches = _batches(sources, BATCH_SOURCES)
        if jobs <= 1:
            done: Iterable[UnitBatch] = (unit_batch(batch, self.options, self.inputs.encoding) for batch in batches)
        else:
            done = workers.in_order(batches, jobs, _work, _init_worker, (self.options, self.inputs.encoding))
        for batch in done:
            for source in batch.skipped:
                self.skipped.append(source.path)
                warnings.warn(source.where, source.reason or "", source.origin)
            yield batch
        warnings.close()


# --- the texts of units, read again (to verify near-duplicates) --------------------------------

_wanted: tuple[dict[str, tuple[int, list[tuple[int, int, int]]]], str] = ({}, "utf-8")


def _init_texts(wanted: dict[str, tuple[int, list[tuple[int, int, int]]]], encoding: str) -> None:
    global _wanted
    _wanted = (wanted, encoding)


def _texts_work(task: list[Source]) -> list[tuple[int, bytes]]:
    return texts_of_units(task, *_wanted)


def texts_of_units(
    sources: list[Source], wanted: dict[str, tuple[int, list[tuple[int, int, int]]]], encoding: str = "utf-8"
) -> list[tuple[int, bytes]]:
    """``(k, text)`` of each unit ``k`` that ``wanted`` asks of the documents of ``sources``:
    ``wanted[id]`` is the document's XXH3-64 (read as the first stage read it) and its units
    ``(k, byte start, byte end)``. A document whose text is no longer the same gives nothing."""
    import xxhash

    found = []
    for document in open_documents(sources, encoding, WHOLE_BYTES):
        if document.id not in wanted:
            continue
        digest, units = wanted[document.id]
        try:
            data = _as_read(document, encoding)
            if data is None or xxhash.xxh3_64_intdigest(data) != digest:
                data = utf8_of(document)
        except SkipDocument:
            continue
        if xxhash.xxh3_64_intdigest(data) == digest:
            found += [(k, data[start:end]) for k, start, end in units]
    return found


def _readable_again(path: str) -> bool:
    """Whether the input ``path`` names can be read a second time: not a pipe, a FIFO or a
    device, which would wait for a writer that is gone."""
    import stat

    from ..read.remote import is_url

    try:
        return is_url(path) or not stat.S_ISCHR(mode := os.stat(path).st_mode) and not stat.S_ISFIFO(mode)
    except OSError:
        return True  # as the first reading: it says what is wrong


def read_unit_texts(
    paths: tuple[str, ...], inputs: Inputs, ids: list[str], digests: np.ndarray, rows: np.ndarray, jobs: int = 1
) -> list[bytes | None]:
    """The UTF-8 texts of the units ``rows`` ((k, 3): document, byte start, byte end), read
    again from the documents ``paths`` name (None for a unit whose document cannot be read
    again as it was: a pipe, a file changed since)."""
    wanted: dict[str, tuple[int, list[tuple[int, int, int]]]] = {}
    for k, (doc, start, end) in enumerate(rows.tolist()):
        wanted.setdefault(ids[doc], (int(digests[doc]), []))[1].append((k, start, end))
    again = tuple(path for path in paths if _readable_again(path))
    if not again:
        return [None] * len(rows)
    sources = (
        s
        for s in read_sources(again, inputs).sources
        if s.line is not None or s.span is not None or s.origin is not None or s.path in wanted
    )
    batches = _batches(sources, BATCH_SOURCES)
    if jobs <= 1:
        done: Iterable[list[tuple[int, bytes]]] = (texts_of_units(batch, wanted, inputs.encoding) for batch in batches)
    else:
        done = workers.in_order(batches, jobs, _texts_work, _init_texts, (wanted, inputs.encoding))
    texts: list[bytes | None] = [None] * len(rows)
    for found in done:
        for k, text in found:
            texts[k] = text
    return texts
