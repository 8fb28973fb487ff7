"""Writing outputs: whole lines for concurrent writers, files replaced atomically, never an input.

Several ``simdedup fingerprint`` processes started by ``xargs -P`` share one stdout. Every
``write(2)`` made here holds whole lines only, and on a pipe it is made under an exclusive
``flock`` of the pipe, so that a write longer than ``PIPE_BUF`` (which the kernel splits when the
pipe fills) never mixes with another simdedup process's. The lock is taken on a descriptor of its
own (``/proc/self/fd/N``): processes that inherited one write end share its open file
description, and flock does not exclude holders of one description from each other. Where no
such descriptor can be had (no /proc, a socket), lines go in writes of at most ``PIPE_BUF``
bytes, which the kernel keeps whole. On a regular file Linux updates the shared offset
atomically per write, so larger batches are safe and faster.

A file named as an output (:class:`OutputFile`) is written to a temporary file beside it and
renamed over it once complete, so it holds the old content or the whole new one; an existing
FIFO, device or socket is written in place, never replaced; and an output never replaces a file
that simdedup reads.
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import secrets
import select
import stat
import sys
import tempfile
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from .errors import OutputError, UsageError
from .owned import refuse_inside
from .read.remote import describe, filesystem, is_url, local_path

_FILE_BATCH = 1 << 16

#: the names of simdedup's temporary files begin so
TEMP_PREFIX = ".simdedup-"

#: what makes two paths one file: (st_dev, st_ino); an object's URL
Identity = tuple[int, int] | str


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
        lock = _pipe_lock(target) if is_pipe and isinstance(target, int) else None
        if lock is not None:
            os.close(lock)
        self.limit = select.PIPE_BUF if is_pipe and lock is None else _FILE_BATCH
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
                write_all(self.target, data[:cut])
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
        write_all(self.target, data)


def write_all(target: int | BinaryIO, data: bytes) -> None:
    """Write all of ``data`` to a file descriptor or a binary stream (flushed), in one piece
    among simdedup processes sharing a pipe.

    Raises:
        BrokenPipeError: the reader has gone.
        OutputError: any other failure (a full disk, a closed descriptor).
    """
    view = memoryview(data)
    lock = None
    try:
        if not isinstance(target, int):
            target.write(view)
            target.flush()
            return
        lock = _pipe_lock(target)
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        while view:
            try:
                view = view[os.write(target, view) :]
            except BlockingIOError:  # someone made the descriptor non-blocking: wait until it takes more
                poll = select.poll()
                poll.register(target, select.POLLOUT)
                poll.poll()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc)) from None
    finally:
        if lock is not None:
            os.close(lock)  # releases the flock


def _pipe_lock(fd: int) -> int | None:
    """A descriptor of its own (an open file description of its own) for the pipe ``fd``
    writes to, to flock; None when ``fd`` is no pipe or none can be had."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        # Write-only and non-blocking: it neither counts as a reader nor waits for one.
        return os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None


def stdout_target() -> int | BinaryIO:
    """stdout's file descriptor, or its binary stream when it has none.

    Raises:
        OutputError: stdout is closed (or open for reading only).
    """
    if sys.stdout is None:  # closed when Python started
        raise OutputError("it is closed", "stdout")
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return sys.stdout.buffer
    try:
        writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    except OSError:
        writable = False
    if not writable:
        raise OutputError("it is closed", "stdout")
    return fd


def reserve_standard_descriptors() -> None:
    """Open the null device on a closed stdin, stdout or stderr, so that no file opened later
    takes its number and receives what is meant for it (worker processes inherit them).

    stdout is reserved read-only, so that writing to it still fails (see :func:`stdout_target`);
    a closed stderr takes messages and drops them, as nobody can read them.
    """
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_RDONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            os.set_inheritable(fd, True)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def identity(path: str | int) -> Identity | None:
    """The identity of the file ``path`` (or the descriptor) names, links followed (None when
    there is none); an object named by URL is its URL."""
    if isinstance(path, str):
        path = local_path(path)  # file:///x is the file /x
        if is_url(path):
            return path
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def check_writable(directory: str, name: str) -> None:
    """Create and remove a file in ``directory``: permission bits do not tell (root ignores
    them; a read-only mount, an immutable directory).

    Raises:
        OutputError: no file can be created there.
    """
    fd, tmp = output_call(tempfile.mkstemp, prefix=TEMP_PREFIX, dir=directory, name=name)
    os.close(fd)
    os.unlink(tmp)


def output_call(function: Callable[..., Any], *args: Any, name: str | None = None, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, its OSError (other than a closed pipe) an OutputError
    naming ``name``."""
    try:
        return function(*args, **kwargs)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.strerror or str(exc), name) from None


class OutputFile:
    """An output named on the command line (None or ``-``: stdout), checked before any work.

    A new or regular file is written to a temporary file beside it and renamed over it when
    complete; replacing an existing one takes ``force``, and a link to one replaces the file it
    names, not the link. An existing FIFO, device or socket is written in place. A URL is
    uploaded whole when complete (:class:`RemoteOutput`).

    Raises:
        UsageError: the path is a directory, or names a file and ``force`` is not given; binary
            output to a terminal.
        OutputError: stdout is closed; no file can be created where the output goes.
    """

    def __init__(self, path: str | None, force: bool, binary: bool = False, option: str = "-o"):
        self.path = None if path in (None, "-") else local_path(path)
        self.name = self.path or "stdout"
        #: the existing regular file the output writes over: the file it replaces, or the file
        #: stdout writes into (``cat`` and GNU tools likewise refuse to read what they write)
        self.overwrites: Identity | None = None
        self.in_place = False
        self.remote: RemoteOutput | None = None  # an object of a store, named by URL
        if self.path is None:
            target = stdout_target()
            if isinstance(target, int):
                st = os.fstat(target)
                if stat.S_ISREG(st.st_mode):
                    self.overwrites = (st.st_dev, st.st_ino)
                    with suppress(OSError):  # where /proc tells the file's name
                        refuse_inside(os.readlink(f"/proc/self/fd/{target}"), "stdout")
                elif binary and os.isatty(target):
                    raise UsageError("binary output to a terminal; use -o FILE or a pipe")
            return
        if not self.path:
            raise UsageError(f"{option} needs a file name")
        refuse_inside(self.path, f"{option} {self.path}")
        self.remote = RemoteOutput(self.path, force, option) if is_url(self.path) else None
        if self.remote is not None:
            self.overwrites = self.path if self.remote.exists else None
            self.directory = tempfile.gettempdir()  # where its temporary files go
            return
        try:
            st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:  # a new file (or a dangling link, which is replaced)
            st = None
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc), self.path) from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{option} {self.path} is a directory")
        self.in_place = st is not None and not stat.S_ISREG(st.st_mode)
        self.file = self.path  # the name replaced
        if st is not None and not self.in_place:
            if not force:
                raise UsageError(f"{self.path} exists; use --force to replace it")
            self.overwrites = (st.st_dev, st.st_ino)
            self.file = os.path.realpath(self.path)
        #: where the temporary files go
        self.directory = os.path.dirname(os.path.abspath(self.file))
        if not self.in_place:
            check_writable(self.directory, self.path)

    def refuse_inputs(self, paths: Iterable[str], stdin: bool = False) -> None:
        """Raises UsageError when this output would write over one of the files ``paths``
        (``-`` aside) or, with ``stdin``, the file on stdin."""
        paths = tuple(paths)
        if self.remote is not None:  # an object under an input prefix: listed now, read later
            for path in paths:
                if is_url(path) and _url_inside(self.path, path):  # type: ignore[arg-type]
                    raise _is_input(self.name, path)
        if self.overwrites is None:
            return
        for path in paths:
            if path != "-" and identity(path) == self.overwrites:
                raise _is_input(self.name, path)
        if stdin and identity(0) == self.overwrites:
            raise _is_input(self.name, "stdin")

    def refuse_inside(self, directory: str, what: str = "the index") -> None:
        """Raises UsageError when this output would be a file inside ``directory`` (whose files
        are a program's own, such as an index's), or writes over one of them through stdout."""
        root = os.path.realpath(directory)
        if self.remote is not None:
            return
        if self.path is not None:
            target = os.path.realpath(os.path.abspath(self.path))
            if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
                raise UsageError(f"{self.name} is inside {what} {directory}; write it elsewhere")
        if self.overwrites is not None:
            for folder, _, names in os.walk(root):
                if any(identity(os.path.join(folder, name)) == self.overwrites for name in names):
                    raise UsageError(f"stdout writes into a file of {what} {directory}; write it elsewhere")

    def same_file(self, other: "OutputFile") -> bool:
        """Whether both outputs name one file."""
        if self.overwrites is not None and self.overwrites == other.overwrites:
            return True
        if self.remote is not None or other.remote is not None:
            return self.path == other.path
        return (
            self.path is not None
            and other.path is not None
            and os.path.realpath(self.path) == os.path.realpath(other.path)
        )

    @contextmanager
    def open(self) -> Iterator[int | BinaryIO]:
        """The file descriptor to write to (a binary stream when stdout has none); the file
        is in place when the block ends without an error, and untouched otherwise.

        Raises:
            OutputError: writing failed (as the block's writes raise it, named after the output).
        """
        try:
            if self.path is None:
                yield stdout_target()
            elif self.remote is not None:
                with self.remote.replacing() as fd:
                    yield fd
            elif self.in_place:
                fd = output_call(os.open, self.path, os.O_WRONLY | os.O_NOCTTY)
                try:
                    yield fd
                finally:
                    os.close(fd)
            else:
                with _replacing(self.file) as fd:
                    yield fd
        except OutputError as exc:
            if exc.name is not None:  # another output's
                raise
            raise OutputError(exc.reason, self.name) from None


@contextmanager
def _replacing(path: str) -> Iterator[int]:
    """A temporary file beside ``path``, renamed over it when the block ends without an error
    and removed otherwise."""
    fd, tmp = output_call(tempfile.mkstemp, prefix=TEMP_PREFIX, dir=os.path.dirname(os.path.abspath(path)))
    done = False
    try:
        yield fd
        output_call(os.fchmod, fd, 0o666 & ~current_umask())
        closing, fd = fd, -1
        output_call(os.close, closing)  # where a network file system reports a failed write
        output_call(os.replace, tmp, path)
        done = True
    finally:
        if fd >= 0:
            os.close(fd)
        if not done:
            with suppress(OSError):
                os.unlink(tmp)


def current_umask() -> int:
    """The process's umask (read by setting it, and back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


class RemoteOutput:
    """An output named by URL: checked before the run (not a prefix of objects, not an existing
    object without ``force``, and the store takes a new object there), written to a local
    temporary file and uploaded under its name when complete; removed, never uploaded, when the
    run fails.

    Raises:
        UsageError: an http(s) URL; a prefix; an existing object without ``force``.
        OutputError: the store cannot be written there.
    """

    def __init__(self, url: str, force: bool, option: str):
        if url.split("://", 1)[0].lower() in ("http", "https"):
            raise UsageError(f"{option} {url}: cannot write to an http(s) URL; name a file or an object store URL")
        self.url = url
        self.fs, self.path = filesystem(url)
        try:
            info = self.fs.info(self.path)
        except FileNotFoundError:
            info = None
        except Exception as exc:
            raise OutputError(describe(exc), url) from None
        if info is not None and info.get("type") == "directory":
            raise UsageError(f"{option} {url} is a prefix of objects (a directory)")
        if info is not None and not force:
            raise UsageError(f"{url} exists; use --force to replace it")
        self.exists = info is not None
        probe = f"{self.path.rsplit('/', 1)[0]}/{TEMP_PREFIX}probe-{secrets.token_hex(8)}"
        try:  # permissions do not tell (a bucket policy, a read-only key): create and remove an object
            self.fs.pipe_file(probe, b"")
            self.fs.rm_file(probe)
        except Exception as exc:
            raise OutputError(describe(exc), url) from None

    @contextmanager
    def replacing(self) -> Iterator[int]:
        """A local temporary file's descriptor, uploaded under the URL when the block ends without
        an error (s3fs uploads a large one in parts and aborts them on failure)."""
        fd, tmp = output_call(tempfile.mkstemp, prefix=TEMP_PREFIX, name=f"a temporary file for {self.url}")
        try:
            yield fd
            closing, fd = fd, -1
            output_call(os.close, closing, name=f"a temporary file for {self.url}")
            try:
                self.fs.put_file(tmp, self.path)
            except Exception as exc:
                raise OutputError(describe(exc), self.url) from None
        finally:
            if fd >= 0:
                os.close(fd)
            with suppress(OSError):
                os.unlink(tmp)


def overwritten_files(outputs: Iterable[OutputFile]) -> dict[Identity, str]:
    """The existing files that ``outputs`` named on the command line replace, and the names of
    those outputs. (stdout's file is compared with named inputs only: a walk that meets it is
    the walk's to handle, as it meets the temporary file of ``-o``.)"""
    return {
        output.overwrites: output.name
        for output in outputs
        if output.overwrites is not None and output.path is not None
    }


def refuse_overwritten_inputs(sources: Iterable[Any], overwritten: dict[Identity, str]) -> Iterable[Any]:
    """``sources`` (with a ``path``) as they come; raises UsageError at the first whose file is
    one that an output writes over (``overwritten``: see :func:`overwritten_files`)."""
    if not overwritten:
        return sources

    def checked() -> Iterator[Any]:
        for source in sources:
            output = overwritten.get(identity(source.path))  # type: ignore[arg-type]
            if output is not None:
                raise _is_input(output, source.path)
            yield source

    return checked()


def _url_inside(url: str, prefix: str) -> bool:
    """Whether the object ``url`` is ``prefix`` or lies under it (a listing of it would find it)."""
    return url == prefix or url.startswith(prefix.rstrip("/") + "/")


def _is_input(output: str, path: str) -> UsageError:
    named = "" if path == output else f" ({path})"
    return UsageError(f"{output} is an input{named}; an output never writes over an input")


def own_file(target: int | BinaryIO | None) -> tuple[tuple[int, int], ...]:
    """(st_dev, st_ino) of the regular file an output descriptor writes into (a temporary ``-o``
    file, or the file stdout is redirected to): the run's walk never reads it."""
    if not isinstance(target, int):
        return ()
    try:
        st = os.fstat(target)
    except OSError:
        return ()
    return ((st.st_dev, st.st_ino),) if stat.S_ISREG(st.st_mode) else ()
