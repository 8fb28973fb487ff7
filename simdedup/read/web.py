"""Web data: visible text of HTML, raw HTTP response messages, WARC archives.

- HTML: the standard library's HTML parser (fed in chunks, entities decoded); the text of
  ``script``, ``style``, ``noscript``, ``template`` and ``svg`` elements is dropped, and block
  elements separate words. No regular expressions touch the markup.
- HTTP responses (status line, headers, blank line, body), the setting simhash was first used
  in: the headers are skipped, ``Transfer-Encoding: chunked`` and ``Content-Encoding: gzip`` or
  ``deflate`` bodies are decoded, the charset comes from ``Content-Type``, and an HTML body is
  reduced to its visible text.
- WARC files (with warcio): every ``response`` record is one document, its id the target URI
  and the record id.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, BinaryIO, Iterable, Iterator

from ..errors import DamagedInput, SimdedupError, first_line
from .remote import open_stored

_HIDDEN = {"script", "style", "noscript", "template", "svg"}
_BLOCK = {
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
    "title",
    "option",
    "body",
    "html",
}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


def html_text(chunks: Iterable[str]) -> Iterator[str]:
    """The visible text of an HTML document given in chunks, in chunks that end at whitespace."""
    parser = _TextExtractor()
    carry = ""
    for chunk in chunks:
        parser.feed(chunk)
        text = carry + parser.take()
        cut = max(text.rfind(" "), text.rfind("\n"))
        carry, ready = (text[cut + 1 :], text[: cut + 1]) if cut >= 0 else (text, "")
        if ready:
            yield ready
    parser.close()
    rest = carry + parser.take()
    if rest:
        yield rest


class HttpResponse:
    """A parsed HTTP response message; its body as bytes, or as a stream to read."""

    def __init__(self, status: str, headers: dict[str, str], body: Any):
        self.status, self.headers, self.body = status, headers, body

    @property
    def charset(self) -> str | None:
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                return value.strip("\"'")
        return None

    @property
    def is_html(self) -> bool:
        return "html" in self.headers.get("content-type", "").lower()


#: the head of an HTTP response (RFC 9112): a status line (``HTTP/1.1 200 OK``, ``HTTP/2 404``),
#: at least one header field (a token, a colon, a value; a folded line goes on the one before),
#: then a blank line
_RESPONSE_HEAD = re.compile(
    rb"HTTP/[0-9](?:\.[0-9])? [0-9]{3}(?: [^\r\n]*)?\r?\n"
    rb"(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\r\n]*\r?\n(?:[ \t][^\r\n]*\r?\n)*)+"
    rb"\r?\n"
)


def looks_like_http(data: bytes) -> bool:
    """Whether bytes start with the whole head of an HTTP response, its blank line within
    :data:`MAX_HEAD_BYTES`: anything else (``HTTP/1.1 is ...`` in plain text, a status line
    without headers) is text. Every reader that meets a raw response asks this, and only this."""
    return data[:5] == b"HTTP/" and _RESPONSE_HEAD.match(data[: MAX_HEAD_BYTES + 2]) is not None


def parse_http_response(data: bytes) -> HttpResponse:
    """Split a raw response into status, headers and the decoded body.

    Raises:
        ValueError: no header block, or a body that does not decode.
    """
    response = read_http_response(io.BytesIO(data))
    try:
        body = response.body.read()
    except OSError as exc:
        raise ValueError(str(exc)) from None
    return HttpResponse(response.status, response.headers, body)


#: the most bytes of status line and headers read, and of one chunk-size line of a chunked body
MAX_HEAD_BYTES = 1 << 16


def read_http_response(stream: BinaryIO, first: bytes = b"") -> HttpResponse:
    """The status line and headers of a response read from ``first`` and then ``stream``; its
    body is a stream of the rest, decoded as it is read (chunked transfer coding, gzip or
    deflate content coding), so that a body is never held whole, whatever it expands to. A body
    that does not decode raises :class:`~simdedup.errors.DamagedInput` when it is read.

    Raises:
        ValueError: no blank line after the headers within :data:`MAX_HEAD_BYTES`.
    """
    reader = io.BufferedReader(_Prefixed(first, stream))
    lines: list[bytes] = []
    size = 0
    while True:
        line = reader.readline(MAX_HEAD_BYTES + 1 - size)
        size += len(line)
        if line in (b"\r\n", b"\n"):
            break
        if not line.endswith(b"\n"):
            raise ValueError(
                "HTTP response without the blank line after its headers"
                + (f" within {MAX_HEAD_BYTES} bytes" if size > MAX_HEAD_BYTES else "")
            )
        lines.append(line)
    head = b"".join(lines).decode("iso-8859-1").splitlines()
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body: BinaryIO = reader
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = io.BufferedReader(_Dechunked(body))  # type: ignore[arg-type]
    encoding = headers.get("content-encoding", "").lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        body = io.BufferedReader(_Inflated(body, encoding))  # type: ignore[arg-type]
    return HttpResponse(head[0] if head else "", headers, body)


class _Prefixed(io.RawIOBase):
    """Bytes read already, then the rest of the stream they came from."""

    def __init__(self, first: bytes, stream: BinaryIO):
        self._first, self._stream = memoryview(first), stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._first:
            size = min(len(buffer), len(self._first))
            buffer[:size] = self._first[:size]
            self._first = self._first[size:]
            return size
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Dechunked(io.RawIOBase):
    """The data of a chunked body. As before it was streamed, the body may end without its last,
    empty chunk, or inside a chunk; a chunk-size line that is cut short or not hexadecimal is an
    error."""

    def __init__(self, stream: io.BufferedReader):
        self._stream = stream
        self._left = 0  # bytes of the current chunk not read yet
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            if self._done:
                return 0
            line = self._stream.readline(MAX_HEAD_BYTES)
            if not line:
                return 0
            if not line.endswith(b"\n"):
                raise DamagedInput("HTTP response: chunked body cut short")
            try:
                self._left = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise DamagedInput("HTTP response: a chunk size that is not hexadecimal") from None
            self._done = self._left == 0
        data = self._stream.read(min(len(buffer), self._left))
        if not data:
            return 0
        buffer[: len(data)] = data
        self._left -= len(data)
        if not self._left:  # the line end after a chunk's data
            ending = self._stream.peek(2)[:2]
            self._stream.read(2 if ending == b"\r\n" else 1 if ending[:1] == b"\n" else 0)
        return len(data)


class _Inflated(io.RawIOBase):
    """A gzip or deflate body decompressed in bounded steps (``deflate`` with a zlib header, or
    raw, as some servers send it)."""

    def __init__(self, stream: io.BufferedReader, encoding: str):
        if encoding == "deflate":
            head = stream.peek(2)[:2]
            wrapped = len(head) == 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
            bits = zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS
        else:
            bits = 16 + zlib.MAX_WBITS
        self._stream, self._encoding = stream, encoding
        self._inflate = zlib.decompressobj(bits)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._inflate.eof:
            data = self._inflate.unconsumed_tail or self._stream.read(1 << 16)
            if not data:
                raise DamagedInput(f"HTTP response: body does not decode as {self._encoding}: cut short")
            try:
                out = self._inflate.decompress(data, len(buffer))
            except zlib.error as exc:
                raise DamagedInput(f"HTTP response: body does not decode as {self._encoding}: {exc}") from None
            if out:
                buffer[: len(out)] = out
                return len(out)
        return 0


@dataclass
class WarcRecord:
    """A response record of a WARC file, or a stretch of it that could not be read
    (``problem`` says why; ``body`` is then None)."""

    id: str
    body: bytes | None
    charset: str | None = None
    is_html: bool = False
    problem: str | None = None
    where: str = ""  # FILE: byte N, where the record starts


def iter_warc(path: str, max_body: int) -> Iterator[WarcRecord]:
    """Every response record of a WARC file (needs warcio), its body decoded (chunked, gzip).

    A record cut short, or with a body over ``max_body`` bytes, comes with its problem; a
    damaged stretch of the file is reported where it starts (``FILE: byte N``), and reading
    resumes at the next record that can be found after it (the next gzip member of a
    ``.warc.gz``, the next ``WARC/`` line of a plain file), so one bad record costs no others.
    """
    from warcio.archiveiterator import ArchiveIterator

    class Quiet(ArchiveIterator):
        INC_RECORD = ""  # warcio writes this warning to stderr itself; the damage is reported below

    with open_stored(path) as handle:
        position = 0
        while True:
            handle.seek(position)
            records = Quiet(handle)
            try:
                for record in records:
                    if record.rec_type == "response":
                        yield _warc_response(record, max_body, f"{path}: byte {records.offset}")
                    elif not record.rec_type:
                        yield WarcRecord(
                            f"{path}: byte {records.offset}",
                            None,
                            problem="a WARC record without a WARC-Type (a damaged header)",
                        )
                return
            except SimdedupError:  # the store, not the archive (StoreError)
                raise
            except Exception as exc:  # warcio's errors (and zlib's, EOFError) for a damaged archive
                problem = first_line(exc)[:200]
                start = records.offset
                position = _next_warc_record(handle, start + 1)
                resumed = f"; reading resumes at byte {position}" if position is not None else ""
                yield WarcRecord(
                    f"{path}: byte {start}", None, problem=f"cannot read a WARC record ({problem}){resumed}"
                )
                if position is None:
                    return


def _warc_response(record, max_body: int, where: str) -> WarcRecord:  # type: ignore[no-untyped-def]
    """The response record read at ``where`` (``FILE: byte N``); a problem is said there, with
    the record's id."""
    uri = record.rec_headers.get_header("WARC-Target-URI") or ""
    record_id = record.rec_headers.get_header("WARC-Record-ID") or ""
    doc_id = f"{uri} {record_id}".strip()
    content_type = record.http_headers.get_header("Content-Type") if record.http_headers else ""
    response = HttpResponse("", {"content-type": content_type or ""}, b"")
    body = record.content_stream().read(max_body + 1)  # chunked and gzip bodies come decoded
    if len(body) > max_body:
        return WarcRecord(
            where, None, problem=f"{doc_id}: body longer than {max_body} bytes (--max-line-bytes); not read"
        )
    while record.raw_stream.read(1 << 16):  # the rest of the record as stored, to see that it is all there
        pass
    if record.raw_stream.limit > 0:
        return WarcRecord(
            where,
            None,
            problem=f"{doc_id}: record cut short ({record.raw_stream.limit} of its "
            f"{record.length} bytes missing: the file is truncated)",
        )
    return WarcRecord(doc_id, body, response.charset, response.is_html, where=where)


def _next_warc_record(handle: BinaryIO, start: int) -> int | None:
    """Where the next record may begin at or after byte ``start``: a gzip member's first bytes, or
    a line starting ``WARC/``; None when there is none."""
    handle.seek(start)
    overlap = 7
    carried = b""
    position = start
    while block := handle.read(1 << 20):
        data = carried + block
        found = [at for at in (data.find(b"\x1f\x8b\x08"), data.find(b"\nWARC/")) if at >= 0]
        if found:
            at = min(found)
            return position - len(carried) + at + (1 if data[at : at + 1] == b"\n" else 0)
        carried = data[-overlap:]
        position += len(block)
    return None
