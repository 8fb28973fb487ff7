"""Finding documents on disk: paths as given, directories walked in sorted order.

A symlink to a directory is followed when its target lies outside the walked tree (once, however
many links lead there); a target inside the tree is walked under its own path, so loops end and
nothing is read twice through links. FIFOs, sockets and device files met during a walk are
reported and skipped, because opening them can block forever. A FIFO named explicitly
(``<(zcat x.gz)``) is read. Each file is read once, whatever the names that lead to it
(:class:`_FileIdentities`). A URL is listed by :mod:`.remote`, as a directory is walked.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO, Iterable, Iterator

from ..errors import UsageError
from .remote import is_url, iter_url_sources
from .source import Source


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "not a regular file"


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is no shell glob (None: it is one): empty, or a ``[`` that opens a set of
    characters never closed, which ``fnmatch`` would take as a literal ``[`` and so match
    almost nothing, without a word. A set is read as ``fnmatch`` reads it: ``[!...]`` negates,
    and a ``]`` first in the set is one of its characters."""
    if not pattern:
        return "an empty pattern matches nothing"
    i, n = 0, len(pattern)
    while i < n:
        i += 1
        if pattern[i - 1] != "[":
            continue
        j = i + (i < n and pattern[i] == "!")
        j += j < n and pattern[j] == "]"
        closing = pattern.find("]", j)
        if closing < 0:
            return f"the '[' at character {i} opens a set of characters that is never closed (a literal '[' is [[])"
        i = closing + 1
    return None


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

    def __post_init__(self) -> None:
        for pattern in (*self.globs, *self.excludes):
            problem = glob_problem(pattern)
            if problem is not None:
                raise UsageError(f"pattern {pattern!r}: {problem}")

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


class _FileIdentities:
    """The files a run has taken, by device and inode, so that each is read once whatever the
    names that lead to it (hard links, symbolic links, a file named twice), as jdupes and rmlint
    do. A second name would be clustered with the first as an exact copy, and a drop list could
    then name the only real copy while keeping a link to it.

    A real name wins over a symbolic link: links to regular files are held back until every
    path has been walked, and one is read (under its own name) only when its target was not.
    Memory: one integer per file taken.
    """

    def __init__(self, exclude: Iterable[tuple[int, int]] = ()):
        self.excluded = {_identity(dev, ino) for dev, ino in exclude}
        self.taken: set[int] = set()
        self.links: list[tuple[str, int, int]] = []  # (path, identity, size)

    def take(self, path: str, identity: int, size: int | None = None) -> Source | None:
        """The Source of a regular file met under a real (not symbolic-link) name; None for an
        excluded file."""
        if identity in self.excluded:
            return None
        if identity in self.taken:
            return Source(
                path,
                "the same file (device and inode) as one read under another name: a hard link, or named twice; read once",
                same_file=True,
            )
        self.taken.add(identity)
        return Source.file(path, size)

    def take_or_hold(self, path: str, is_link: bool, st: os.stat_result) -> Source | None:
        """A regular file's Source under a real name; a symbolic link is held back (None)."""
        identity = _identity(st.st_dev, st.st_ino)
        if not is_link:
            return self.take(path, identity, st.st_size)
        self.links.append((path, identity, st.st_size))
        return None

    def held_links(self) -> Iterator[Source]:
        for path, identity, size in self.links:
            if identity in self.excluded:
                continue
            if identity in self.taken:
                target = os.path.realpath(path)
                yield Source(path, f"a symbolic link to {target}, which is read under its own name", same_file=True)
            else:
                self.taken.add(identity)
                yield Source.file(path, size)
        self.links.clear()


def _identity(dev: int, ino: int) -> int:
    return dev << 64 | ino


def _walk(
    top: str, root: str, dev: int, visited: set[tuple[int, int]], walk_filter: WalkFilter, files: _FileIdentities
) -> Iterator[Source]:
    # Depth first with a stack of listings, not recursion: a tree of any depth is walked, in the
    # same order, holding one listing (one directory's entries) per level.
    stack: list[tuple[Iterator[os.DirEntry], int]] = []
    listing: str | None = top  # a directory to list next
    # Without filters a regular file by its directory entry needs no stat and no test (its size
    # is read where it is read; its inode number comes with the entry): the common case, first.
    unfiltered = not (walk_filter.min_bytes or walk_filter.globs or walk_filter.excludes)
    take = files.take
    while listing is not None or stack:
        if listing is not None:
            try:
                stack.append((iter(sorted(os.scandir(listing), key=lambda e: e.name)), dev))
            except OSError as exc:
                yield Source(listing, f"cannot list directory: {exc.strerror or exc}")
            listing = None
            continue
        entries, dev = stack[-1]
        for entry in entries:
            path = entry.path
            if unfiltered and entry.is_file(follow_symlinks=False):
                source = take(path, dev << 64 | entry.inode())  # _identity(dev, inode)
                if source is not None:
                    yield source
                continue
            if not walk_filter.min_bytes and entry.is_file(follow_symlinks=False):
                if walk_filter.takes_file(path, root, 0):
                    source = take(path, _identity(dev, entry.inode()))
                    if source is not None:
                        yield source
                continue
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError as exc:
                yield Source(path, unreachable(exc, entry.is_symlink()))
                continue
            if stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if entry.is_symlink() and _inside(os.path.realpath(path), os.path.realpath(root)):
                    continue  # its target is walked under its own path (or is an ancestor: a loop)
                if key in visited or not walk_filter.takes_dir(path, root):
                    continue  # reached before through another link, or excluded
                visited.add(key)
                listing, dev = path, st.st_dev
                break  # listed next: depth first (this listing goes on after it)
            elif stat.S_ISREG(st.st_mode):
                if walk_filter.takes_file(path, root, st.st_size):
                    source = files.take_or_hold(path, entry.is_symlink(), st)
                    if source is not None:
                        yield source
            else:
                yield Source(path, f"{_kind(st.st_mode)}; skipped during the walk")
        else:
            stack.pop()


def unreachable(exc: OSError, link: bool) -> str:
    """Why a name found (``link``: a symbolic link) leads to nothing that can be read, from the
    error of following it: every walk and every named path says it the same way."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop" if link else "symbolic link loop in its path"
    if isinstance(exc, FileNotFoundError):
        return "broken symbolic link (its target does not exist)" if link else "no such file or directory"
    return f"cannot stat: {exc.strerror or exc}"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def iter_sources(
    paths: Iterable[str], walk_filter: WalkFilter = WalkFilter(), exclude: Iterable[tuple[int, int]] = ()
) -> Iterator[Source]:
    """Documents named by ``paths``: files as given, directories walked recursively in sorted order.

    ``walk_filter`` chooses the files of walked directories; a file named explicitly is always read.
    Each file is read once (see :class:`_FileIdentities`): a further name for it comes as a Source
    with ``same_file`` set and a reason saying what it is; symbolic links to files come last.
    ``exclude`` holds (st_dev, st_ino) pairs of files never to read, such as the run's own output.
    """
    files = _FileIdentities(exclude)
    for path in paths:
        if is_url(path):
            yield from iter_url_sources(path, walk_filter)
            continue
        link = False
        try:
            st = os.lstat(path)  # one call for a path that is no link (most): it is its stat
            link = stat.S_ISLNK(st.st_mode)
            if link:
                st = os.stat(path)
        except OSError as exc:
            yield Source(path, unreachable(exc, link))
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(path, path, st.st_dev, {(st.st_dev, st.st_ino)}, walk_filter, files)
        elif stat.S_ISREG(st.st_mode):
            source = files.take_or_hold(path, link, st)
            if source is not None:
                yield source
        elif stat.S_ISFIFO(st.st_mode):
            yield Source(path)
        else:
            yield Source(path, _kind(st.st_mode))
    yield from files.held_links()


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
