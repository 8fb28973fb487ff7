"""The work directory of a distributed run: the only hand-off between its stages.

A local path (:class:`LocalFiles`: no fsspec needed), or any fsspec URL whose filesystem package
is installed (``s3://``, ``gs://``). It
holds ``manifest.json`` (the settings the directory was made with: a rerun with other settings
is refused, so a stale stage output is never mixed in), each task's outputs, and one marker per
finished task (``done/STAGE/TASK``), written after the outputs: a rerun skips the tasks that
have one. Every file is written under a temporary name and renamed into place, so a task killed
half-way leaves no file that looks finished. A marker holds the size and SHA-256 of every file
its task wrote: a rerun reuses a task only if they still match, and runs it again (with a
warning) if anything it left is damaged.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import re
import secrets
import socket
import threading
import time
from contextlib import contextmanager, suppress
from typing import Any, Iterator

import numpy as np

from ..errors import OutputError, SimdedupError
from ..owned import WORK_DIR_MANIFEST

MANIFEST = WORK_DIR_MANIFEST
#: 2: pair tasks report the crowds they leave; 3: markers hold their task's files' digests;
#: 4: markers name the files in the work directory relative to it
FORMAT = 4

_recorder = threading.local()  # what the task running in this thread writes (see recording)


#: the schemes of a work or output directory: stores every worker (another process, another
#: machine) sees alike and can write (not memory://, which is each process's own, nor zip://)
SHARED_SCHEMES = ("file", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


#: the file a run holds locked while it works in the directory
CLAIM = ".simdedup-claim"


def _protocols(fs: Any) -> tuple:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _holder(fd: int, unknown: str = "another run") -> str:
    """Who the claim file open at ``fd`` names (``unknown`` when it names nobody)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"null")
        return f"pid {info['pid']} on {info['host']} (since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return unknown


class WorkDirError(SimdedupError):
    """A work directory that cannot be used for this run."""


class DamagedTask(Exception):
    """A finished task's marker or one of its files is not as the task left it."""


@contextmanager
def recording() -> Iterator[list[list]]:
    """The files written in this thread meanwhile, to any work directory, as
    ``[url, name, size, sha256]``."""
    previous = getattr(_recorder, "files", None)
    _recorder.files = files = []
    try:
        yield files
    finally:
        _recorder.files = previous


class LocalFiles:
    """The calls :class:`WorkDir` and the engine's outputs make of an fsspec filesystem, on the
    local one, so that ``--engine stages`` with a local work directory needs no fsspec. Paths are
    absolute, a trailing ``/`` ignored; :meth:`ls` names entries by their whole path, and a file
    by itself, as fsspec does."""

    protocol = ("file", "local")  # as fsspec's local filesystem names itself

    def exists(self, path: str) -> bool:
        return os.path.exists(_bare(path))

    def isfile(self, path: str) -> bool:
        return os.path.isfile(_bare(path))

    def isdir(self, path: str) -> bool:
        return os.path.isdir(_bare(path))

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        os.makedirs(_bare(path), exist_ok=exist_ok)

    def open(self, path: str, mode: str = "rb") -> Any:
        return open(_bare(path), mode)

    def mv(self, source: str, target: str) -> None:
        os.replace(_bare(source), _bare(target))

    def rm(self, path: str) -> None:
        os.remove(_bare(path))

    def cat_file(self, path: str, start: int = 0, end: int | None = None) -> bytes:
        with open(_bare(path), "rb") as handle:
            handle.seek(start)
            return handle.read(-1 if end is None else max(0, end - start))

    def ls(self, path: str, detail: bool = False) -> list[str]:
        path = _bare(path)
        if os.path.isfile(path):
            return [path]
        return sorted(os.path.join(path, name) for name in os.listdir(path))


def _bare(path: str) -> str:
    return path.rstrip("/") or "/"


LOCAL_FILES = LocalFiles()


class WorkDir:
    """Files under one fsspec URL. Picklable: tasks on other machines open it by its URL, with
    the run's storage options (:mod:`simdedup.read.remote`), which reach them in memory only:
    the inputs of a task are read from the store by the worker that runs it."""

    def __init__(self, url: str):
        self.url = url.rstrip("/") or url
        self._fs: Any = None
        self._root = ""
        self._claim: int | None = None  # the descriptor holding the claim (:meth:`_hold`)
        scheme = _SCHEME.match(url)
        if scheme is not None and scheme.group(1).lower() not in SHARED_SCHEMES:
            raise WorkDirError(
                f"{url}: a work directory is a local directory or a URL of {', '.join(SHARED_SCHEMES[1:])} "
                f"(or file://), which every worker reads and writes; not {scheme.group(1)}://"
            )

    def __getstate__(self) -> dict:
        from ..read.remote import storage_options

        return {"url": self.url, "storage": storage_options()}

    def __setstate__(self, state: dict) -> None:
        from ..read.remote import use_storage_options

        use_storage_options(state.get("storage", {}))
        self.__init__(state["url"])

    @property
    def fs(self) -> Any:
        if self._fs is None:
            from ..read.remote import filesystem, is_url

            if not is_url(self.url):
                self._fs, self._root = LOCAL_FILES, os.path.abspath(self.url)
                return self._fs
            try:
                self._fs, self._root = filesystem(self.url)
            except (ImportError, ValueError, SimdedupError) as exc:
                raise WorkDirError(f"--work-dir {self.url}: {exc}") from None
        return self._fs

    def path(self, name: str) -> str:
        self.fs  # noqa: B018 (sets the root)
        return f"{self._root.rstrip('/')}/{name}"

    def exists(self, name: str) -> bool:
        return bool(self.fs.exists(self.path(name)))

    def write_bytes(self, name: str, data: bytes) -> None:
        """``data`` as the file ``name``, whole or not at all."""
        target = self.path(name)
        parent = target.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        temporary = f"{parent}/.tmp-{secrets.token_hex(6)}-{target.rsplit('/', 1)[1]}"
        try:
            with self.fs.open(temporary, "wb") as handle:
                handle.write(data)
            self.fs.mv(temporary, target)
        except OSError as exc:  # a full disk, a file-size limit, a read-only mount: one line, exit 1
            with suppress(OSError):
                self.fs.rm(temporary)
            raise OutputError(exc.strerror or str(exc), target) from None
        files = getattr(_recorder, "files", None)
        if files is not None:
            files.append([self.url, name, len(data), hashlib.sha256(data).hexdigest()])

    def read_bytes(self, name: str) -> bytes:
        with self.fs.open(self.path(name), "rb") as handle:
            return handle.read()

    def read_range(self, name: str, start: int, stop: int) -> bytes:
        """Bytes ``start .. stop`` of the file ``name`` (one ranged read on object stores)."""
        return bytes(self.fs.cat_file(self.path(name), start=start, end=stop))

    def write_json(self, name: str, value: Any) -> None:
        self.write_bytes(name, json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass"))

    def read_json(self, name: str) -> Any:
        return json.loads(self.read_bytes(name).decode("utf-8", "surrogatepass"))

    def write_arrays(self, name: str, **arrays: np.ndarray) -> None:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        self.write_bytes(name, buffer.getvalue())

    def read_arrays(self, name: str) -> dict[str, np.ndarray]:
        with np.load(io.BytesIO(self.read_bytes(name)), allow_pickle=False) as data:
            return {key: data[key] for key in data.files}

    # --- completion markers ---------------------------------------------------------------

    def done(self, stage: str, task: str) -> bool:
        return self.exists(f"done/{stage}/{task}")

    def mark_done(self, stage: str, task: str, result: Any, files: list[list]) -> None:
        """Record that a task finished, with its small JSON result and the ``files`` it wrote
        (as :func:`recording` gives them), each with its size and SHA-256. A file in this
        directory is named relative to it (``.`` or ``./output``): a copy of the directory
        (``cp -a``, rsync, another mount) checks and reads its own files, never the first's."""
        marker = f"done/{stage}/{task}"
        named = [[self.relative(url), name, size, digest] for url, name, size, digest in files]
        self.write_json(marker, {"marker": marker, "result": result, "files": named})

    def relative(self, url: str) -> str:
        """``url`` named relative to this directory when it is in it (see :meth:`mark_done`)."""
        if url == self.url:
            return "."
        if url.startswith(self.url + "/"):
            return "./" + url[len(self.url) + 1 :]
        return url  # another directory (-o): named as the run names it

    def located(self, where: str) -> "WorkDir":
        """The directory :meth:`relative` named ``where``."""
        if where == ".":
            return self
        if where.startswith("./"):
            return WorkDir(f"{self.url}/{where[2:]}")
        return WorkDir(where)

    def result(self, stage: str, task: str) -> Any:
        """The result of a finished task, after checking that its files are as it left them.

        Raises:
            DamagedTask: the marker or a file is damaged or gone; the message names it.
        """
        marker = f"done/{stage}/{task}"
        try:
            done = self.read_json(marker)
            result, files = done["result"], done["files"]
            if done["marker"] != marker:  # another task's, copied over this one's
                raise ValueError(marker)
        except (OSError, ValueError, KeyError, TypeError):
            raise DamagedTask(f"{self.url}/{marker}") from None
        for where, name, size, digest in files:
            try:
                folder = self.located(where)
            except WorkDirError:
                raise DamagedTask(f"{self.url}/{marker}") from None
            try:
                data = folder.read_bytes(name)
            except OSError:
                data = None
            if data is None or len(data) != size or hashlib.sha256(data).hexdigest() != digest:
                raise DamagedTask(f"{folder.url}/{name}")
        return result

    def finished(self, stage: str) -> set[str]:
        """The tasks of ``stage`` with a marker."""
        try:
            names = self.fs.ls(self.path(f"done/{stage}"), detail=False)
        except FileNotFoundError:
            return set()
        return {name.rstrip("/").rsplit("/", 1)[1] for name in names if not name.rsplit("/", 1)[1].startswith(".tmp-")}

    # --- the claim ------------------------------------------------------------------------

    def _hold(self) -> None:
        """Hold the directory for this run: an exclusive ``flock`` on its :data:`CLAIM` file,
        which names the holder (pid, host, since). The kernel takes the lock in one step (two
        runs starting together cannot both have it) and releases it when the process ends,
        however it ends: a claim left by a run that is gone is taken over, with a note. A
        directory on an object store has no such lock (nor do two machines sharing one over a
        file system that does not pass ``flock`` on).

        Raises:
            WorkDirError: another run holds the directory.
        """
        if self._claim is not None or "file" not in _protocols(self.fs):
            return
        root = self.path("")
        os.makedirs(root, exist_ok=True)
        path = os.path.join(root, CLAIM)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise WorkDirError(f"--work-dir {self.url}: cannot claim it: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise WorkDirError(
                f"--work-dir {self.url} is in use by {holder}; wait for it to end, or give another directory"
            ) from None
        left = _holder(fd, "")
        if left:
            from ..cli_options import message

            message(f"simdedup: note: --work-dir {self.url}: the run of {left} ended without releasing it; taken over")
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._claim = fd

    def release(self) -> None:
        """Let the directory go (the end of the process does as much)."""
        if self._claim is not None:
            os.ftruncate(self._claim, 0)
            os.close(self._claim)
            self._claim = None

    # --- the settings ---------------------------------------------------------------------

    def claim(self, settings: dict[str, Any]) -> bool:
        """Make the directory this run's, or check that it already is: the manifest written by
        an earlier run must hold the same ``settings``. True when an earlier run started here.

        Raises:
            WorkDirError: made with other settings, or not a work directory of this format.
        """
        wanted = json.loads(json.dumps({"format": FORMAT, "settings": settings}, sort_keys=True))
        if self.fs.exists(self.path("")) and not self.fs.isdir(self.path("")):
            raise WorkDirError(f"--work-dir {self.url} is not a directory")
        self._hold()
        if not self.exists(MANIFEST):
            try:
                present = self.fs.ls(self.path(""), detail=False) if self.fs.exists(self.path("")) else []
                if [name for name in present if name.rstrip("/").rsplit("/", 1)[-1] != CLAIM]:
                    raise WorkDirError(
                        f"--work-dir {self.url} is not empty and holds no {MANIFEST}: give an empty or new directory"
                    )
            except FileNotFoundError:
                pass
            self.write_json(MANIFEST, wanted)
            return False
        try:
            found = self.read_json(MANIFEST)
        except ValueError:
            raise WorkDirError(f"--work-dir {self.url}: {MANIFEST} is damaged") from None
        if found != wanted:
            changed = sorted(
                key
                for key in set(found.get("settings", {})) | set(settings)
                if found.get("settings", {}).get(key) != wanted["settings"].get(key)
            )
            raise WorkDirError(
                f"--work-dir {self.url} was made with other settings ({', '.join(changed) or 'format'} "
                f"differ): give a new directory, or the settings it was made with"
            )
        return True
