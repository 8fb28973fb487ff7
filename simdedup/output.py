"""Writing JSON lines so that concurrent writers never interleave inside a line.

Several ``simdedup fingerprint`` processes started by ``xargs -P`` share one stdout. Every
``write(2)`` made here holds whole lines only. On a pipe, a write of at most ``PIPE_BUF`` bytes
is atomic, so lines are sent in batches of at most that size (a single longer line is sent in
one write, which Linux keeps whole unless the pipe is nearly full). On a regular file Linux
updates the shared offset atomically per write, so larger batches are safe and faster.
"""

from __future__ import annotations

import os
import select
import stat
from typing import Iterable

_FILE_BATCH = 1 << 16


class LineWriter:
    """Buffers text lines and writes them to a file descriptor in whole-line batches."""

    def __init__(self, fd: int):
        self.fd = fd
        try:
            is_pipe = stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode)
        except OSError:
            is_pipe = True
        self.limit = select.PIPE_BUF if is_pipe else _FILE_BATCH
        self._parts: list[bytes] = []
        self._size = 0

    def write_line(self, line: str) -> None:
        """Queue ``line`` (without its newline)."""
        data = line.encode("utf-8", "surrogateescape") + b"\n"
        if self._size + len(data) > self.limit:
            self.flush()
        self._parts.append(data)
        self._size += len(data)

    def write_lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write_line(line)

    def flush(self) -> None:
        """Write what is queued (raises BrokenPipeError when the reader has gone)."""
        if not self._parts:
            return
        data = memoryview(b"".join(self._parts))
        self._parts.clear()
        self._size = 0
        while data:
            written = os.write(self.fd, data)
            data = data[written:]
