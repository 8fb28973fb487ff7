"""One document read in bounded memory: opened (decompressed when its name says so), its
encoding settled, decoded incrementally into chunks of text that end at whitespace.

Documents are read in chunks of :data:`CHUNK_BYTES`; each chunk of text handed on ends at
whitespace, so tokenizers that split on whitespace see whole tokens and a document of any size
is fingerprinted in memory proportional to its features. A small regular file is read whole in
one system call (:func:`whole_file`), the cheapest way through many small files.
"""

from __future__ import annotations

import io
import os
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable, Iterator

from ..errors import DamagedInput, MissingPackage, SkipDocument
from ..optional import need
from .encoding import Encoding, bom_encoding, is_wide, settle_encoding, text_codec
from .remote import open_stored
from .source import Source
from .web import looks_like_http, read_http_response

CHUNK_BYTES = 1 << 20
_SNIFF_BYTES = 8192
#: a run without whitespace longer than this (characters) is cut where it stands
MAX_CARRY = 4 * CHUNK_BYTES
#: file name endings read through a decompressor
COMPRESSED = (".gz", ".bz2", ".xz", ".lzma", ".zst")


def is_compressed(path: str) -> bool:
    return path.lower().endswith(COMPRESSED)


def open_binary(path: str, size: int | None = None) -> BinaryIO:
    """``path`` (a file or a URL: :func:`open_stored`) opened for reading bytes, decompressed
    on the fly when its name says so.

    A damaged compressed file (truncated, corrupt) raises :class:`DamagedInput`, an OSError,
    where the damage is met, whatever the codec.

    Raises:
        SkipDocument: the file cannot be opened, or ``.zst`` without the zstandard package.
    """
    lower = path.lower()
    try:
        if lower.endswith(".zst"):
            try:
                zstandard = need("zstandard", "reading .zst")
            except MissingPackage as exc:
                raise SkipDocument(path, str(exc)) from None
            return io.BufferedReader(_ZstdFrames(open_stored(path, size), zstandard))
        stored = open_stored(path, size)
        if lower.endswith(".gz"):
            import gzip

            return _decompressing(gzip.GzipFile(fileobj=stored, mode="rb"), "gzip", stored)
        if lower.endswith(".bz2"):
            import bz2

            return _decompressing(bz2.BZ2File(stored, "rb"), "bzip2", stored)
        if lower.endswith((".xz", ".lzma")):
            import lzma

            return _decompressing(lzma.LZMAFile(stored, "rb"), "xz", stored)
        return stored
    except OSError as exc:
        raise SkipDocument(path, f"cannot read: {exc.strerror or exc}") from None


class _Decompressing(io.RawIOBase):
    """A standard-library decompressing file whose damage reads as :class:`DamagedInput`:
    they raise EOFError (truncated), OSError without errno, zlib.error or lzma.LZMAError."""

    def __init__(self, stream: BinaryIO, codec: str, stored: BinaryIO):
        import lzma
        import zlib

        self._stream, self._codec, self._stored = stream, codec, stored
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
        self._stream.close()  # a decompressor given a file object leaves it open
        self._stored.close()
        super().close()


def _decompressing(stream: BinaryIO, codec: str, stored: BinaryIO) -> BinaryIO:
    return io.BufferedReader(_Decompressing(stream, codec, stored))  # type: ignore[return-value]


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


class DocumentReader:
    """Decoded text of a file in chunks that end at whitespace (the last one at end of file).

    Iterate over it once. A leading byte-order mark is dropped. Iteration raises
    :class:`SkipDocument` for a file that cannot be opened, is empty, looks binary (NUL bytes in
    its first 8 KiB, for byte encodings) or does not decode; the error can come after some chunks
    were produced. ``bytes_read`` counts the bytes read so far.
    """

    def __init__(
        self,
        path: str,
        encoding: str = "utf-8",
        chunk_bytes: int = CHUNK_BYTES,
        data: bytes | None = None,
        size: int | None = None,
    ):
        try:
            self.codec = None if encoding == "auto" else text_codec(encoding)
        except LookupError as exc:
            raise ValueError(str(exc)) from None
        self.path = path
        self.encoding = encoding
        self.chunk_bytes = chunk_bytes
        self.data = data  # the file's bytes, when they were read already
        self.size = size  # its size, when the walk found it
        self.bytes_read = 0
        self.detected: str | None = None  # the encoding chosen by --encoding auto
        self.is_html = False  # an HTTP response whose Content-Type says HTML

    def _open(self) -> BinaryIO:
        if self.data is not None:
            return io.BytesIO(self.data)
        return open_binary(self.path, self.size)

    def raw_blocks(self) -> Iterator[bytes]:
        """The undecoded bytes in blocks, with the same binary check; an empty file gives no
        block (a byte digest such as nilsimsa's has a value for it)."""
        sniff = self.codec is None or not is_wide(self.codec.name)
        with self._open() as handle:
            first = True
            while True:
                try:
                    block = handle.read(self.chunk_bytes)
                except OSError as exc:
                    raise SkipDocument(self.path, f"read error: {exc.strerror or exc}") from None
                if not block:
                    return
                if first:
                    first = False
                    marked = bom_encoding(block)
                    sniff = sniff and not (marked and is_wide(marked[0]))  # UTF-16 and UTF-32 hold NUL bytes
                if sniff and self.bytes_read < _SNIFF_BYTES and b"\0" in block[: _SNIFF_BYTES - self.bytes_read]:
                    raise SkipDocument(self.path, "binary file (NUL bytes); not text")
                self.bytes_read += len(block)
                yield block

    def _http_body(self, handle: BinaryIO, first: bytes) -> tuple[BinaryIO, bytes, str | None]:
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
        return response.body, block, response.charset

    def _settle(self, head: bytes, declared: str | None) -> Encoding:
        """The document's encoding (:func:`~.encoding.settle_encoding`)."""
        try:
            encoding = settle_encoding(head, self.codec.name if self.codec else "auto", declared)
        except DamagedInput as exc:
            raise SkipDocument(self.path, str(exc)) from None
        if self.codec is None:
            self.detected = encoding.name
        return encoding

    def __iter__(self) -> Iterator[str]:
        return whitespace_chunks(self._decoded())

    def _decoded(self) -> Iterator[str]:
        """The text as it is decoded, block by block (the byte-order mark dropped)."""
        path = self.path
        with self._open() as handle:
            try:
                # A read of 1 MiB allocates 1 MiB even for a 2 KiB file: ask for what is there.
                size = os.fstat(handle.fileno()).st_size
            except OSError:
                size = 0 if self.size is None or is_compressed(path) else self.size
            step = min(self.chunk_bytes, size + 1) if size else self.chunk_bytes
            encoding, decoder, sniff = None, None, True
            while True:
                try:
                    block = handle.read(step)
                    step = self.chunk_bytes
                except OSError as exc:
                    raise SkipDocument(path, f"read error: {exc.strerror or exc}") from None
                if decoder is None:  # first block: settle the encoding
                    declared = None
                    if looks_like_http(block):  # a raw HTTP response: its body
                        handle, block, declared = self._http_body(handle, block)
                    if not block:
                        raise SkipDocument(path, "empty file")
                    encoding = self._settle(block, declared)
                    decoder = encoding.codec.incrementaldecoder("strict")
                    sniff = not is_wide(encoding.name)
                    self.bytes_read = encoding.bom
                    block = block[encoding.bom :]
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
                        path, f"{encoding.failure(self.bytes_read - pending + start)}; try --encoding"
                    ) from None
                self.bytes_read += len(block)
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


def _last_space(text: str) -> int:
    """Index just past the last whitespace character of ``text``, or -1 if it has none."""
    if not text or text[-1].isspace():
        return len(text)
    tail = text.rsplit(None, 1)[-1]  # C speed; the copy of the head is freed at once
    return -1 if len(tail) == len(text) else len(text) - len(tail)


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8, without encoding a copy of all of it at once."""
    if text.isascii():
        return len(text)
    return sum(
        len(text[start : start + CHUNK_BYTES].encode("utf-8", "surrogatepass"))
        for start in range(0, len(text), CHUNK_BYTES)
    )


def whole_file(source: Source, limit: int) -> bytes | None:
    """The bytes of the source's file, or None when it is not a regular file, is over ``limit``
    or cannot be read (the streaming path then reads it, or reports why it cannot)."""
    try:
        if not source.regular:  # not seen as a regular file: stat first, as opening a FIFO takes its data
            if not stat.S_ISREG(os.stat(source.path).st_mode):
                return None
        return read_regular_file(source.path, limit)
    except OSError:
        return None


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_regular_file(path: str, limit: int) -> bytes | None:
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
        want, total = status.st_size + 1, 0
        while True:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew past the limit since the fstat (a file still written)
                return None
            if len(chunk) < want:  # a short read of a regular file: its end
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            want = 1 << 20  # it grew since the fstat
    finally:
        os.close(fd)


def _read_into(fd: int, view: memoryview) -> int:
    """Read into ``view`` (one read call): the number of bytes read."""
    if _readv is not None:
        return _readv(fd, [view])
    chunk = os.read(fd, len(view))
    view[: len(chunk)] = chunk
    return len(chunk)


_readv = getattr(os, "readv", None)  # not on Windows


class FileBuffer:
    """Regular files read whole into one buffer, back to back: the batched way through many
    small files (:meth:`read` is :func:`whole_file` into the buffer), without an object per
    file. The buffer is reused: :meth:`clear` empties it, :meth:`drop` lets go of the bytes
    from an offset on; it grows only as far as the files held at once take."""

    def __init__(self, limit: int, capacity: int = 1 << 20, keep: int | None = None):
        self.limit = limit
        self.capacity, self.keep = capacity, capacity if keep is None else keep
        self.buffer = bytearray(capacity)
        self.view = memoryview(self.buffer)
        self.end = 0  # the bytes held are buffer[:end]

    def __reduce__(self) -> tuple:
        return FileBuffer, (self.limit, self.capacity, self.keep)  # a new one, empty

    def clear(self) -> None:
        """Empty the buffer; one grown past ``keep`` bytes (for a large file; by default, past
        its first size) shrinks back to that."""
        self.end = 0
        if len(self.buffer) > self.keep:
            self.buffer = bytearray(self.capacity)
            self.view = memoryview(self.buffer)

    def drop(self, start: int) -> None:
        """Let go of the bytes from ``start`` on (the next file is read there)."""
        self.end = start

    def bytes(self, start: int, end: int) -> bytes:
        return self.view[start:end].tobytes()

    def _room(self, end: int) -> None:
        # A new buffer, never one resized: a view of the old one may live on a while (numpy
        # arrays made from it are freed by the garbage collector), which forbids resizing it.
        if end > len(self.buffer):
            grown = bytearray(max(end, 2 * len(self.buffer)))
            grown[: self.end] = self.view[: self.end]
            self.buffer, self.view = grown, memoryview(grown)

    def read(self, source: Source) -> int:
        """Read the source's file whole at the end of the buffer: its size in bytes, or -1 (and
        nothing held) when :func:`whole_file` gives None for it (not a regular file, over the
        limit, or it cannot be read: the streaming path then reads it, or says why it cannot)."""
        start = self.end
        try:
            if not source.regular and not stat.S_ISREG(os.stat(source.path).st_mode):
                return -1  # as whole_file: stat first, as opening a FIFO takes its data
            fd = os.open(source.path, _READ_FLAGS)
            try:
                status = os.fstat(fd)
                if not stat.S_ISREG(status.st_mode) or status.st_size > self.limit:
                    return -1
                end, want = start, status.st_size + 1
                while True:  # as read_regular_file
                    self._room(end + want)
                    got = _read_into(fd, self.view[end : end + want])
                    end += got
                    if end - start > self.limit:  # it grew past the limit since the fstat
                        return -1
                    if got < want:  # a short read of a regular file: its end
                        break
                    want = 1 << 20  # it grew since the fstat
            finally:
                os.close(fd)
        except OSError:
            return -1
        self.end = end
        return end - start


@dataclass
class Document:
    """One document as the read stage hands it to a fingerprinting method: skipped (``reason``),
    a text held in memory (a table row's), the features a JSON line gives, or a file: its bytes
    when it was read whole (``data``) and a :class:`DocumentReader` over them, or one that streams
    the file (too large, compressed, or not a regular file) as it is iterated."""

    id: str
    reason: str | None = None
    text: str | None = None
    features: dict[str, float] | None = None
    data: bytes | None = None
    reader: DocumentReader | None = None
    origin: str | None = None  # the file of many documents it is a row of
    place: str | None = None  # FILE:LINE of a row whose id a field gives (Source.place)

    @property
    def skipped(self) -> Source:
        """The document as a skipped source, with its reason."""
        return Source(self.id, self.reason, origin=self.origin, place=self.place)


def file_blocks(path: str, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The bytes of the file at ``path`` as stored, ``size`` at a time (a kept document that
    ``--unique-out`` copies). The file is opened at the first block.

    Raises:
        OSError: it cannot be opened or read.
    """
    with open_stored(path) as handle:
        while block := handle.read(size):
            yield block
