"""Files that hold many documents: JSON lines, CSV/TSV, Parquet and WARC.

Each reader turns one file into a stream of :class:`~.source.Source` objects, one per row,
line or record; a row that cannot be used is a skipped Source saying why, and costs only
itself. JSON lines are handed on unparsed (single lines, or stretches of whole lines of a plain
file) and parsed by :func:`documents` where they are fingerprinted: in the worker processes of
``-j N``, not in the process that walks the inputs.
"""

from __future__ import annotations

import io
import os
import re
import stat
from dataclasses import replace
from typing import Any, BinaryIO, Iterable, Iterator

from ..errors import DamagedInput, MissingPackage, SkipDocument, first_line
from ..jsonline import parse_json_line
from ..optional import missing, need
from .document import CHUNK_BYTES, COMPRESSED, is_compressed, open_binary
from .encoding import Utf8Stream, decode_whole
from .remote import is_url, open_stored
from .source import Source

#: the longest JSON line, CSV row (characters) or WARC record body read, by default: these are
#: held in memory whole, unlike a document file, so longer ones are skipped
MAX_LINE_BYTES = 1 << 27
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet",)


def documents(source: Source) -> list[Source]:
    """The documents ``source`` stands for: itself, the document of its JSON line, or those of
    its stretch of a JSON-lines file (unusable lines become skipped Sources saying why).

    JSON lines are read and parsed where they are fingerprinted: in the worker processes of
    ``-j N``, not in the process that walks the inputs and hands out the work.
    """
    if source.line is not None:
        raw, text_field, id_field = source.line
        return [_jsonl_document(source.path, raw, text_field, id_field, source.origin)]
    if source.span is None:
        return [source]
    offset, length, first, text_field, id_field = source.span
    path = source.path.rsplit(":", 1)[0]
    try:
        with open_stored(path) as handle:
            handle.seek(offset)
            data = handle.read(length)
    except OSError as exc:
        return [Source(source.path, f"read error: {exc.strerror or exc}", origin=path)]
    return [
        _jsonl_document(f"{path}:{number}", raw, text_field, id_field, path)
        for number, raw in enumerate(data.split(b"\n"), first)
        if raw.strip()
    ]


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


def iter_csv(
    path: str,
    text_field: str = "text",
    id_field: str | None = None,
    max_line: int | None = None,
    encoding: str = "utf-8",
) -> Iterator[Source]:
    """One Source per row of a CSV (or, named ``.tsv``, tab-separated) file with a header row.

    ``text_field`` and ``id_field`` name columns; without an id column the id is ``FILE:ROW``
    (rows counted from 1 after the header). Fields of any size are read; a row that cannot be
    (over ``max_line`` characters, not UTF-8, not CSV) is skipped alone as ``FILE:ROW``. The
    file is in ``encoding`` (a text encoding or ``auto``) unless a byte-order mark says otherwise
    (Excel writes CSV in the system's code page: GBK, Shift JIS, cp1252).
    """
    import csv

    limit = max_line or MAX_LINE_BYTES
    raw = _utf8_stream(path, encoding)
    if isinstance(raw, Source):
        yield raw
        return
    csv.field_size_limit(max(limit, csv.field_size_limit()))  # the default, 128 KiB, would stop the file
    with io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="surrogateescape", newline="") as handle:
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
                yield Source(doc_id, text=text, origin=path, place=f"{path}:{number}" if id_field else None)


def _utf8_stream(path: str, encoding: str = "utf-8") -> Utf8Stream | Source:
    """The file at ``path`` opened as UTF-8 (:class:`~.encoding.Utf8Stream`: decompressed, its
    byte-order mark dropped, transcoded from ``encoding``), or a skipped Source saying why it cannot be."""
    try:
        return Utf8Stream(open_binary(path), encoding)
    except SkipDocument as exc:
        return Source(path, exc.reason)


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


def iter_parquet(
    path: str,
    text_field: str = "text",
    id_field: str | None = None,
    max_line: int | None = None,
    row_groups: tuple[int, int] | None = None,
) -> Iterator[Source]:
    """One Source per row of a Parquet file, read in record batches (needs pyarrow). A row group
    that cannot be read is skipped alone (its rows named ``FILE:ROW``, counted from 1), and so
    is a row whose text is over ``max_line`` bytes. ``row_groups`` ``(first, end)``: only those
    row groups, their rows numbered as in the whole file."""
    limit = max_line or MAX_LINE_BYTES
    try:
        pq = need("pyarrow.parquet", "reading .parquet")
    except MissingPackage as exc:
        yield Source(path, str(exc))
        return
    try:
        stored = open_stored(path)
    except OSError as exc:
        yield Source(path, f"cannot read: {exc.strerror or exc}")
        return
    with stored:
        yield from _parquet_rows(pq, stored, path, text_field, id_field, limit, row_groups)


def _parquet_rows(
    pq: Any,
    stored: BinaryIO,
    path: str,
    text_field: str,
    id_field: str | None,
    limit: int,
    row_groups: tuple[int, int] | None,
) -> Iterator[Source]:
    try:
        table = pq.ParquetFile(stored)
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
        if row_groups is not None and not row_groups[0] <= group < row_groups[1]:
            first += rows
            continue
        number = first
        try:
            for batch in table.iter_batches(columns=columns, batch_size=4096, row_groups=[group]):
                texts = batch.column(0).to_pylist()
                ids = batch.column(1).to_pylist() if id_field else None
                for i, text in enumerate(texts):
                    where = f"{path}:{number}"
                    number += 1
                    if not isinstance(text, str):
                        yield Source(where, f"column {text_field!r} is not text in this row")
                    elif len(text) > limit:
                        yield Source(where, f"text longer than {limit} characters (--max-line-bytes)")
                    else:
                        yield Source(str(ids[i]) if ids is not None else where, text=text, origin=path, place=where)
        except (OSError, ValueError) as exc:
            yield Source(
                f"{path}:{number}",
                f"cannot read rows {number} to {first + rows - 1} "
                f"(row group {group + 1}) as Parquet: {first_line(exc)}",
            )
        first += rows


def _field(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            raise KeyError(dotted)
        obj = obj[part]
    return obj


def iter_jsonl_lines(
    path: str, text_field: str = "text", id_field: str | None = None, max_line: int | None = None
) -> Iterator[tuple[Source, bytes]]:
    """One Source per line of a JSON-lines file (streamed; compressed files too).

    ``text_field`` and ``id_field`` are dotted paths into each object (``meta.url``); without an
    id field the id is ``FILE:LINE``. A line that is not an object with a string text (or a
    usable id), or is longer than ``max_line`` bytes, becomes a skipped Source named
    ``FILE:LINE`` with the reason.
    """
    stream = _utf8_stream(path)
    if isinstance(stream, Source):
        yield stream, b""
        return
    for source, raw in _jsonl_lines(path, text_field, id_field, io.BufferedReader(stream), max_line or MAX_LINE_BYTES):
        yield documents(source)[0], raw


def _jsonl_lines(
    path: str, text_field: str, id_field: str | None, handle: BinaryIO, limit: int
) -> Iterator[tuple[Source, bytes]]:
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


def iter_jsonl_unparsed(
    path: str,
    text_field: str = "text",
    id_field: str | None = None,
    max_line: int | None = None,
    span_bytes: int | None = None,
) -> Iterator[Source]:
    """As :func:`iter_jsonl`, but read and parsed only by :func:`documents`, where they are used:
    stretches of whole lines of a plain file, single lines of a compressed one. Only the line
    ends are looked for here; a line over ``max_line`` bytes is reported, and left out. A
    stretch is read ``span_bytes`` (default :data:`SPAN_BYTES`) at a time."""
    limit = max_line or MAX_LINE_BYTES
    span_bytes = span_bytes or SPAN_BYTES
    stream = _utf8_stream(path)
    if isinstance(stream, Source):
        yield stream
        return
    handle = stream.raw
    try:
        # an object of a store is read as it streams (a stretch would cost a request)
        whole_lines = (
            is_compressed(path)
            or is_url(path)
            or not stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
            or stream.transcoded
        )
    except OSError as exc:
        handle.close()
        yield Source(path, f"read error: {exc.strerror or exc}")
        return
    if whole_lines:
        for source, _ in _jsonl_lines(path, text_field, id_field, io.BufferedReader(stream), limit):
            yield source
        return
    with handle:
        # Lines from ``start`` (line number ``line``) are not handed out yet; the bytes from
        # there to ``position`` hold no line end. A block is never longer than the limit, so
        # only a line that crosses blocks can be. A UTF-8 byte-order mark is stepped over.
        start = position = stream.encoding.bom
        handle.seek(start)
        line, skipping = 1, False
        while True:
            try:
                block = handle.read(min(span_bytes, limit))
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


def _jsonl_document(where: str, raw: bytes, text_field: str, id_field: str | None, origin: str | None) -> Source:
    """The document of one JSON line of the file ``origin``, or a skipped Source named ``where``
    saying why not."""
    try:
        obj = parse_json_line(raw, checked_numbers=False)
        text = _field(obj, text_field)
        doc_id = where if id_field is None else _field(obj, id_field)
    except ValueError as exc:
        return Source(where, str(exc), origin=origin)
    except KeyError as exc:
        return Source(where, f"no field {exc.args[0]!r}", origin=origin)
    if not isinstance(text, str) and not isinstance(text_field, FeaturesField):
        return Source(where, f"field {text_field!r} is not a string", origin=origin)
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        return Source(where, f"field {id_field!r} is not a string or number", origin=origin)
    if isinstance(text_field, FeaturesField):
        from ..features import given_features

        try:
            return Source(str(doc_id), features=given_features(text), origin=origin, place=where)
        except ValueError as exc:
            return Source(where, f"field {text_field!r}: {exc}", origin=origin)
    return Source(str(doc_id), text=text, origin=origin, place=where)


def iter_warc_documents(
    path: str, text_field: str = "text", id_field: str | None = None, max_line: int | None = None
) -> Iterator[Source]:
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
                text = decode_whole(record.body, "utf-8", record.charset)
            except DamagedInput as exc:
                yield Source(record.where, f"{record.id}: body is {exc}")
                continue
            yield Source(record.id, text="".join(html_text([text])) if record.is_html else text)
    except ImportError as exc:
        yield Source(path, str(missing(exc, "reading WARC files", "warcio")))
    except OSError as exc:
        yield Source(path, f"cannot read: {exc.strerror or exc}")


_TABLE_READERS = {"jsonl": iter_jsonl_unparsed, "csv": iter_csv, "parquet": iter_parquet, "warc": iter_warc_documents}


def expand_tables(
    sources: Iterable[Source],
    jsonl: bool | None,
    text_field: str = "text",
    id_field: str | None = None,
    tables: list[tuple[str, str]] | None = None,
    max_line: int | None = None,
    encoding: str = "utf-8",
) -> Iterator[Source]:
    """Sources with every file of many documents replaced by its rows (JSON lines still
    unparsed: see :func:`documents`); JSON lines and CSV rows over ``max_line`` bytes
    (:data:`MAX_LINE_BYTES` by default) are skipped.

    ``jsonl`` True reads every file as JSON lines, False reads every file as one document, None
    goes by the name: ``.jsonl``/``.ndjson`` (compressed or not), ``.csv``/``.tsv``, ``.parquet``,
    ``.warc``. Each file read this way is added to ``tables`` as ``(kind, path)``.
    """
    for source in sources:
        kind = None
        if source.reason is None and source.text is None and jsonl is not False:
            kind = "jsonl" if jsonl else table_kind(source.path)
        if kind is None:
            yield source
            continue
        if tables is not None:
            tables.append((kind, source.path))
        if kind == "csv":  # the one kind whose files carry no encoding of their own
            rows = iter_csv(source.path, text_field, id_field, max_line, encoding)
        else:
            rows = _TABLE_READERS[kind](source.path, text_field, id_field, max_line)
        yield from with_origin(rows, source.path)


def with_origin(rows: Iterable[Source], path: str) -> Iterator[Source]:
    """The rows of the file ``path``, each with ``path`` as its origin: where its warnings are
    summarised. (The readers of many rows set it as they make them.)"""
    for row in rows:
        yield row if row.origin is not None else replace(row, origin=path)
