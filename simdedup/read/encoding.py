"""Where bytes become text: one rule, used by every reader (files, HTTP responses, HTML, WARC
records, JSON lines, CSV).

The encoding of a document is, in this order,

1. the one its byte-order mark names (UTF-8, UTF-16 or UTF-32, either byte order); the mark is
   not part of the text;
2. the charset its headers declare (an HTTP response's, a WARC record's ``Content-Type``);
3. the one markup declares in its first :data:`DECLARATION_BYTES` bytes (``<meta charset>``,
   ``<meta http-equiv="Content-Type">``, ``<?xml encoding>``), for a document that starts as
   markup does;
4. the encoding asked for (``--encoding``; UTF-8 for JSON lines and CSV), or with ``auto`` the
   one detected (:func:`detect_encoding`).

A declared charset that is unknown, or no text encoding (``base64``), is passed over; so is one
of UTF-16 or UTF-32 named inside markup that read as ASCII (it cannot be true, as in the HTML
standard). Text that does not decode in the encoding chosen is not guessed at: the reader says
which encoding failed, where, and who chose it.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..errors import DamagedInput

#: byte-order marks; UTF-32 LE first, as it starts with UTF-16 LE's
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: how far into a document markup's own declaration of its encoding is looked for (as the HTML
#: standard's prescan)
DECLARATION_BYTES = 1024

_MARKUP = re.compile(rb"\s*<")
_DECLARATION = re.compile(
    rb"<\?xml[^>]*?\sencoding\s*=\s*[\"']?([\w.:-]+)"
    rb"|<meta\s[^>]*?charset\s*=\s*[\"']?\s*([\w.:-]+)",
    re.IGNORECASE,
)


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


def is_wide(encoding: str) -> bool:
    """Whether text in ``encoding`` has NUL bytes in it (UTF-16, UTF-32)."""
    return codecs.lookup(encoding).name.startswith(("utf-16", "utf-32"))


@dataclass(frozen=True)
class Encoding:
    """How a document's bytes become text: the codec, the bytes of byte-order mark to drop, and
    what chose it (said when the text does not decode)."""

    codec: codecs.CodecInfo
    bom: int = 0
    chosen_by: str = ""  # "", or what chose it when --encoding did not: " (as its byte-order mark says)"

    @property
    def name(self) -> str:
        return self.codec.name

    def failure(self, position: int) -> str:
        """Why the text does not decode, for a skip message."""
        return f"not valid {self.name}{self.chosen_by} at byte {position}"


def _known(charset: str | None) -> codecs.CodecInfo | None:
    if not charset:
        return None
    try:
        return text_codec(charset.strip("\"' "))
    except LookupError:
        return None


def declared_in_markup(head: bytes) -> str | None:
    """The encoding markup at the start of ``head`` declares for itself, if any."""
    if not _MARKUP.match(head):
        return None
    found = _DECLARATION.search(head[:DECLARATION_BYTES])
    if found is None:
        return None
    return (found.group(1) or found.group(2)).decode("ascii")


def starts_with_markup(data: bytes | bytearray, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` starts as markup (``<``, after any whitespace): a head that
    does not declares no encoding (:func:`declared_in_markup`). Nothing is copied."""
    return _MARKUP.match(data, start, len(data) if end is None else end) is not None


def declares_other_than_utf8(head: bytes) -> bool:
    """Whether markup at the start of ``head`` declares an encoding that :func:`settle_encoding`
    takes and that is not UTF-8 (a document that declares UTF-8 decodes as one that declares
    nothing, so the compiled kernel, which reads UTF-8, may take it)."""
    codec = _known(declared_in_markup(head))
    return codec is not None and not is_wide(codec.name) and codec.name != "utf-8"


def settle_encoding(head: bytes, asked: str = "utf-8", declared: str | None = None) -> Encoding:
    """The encoding of a document whose first bytes are ``head`` (see the module docstring):
    ``asked`` is ``--encoding`` (a text encoding, or ``auto``), ``declared`` the charset of its
    headers.

    Raises:
        DamagedInput: ``auto``, and no encoding fits.
    """
    marked = bom_encoding(head)
    if marked is not None:
        return Encoding(codecs.lookup(marked[0]), marked[1], " (as its byte-order mark says)")
    codec = _known(declared)
    if codec is not None:
        return Encoding(codec, 0, " (as its Content-Type header says)")
    codec = _known(declared_in_markup(head))
    if codec is not None and not is_wide(codec.name):
        return Encoding(codec, 0, " (as its markup declares)")
    if asked == "auto":
        return Encoding(codecs.lookup(detect_encoding(head)), 0, " (detected)")
    return Encoding(text_codec(asked))


def bom_encoding(head: bytes) -> tuple[str, int] | None:
    """The encoding a byte-order mark at the start of ``head`` names, and the mark's length."""
    for mark, name in BOMS:
        if head.startswith(mark):
            return name, len(mark)
    return None


def detect_encoding(sample: bytes) -> str:
    """The encoding of a document from its first block, for ``--encoding auto`` once no byte-order
    mark or declaration names one: text that is valid UTF-8 is UTF-8; anything else goes to
    charset-normalizer.

    Raises:
        DamagedInput: no encoding fits.
    """
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(sample, False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    import charset_normalizer

    best = charset_normalizer.from_bytes(sample).best()
    if best is None:
        raise DamagedInput("cannot tell its encoding; give --encoding")
    return best.encoding


def decode_whole(data: bytes, asked: str = "utf-8", declared: str | None = None) -> str:
    """The text of a document held whole (a WARC record's body).

    Raises:
        DamagedInput: it does not decode, saying in which encoding and where.
    """
    encoding = settle_encoding(data[:DECLARATION_BYTES], asked, declared)
    try:
        return data[encoding.bom :].decode(encoding.name)
    except UnicodeDecodeError as exc:
        raise DamagedInput(encoding.failure(encoding.bom + exc.start)) from None


class Utf8Stream(io.RawIOBase):
    """The bytes of a stream of text as UTF-8, for the readers of JSON lines and CSV: without its
    byte-order mark, and decoded from the encoding it has (see :func:`settle_encoding`; ``asked``
    UTF-8) and encoded again when that is not UTF-8. Text that does not decode raises
    :class:`DamagedInput` where it is met. UTF-8 passes through as it is (invalid bytes too:
    the readers say which line holds them). ``raw``: the stream read."""

    def __init__(self, stream: BinaryIO, asked: str = "utf-8"):
        self.raw, self._asked = stream, asked
        self._encoding: Encoding | None = None  # settled at the first read
        self._decoder: Any = None
        self._position = 0  # bytes of the stream read so far
        self._output = memoryview(b"")

    @property
    def encoding(self) -> Encoding:
        """The stream's encoding, its first bytes read to settle it.

        Raises:
            OSError: they cannot be read (:class:`DamagedInput` for damaged data).
        """
        if self._encoding is None:
            head = self.raw.read(DECLARATION_BYTES)
            self._encoding = encoding = settle_encoding(head, self._asked)
            if encoding.name != "utf-8":
                self._decoder = encoding.codec.incrementaldecoder("strict")
            self._position = encoding.bom
            self._output = memoryview(self._convert(head[encoding.bom :], not head))
        return self._encoding

    @property
    def transcoded(self) -> bool:
        """Whether the bytes read differ from the stream's, beyond a byte-order mark."""
        return self.encoding.name != "utf-8"

    def readable(self) -> bool:
        return True

    def _convert(self, data: bytes, final: bool) -> bytes:
        position, self._position = self._position, self._position + len(data)
        if self._decoder is None:
            return data
        pending = len(self._decoder.getstate()[0])  # bytes of a character begun in the last block
        try:
            return self._decoder.decode(data, final).encode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise DamagedInput(self.encoding.failure(position - pending + exc.start)) from None

    def readinto(self, buffer: Any) -> int:
        self.encoding  # noqa: B018 (the first read settles it)
        while not self._output:
            data = self.raw.read(1 << 16)
            self._output = memoryview(self._convert(data, not data))
            if not data:
                break
        size = min(len(buffer), len(self._output))
        buffer[:size] = self._output[:size]
        self._output = self._output[size:]
        return size

    def close(self) -> None:
        self.raw.close()
        super().close()
