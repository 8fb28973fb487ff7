"""The catalog of an index: one SQLite database in WAL mode, ``IDX/catalog.sqlite``.

It holds what the index is (settings), which documents it has, which segment files hold their
fingerprints, and every verified pair found; a commit of its transaction is what makes an add
or a compaction happen. The schema (format 1), for users who join ids back to their own data::

    settings(name TEXT PRIMARY KEY, value TEXT)   -- JSON values: format, fingerprint settings,
                                                  -- k, blocks, verification, counters
    adds(add_number INTEGER PRIMARY KEY, time TEXT, files TEXT, documents INTEGER, pairs INTEGER)
    documents(seq INTEGER PRIMARY KEY, id TEXT UNIQUE, unit INTEGER, add_number INTEGER)
                                                  -- one row per document in the index; unit:
                                                  -- documents with equal fingerprint and sketch
                                                  -- share it (exact copies)
    segments(segment INTEGER PRIMARY KEY, file TEXT, rows INTEGER, bytes INTEGER, checksum TEXT)
    removed(seq INTEGER PRIMARY KEY)              -- rows of segments whose document was replaced
    pairs(a INTEGER, b INTEGER, PRIMARY KEY (a, b))  -- verified pairs of units, a < b

Near-duplicate pairs of documents by id::

    SELECT x.id, y.id FROM pairs JOIN documents x ON x.unit = pairs.a
                                 JOIN documents y ON y.unit = pairs.b;
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import re
import resource
import shutil
import sqlite3
import stat
import tempfile
from contextlib import contextmanager, suppress
from itertools import count, repeat
from typing import Any, Iterable, Iterator
from urllib.parse import quote

import numpy as np

from ..errors import OutputError, SimdedupError
from ..owned import INDEX_CATALOG, INDEX_CREATING
from .segments import DamagedIndexError

FORMAT = 1
CATALOG = INDEX_CATALOG
LOCK = "writer.lock"
SEGMENTS = "segments"
CREATING = INDEX_CREATING
_CHUNK = 10000  # ids bound in one statement (SQLite takes up to 32,766 parameters)

_SCHEMA = """
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE adds (add_number INTEGER PRIMARY KEY, time TEXT NOT NULL, files TEXT NOT NULL,
                   documents INTEGER NOT NULL, pairs INTEGER NOT NULL);
CREATE TABLE documents (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, unit INTEGER NOT NULL,
                        add_number INTEGER NOT NULL);
CREATE TABLE segments (segment INTEGER PRIMARY KEY, file TEXT NOT NULL UNIQUE, rows INTEGER NOT NULL,
                       bytes INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE TABLE removed (seq INTEGER PRIMARY KEY);
CREATE TABLE pairs (a INTEGER NOT NULL, b INTEGER NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE INDEX pairs_by_b ON pairs (b, a);
"""
#: the name of every segment file (a catalog naming another file is damaged: never opened, never removed)
SEGMENT_NAME = re.compile(r"seg-[0-9]{6,}\.sdseg")
#: SQLite's primary result codes for a file that is not a database and for pages that do not hold together
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26


class IndexUseError(SimdedupError):
    """An index cannot be used as asked: not an index, a newer format, other settings, ids
    already present, another writer."""


def _connect(database: str, uri: bool = False) -> sqlite3.Connection:
    """A connection to ``database``, which it has read (SQLite opens files lazily)."""
    connection = sqlite3.connect(database, isolation_level=None, timeout=60, uri=uri)
    try:
        connection.execute("PRAGMA busy_timeout = 60000")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA cache_size = -262144")  # 256 MiB
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        connection.close()
        raise
    return connection


def _table_columns(connection: sqlite3.Connection) -> dict[str, list[str]]:
    tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name: [row[1] for row in connection.execute(f"PRAGMA table_info({name})")] for (name,) in tables}


def _schema_columns() -> dict[str, list[str]]:
    """The tables of the schema and their columns, which every index's catalog has."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.executescript(_SCHEMA)
        return _table_columns(connection)
    finally:
        connection.close()


_COLUMNS = _schema_columns()


def catalog_damage(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite finding the catalog damaged or foreign, not the file system
    failing: a file that is not a database, pages that do not hold together, a constraint a
    sound catalog never breaks."""
    if isinstance(exc, sqlite3.IntegrityError):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11 on
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    return any(words in str(exc) for words in ("malformed", "not a database"))


def damaged(directory: str, reason: str) -> DamagedIndexError:
    """The one error of a damaged or foreign catalog (exit 1)."""
    return DamagedIndexError(
        f"{directory}: the catalog is damaged or not a simdedup index's ({reason}); "
        f"rebuild the index from its fingerprint files"
    )


def storage_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the file system failing (a full disk, a file-size limit, a read-only
    mount, an I/O error), not a bug: OSError (a closed pipe aside) and SQLite's I/O errors."""
    if isinstance(exc, OSError):
        return not isinstance(exc, BrokenPipeError)
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


def failure_reason(exc: BaseException) -> str:
    """What the file system said; SQLite says "disk I/O error" of a full disk and of a
    file-size limit alike, so a limit in force is named."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    reason = str(exc)
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if "I/O" in reason and limit != resource.RLIM_INFINITY:
        reason += f" (files are limited to {limit} bytes: ulimit -f)"
    return reason


@contextmanager
def writing(directory: str) -> Iterator[None]:
    """Every write of an index runs inside: a failure of the file system becomes one line
    naming the index (exit 1); what the writer committed before stays as it was."""
    try:
        yield
    except Exception as exc:
        if catalog_damage(exc):
            raise damaged(directory, str(exc)) from None
        if not storage_failure(exc):
            raise
        raise OutputError(failure_reason(exc), directory) from None


@contextmanager
def reading(directory: str) -> Iterator[None]:
    """Every read of an index runs inside: a failure of the file system becomes one line."""
    try:
        yield
    except Exception as exc:
        if catalog_damage(exc):
            raise damaged(directory, str(exc)) from None
        if not storage_failure(exc):
            raise
        raise IndexUseError(f"cannot read {directory}: {failure_reason(exc)}") from None


@contextmanager
def creating(directory: str) -> Iterator[None]:
    """A new index in ``directory`` (new, or empty): what the block made there is removed
    again when it fails, so that the same ``create`` can be run again. The block runs under a
    marker file, locked while it runs and removed when it is done: a process killed in the
    block (where no clean-up runs) leaves the marker, so readers refuse the unfinished index
    and the next ``create`` of the directory replaces it.

    Raises:
        IndexUseError: the directory holds files (other than an unfinished creation's), or
            another process is creating an index there.
    """
    made = not os.path.lexists(directory)
    not_empty = f"{directory} exists and is not empty; an index is created in a new directory"
    busy = f"another process is creating an index in {directory}"
    with writing(directory):
        os.makedirs(directory, exist_ok=True)
        marker = os.path.join(directory, CREATING)
        try:
            fd = own_file(marker, os.O_RDONLY)  # an unfinished creation's: killed, or running
            unfinished = True
        except FileNotFoundError:
            if os.listdir(directory):
                raise IndexUseError(not_empty) from None
            try:
                fd = os.open(marker, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:  # another create of this directory, a moment before
                raise IndexUseError(busy) from None
            unfinished = False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # A creation that finished between the open and the lock removed its marker: the
        # directory holds a whole index, not one to replace.
        if unfinished and os.fstat(fd).st_ino != _inode(marker):
            raise IndexUseError(not_empty)
    except BlockingIOError:
        os.close(fd)  # what the other process is making stays as it is
        raise IndexUseError(busy) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        with writing(directory):
            if unfinished:  # killed creations leave partial files; the marker stays
                _empty(directory, keep=CREATING)
            _CREATING.add(os.path.realpath(directory))
            yield
            os.unlink(marker)  # the index is whole: readers may open it
            sync_directory(directory)
    except BaseException:
        if made:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            _empty(directory)
        raise
    finally:
        _CREATING.discard(os.path.realpath(directory))
        os.close(fd)


def own_file(path: str, flags: int) -> int:
    """``path`` opened with ``flags``, when it is a regular file of the index's own: a link
    planted in the index's directory (to an input, say) is refused, never written through.

    Raises:
        IndexUseError: ``path`` is a symbolic link or not a regular file.
        FileNotFoundError: there is no ``path`` (and ``flags`` do not create it).
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IndexUseError(f"{path} is a symbolic link; an index's files are its own") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IndexUseError(f"{path} is not a regular file")
    return fd


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


#: the directories this process is creating an index in (it opens them while the marker is there)
_CREATING: set[str] = set()


#: the names an index's own files have: the catalog and SQLite's files beside it, the writer's
#: lock, the creation marker, and in segments/ the segments and their temporary files. Nothing
#: else in an index directory is removed, whatever a user put there.
_OWN_FILE = re.compile(r"(catalog\.sqlite(-wal|-shm|-journal)?|writer\.lock|creating\.unfinished)\Z")
OWN_SEGMENT = re.compile(r"\.?seg-\d{6,}\.sdseg(\.tmp)?\Z")


def _empty(directory: str, keep: str | None = None) -> None:
    """Remove the index's own files from ``directory`` (but ``keep``), and segments/ when that
    leaves it empty."""
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name == keep or os.path.islink(path):
            continue
        if name == SEGMENTS and os.path.isdir(path):
            for segment in os.listdir(path):
                if OWN_SEGMENT.match(segment):
                    with suppress(OSError):
                        os.unlink(os.path.join(path, segment))
            with suppress(OSError):
                os.rmdir(path)  # only when empty
        elif _OWN_FILE.match(name):
            with suppress(OSError):
                os.unlink(path)


def sync_directory(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_catalog(directory: str, settings: dict[str, Any]) -> None:
    """Make the empty ``directory`` an index with ``settings``, in one transaction (inside
    :func:`creating`)."""
    os.makedirs(os.path.join(directory, SEGMENTS))
    connection = _connect(os.path.join(directory, CATALOG))
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        connection.executemany(
            "INSERT INTO settings VALUES (?, ?)",
            [
                (name, json.dumps(value))
                for name, value in {
                    "format": FORMAT,
                    **settings,
                    "next_seq": 0,
                    "next_unit": 0,
                    "next_segment": 1,
                }.items()
            ],
        )
        connection.execute("COMMIT")
    finally:
        connection.close()


class Catalog:
    """An open catalog. Readers keep one read transaction (a consistent snapshot) while they
    work; the writer holds :class:`WriterLock` and commits through :meth:`transaction`."""

    def __init__(self, directory: str):
        self.directory = directory
        path = os.path.join(directory, CATALOG)
        if os.path.lexists(os.path.join(directory, CREATING)) and os.path.realpath(directory) not in _CREATING:
            raise IndexUseError(
                f"{directory}: its creation has not finished (or was stopped); run the same index create again"
            )
        if os.path.islink(path):  # SQLite would write through it
            raise IndexUseError(f"{path} is a symbolic link; an index's files are its own")
        if not os.path.isfile(path):
            raise IndexUseError(f"{directory} is not a simdedup index (no {CATALOG})")
        #: why the catalog could not be opened for writing (None: it was)
        self.unwritable: str | None = None
        self._copy: str | None = None
        with reading(directory):  # a file of random bytes, say, is one line
            self.connection = self._open(path)
            try:
                self._check_schema()
                rows = dict(self.connection.execute("SELECT name, value FROM settings"))
            except BaseException:
                self.close()
                raise
        if "format" not in rows:
            self.close()
            raise IndexUseError(
                f"{directory}: the catalog has no settings (its creation did not finish); "
                f"remove it and create the index again"
            )
        try:
            found = json.loads(rows["format"])
        except ValueError:
            found = None
        if type(found) is not int or found < 1:
            self.close()
            raise damaged(directory, f"format {rows['format']!r}")
        if found > FORMAT:
            self.close()
            raise IndexUseError(
                f"{directory}: index format {found} is newer than this simdedup reads (format {FORMAT}); upgrade simdedup"
            )

    def _check_schema(self) -> None:
        """The catalog has the tables and columns of an index's (a foreign database is damage)."""
        found = _table_columns(self.connection)
        for table, columns in _COLUMNS.items():
            if table not in found:
                raise damaged(self.directory, f"no table {table}")
            if found[table] != columns:
                raise damaged(self.directory, f"table {table} has columns {', '.join(found[table])}")

    @property
    def settings(self) -> dict[str, Any]:
        """The settings, each a JSON value (checked by :func:`simdedup.store.api.checked_settings`)."""
        rows = self.connection.execute("SELECT name, value FROM settings").fetchall()
        try:
            return {name: json.loads(value) for name, value in rows}
        except (TypeError, ValueError):
            bad = next(name for name, value in rows if not _is_json(value))
            raise damaged(self.directory, f"setting {bad} is not JSON") from None

    def _open(self, path: str) -> sqlite3.Connection:
        """The catalog open for writing; where it cannot be (a read-only mount, a full disk, a
        file-size limit: SQLite makes its ``-shm`` file on opening), open for reading only: as
        is when its ``-shm`` file is there, as an immutable file when no ``-wal`` file is (no
        writer can be at work), else a private copy of both, which SQLite can replay."""
        try:
            return _connect(path)
        except sqlite3.OperationalError as exc:
            self.unwritable = failure_reason(exc)
        with reading(self.directory):
            with suppress(sqlite3.OperationalError):
                return _connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
            wal = path + "-wal"
            if not os.path.exists(wal) or os.path.getsize(wal) == 0:
                return _connect(f"file:{quote(os.path.abspath(path))}?immutable=1", uri=True)
            self._copy = tempfile.mkdtemp(prefix=".simdedup-catalog-")
            for name in (path, wal):
                shutil.copyfile(name, os.path.join(self._copy, os.path.basename(name)))
            return _connect(os.path.join(self._copy, CATALOG))

    def close(self) -> None:
        self.connection.close()
        if self._copy is not None:
            shutil.rmtree(self._copy, ignore_errors=True)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: what is read inside it is one committed state."""
        with reading(self.directory):
            self.connection.execute("BEGIN")
            try:
                yield
            finally:
                if self.connection.in_transaction:
                    self.connection.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed when the block ends without an error (inside
        :func:`writing`)."""
        if self.unwritable is not None:
            raise OutputError(self.unwritable, self.directory)
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield self.connection
        except BaseException:
            if self.connection.in_transaction:  # SQLite rolls back itself after some I/O errors
                with suppress(sqlite3.Error):
                    self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def segments(self) -> list[tuple[int, str, int, int, str]]:
        """The segments' rows, checked: a file name of a segment's own (never a path: a writer
        removes the files of the segments it merges), counts that are counts."""
        rows = self.connection.execute("SELECT segment, file, rows, bytes, checksum FROM segments ORDER BY segment")
        found = list(rows)
        for segment, file, rows_held, size, checksum in found:
            sound = isinstance(file, str) and SEGMENT_NAME.fullmatch(file) is not None
            sound = (
                sound
                and all(type(x) is int and x >= 0 for x in (segment, rows_held, size))
                and isinstance(checksum, str)
            )
            if not sound:
                raise damaged(self.directory, f"segment row {segment!r} names {file!r}")
        return found

    def removed(self) -> np.ndarray:
        return np.array(
            [seq for (seq,) in self.connection.execute("SELECT seq FROM removed ORDER BY seq")], dtype=np.int64
        )

    def present(self, ids: list[str]) -> list[tuple[int, str]]:
        """``(seq, id)`` of the documents among ``ids`` already in the index (looked up in id
        order: the index's pages are then read in order). Ids are bound as parameters, never
        passed through SQLite's JSON functions, which cut a string at a NUL."""
        if self.connection.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is None:
            return []
        wanted, found = sorted(ids), []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            found += self.connection.execute(
                f"SELECT seq, id FROM documents WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
        return sorted(found, key=lambda row: row[1])

    def ids_of(self, seqs: np.ndarray) -> list[str]:
        """The ids of the documents ``seqs`` (all present), in that order."""
        wanted = np.asarray(seqs, dtype=np.int64)
        found = dict(
            self.connection.execute(
                "SELECT d.seq, d.id FROM json_each(?) AS j JOIN documents d ON d.seq = j.value",
                (json.dumps(np.unique(wanted).tolist()),),
            ).fetchall()
        )
        try:
            return [found[s] for s in wanted.tolist()]
        except KeyError as missing:  # a row of a segment whose document the catalog lost
            raise damaged(self.directory, f"no document {missing}") from None

    def check(self) -> None:
        """SQLite's own check of every page and index of the catalog.

        Raises:
            DamagedIndexError: it finds a problem (its first).
        """
        problems = [row[0] for row in self.connection.execute("PRAGMA integrity_check(1)")]
        if problems != ["ok"]:
            raise damaged(self.directory, str(problems[0]))

    def insert_documents(self, first_seq: int, ids: Iterable[str], units: Iterable[int], add_number: int) -> None:
        """Add documents numbered from ``first_seq`` on (inside a transaction; ids bound as
        parameters, as in :meth:`present`), taken from ``ids`` and ``units`` as they go in."""
        self.connection.executemany(
            "INSERT INTO documents VALUES (?, ?, ?, ?)", zip(count(first_seq), ids, units, repeat(add_number))
        )

    def all_ids(self) -> tuple[np.ndarray, list[str]]:
        """``(seqs, ids)`` of every document, by seq."""
        seqs, ids = [], []
        cursor = self.connection.execute("SELECT seq, id FROM documents ORDER BY seq")
        while rows := cursor.fetchmany(1 << 16):
            s, i = zip(*rows)
            seqs += s
            ids += i
        return np.array(seqs, dtype=np.int64), ids

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        rows = self.connection.execute("SELECT a, b FROM pairs").fetchall()
        array = np.array(rows, dtype=np.int64).reshape(-1, 2)
        return array[:, 0], array[:, 1]

    def component(self, units: list[int]) -> tuple[set[int], list[tuple[int, int]]]:
        """The units connected to ``units`` through the pair log, and the pairs among them."""
        seen, frontier, pairs = set(units), list(units), set()
        while frontier:
            found = []
            for start in range(0, len(frontier), 500):
                chunk = frontier[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found += self.connection.execute(
                    f"SELECT a, b FROM pairs WHERE a IN ({marks}) UNION SELECT a, b FROM pairs WHERE b IN ({marks})",
                    chunk + chunk,
                ).fetchall()
            frontier = []
            for a, b in found:
                pairs.add((a, b))
                for unit in (a, b):
                    if unit not in seen:
                        seen.add(unit)
                        frontier.append(unit)
        return seen, sorted(pairs)


def _is_json(value: Any) -> bool:
    try:
        json.loads(value)
    except (TypeError, ValueError):
        return False
    return True


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class WriterLock:
    """The one writer of an index: ``flock`` on ``IDX/writer.lock`` (released by the kernel when
    the process ends, however it ends), which names its holder for the next writer."""

    def __init__(self, directory: str, command: str, wait: bool = True, on_wait: Any = None):
        self.path = os.path.join(directory, LOCK)
        self.command, self.wait, self.on_wait = command, wait, on_wait
        self.fd = -1

    def __enter__(self) -> "WriterLock":
        self.fd = own_file(self.path, os.O_RDWR | os.O_CREAT)
        try:
            self._take()
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, json.dumps({"pid": os.getpid(), "command": self.command, "since": now()}).encode(), 0)
        except BaseException:
            os.close(self.fd)  # releases the lock: a later writer of this process must not wait for ever
            raise
        return self

    def _take(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.holder()
            if not self.wait:
                raise IndexUseError(f"{os.path.dirname(self.path)} is being written by {holder}") from None
            if self.on_wait is not None:
                self.on_wait(holder)
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def holder(self) -> str:
        try:
            with open(self.path, "rb") as handle:
                info = json.loads(handle.read() or b"{}")
            return f"pid {info['pid']} ({info['command']}, since {info['since']})"
        except (OSError, ValueError, KeyError):
            return "another process"

    def __exit__(self, *exc: Any) -> None:
        os.ftruncate(self.fd, 0)
        os.close(self.fd)  # releases the lock
