"""Finding documents on disk and reading them in bounded memory.

Paths are walked in sorted order. A symlink to a directory is followed when its target lies
outside the walked tree (once, however many links lead there); a target inside the tree is
walked under its own path, so loops end and nothing is read twice through links. FIFOs, sockets and device files met during a walk are reported and skipped,
because opening them can block forever. A FIFO named explicitly (``<(zcat x.gz)``) is read.

Files named ``.gz``, ``.bz2``, ``.xz`` or ``.zst`` are decompressed as they are read; JSON-lines
files hold one document per line (:func:`iter_jsonl`). Documents are read in chunks of
:data:`CHUNK_BYTES` and decoded incrementally; each chunk of text
handed on ends at whitespace, so tokenizers that split on whitespace see whole tokens and a
document of any size is fingerprinted in memory proportional to its features.
"""

from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Iterator

from .errors import DamagedInput, SkipDocument, first_line
from .jsonline import parse_json_line
from .web import looks_like_http, read_http_response

CHUNK_BYTES = 1 << 20
#: the longest JSON line, CSV row (characters) or WARC record body read, by default: these are
#: held in memory whole, unlike a document file, so longer ones are skipped
MAX_LINE_BYTES = 1 << 27
_SNIFF_BYTES = 8192
#: a run without whitespace longer than this (characters) is cut where it stands
MAX_CARRY = 4 * CHUNK_BYTES


@dataclass(frozen=True)
class Source:
    """A document to read (``reason`` is None) or one that is skipped and why.

    ``path`` is the document's id; a document that came from a JSON-lines file carries its
    ``text`` and has no file of its own.
    """

    path: str
    reason: str | None = None
    text: str | None = None
    #: the weighted features a JSON line gives instead of text (:class:`FeaturesField`)
    features: dict[str, float] | None = field(default=None, compare=False, repr=False)
    size: int | None = field(default=None, compare=False)  # bytes, when known (a regular file)
    #: a regular file when it was found (safe to open without blocking: not a FIFO)
    regular: bool = field(default=False, compare=False, repr=False)
    #: a JSON line not parsed yet, and its (text field, id field): see :func:`documents`
    line: tuple[bytes, str, str | None] | None = field(default=None, compare=False, repr=False)
    #: a stretch of whole lines of a JSON-lines file not read yet: (offset, length, number of
    #: its first line, text field, id field); see :func:`documents`
    span: tuple[int, int, int, str, str | None] | None = field(default=None, compare=False, repr=False)
    #: not read because it names a file read under another name (a link); ``reason`` says which
    same_file: bool = field(default=False, compare=False)


def documents(source: Source) -> list[Source]:
    """The documents ``source`` stands for: itself, the document of its JSON line, or those of
    its stretch of a JSON-lines file (unusable lines become skipped Sources saying why).

    JSON lines are read and parsed where they are fingerprinted: in the worker processes of
    ``-j N``, not in the process that walks the inputs and hands out the work.
    """
    if source.line is not None:
        raw, text_field, id_field = source.line
        return [_jsonl_document(source.path, raw, text_field, id_field)]
    if source.span is None:
        return [source]
    offset, length, first, text_field, id_field = source.span
    path = source.path.rsplit(":", 1)[0]
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
    except OSError as exc:
        return [Source(source.path, f"read error: {exc.strerror or exc}")]
    return [_jsonl_document(f"{path}:{number}", raw, text_field, id_field)
            for number, raw in enumerate(data.split(b"\n"), first) if raw.strip()]



#: file name endings read through a decompressor
COMPRESSED = (".gz", ".bz2", ".xz", ".lzma", ".zst")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet",)


def is_compressed(path: str) -> bool:
    return path.lower().endswith(COMPRESSED)


def open_binary(path: str) -> BinaryIO:
    """``path`` opened for reading bytes, decompressed on the fly when its name says so.

    A damaged compressed file (truncated, corrupt) raises :class:`DamagedInput`, an OSError,
    where the damage is met, whatever the codec.

    Raises:
        SkipDocument: the file cannot be opened, or ``.zst`` without the zstandard package.
    """
    lower = path.lower()
    try:
        if lower.endswith(".gz"):
            import gzip

            return _decompressing(gzip.open(path, "rb"), "gzip")
        if lower.endswith(".bz2"):
            import bz2

            return _decompressing(bz2.open(path, "rb"), "bzip2")
        if lower.endswith((".xz", ".lzma")):
            import lzma

            return _decompressing(lzma.open(path, "rb"), "xz")
        if lower.endswith(".zst"):
            try:
                import zstandard
            except ImportError:
                raise SkipDocument(path, "reading .zst needs the zstandard package: pip install zstandard") from None
            return io.BufferedReader(_ZstdFrames(open(path, "rb"), zstandard))
        return open(path, "rb")
    except OSError as exc:
        raise SkipDocument(path, f"cannot read: {exc.strerror or exc}") from None


class _Decompressing(io.RawIOBase):
    """A standard-library decompressing file whose damage reads as :class:`DamagedInput`:
    they raise EOFError (truncated), OSError without errno, zlib.error or lzma.LZMAError."""

    def __init__(self, stream: BinaryIO, codec: str):
        import lzma
        import zlib

        self._stream, self._codec = stream, codec
        self._damage = (EOFError, zlib.error, lzma.LZMAError, OSError)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        try:
            return self._stream.readinto(buffer)
        except self._damage as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise  # the disk, not the data
            raise DamagedInput(f"truncated or damaged {self._codec} data ({exc})") from None

    def close(self) -> None:
        self._stream.close()
        super().close()


def _decompressing(stream: BinaryIO, codec: str) -> BinaryIO:
    return io.BufferedReader(_Decompressing(stream, codec))  # type: ignore[return-value]


class _ZstdFrames(io.RawIOBase):
    """The zstd frames of a file decompressed one after another, in bounded steps.

    The zstandard package's stream reader ends quietly where a truncated frame ends; here a
    file that ends inside a frame raises :class:`DamagedInput`. Compressed input is fed
    :data:`STEP` bytes at a time: a zstd block of at most 128 KiB takes at least 4 bytes, so one
    step never gives more than about 32 MiB, however the file was made.
    """

    STEP = 1 << 10

    def __init__(self, stream: BinaryIO, zstandard: Any):
        self._stream, self._zstandard = stream, zstandard
        self._frame = zstandard.ZstdDecompressor().decompressobj()
        self._in_frame = False  # input given to the current frame, whose end is not reached
        self._output = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while not self._output:
            data = self._stream.read(self.STEP)
            if not data:
                if self._in_frame:
                    raise DamagedInput("truncated zstd data (the file ends inside a frame)")
                return 0
            self._output = memoryview(self._decompress(data))
        size = min(len(buffer), len(self._output))
        buffer[:size] = self._output[:size]
        self._output = self._output[size:]
        return size

    def _decompress(self, data: bytes) -> bytes:
        parts = []
        while data:
            try:
                parts.append(self._frame.decompress(data))
            except self._zstandard.ZstdError as exc:
                raise DamagedInput(f"damaged zstd data ({exc})") from None
            self._in_frame = not self._frame.eof
            if not self._frame.eof:
                break
            data = self._frame.unused_data  # the next frame starts here
            self._frame = self._zstandard.ZstdDecompressor().decompressobj()
        return b"".join(parts)

    def close(self) -> None:
        self._stream.close()
        super().close()


def _plain_name(path: str) -> str:
    lower = path.lower()
    for suffix in COMPRESSED:
        if lower.endswith(suffix):
            return lower[: -len(suffix)]
    return lower


def is_jsonl(path: str) -> bool:
    """Whether the file name (compression suffix aside) says JSON lines."""
    return _plain_name(path).endswith(JSONL_SUFFIXES)


#: every name ending that can make a file a table (most names end otherwise: one check)
_TABLE_ENDINGS = (".warc", *COMPRESSED, *JSONL_SUFFIXES, *CSV_SUFFIXES, *PARQUET_SUFFIXES)


def table_kind(path: str) -> str | None:
    """``jsonl``, ``csv``, ``parquet`` or ``warc`` when the file name says it holds many documents."""
    lower = path.lower()
    if not lower.endswith(_TABLE_ENDINGS):
        return None
    if lower.endswith((".warc", ".warc.gz")):
        return "warc"
    name = _plain_name(path)
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES) and name == path.lower():
        return "parquet"
    return None


def iter_csv(path: str, text_field: str = "text", id_field: str | None = None,
             max_line: int | None = None) -> Iterator[Source]:
    """One Source per row of a CSV (or, named ``.tsv``, tab-separated) file with a header row.

    ``text_field`` and ``id_field`` name columns; without an id column the id is ``FILE:ROW``
    (rows counted from 1 after the header). Fields of any size are read; a row that cannot be
    (over ``max_line`` characters, not UTF-8, not CSV) is skipped alone as ``FILE:ROW``.
    """
    import csv

    limit = max_line or MAX_LINE_BYTES
    try:
        raw = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason)
        return
    csv.field_size_limit(max(limit, csv.field_size_limit()))  # the default, 128 KiB, would stop the file
    with io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        lines = _CsvLines(handle, limit)
        reader = csv.DictReader(lines, dialect="excel-tab" if _plain_name(path).endswith(".tsv") else "excel")
        try:
            columns = reader.fieldnames or []
        except (csv.Error, OSError, ValueError) as exc:
            yield Source(path, f"cannot read the header row: {exc}")
            return
        for needed in (text_field, id_field):
            if needed is not None and needed not in columns:
                yield Source(path, f"no column {needed!r} (columns: {', '.join(columns)})")
                return
        number = 0
        while True:
            number += 1
            lines.new_row()
            try:
                row = next(reader)
            except StopIteration:
                return
            except OSError as exc:  # the file itself (a damaged compressed file): no row after this one
                yield Source(f"{path}:{number}", f"read error: {exc.strerror or exc}")
                return
            except (csv.Error, ValueError) as exc:
                yield Source(f"{path}:{number}", f"cannot read as CSV: {exc}")
                continue
            text = row.get(text_field)
            doc_id = row[id_field] if id_field else f"{path}:{number}"
            if text is None or doc_id is None:
                yield Source(f"{path}:{number}", "row has too few fields")
            elif _SURROGATE.search(text) or _SURROGATE.search(doc_id):
                yield Source(f"{path}:{number}", "not valid UTF-8")
            else:
                yield Source(doc_id, text=text)


#: what a byte that is not UTF-8 becomes in text decoded with errors="surrogateescape"
_SURROGATE = re.compile("[\udc80-\udcff]")


class _CsvLines:
    """The lines of a text stream for the csv module, one at a time and each at most ``limit``
    characters, nor more than ``limit`` for all the lines of one row (counted from
    :meth:`new_row`): a longer one raises ValueError once read past (a quoted field to its
    closing quote), so that only its row is lost."""

    def __init__(self, handle: io.TextIOWrapper, limit: int):
        self.handle, self.limit = handle, limit
        self.new_row()

    def new_row(self) -> None:
        self.taken, self.quoted = 0, False  # characters of the row so far; inside a quoted field

    def __iter__(self) -> "_CsvLines":
        return self

    def __next__(self) -> str:
        line = self._line()
        if line is None:
            raise ValueError(f"a line longer than {self.limit} characters (--max-line-bytes)")
        if not line:
            raise StopIteration
        self.taken += len(line)
        self.quoted ^= line.count('"') % 2 == 1  # a doubled quote ("") inside a field changes nothing
        if self.taken > self.limit:
            while self.quoted and (line := self._line()) != "":  # the rest of the field and its row
                self.quoted ^= line is not None and line.count('"') % 2 == 1
            raise ValueError(f"a row longer than {self.limit} characters (--max-line-bytes)")
        return line

    def _line(self) -> str | None:
        return _bounded_line(self.handle, self.limit, ("\n", "\r"))


def iter_parquet(path: str, text_field: str = "text", id_field: str | None = None,
                 max_line: int | None = None) -> Iterator[Source]:
    """One Source per row of a Parquet file, read in record batches (needs pyarrow). A row group
    that cannot be read is skipped alone (its rows named ``FILE:ROW``, counted from 1), and so
    is a row whose text is over ``max_line`` bytes."""
    limit = max_line or MAX_LINE_BYTES
    try:
        import pyarrow.parquet as pq
    except ImportError:
        yield Source(path, "reading .parquet needs pyarrow: pip install 'simdedup[parquet]'")
        return
    try:
        table = pq.ParquetFile(path)
        names = table.schema_arrow.names
        groups = [table.metadata.row_group(g).num_rows for g in range(table.num_row_groups)]
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        yield Source(path, f"cannot read as Parquet: {first_line(exc)}")
        return
    columns = [text_field] + ([id_field] if id_field else [])
    missing = [c for c in columns if c not in names]
    if missing:
        yield Source(path, f"no column {missing[0]!r} (columns: {', '.join(names)})")
        return
    first = 1  # the number of the first row of each row group
    for group, rows in enumerate(groups):
        number = first
        try:
            for batch in table.iter_batches(columns=columns, batch_size=4096, row_groups=[group]):
                texts = batch.column(0).to_pylist()
                ids = batch.column(1).to_pylist() if id_field else None
                for i, text in enumerate(texts):
                    doc_id = str(ids[i]) if ids is not None else f"{path}:{number}"
                    number += 1
                    if not isinstance(text, str):
                        yield Source(doc_id, f"column {text_field!r} is not text in this row")
                    elif len(text) > limit:
                        yield Source(doc_id, f"text longer than {limit} characters (--max-line-bytes)")
                    else:
                        yield Source(doc_id, text=text)
        except (OSError, ValueError) as exc:
            yield Source(f"{path}:{number}", f"cannot read rows {number} to {first + rows - 1} "
                                             f"(row group {group + 1}) as Parquet: {first_line(exc)}")
        first += rows


def _field(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            raise KeyError(dotted)
        obj = obj[part]
    return obj


def iter_jsonl(path: str, text_field: str = "text", id_field: str | None = None,
               max_line: int | None = None) -> Iterator[Source]:
    """One Source per document line of a JSON-lines file (see :func:`iter_jsonl_lines`)."""
    for source, _ in iter_jsonl_lines(path, text_field, id_field, max_line):
        yield source


def iter_jsonl_lines(path: str, text_field: str = "text", id_field: str | None = None,
                     max_line: int | None = None) -> Iterator[tuple[Source, bytes]]:
    """One Source per line of a JSON-lines file (streamed; compressed files too).

    ``text_field`` and ``id_field`` are dotted paths into each object (``meta.url``); without an
    id field the id is ``FILE:LINE``. A line that is not an object with a string text (or a
    usable id), or is longer than ``max_line`` bytes, becomes a skipped Source named
    ``FILE:LINE`` with the reason.
    """
    try:
        handle = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason), b""
        return
    for source, raw in _jsonl_lines(path, text_field, id_field, handle, max_line or MAX_LINE_BYTES):
        yield documents(source)[0], raw


def _jsonl_lines(path: str, text_field: str, id_field: str | None,
                 handle: BinaryIO, limit: int) -> Iterator[tuple[Source, bytes]]:
    """The lines of an open JSON-lines file as unparsed Sources named ``FILE:LINE``; a line over
    ``limit`` bytes is read past, not into memory."""
    with handle:
        number = 0
        try:
            while (raw := _bounded_line(handle, limit)) != b"":
                number += 1
                if raw is None:
                    yield _too_long(path, number, limit), b""
                elif raw.strip():
                    yield Source(f"{path}:{number}", line=(raw, text_field, id_field)), raw
        except (OSError, EOFError, ValueError) as exc:  # a truncated or corrupt compressed file
            yield Source(f"{path}:{number + 1}", f"read error: {exc}"), b""


def _bounded_line(handle: Any, limit: int, ends: tuple = (b"\n",)) -> Any:
    """The next line of a stream of bytes (or of text, with ``ends`` the text's line ends), empty
    at its end, or None for one of more than ``limit`` bytes or characters (its last one aside,
    when it ends the line), which is read past in pieces and not kept."""
    piece = handle.readline(CHUNK_BYTES)
    if not piece or (piece.endswith(ends) and len(piece) <= limit + 1):
        return piece  # the common case: a whole line in one piece
    parts: list | None = []
    size = 0
    while True:
        size += len(piece)
        ended = piece.endswith(ends)
        if parts is not None and size - ended > limit:
            parts = None
        if parts is not None:
            parts.append(piece)
        if ended or not piece:
            return None if parts is None else piece[:0].join(parts)
        piece = handle.readline(CHUNK_BYTES)


def _too_long(path: str, number: int, limit: int) -> Source:
    return Source(f"{path}:{number}", f"line longer than {limit} bytes (--max-line-bytes); not read")


#: bytes of a JSON-lines file handed out at once (see :func:`documents`)
SPAN_BYTES = 1 << 18


def iter_jsonl_unparsed(path: str, text_field: str = "text", id_field: str | None = None,
                        max_line: int | None = None) -> Iterator[Source]:
    """As :func:`iter_jsonl`, but read and parsed only by :func:`documents`, where they are used:
    stretches of whole lines of a plain file, single lines of a compressed one. Only the line
    ends are looked for here; a line over ``max_line`` bytes is reported, and left out."""
    limit = max_line or MAX_LINE_BYTES
    try:
        handle = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason)
        return
    if is_compressed(path) or not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        for source, _ in _jsonl_lines(path, text_field, id_field, handle, limit):
            yield source
        return
    with handle:
        # Lines from ``start`` (line number ``line``) are not handed out yet; the bytes from
        # there to ``position`` hold no line end. A block is never longer than the limit, so
        # only a line that crosses blocks can be.
        start, line, position, skipping = 0, 1, 0, False
        while True:
            try:
                block = handle.read(min(SPAN_BYTES, limit))
            except OSError as exc:
                yield Source(f"{path}:{line}", f"read error: {exc.strerror or exc}")
                return
            if not block:
                if position > start and not skipping:
                    yield Source(f"{path}:{line}", span=(start, position - start, line, text_field, id_field))
                return
            block_start, position = position, position + len(block)
            first = block.find(b"\n")
            if first < 0:
                if not skipping and position - start > limit:
                    yield _too_long(path, line, limit)
                    skipping = True
                continue
            if skipping or block_start + first - start > limit:  # the line that ends here is too long
                if not skipping:
                    yield _too_long(path, line, limit)
                skipping = False
                start, line = block_start + first + 1, line + 1
            end = block_start + block.rfind(b"\n") + 1
            if end > start:
                yield Source(f"{path}:{line}", span=(start, end - start, line, text_field, id_field))
                line += block.count(b"\n", max(start - block_start, 0), end - block_start)
                start = end


class FeaturesField(str):
    """The name of a JSON-lines field that holds a document's features instead of its text
    (``--features-field``; :mod:`simdedup.features`), where a text field's name would go."""

    __slots__ = ()


def _jsonl_document(where: str, raw: bytes, text_field: str, id_field: str | None) -> Source:
    """The document of one JSON line, or a skipped Source named ``where`` saying why not."""
    try:
        obj = parse_json_line(raw)
        text = _field(obj, text_field)
        doc_id = where if id_field is None else _field(obj, id_field)
    except ValueError as exc:
        return Source(where, str(exc))
    except KeyError as exc:
        return Source(where, f"no field {exc.args[0]!r}")
    if not isinstance(text, str) and not isinstance(text_field, FeaturesField):
        return Source(where, f"field {text_field!r} is not a string")
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        return Source(where, f"field {id_field!r} is not a string or number")
    if isinstance(text_field, FeaturesField):
        from .features import given_features

        try:
            return Source(str(doc_id), features=given_features(text))
        except ValueError as exc:
            return Source(where, f"field {text_field!r}: {exc}")
    return Source(str(doc_id), text=text)


def iter_warc_documents(path: str, text_field: str = "text", id_field: str | None = None,
                        max_line: int | None = None) -> Iterator[Source]:
    """One Source per response record of a WARC file; HTML bodies reduced to their text. A record
    that cannot be read (cut short, a body over ``max_line`` bytes, a damaged stretch of the
    file) is skipped alone."""
    from .web import html_text, iter_warc

    try:
        for record in iter_warc(path, max_line or MAX_LINE_BYTES):
            if record.body is None:
                yield Source(record.id, record.problem)
                continue
            try:
                encoding = text_codec(record.charset or "utf-8").name
            except LookupError:
                encoding = "utf-8"  # as for an HTTP response file: an unknown charset is not believed
            try:
                text = record.body.decode(encoding)
            except UnicodeDecodeError:
                yield Source(record.id, f"body is not {encoding} text")
                continue
            yield Source(record.id, text="".join(html_text([text])) if record.is_html else text)
    except ImportError:
        yield Source(path, "reading WARC files needs warcio: pip install 'simdedup[warc]'")
    except OSError as exc:
        yield Source(path, f"cannot read: {exc.strerror or exc}")


_TABLE_READERS = {"jsonl": iter_jsonl_unparsed, "csv": iter_csv, "parquet": iter_parquet, "warc": iter_warc_documents}


def expand_jsonl(sources: Iterable[Source], jsonl: bool | None, text_field: str = "text",
                 id_field: str | None = None, jsonl_files: list[str] | None = None,
                 max_line: int | None = None) -> Iterator[Source]:
    """Sources with every file of many documents replaced by its documents (JSON lines still
    unparsed: see :func:`parsed`); JSON lines and CSV rows over ``max_line`` bytes
    (:data:`MAX_LINE_BYTES` by default) are skipped.

    ``jsonl`` True reads every file as JSON lines, False reads every file as one document, None
    goes by the name: ``.jsonl``/``.ndjson`` (compressed or not), ``.csv``/``.tsv``, ``.parquet``.
    The files read this way are added to ``jsonl_files`` (each with its kind: ``path`` for JSON
    lines, ``kind:path`` for the others).
    """
    for source in sources:
        kind = None
        if source.reason is None and source.text is None and jsonl is not False:
            kind = "jsonl" if jsonl else table_kind(source.path)
        if kind is None:
            yield source
            continue
        if jsonl_files is not None:
            jsonl_files.append(source.path if kind == "jsonl" else f"{kind}:{source.path}")
        yield from _TABLE_READERS[kind](source.path, text_field, id_field, max_line)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "not a regular file"


@dataclass(frozen=True)
class WalkFilter:
    """Which files a directory walk takes.

    ``globs``: a file is taken when its name or its path inside the walked directory matches one
    (all files when empty); ``excludes``: a file or directory matching one is left out;
    ``min_bytes``: smaller files are left out. Patterns are shell globs (``*.txt``, ``drafts/*``).
    """

    globs: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    min_bytes: int = 0

    def _matches(self, patterns: tuple[str, ...], path: str, root: str) -> bool:
        if not patterns:
            return False
        relative = os.path.relpath(path, root)
        name = os.path.basename(path)
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) for p in patterns)

    def takes_dir(self, path: str, root: str) -> bool:
        return not self._matches(self.excludes, path, root)

    def takes_file(self, path: str, root: str, size: int) -> bool:
        if size < self.min_bytes or self._matches(self.excludes, path, root):
            return False
        return not self.globs or self._matches(self.globs, path, root)


class _FileIdentities:
    """The files a run has taken, by device and inode, so that each is read once whatever the
    names that lead to it (hard links, symbolic links, a file named twice), as jdupes and rmlint
    do. A second name would be clustered with the first as an exact copy, and a drop list could
    then name the only real copy while keeping a link to it.

    A real name wins over a symbolic link: links to regular files are held back until every
    path has been walked, and one is read (under its own name) only when its target was not.
    Memory: one integer per file taken.
    """

    def __init__(self, exclude: Iterable[tuple[int, int]] = ()):
        self.excluded = {_identity(dev, ino) for dev, ino in exclude}
        self.taken: set[int] = set()
        self.links: list[tuple[str, int, int]] = []  # (path, identity, size)

    def take(self, path: str, identity: int, size: int | None = None) -> Source | None:
        """The Source of a regular file met under a real (not symbolic-link) name; None for an
        excluded file."""
        if identity in self.excluded:
            return None
        if identity in self.taken:
            return Source(path, "the same file (device and inode) as one read under another name: a hard link, or named twice; read once", same_file=True)
        self.taken.add(identity)
        return Source(path, size=size, regular=True)

    def take_or_hold(self, path: str, is_link: bool, st: os.stat_result) -> Source | None:
        """A regular file's Source under a real name; a symbolic link is held back (None)."""
        identity = _identity(st.st_dev, st.st_ino)
        if not is_link:
            return self.take(path, identity, st.st_size)
        self.links.append((path, identity, st.st_size))
        return None

    def held_links(self) -> Iterator[Source]:
        for path, identity, size in self.links:
            if identity in self.excluded:
                continue
            if identity in self.taken:
                target = os.path.realpath(path)
                yield Source(path, f"a symbolic link to {target}, which is read under its own name", same_file=True)
            else:
                self.taken.add(identity)
                yield Source(path, size=size, regular=True)
        self.links.clear()


def _identity(dev: int, ino: int) -> int:
    return dev << 64 | ino


def _walk(top: str, root: str, dev: int, visited: set[tuple[int, int]], walk_filter: WalkFilter,
          files: _FileIdentities) -> Iterator[Source]:
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError as exc:
        yield Source(top, f"cannot list directory: {exc.strerror or exc}")
        return
    for entry in entries:
        path = entry.path
        if not walk_filter.min_bytes and entry.is_file(follow_symlinks=False):
            # A regular file by its directory entry: no stat needed (its size is read where it is
            # read; its inode number comes with the entry).
            if walk_filter.takes_file(path, root, 0):
                source = files.take(path, _identity(dev, entry.inode()))
                if source is not None:
                    yield source
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError:
            yield Source(path, "broken symbolic link" if entry.is_symlink() else "cannot stat")
            continue
        if stat.S_ISDIR(st.st_mode):
            key = (st.st_dev, st.st_ino)
            if entry.is_symlink() and _inside(os.path.realpath(path), os.path.realpath(root)):
                continue  # its target is walked under its own path (or is an ancestor: a loop)
            if key in visited or not walk_filter.takes_dir(path, root):
                continue  # reached before through another link, or excluded
            visited.add(key)
            yield from _walk(path, root, st.st_dev, visited, walk_filter, files)
        elif stat.S_ISREG(st.st_mode):
            if walk_filter.takes_file(path, root, st.st_size):
                source = files.take_or_hold(path, entry.is_symlink(), st)
                if source is not None:
                    yield source
        else:
            yield Source(path, f"{_kind(st.st_mode)}; skipped during the walk")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def iter_sources(paths: Iterable[str], walk_filter: WalkFilter = WalkFilter(),
                 exclude: Iterable[tuple[int, int]] = ()) -> Iterator[Source]:
    """Documents named by ``paths``: files as given, directories walked recursively in sorted order.

    ``walk_filter`` chooses the files of walked directories; a file named explicitly is always read.
    Each file is read once (see :class:`_FileIdentities`): a further name for it comes as a Source
    with ``same_file`` set and a reason saying what it is; symbolic links to files come last.
    ``exclude`` holds (st_dev, st_ino) pairs of files never to read, such as the run's own output.
    """
    files = _FileIdentities(exclude)
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            yield Source(path, "no such file or directory" if not os.path.islink(path) else "broken symbolic link")
            continue
        except OSError as exc:
            yield Source(path, f"cannot stat: {exc.strerror or exc}")
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(path, path, st.st_dev, {(st.st_dev, st.st_ino)}, walk_filter, files)
        elif stat.S_ISREG(st.st_mode):
            source = files.take_or_hold(path, os.path.islink(path), st)
            if source is not None:
                yield source
        elif stat.S_ISFIFO(st.st_mode):
            yield Source(path)
        else:
            yield Source(path, _kind(st.st_mode))
    yield from files.held_links()


def read_path_list(stream: BinaryIO, null: bool = False) -> Iterator[str]:
    """Paths listed on a binary stream, one per line or NUL-separated; empty entries are ignored."""
    sep = b"\0" if null else b"\n"
    pending = b""
    while True:
        block = stream.read(1 << 16)
        if not block:
            break
        pending += block
        *complete, pending = pending.split(sep)
        for raw in complete:
            name = _path_name(raw, null)
            if name:
                yield name
    name = _path_name(pending, null)
    if name:
        yield name


def _path_name(raw: bytes, null: bool) -> str:
    if not null and raw.endswith(b"\r"):
        raw = raw[:-1]
    return os.fsdecode(raw)


def text_codec(encoding: str) -> codecs.CodecInfo:
    """The codec of the text encoding ``encoding``.

    Raises:
        LookupError: no such codec, or one that is not a text encoding (``base64``, ``zlib``,
            ``rot13``: codecs from bytes to bytes or text to text), saying which.
    """
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise LookupError(f"unknown encoding {encoding!r}") from None
    if not getattr(codec, "_is_text_encoding", True):
        raise LookupError(f"{encoding!r} is not a text encoding")
    return codec


def _is_wide(encoding: str) -> bool:
    name = codecs.lookup(encoding).name
    return name.startswith(("utf-16", "utf-32"))


class DocumentReader:
    """Decoded text of a file in chunks that end at whitespace (the last one at end of file).

    Iterate over it once. A leading byte-order mark is dropped. Iteration raises
    :class:`SkipDocument` for a file that cannot be opened, is empty, looks binary (NUL bytes in
    its first 8 KiB, for byte encodings) or does not decode; the error can come after some chunks
    were produced. ``bytes_read`` counts the bytes read so far.
    """

    def __init__(self, path: str, encoding: str = "utf-8", chunk_bytes: int = CHUNK_BYTES,
                 data: bytes | None = None):
        try:
            self.codec = None if encoding == "auto" else text_codec(encoding)
        except LookupError as exc:
            raise ValueError(str(exc)) from None
        self.path = path
        self.encoding = encoding
        self.chunk_bytes = chunk_bytes
        self.data = data  # the file's bytes, when they were read already
        self.bytes_read = 0
        self.detected: str | None = None  # the encoding chosen by --encoding auto
        self.is_html = False  # an HTTP response whose Content-Type says HTML

    def _open(self) -> BinaryIO:
        if self.data is not None:
            return io.BytesIO(self.data)
        return open_binary(self.path)

    def raw_blocks(self) -> Iterator[bytes]:
        """The undecoded bytes in blocks, with the same binary check; an empty file gives no
        block (a byte digest such as nilsimsa's has a value for it)."""
        sniff = self.codec is None or not _is_wide(self.codec.name)
        with self._open() as handle:
            while True:
                try:
                    block = handle.read(self.chunk_bytes)
                except OSError as exc:
                    raise SkipDocument(self.path, f"read error: {exc.strerror or exc}") from None
                if not block:
                    return
                if sniff and self.bytes_read < _SNIFF_BYTES and b"\0" in block[: _SNIFF_BYTES - self.bytes_read]:
                    raise SkipDocument(self.path, "binary file (NUL bytes); not text")
                self.bytes_read += len(block)
                yield block

    def _http_body(self, handle: BinaryIO, first: bytes, codec: codecs.CodecInfo | None) -> tuple:
        """Read the head of an HTTP response; continue with its body, decoded as it is read (and
        the charset it names)."""
        try:
            response = read_http_response(handle, first)
            block = response.body.read(self.chunk_bytes)
        except DamagedInput as exc:
            raise SkipDocument(self.path, str(exc)) from None
        except (ValueError, OSError) as exc:
            raise SkipDocument(self.path, f"HTTP response: {exc}") from None
        self.is_html = response.is_html
        if response.charset:
            try:
                codec = text_codec(response.charset)
            except LookupError:
                pass  # an unknown charset, or one that is no text encoding: the --encoding given
        return response.body, block, codec

    def __iter__(self) -> Iterator[str]:
        return whitespace_chunks(self._decoded())

    def _decoded(self) -> Iterator[str]:
        """The text as it is decoded, block by block (the byte-order mark dropped)."""
        path = self.path
        with self._open() as handle:
            first = True
            try:
                # A read of 1 MiB allocates 1 MiB even for a 2 KiB file: ask for what is there.
                size = os.fstat(handle.fileno()).st_size
            except OSError:
                size = 0
            step = min(self.chunk_bytes, size + 1) if size else self.chunk_bytes
            codec, decoder, sniff = self.codec, None, True
            while True:
                try:
                    block = handle.read(step)
                    step = self.chunk_bytes
                except OSError as exc:
                    raise SkipDocument(path, f"read error: {exc.strerror or exc}") from None
                if decoder is None and looks_like_http(block):  # a raw HTTP response: its body
                    handle, block, codec = self._http_body(handle, block, codec)
                if decoder is None:  # first block: settle the encoding
                    if codec is None and block:
                        codec = codecs.lookup(detect_encoding(block, path))
                        self.detected = codec.name
                    codec = codec or codecs.lookup("utf-8")
                    decoder = codec.incrementaldecoder("strict")
                    sniff = not _is_wide(codec.name)
                if not block and self.bytes_read == 0:
                    raise SkipDocument(path, "empty file")
                if sniff and self.bytes_read < _SNIFF_BYTES and b"\0" in block[: _SNIFF_BYTES - self.bytes_read]:
                    raise SkipDocument(path, "binary file (NUL bytes); not text")
                final = not block
                state = decoder.getstate()
                pending = len(state[0]) if isinstance(state[0], bytes) else 0
                try:
                    text = decoder.decode(block, final)
                except UnicodeError as exc:
                    start = getattr(exc, "start", 0)
                    raise SkipDocument(
                        path,
                        f"not valid {self.detected or self.encoding} at byte {self.bytes_read - pending + start}; "
                        "try --encoding",
                    ) from None
                self.bytes_read += len(block)
                if first and text:
                    first = False
                    if text[0] == "\ufeff":  # byte-order mark
                        text = text[1:]
                yield text
                if final:
                    return


def whitespace_chunks(pieces: Iterable[str]) -> Iterator[str]:
    """The text of ``pieces`` again, in chunks that end at whitespace (the last one where the
    text ends); a run of :data:`MAX_CARRY` characters without whitespace is cut where it stands
    rather than grow for ever."""
    carry = ""
    for piece in pieces:
        text = carry + piece
        cut = _last_space(text)
        if cut < 0 and len(text) < MAX_CARRY:
            carry = text
        elif cut < 0:
            carry = ""
            yield text
        elif cut > 0:
            carry = text[cut:]
            yield text[:cut]
    if carry:
        yield carry


def text_chunks(text: str) -> Iterator[str]:
    """A text held in memory in chunks of about :data:`CHUNK_BYTES` characters that end at
    whitespace, as a file is read: tokenizing a huge JSON-lines document in one piece would
    hold a string object per token."""
    if len(text) <= CHUNK_BYTES:
        yield text
        return
    yield from whitespace_chunks(text[start : start + CHUNK_BYTES] for start in range(0, len(text), CHUNK_BYTES))


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def detect_encoding(sample: bytes, path: str = "") -> str:
    """The encoding of a document from its first block (``--encoding auto``).

    A byte-order mark decides; text that is valid UTF-8 is UTF-8; anything else goes to
    charset-normalizer.

    Raises:
        SkipDocument: no encoding fits.
    """
    for bom, name in _BOMS:
        if sample.startswith(bom):
            return name
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(sample, False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    import charset_normalizer

    best = charset_normalizer.from_bytes(sample).best()
    if best is None:
        raise SkipDocument(path, "cannot tell its encoding; give --encoding")
    return best.encoding


def _last_space(text: str) -> int:
    """Index just past the last whitespace character of ``text``, or -1 if it has none."""
    if not text or text[-1].isspace():
        return len(text)
    tail = text.rsplit(None, 1)[-1]  # C speed; the copy of the head is freed at once
    return -1 if len(tail) == len(text) else len(text) - len(tail)
