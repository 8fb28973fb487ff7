"""Writing JSON lines so that concurrent writers never interleave inside a line.

Several ``simdedup fingerprint`` processes started by ``xargs -P`` share one stdout. Every
``write(2)`` made here holds whole lines only. On a pipe, a write of at most ``PIPE_BUF`` bytes
is atomic, so lines are sent in batches of at most that size (a single longer line is sent in
one write, which Linux keeps whole unless the pipe is nearly full). On a regular file Linux
updates the shared offset atomically per write, so larger batches are safe and faster.
"""

from __future__ import annotations

import io
import os
import re
import select
import stat
import sys
from typing import BinaryIO

_FILE_BATCH = 1 << 16


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text_bytes(text: str) -> bytes:
    """JSON text as UTF-8. A lone surrogate (a file name's undecodable byte, as Python decodes
    it, or an escaped one read from JSON) can stand only inside a JSON string, where it is
    written as its ``\\uXXXX`` escape, so the output stays valid UTF-8 and reads back the same."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


class LineWriter:
    """Buffers text lines and writes them in whole-line batches.

    The target is a file descriptor (the normal case) or a binary stream without one (a test
    runner's captured stdout, a notebook), which gets the same batches through ``write``.
    """

    def __init__(self, target: int | BinaryIO):
        self.target = target
        try:
            mode = os.fstat(target if isinstance(target, int) else target.fileno()).st_mode
            is_pipe = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            is_pipe = True
        self.limit = select.PIPE_BUF if is_pipe else _FILE_BATCH
        self._parts: list[bytes] = []
        self._size = 0

    def write_line(self, line: str) -> None:
        """Queue a JSON ``line`` (without its newline)."""
        data = json_text_bytes(line) + b"\n"
        if self._size + len(data) > self.limit:
            self.flush()
        self._parts.append(data)
        self._size += len(data)

    def write_lines(self, data: bytes) -> None:
        """Queue whole lines, each ending with a newline, already encoded."""
        if self._size + len(data) > self.limit:
            self.flush()
            while len(data) > self.limit:  # cut at the last line end that fits
                cut = data.rfind(b"\n", 0, self.limit) + 1 or data.find(b"\n") + 1 or len(data)
                self._write(data[:cut])
                data = data[cut:]
        if data:
            self._parts.append(data)
            self._size += len(data)

    def flush(self) -> None:
        """Write what is queued (raises BrokenPipeError when the reader has gone)."""
        if not self._parts:
            return
        data = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        self._write(data)

    def _write(self, data: bytes) -> None:
        write_all(self.target, data)


def write_all(target: int | BinaryIO, data: bytes) -> None:
    """Write all of ``data`` to a file descriptor or a binary stream (flushed)."""
    view = memoryview(data)
    if not isinstance(target, int):
        target.write(view)
        target.flush()
        return
    while view:
        view = view[os.write(target, view):]


def stdout_target() -> int | BinaryIO:
    """stdout's file descriptor, or its binary stream when it has none."""
    try:
        return sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return sys.stdout.buffer
