"""The read stage: the only code that opens an input path.

:func:`read_sources` turns what the command line names (paths, directories, ``-`` for a list of
paths, tables of documents) into :class:`Source` objects, each file once; :func:`open_documents`
turns sources into :class:`Document` objects that a fingerprinting method takes: texts, bytes
read whole, or readers that stream a file's text in chunks.

- :mod:`.walk`: paths and directory walks (each file once, links last);
- :mod:`.tables`: JSON lines, CSV, Parquet and WARC files, one source per row;
- :mod:`.document`: one document opened, decompressed and decoded in bounded memory;
- :mod:`.web`: HTTP responses, HTML's visible text, WARC records;
- :mod:`.remote`: objects named by URL (``s3://``, ``gs://``, ...), listed and read in ranges.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterable, Iterator

from ..errors import SimdedupError, UsageError
from ..limits import MAX_RECORD_LINE
from .document import (
    CHUNK_BYTES,
    MAX_CARRY,
    Document,
    DocumentReader,
    FileBuffer,
    file_blocks,
    is_compressed,
    text_chunks,
    utf8_size,
    whole_file,
)
from .remote import is_prefix, is_url, local_path, open_stored, read_objects
from .source import Source
from .tables import MAX_LINE_BYTES, FeaturesField, documents, expand_tables, table_kind
from .walk import WalkFilter, iter_sources, read_path_list

__all__ = [
    "CHUNK_BYTES",
    "MAX_CARRY",
    "MAX_LINE_BYTES",
    "Document",
    "DocumentReader",
    "FeaturesField",
    "FileBuffer",
    "Inputs",
    "Source",
    "WalkFilter",
    "documents",
    "file_blocks",
    "file_document",
    "is_compressed",
    "iter_sources",
    "named_streams",
    "open_document",
    "open_documents",
    "plain_files",
    "read_sources",
    "text_chunks",
    "utf8_size",
    "without_links",
]


def open_documents(sources: Iterable[Source], encoding: str = "utf-8", whole_bytes: int = 0) -> Iterator[Document]:
    """The documents of ``sources``, ready for a method (see :class:`Document`): JSON lines
    parsed, table rows as texts, and files of up to ``whole_bytes`` bytes read whole (not
    compressed ones, which stream; objects named by URL all at once); the others stream from
    their reader."""
    sources = list(sources)
    fetched = read_objects([s for s in sources if not is_compressed(s.path)], whole_bytes) if whole_bytes else {}
    for source in sources:
        for document in documents(source):
            if document.reason is not None:
                yield Document(document.path, document.reason, origin=document.origin, place=document.place)
            elif document.text is not None:
                yield Document(document.path, text=document.text, origin=document.origin, place=document.place)
            elif document.features is not None:
                yield Document(document.path, features=document.features, origin=document.origin, place=document.place)
            else:
                data = None
                if is_url(document.path):
                    data = fetched.get(document.path)
                elif whole_bytes and not is_compressed(document.path):
                    data = whole_file(document, whole_bytes)
                yield file_document(document, encoding, data)


def file_document(source: Source, encoding: str, data: bytes | None) -> Document:
    """The document of a file (``source``) as :func:`open_documents` gives it: with its bytes
    (``data``) when they were read whole, else streaming from the file."""
    return Document(source.path, data=data, reader=DocumentReader(source.path, encoding, data=data, size=source.size))


def plain_files(sources: list[Source]) -> bool:
    """Whether every source is a local file, not compressed, to read as one document: what
    :class:`FileBuffer` reads whole for a method's batched path (its documents are
    ``file_document(source, encoding, data)``)."""
    return all(
        s.reason is None
        and s.text is None
        and s.features is None
        and s.line is None
        and s.span is None
        and not is_url(s.path)
        and not is_compressed(s.path)
        for s in sources
    )


def open_document(path: str, encoding: str = "utf-8", whole_bytes: int = 0) -> Document:
    """The document of the file at ``path`` (see :func:`open_documents`)."""
    (document,) = open_documents([Source(path)], encoding, whole_bytes)
    return document


@dataclass
class Inputs:
    """How the named paths become documents: the input options of ``fingerprint`` and ``dedup``."""

    null: bool = False  # a path list on stdin is NUL-separated
    jsonl: bool | None = None  # every file is JSON lines (True), none is (False), by name (None)
    text_field: str = "text"  # or a FeaturesField
    id_field: str | None = None
    globs: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    min_bytes: int = 0
    max_line_bytes: int | None = None
    #: the text encoding of CSV files (``--encoding``); JSON lines, Parquet and WARC say their own
    encoding: str = "utf-8"

    @property
    def given_features(self) -> bool:
        """Whether the documents' features are given (``--features-field``) instead of their text."""
        return isinstance(self.text_field, FeaturesField)


@dataclass
class SourcePlan:
    """What :func:`read_sources` found: the sources (an iterator when they are found as they
    are consumed), their number when known up front, and, for tables (counted only as they are
    read), their total size in bytes."""

    sources: Iterable[Source]
    count: int | None = None
    table_bytes: int | None = None


def read_sources(
    paths: Iterable[str],
    inputs: Inputs = Inputs(),
    count: bool = False,
    tables: list[tuple[str, str]] | None = None,
    exclude: Iterable[tuple[int, int]] = (),
    overwritten: dict[tuple[int, int], str] | None = None,
    note: Callable[[str], None] | None = None,
    verbose: bool = False,
) -> SourcePlan:
    """The sources ``paths`` name: files, directories (walked), ``-`` (a list of paths on stdin).

    With ``count`` the paths are walked before this returns, so that their number is known (for
    a progress bar); otherwise directories are walked as the sources are consumed, so that the
    walk overlaps with fingerprinting. Files of many documents are replaced by their rows; each
    is listed in ``tables`` as ``(kind, path)``.

    Names that lead to a file read under another name (links) are left out, each named to
    ``note`` with ``verbose`` and counted at the end; ``exclude`` names files (st_dev, st_ino)
    never to read (the run's own output). ``overwritten`` maps the files outputs write over to
    their names: meeting one is a usage error (:func:`simdedup.write.refuse_overwritten_inputs`).

    Raises:
        UsageError: no path given.
    """
    from ..write import refuse_overwritten_inputs

    paths = tuple(paths)
    if not paths:
        raise UsageError("give at least one PATH, or - to read paths from stdin")
    walk_filter = WalkFilter(inputs.globs, inputs.excludes, inputs.min_bytes)

    def found(names: Iterable[str]) -> Iterator[Source]:
        return refuse_overwritten_inputs(
            without_links(iter_sources(names, walk_filter, exclude), note, verbose), overwritten or {}
        )

    def expanded(sources: Iterable[Source]) -> Iterator[Source]:
        return expand_tables(
            sources, inputs.jsonl, inputs.text_field, inputs.id_field, tables, inputs.max_line_bytes, inputs.encoding
        )

    if "-" in paths:

        def named() -> Iterator[str]:
            for path in paths:
                if path == "-":
                    yield from read_path_list(sys.stdin.buffer, inputs.null)
                else:
                    yield path

        return SourcePlan(expanded(found(named())))
    if not count:
        return SourcePlan(expanded(found(paths)))
    sources = list(found(paths))
    if inputs.jsonl or (inputs.jsonl is None and any(table_kind(s.path) for s in sources)):
        size = sum(
            s.size if is_url(s.path) else os.path.getsize(s.path)
            for s in sources
            if s.reason is None and (is_url(s.path) or os.path.isfile(s.path))
        )
        return SourcePlan(expanded(sources), None, size)
    return SourcePlan(sources, len(sources))


def without_links(sources: Iterator[Source], note: Callable[[str], None] | None, verbose: bool) -> Iterator[Source]:
    """``sources`` without the further names of files read once; each is named with ``verbose``,
    and a count is given at the end."""
    links = 0
    for source in sources:
        if not source.same_file:
            yield source
            continue
        links += 1
        if verbose and note is not None:
            note(f"simdedup: {source.path}: {source.reason}")
    if links and note is not None:
        names = "1 name leads" if links == 1 else f"{links} names lead"
        note(
            f"simdedup: {names} to a file read under another name (links); each file was read "
            f"once{'' if verbose else ' (-v lists them)'}"
        )


def named_streams(names: Iterable[str]) -> Iterator[tuple[str, BinaryIO]]:
    """Each named file (``-``: standard input) opened for reading bytes, one after another, with
    its name (``<stdin>`` for standard input): the fingerprint files of ``cluster``, the cluster
    files of ``select``. No name: standard input.

    Raises:
        SimdedupError: a file cannot be opened.
    """
    for name in tuple(names) or ("-",):
        if name == "-":
            if sys.stdin.isatty():  # a command given no file waits for input: say so
                from ..messages import message

                message("simdedup: reading from the terminal (no file named); Ctrl-D ends, Ctrl-C stops")
            yield "<stdin>", LineBounded(sys.stdin.buffer, "<stdin>")  # type: ignore[misc]
            continue
        if is_url(name) and local_path(name) == name and is_prefix(name):  # as a local directory is refused
            raise UsageError(f"{name} is a prefix (a directory of objects), not an object; name its objects")
        try:
            handle = open_stored(local_path(name))
        except OSError as exc:
            raise SimdedupError(f"cannot read {name}: {exc.strerror or exc}") from None
        with handle:
            yield name, LineBounded(handle, name)  # type: ignore[misc]


class LineBounded:
    """A binary stream whose lines (iterated, or by readline) are at most ``limit`` bytes: a
    longer one is one error naming the file, where reading it whole could take all memory."""

    def __init__(self, handle: BinaryIO, name: str, limit: int = MAX_RECORD_LINE):
        self.handle, self.name, self.limit, self.number = handle, name, limit, 0

    def readline(self, size: int = -1) -> bytes:
        bound = self.limit + 1 if size < 0 else min(size, self.limit + 1)
        line = self.handle.readline(bound)
        self.number += 1
        if len(line) > self.limit:
            from ..errors import RecordError

            raise RecordError(
                f"{self.name}:{self.number}: a line of more than {self.limit >> 20} MiB: not a file of records "
                "or cluster lines"
            )
        return line

    def __iter__(self) -> "LineBounded":
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __getattr__(self, name: str) -> object:
        return getattr(self.handle, name)
