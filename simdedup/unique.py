"""Writing a corpus without its duplicates; the inputs are never modified.

Every cluster keeps its representative (or, when that file is gone since it was read, the member
``select`` would keep: :func:`kept_ids`); every document outside a cluster is kept. Documents
that were files are copied into a directory (:class:`KeptFiles`), each under a name made from
its id (:func:`target_name`); documents that were lines of JSON-lines files are written, as the
very lines they were, to one JSON-lines file (:class:`KeptLines`). Lines that were not documents
(malformed ones) are not written.

Both are checked before the run (the place can be written) and again before the first byte is
written (no name taken twice, no input replaced, no link followed), and every file is written
to a temporary file and renamed into place, so it is whole or absent.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import tempfile
from contextlib import suppress
from typing import BinaryIO, Iterable, Iterator

from .errors import OutputError, SimdedupError, UsageError
from .owned import refuse_inside
from .read.document import file_blocks, is_compressed
from .read.remote import is_url, local_path
from .read.source import Source
from .read.tables import documents, is_jsonl, iter_jsonl_lines
from .select import Selection, selection
from .write import TEMP_PREFIX, Identity, LineWriter, OutputFile, check_writable, current_umask, output_call, write_all


def kept_ids(clusters: Iterable, ids: list[str], files: bool) -> Selection:
    """Which member of each cluster is kept: the representative, chosen as ``select`` chooses
    (:func:`simdedup.select.selection`), against the disk when the documents are ``files``
    (when it is gone since it was read, the member nearest it that is still a readable file)."""
    return selection(
        (
            ([{"id": ids[m], "distance": d} for m, d in zip(c.members, c.distances)], ids[c.representative])
            for c in clusters
        ),
        "representative",
        files=files,
    )


def target_name(doc_id: str) -> str:
    """Where the document file ``doc_id`` (its path as given) goes inside ``--unique-out DIR``.

    The path's components, with ``.`` and empty ones left out (``a/./b`` and ``a//b`` name the
    file ``a/b`` names), ``%`` written ``%25``, ``..`` written ``%2E%2E`` and the root of an
    absolute path a first component ``%2F``. So the name is always inside DIR, and two ids get
    one name only when they spell one path with other separators.
    """
    parts = ["%2F"] if doc_id.startswith("/") else []
    for part in doc_id.split("/"):
        if part not in ("", "."):
            parts.append("%2E%2E" if part == ".." else part.replace("%", "%25"))
    return "/".join(parts)


def target_names(ids: Iterable[str]) -> dict[str, str]:
    """The name of each id inside ``--unique-out DIR`` (name: id), in the order given.

    Raises:
        SimdedupError: two ids get one name (one file named twice), or a file's name is
            another's directory.
    """
    names: dict[str, str] = {}
    for doc_id in ids:
        name = target_name(doc_id)
        if name in names:
            raise SimdedupError(
                f"{names[name]} and {doc_id} would both be written to {name} in --unique-out; name each file once"
            )
        names[name] = doc_id
    for name, doc_id in names.items():
        parent = name.rpartition("/")[0]
        while parent:
            if parent in names:
                raise SimdedupError(
                    f"{names[parent]} would be written where {doc_id} needs a directory, {parent} in --unique-out"
                )
            parent = parent.rpartition("/")[0]
    return names


def unique_output(path: str, force: bool) -> "KeptFiles | KeptLines":
    """What ``--unique-out PATH`` writes: JSON lines when the name says so, else files (into a
    local directory: the copies of a store's objects go to a store as the store's own tools
    copy them).

    Raises:
        UsageError: a directory named by an object store's URL.
    """
    if is_jsonl(path):
        return KeptLines(path, force)
    path = local_path(path)
    if is_url(path):
        raise UsageError(f"--unique-out {path}: name a local directory, or FILE.jsonl (which may be a URL)")
    return KeptFiles(path, force)


class KeptFiles:
    """``--unique-out DIR``: the kept document files, copied under :func:`target_name`.

    DIR may exist (``force`` to write into it when it is not empty); its parent must.

    Raises:
        UsageError: DIR is a file, or is not empty and ``force`` is not given.
        OutputError: no file can be created in DIR (or its parent, when DIR is new).
    """

    def __init__(self, directory: str, force: bool):
        if not directory:
            raise UsageError("--unique-out needs a name")
        self.directory = self.name = directory
        refuse_inside(directory, f"--unique-out {directory}")
        try:
            st: os.stat_result | None = os.stat(directory)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc), directory) from None
        if st is None:
            check_writable(os.path.dirname(os.path.abspath(directory)), directory)
            return
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"--unique-out {directory} is not a directory (name a .jsonl file for JSON lines)")
        if not force and output_call(os.listdir, directory, name=directory):
            raise UsageError(f"{directory} exists; use --force to write into it")
        check_writable(directory, directory)

    def write(self, ids: list[str], drop: set[str], tables: list[tuple[str, str]], read: Iterable[str]) -> int:
        """Copy every kept file (of ``ids``, those not in ``drop``); returns how many.

        ``read`` are the files the run read, and the other outputs: none of them is replaced.
        Nothing is written unless every copy can go where it should.

        Raises:
            UsageError: the documents are lines of JSON-lines (or CSV, Parquet, WARC) files.
            SimdedupError: a name taken twice; a copy would replace an input, or go through a
                link; a kept file cannot be read again (a pipe).
            OutputError: writing failed (what was written before is whole).
        """
        if tables:
            raise UsageError("documents of JSON-lines input need --unique-out FILE.jsonl")
        names = target_names(i for i in ids if i not in drop)
        inputs = _Inputs(read)
        for doc_id in names.values():
            if is_url(doc_id):
                continue  # an object of a store, read again as it was read
            try:
                regular = stat.S_ISREG(os.stat(doc_id).st_mode)
            except OSError as exc:
                raise SimdedupError(f"cannot read {doc_id} again: {exc.strerror or exc}") from None
            if not regular:
                raise SimdedupError(
                    f"{doc_id} is not a regular file: it was read once and cannot be copied into --unique-out"
                )
        # A new directory is made whole beside its name and renamed into place, so that a run
        # stopped halfway leaves none (into an existing one, with --force, each file is whole).
        made = None
        if not os.path.lexists(self.directory):
            parent = os.path.dirname(os.path.abspath(self.directory))
            made = output_call(
                tempfile.mkdtemp,
                prefix=TEMP_PREFIX,
                dir=parent,
                name=self.directory,
            )
            os.chmod(made, 0o777 & ~current_umask())  # as mkdir would make it
        target = made or self.directory
        root = output_call(os.open, target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, name=self.directory)
        order = sorted(names, key=lambda name: name.split("/"))  # each directory entered once
        done = False
        try:
            longest = os.fpathconf(root, "PC_NAME_MAX")
            with _Directories(root, self.directory) as directories:
                for name in order:
                    *parents, base = name.split("/")
                    if max(len(os.fsencode(part)) for part in (*parents, base)) > longest:
                        raise OutputError(
                            f"a name in it is longer than {longest} bytes", os.path.join(self.directory, name)
                        )
                    here = directories.enter(parents, create=False)
                    if here is not None:
                        inputs.refuse_replacing(here, base, os.path.join(self.directory, name))
            with _Directories(root, self.directory) as directories:
                for name in order:
                    *parents, base = name.split("/")
                    _copy_file(
                        names[name], directories.enter(parents, create=True), base, os.path.join(self.directory, name)
                    )
            if made is not None:
                output_call(os.rename, made, self.directory, name=self.directory)
            done = True
        finally:
            os.close(root)
            if made is not None and not done:
                shutil.rmtree(made, ignore_errors=True)
        return len(names)


class _Inputs:
    """Files not to replace, by identity and by directory entry (the directory's identity and
    the name in it: a link is an entry of its own)."""

    def __init__(self, paths: Iterable[str]):
        self.files: dict[Identity, str] = {}
        self.entries: dict[tuple[int, int, str], str] = {}
        directories: dict[str, os.stat_result | None] = {}
        for path in paths:
            st = _stat(path)
            if st is not None:
                self.files.setdefault((st.st_dev, st.st_ino), path)
            parent, base = os.path.split(path)
            if parent not in directories:
                directories[parent] = _stat(parent or ".")
            where = directories[parent]
            if base and where is not None:
                self.entries.setdefault((where.st_dev, where.st_ino, base), path)

    def refuse_replacing(self, directory: int, name: str, shown: str) -> None:
        """Raises SimdedupError when writing ``name`` in the open ``directory`` would replace
        one of these files (or a directory)."""
        where = os.fstat(directory)
        found = self.entries.get((where.st_dev, where.st_ino, name))
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc), shown) from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise SimdedupError(f"{shown} is a directory; --unique-out cannot write a file there")
        if found is None and st is not None and stat.S_ISREG(st.st_mode):
            found = self.files.get((st.st_dev, st.st_ino))
        if found is not None:
            raise SimdedupError(
                f"{shown} would replace {found}, which this run reads or writes; --unique-out "
                f"never replaces an input or another output"
            )


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


class _Directories:
    """Descriptors of the directories down one path inside the output directory, each opened
    from its parent without following a link; moving to another path closes what it leaves."""

    def __init__(self, root: int, shown: str):
        self.root = root
        self.shown = shown
        self.parts: list[str] = []
        self.fds: list[int] = []

    def __enter__(self) -> "_Directories":
        return self

    def __exit__(self, *exc: object) -> None:
        self._leave(0)

    def enter(self, parts: list[str], create: bool) -> int | None:
        """The descriptor of the directory ``parts`` (created when missing with ``create``;
        None when missing without it).

        Raises:
            SimdedupError: a component is a link or not a directory.
        """
        same = 0
        while same < min(len(parts), len(self.parts)) and parts[same] == self.parts[same]:
            same += 1
        self._leave(same)
        for part in parts[same:]:
            parent = self.fds[-1] if self.fds else self.root
            shown = os.path.join(self.shown, *self.parts, part)
            if create:
                try:
                    os.mkdir(part, dir_fd=parent)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise OutputError(exc.strerror or str(exc), shown) from None
            try:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            except FileNotFoundError:
                if create:
                    raise
                return None
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise OutputError(exc.strerror or str(exc), shown) from None
                link = stat.S_ISLNK(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode)
                raise SimdedupError(
                    f"{shown} is {'a symbolic link' if link else 'not a directory'}; "
                    f"--unique-out never writes through links"
                ) from None
            self.parts.append(part)
            self.fds.append(fd)
        return self.fds[-1] if self.fds else self.root

    def _leave(self, depth: int) -> None:
        while len(self.fds) > depth:
            os.close(self.fds.pop())
            self.parts.pop()


def _copy_file(source: str, directory: int, name: str, shown: str) -> None:
    """Copy ``source`` to ``name`` in the open ``directory``: into a new temporary file there,
    renamed over ``name`` once complete (a link there is replaced, never followed)."""
    blocks = _blocks_again(source)
    first = next(blocks, b"")  # opened before anything is created
    tmp = TEMP_PREFIX + secrets.token_hex(8)
    fd = output_call(
        os.open,
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666,
        dir_fd=directory,
        name=shown,
    )
    done = False
    try:
        write_all(fd, first)
        for block in blocks:
            write_all(fd, block)
        closing, fd = fd, -1
        output_call(os.close, closing, name=shown)
        output_call(os.rename, tmp, name, src_dir_fd=directory, dst_dir_fd=directory, name=shown)
        done = True
    except OutputError as exc:
        raise OutputError(exc.reason, exc.name or shown) from None
    finally:
        blocks.close()
        if fd >= 0:
            os.close(fd)
        if not done:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=directory)


def _blocks_again(source: str) -> Iterator[bytes]:
    """The bytes of a kept file, read again to be copied."""
    try:
        yield from file_blocks(source)
    except OSError as exc:
        raise SimdedupError(f"cannot read {source} again: {exc.strerror or exc}") from None


class KeptLines:
    """``--unique-out FILE.jsonl``: the kept lines of the JSON-lines inputs, as they were.

    The lines are read again after the run; the lines of a file that cannot be read twice (a
    pipe, a FIFO, a device) are kept in a temporary file as the run reads them (:meth:`tee`).

    Raises:
        UsageError, OutputError: as :class:`simdedup.write.OutputFile`; a compressed name.
    """

    def __init__(self, path: str, force: bool):
        if is_compressed(path):
            raise UsageError(f"--unique-out writes plain JSON lines; name it without the {os.path.splitext(path)[1]}")
        self.output = OutputFile(path, force, option="--unique-out")
        self.name = self.output.name
        self._copies: dict[str, BinaryIO | None] = {}

    def tee(self, sources: Iterable[Source]) -> Iterator[Source]:
        """``sources`` as they come; the JSON lines among them that cannot be read again are
        copied aside."""
        for source in sources:
            if source.line is not None:
                path, _, number = source.path.rpartition(":")
                copy = self._copy_of(path)
                if copy is not None:
                    raw = source.line[0]
                    try:
                        copy.write(b"%s %s%s" % (number.encode(), raw, b"" if raw.endswith(b"\n") else b"\n"))
                    except OSError as exc:
                        raise OutputError(exc.strerror or str(exc), f"a copy of {path}") from None
            yield source

    def _copy_of(self, path: str) -> BinaryIO | None:
        if path not in self._copies:
            st = _stat(path)
            again = is_url(path) or (st is not None and stat.S_ISREG(st.st_mode))
            self._copies[path] = (
                None
                if again
                else output_call(tempfile.TemporaryFile, dir=self.output.directory, name=f"a copy of {path}")
            )
        return self._copies[path]

    def write(
        self,
        ids: list[str],
        drop: set[str],
        tables: list[tuple[str, str]],
        text_field: str,
        id_field: str | None,
        max_line: int | None = None,
    ) -> int:
        """Write the lines of the kept documents (of ``ids``, those not in ``drop``); returns how
        many. Every kept document must be a line of a JSON-lines file of ``tables``, or nothing is written.

        Raises:
            UsageError: the input has CSV, Parquet or WARC files.
            SimdedupError: a kept document is not a JSON line (or its file changed).
            OutputError: writing failed.
        """
        if any(kind != "jsonl" for kind, _ in tables):
            raise UsageError("--unique-out writes files and JSON lines; CSV, Parquet and WARC input are not supported")
        if not tables:
            raise UsageError("--unique-out FILE.jsonl needs JSON-lines input; give a directory for files")
        kept = {doc_id for doc_id in ids if doc_id not in drop}
        written: set[str] = set()
        seen: set[str] = set()
        try:
            with self.output.open() as fd:
                writer = LineWriter(fd)
                for _, path in tables:
                    for source, raw in self._lines(path, text_field, id_field, max_line):
                        if source.reason is not None:
                            continue
                        if source.path in seen:  # which of its lines the clusters mean cannot be told
                            raise SimdedupError(
                                f"{source.path}: the id of more than one line; --unique-out needs "
                                f"one line per id: {self.output.name} not written"
                            )
                        seen.add(source.path)
                        if source.path in kept:
                            written.add(source.path)
                            writer.write_lines(raw if raw.endswith(b"\n") else raw + b"\n")
                writer.flush()
                missing = [doc_id for doc_id in ids if doc_id in kept and doc_id not in written]
                if missing:
                    raise SimdedupError(
                        f"{missing[0]}: kept, but not a line of the JSON-lines input (or no longer "
                        f"the same): {self.output.name} not written ({len(missing)} such documents)"
                    )
        finally:
            for copy in self._copies.values():
                if copy is not None:
                    copy.close()
        return len(written)

    def _lines(
        self, path: str, text_field: str, id_field: str | None, max_line: int | None
    ) -> Iterator[tuple[Source, bytes]]:
        """The lines of ``path`` (lines over ``max_line`` bytes were skipped when fingerprinting,
        and are here)."""
        copy = self._copies.get(path)
        if copy is None:
            yield from iter_jsonl_lines(path, text_field, id_field, max_line)
            return
        copy.seek(0)
        for entry in copy:
            number, _, raw = entry.partition(b" ")
            yield documents(Source(f"{path}:{number.decode()}", line=(raw, text_field, id_field)))[0], raw
