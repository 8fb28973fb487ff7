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
import json
import os
import stat
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator

from .errors import SkipDocument
from .web import looks_like_http, parse_http_response

CHUNK_BYTES = 1 << 20
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
    size: int | None = field(default=None, compare=False)  # bytes, when known (a regular file)
    #: a regular file when it was found (safe to open without blocking: not a FIFO)
    regular: bool = field(default=False, compare=False, repr=False)
    #: a JSON line not parsed yet, and its (text field, id field): see :func:`documents`
    line: tuple[bytes, str, str | None] | None = field(default=None, compare=False, repr=False)
    #: a stretch of whole lines of a JSON-lines file not read yet: (offset, length, number of
    #: its first line, text field, id field); see :func:`documents`
    span: tuple[int, int, int, str, str | None] | None = field(default=None, compare=False, repr=False)


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

    Raises:
        SkipDocument: the file cannot be opened, or ``.zst`` without the zstandard package.
    """
    lower = path.lower()
    try:
        if lower.endswith(".gz"):
            import gzip

            return gzip.open(path, "rb")  # type: ignore[return-value]
        if lower.endswith(".bz2"):
            import bz2

            return bz2.open(path, "rb")  # type: ignore[return-value]
        if lower.endswith((".xz", ".lzma")):
            import lzma

            return lzma.open(path, "rb")  # type: ignore[return-value]
        if lower.endswith(".zst"):
            try:
                import zstandard
            except ImportError:
                raise SkipDocument(path, "reading .zst needs the zstandard package: pip install zstandard") from None
            # Buffered, so that it has lines and a fileno-less read like the other streams.
            stream = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)
            return io.BufferedReader(stream)  # type: ignore[arg-type]
        return open(path, "rb")
    except OSError as exc:
        raise SkipDocument(path, f"cannot read: {exc.strerror or exc}") from None


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


def iter_csv(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[Source]:
    """One Source per row of a CSV (or, named ``.tsv``, tab-separated) file with a header row.

    ``text_field`` and ``id_field`` name columns; without an id column the id is ``FILE:ROW``
    (rows counted from 1 after the header).
    """
    import csv

    try:
        raw = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason)
        return
    with io.TextIOWrapper(raw, encoding="utf-8", newline="") as handle:
        dialect = "excel-tab" if _plain_name(path).endswith(".tsv") else "excel"
        try:
            reader = csv.DictReader(handle, dialect=dialect)
            columns = reader.fieldnames or []
            for needed in (text_field, id_field):
                if needed is not None and needed not in columns:
                    yield Source(path, f"no column {needed!r} (columns: {', '.join(columns)})")
                    return
            for number, row in enumerate(reader, 1):
                text = row.get(text_field)
                if text is None:
                    yield Source(f"{path}:{number}", "row has too few fields")
                    continue
                yield Source(row[id_field] if id_field else f"{path}:{number}", text=text)
        except (UnicodeDecodeError, csv.Error) as exc:
            yield Source(path, f"cannot read as CSV: {exc}")


def iter_parquet(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[Source]:
    """One Source per row of a Parquet file, read in record batches (needs pyarrow)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        yield Source(path, "reading .parquet needs pyarrow: pip install 'simdedup[parquet]'")
        return
    try:
        table = pq.ParquetFile(path)
        columns = [text_field] + ([id_field] if id_field else [])
        missing = [c for c in columns if c not in table.schema_arrow.names]
        if missing:
            yield Source(path, f"no column {missing[0]!r} (columns: {', '.join(table.schema_arrow.names)})")
            return
        number = 0
        for batch in table.iter_batches(columns=columns, batch_size=4096):
            texts = batch.column(0).to_pylist()
            ids = batch.column(1).to_pylist() if id_field else None
            for i, text in enumerate(texts):
                number += 1
                doc_id = str(ids[i]) if ids is not None else f"{path}:{number}"
                if not isinstance(text, str):
                    yield Source(doc_id, f"column {text_field!r} is not text in this row")
                else:
                    yield Source(doc_id, text=text)
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        yield Source(path, f"cannot read as Parquet: {exc}")


def _field(obj: object, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            raise KeyError(dotted)
        obj = obj[part]
    return obj


def iter_jsonl(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[Source]:
    """One Source per document line of a JSON-lines file (see :func:`iter_jsonl_lines`)."""
    for source, _ in iter_jsonl_lines(path, text_field, id_field):
        yield source


def iter_jsonl_lines(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[tuple[Source, bytes]]:
    """One Source per line of a JSON-lines file (streamed; compressed files too).

    ``text_field`` and ``id_field`` are dotted paths into each object (``meta.url``); without an
    id field the id is ``FILE:LINE``. A line that is not an object with a string text (or a
    usable id) becomes a skipped Source named ``FILE:LINE`` with the reason.
    """
    try:
        handle = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason), b""
        return
    for source, raw in _jsonl_lines(path, text_field, id_field, handle):
        yield documents(source)[0], raw


def _jsonl_lines(path: str, text_field: str, id_field: str | None,
                 handle: BinaryIO) -> Iterator[tuple[Source, bytes]]:
    """The lines of an open JSON-lines file as unparsed Sources named ``FILE:LINE``."""
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, 1):
                if raw.strip():
                    yield Source(f"{path}:{number}", line=(raw, text_field, id_field)), raw
        except (OSError, EOFError, ValueError) as exc:  # a truncated or corrupt compressed file
            yield Source(f"{path}:{number + 1}", f"read error: {exc}"), b""


#: bytes of a JSON-lines file handed out at once (see :func:`documents`)
SPAN_BYTES = 1 << 18


def iter_jsonl_unparsed(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[Source]:
    """As :func:`iter_jsonl`, but read and parsed only by :func:`documents`, where they are used:
    stretches of whole lines of a plain file, single lines of a compressed one."""
    try:
        handle = open_binary(path)
    except SkipDocument as exc:
        yield Source(path, exc.reason)
        return
    if is_compressed(path) or not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        for source, _ in _jsonl_lines(path, text_field, id_field, handle):
            yield source
        return
    with handle:
        offset, line, pending = 0, 1, b""
        while True:
            try:
                block = handle.read(SPAN_BYTES)
            except OSError as exc:
                yield Source(f"{path}:{line}", f"read error: {exc.strerror or exc}")
                return
            data = pending + block
            cut = len(data) if not block else data.rfind(b"\n") + 1
            if cut:
                yield Source(f"{path}:{line}", span=(offset, cut, line, text_field, id_field))
                line += data.count(b"\n", 0, cut)
                offset += cut
            pending = data[cut:]
            if not block:
                return


def _jsonl_document(where: str, raw: bytes, text_field: str, id_field: str | None) -> Source:
    """The document of one JSON line, or a skipped Source named ``where`` saying why not."""
    try:
        obj = json.loads(raw)
        text = _field(obj, text_field)
        doc_id = where if id_field is None else _field(obj, id_field)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return Source(where, "not a JSON object")
    except KeyError as exc:
        return Source(where, f"no field {exc.args[0]!r}")
    if not isinstance(text, str):
        return Source(where, f"field {text_field!r} is not a string")
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        return Source(where, f"field {id_field!r} is not a string or number")
    return Source(str(doc_id), text=text)


def iter_warc_documents(path: str, text_field: str = "text", id_field: str | None = None) -> Iterator[Source]:
    """One Source per response record of a WARC file; HTML bodies reduced to their text."""
    try:
        from .web import html_text, iter_warc

        for doc_id, body, charset, is_html in iter_warc(path):
            try:
                text = body.decode(charset or "utf-8")
            except (LookupError, UnicodeDecodeError):
                yield Source(doc_id, f"body is not {charset or 'utf-8'} text")
                continue
            yield Source(doc_id, text="".join(html_text([text])) if is_html else text)
    except ImportError:
        yield Source(path, "reading WARC files needs warcio: pip install 'simdedup[warc]'")
    except Exception as exc:  # warcio's own errors for a damaged archive
        yield Source(path, f"cannot read as WARC: {exc}")


_TABLE_READERS = {"jsonl": iter_jsonl_unparsed, "csv": iter_csv, "parquet": iter_parquet, "warc": iter_warc_documents}


def expand_jsonl(sources: Iterable[Source], jsonl: bool | None, text_field: str = "text",
                 id_field: str | None = None, jsonl_files: list[str] | None = None) -> Iterator[Source]:
    """Sources with every file of many documents replaced by its documents (JSON lines still
    unparsed: see :func:`parsed`).

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
        yield from _TABLE_READERS[kind](source.path, text_field, id_field)


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


def _walk(top: str, root: str, visited: set[tuple[int, int]], walk_filter: WalkFilter) -> Iterator[Source]:
    try:
        entries = sorted(os.scandir(top), key=lambda e: e.name)
    except OSError as exc:
        yield Source(top, f"cannot list directory: {exc.strerror or exc}")
        return
    for entry in entries:
        path = entry.path
        if not walk_filter.min_bytes and entry.is_file(follow_symlinks=False):
            # A regular file by its directory entry: no stat needed (its size is read where it is read).
            if walk_filter.takes_file(path, root, 0):
                yield Source(path, regular=True)
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
            yield from _walk(path, root, visited, walk_filter)
        elif stat.S_ISREG(st.st_mode):
            if walk_filter.takes_file(path, root, st.st_size):
                yield Source(path, size=st.st_size, regular=True)
        else:
            yield Source(path, f"{_kind(st.st_mode)}; skipped during the walk")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def iter_sources(paths: Iterable[str], walk_filter: WalkFilter = WalkFilter()) -> Iterator[Source]:
    """Documents named by ``paths``: files as given, directories walked recursively in sorted order.

    ``walk_filter`` chooses the files of walked directories; a file named explicitly is always read.
    """
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            yield Source(path, "no such file or directory")
            continue
        except OSError as exc:
            yield Source(path, f"cannot stat: {exc.strerror or exc}")
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(path, path, {(st.st_dev, st.st_ino)}, walk_filter)
        elif stat.S_ISREG(st.st_mode):
            yield Source(path, size=st.st_size, regular=True)
        elif stat.S_ISFIFO(st.st_mode):
            yield Source(path)
        else:
            yield Source(path, _kind(st.st_mode))


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
            self.codec = None if encoding == "auto" else codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"unknown encoding {encoding!r}") from None
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
        """The undecoded bytes in blocks, with the same empty and binary checks."""
        sniff = self.codec is None or not _is_wide(self.codec.name)
        with self._open() as handle:
            while True:
                try:
                    block = handle.read(self.chunk_bytes)
                except OSError as exc:
                    raise SkipDocument(self.path, f"read error: {exc.strerror or exc}") from None
                if not block:
                    if self.bytes_read == 0:
                        raise SkipDocument(self.path, "empty file")
                    return
                if sniff and self.bytes_read < _SNIFF_BYTES and b"\0" in block[: _SNIFF_BYTES - self.bytes_read]:
                    raise SkipDocument(self.path, "binary file (NUL bytes); not text")
                self.bytes_read += len(block)
                yield block

    def _http_body(self, handle: BinaryIO, first: bytes, codec: codecs.CodecInfo | None) -> tuple:
        """Parse a whole HTTP response; continue with its body (and the charset it names)."""
        try:
            response = parse_http_response(first + handle.read())
        except (ValueError, OSError) as exc:
            raise SkipDocument(self.path, f"HTTP response: {exc}") from None
        self.is_html = response.is_html
        if response.charset:
            try:
                codec = codecs.lookup(response.charset)
            except LookupError:
                pass  # an unknown charset: the --encoding given
        body = io.BytesIO(response.body)
        return body, body.read(self.chunk_bytes), codec

    def __iter__(self) -> Iterator[str]:
        path = self.path
        with self._open() as handle:
            carry = ""
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
                text = carry + text
                if final:
                    if text:
                        yield text
                    return
                cut = _last_space(text)
                if cut < 0 and len(text) < MAX_CARRY:
                    carry = text
                elif cut < 0:  # no whitespace for megabytes: cut anyway rather than grow forever
                    carry = ""
                    yield text
                elif cut > 0:
                    carry = text[cut:]
                    yield text[:cut]


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
