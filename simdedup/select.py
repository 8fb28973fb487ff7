"""Which member of each cluster to keep, and so which to drop (the ``select`` command).

Policies: ``representative`` (the cluster's medoid, the default), ``first`` (smallest id;
members are sorted by id), ``longest`` / ``shortest`` (by
the member's ``bytes`` in the cluster line, else the file's size), ``newest`` / ``oldest`` (the
file's modification time). Ties go to the smallest id, so the choice is deterministic.

A drop list is read by ``xargs rm``, so it never names the only real copy of a file. Cluster
lines are written at one time and acted on later, so every decision is made against the disk
as it is when :func:`selection` looks (once per id; what changes after that is not seen):

- ids are taken as paths when any of them names something on disk, or in an object store, now;
  otherwise (JSON-lines ``FILE:LINE`` ids, ``--id-field`` values) nothing can be removed
  through them, and they are chosen among by the policy alone. Files and objects are looked at
  alike (:func:`found_on_disk`): a ``file://`` URL is its path, an object is asked of its store
  (an ``http(s)://`` page only beside files or objects, not for crawled data alone);
- as paths, a cluster keeps, by its policy, one of its members that is a readable regular file
  now (``representative``: the representative, else the member nearest it); a cluster with no
  such member drops nothing; a member that is not a readable regular file now (gone, a
  directory, a FIFO, a dangling link) is not listed;
- exactly one member of every cluster is kept, so a drop list never names a whole cluster;
- a member that is a symbolic link never wins over the file it points to, when that file is a
  member too (keeping the link and dropping its target would delete the data);
- a member that is the same file as a kept one (the same device and inode, through a hard or a
  symbolic link, or another spelling of its path), or that some cluster keeps, is never
  dropped: it is held back and reported.
"""

from __future__ import annotations

import functools
import itertools
import os
import stat
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from .errors import RecordError, SimdedupError
from .jsonline import parse_json_line, text_lines
from .read.remote import is_url, local_path
from .write import Identity

POLICIES = ("representative", "first", "longest", "shortest", "newest", "oldest")


@dataclass(frozen=True)
class Found:
    """What an id names on disk, or in its object store, now."""

    there: bool  # the name leads to something (a link, even a dangling one, counts)
    link: bool  # a symbolic link
    #: its status, links followed, when it is a readable regular file or a readable object
    file: os.stat_result | None
    #: why it could not be looked at, when the store did not answer (None: it was looked at)
    unchecked: str | None = None

    @property
    def identity(self) -> Identity | None:
        if self.file is None or (self.file.st_dev, self.file.st_ino) == (0, 0):  # an object: no inode
            return None
        return (self.file.st_dev, self.file.st_ino)


def found_on_disk(doc_id: str) -> Found:
    """What ``doc_id`` names now: a local file (a ``file://`` URL is its path), an object of a
    store (by URL: shown and readable), or nothing, for an id no path can spell."""
    from .errors import UsageError
    from .read.remote import StoreError, object_status

    path = local_path(doc_id)
    if is_url(path):
        try:
            status = object_status(path)
        except (StoreError, UsageError) as exc:  # not looked at: neither kept nor dropped
            return Found(False, False, None, str(exc))
        return Found(status is not None, False, status)
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return Found(False, False, None)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return Found(True, link, None)
    readable = stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK)
    return Found(True, link, st if readable else None)


def found_inside(given: Any) -> Look:
    """:func:`found_on_disk` that asks no store or server about a URL outside the documents
    ``given`` (:class:`simdedup.read.given.GivenDocuments`): such a member is not looked at, so
    neither kept nor dropped (the report's view of a cluster file whose ids are data)."""

    def look(doc_id: str) -> Found:
        if is_url(local_path(doc_id)) and given.refusal(doc_id) is not None:
            return Found(False, False, None, "a URL outside the documents given (--documents)")
        return found_on_disk(doc_id)

    return look


def _web_page(doc_id: str) -> bool:
    """An http(s) id: a page's address (``--id-field url``), looked up only beside files or objects."""
    return doc_id[:7].lower() == "http://" or doc_id[:8].lower() == "https://"


Look = Callable[[str], Found]


def _file(doc_id: str, look: Look) -> os.stat_result:
    st = look(doc_id).file
    if st is None:
        raise SimdedupError(f"cannot look at {doc_id}: not a readable file (the --keep policy needs the file)")
    return st


def _size(member: dict, look: Look) -> int:
    if isinstance(member.get("bytes"), int) and not isinstance(member.get("bytes"), bool):
        return member["bytes"]
    return _file(member["id"], look).st_size


def _distance(member: dict) -> float:
    distance = member.get("distance")
    return distance if isinstance(distance, int) and not isinstance(distance, bool) else float("inf")


_KEYS: dict[str, Callable[[dict, Look], object]] = {
    "first": lambda m, look: 0,
    "longest": lambda m, look: -_size(m, look),
    "shortest": _size,
    "newest": lambda m, look: -_file(m["id"], look).st_mtime_ns,
    "oldest": lambda m, look: _file(m["id"], look).st_mtime_ns,
}


def kept_member(members: list[dict], policy: str, representative: str | None = None, look: Look = found_on_disk) -> str:
    """The id of the member of ``members`` that ``policy`` keeps (before the link rule of
    :func:`selection`); ``representative`` when it is among them, else the member nearest it."""
    if policy == "representative":
        if representative is None:
            raise SimdedupError("the cluster line names no representative; choose another --keep policy")
        if any(m["id"] == representative for m in members):
            return representative
        return min(members, key=lambda m: (_distance(m), m["id"]))["id"]
    if policy not in _KEYS:
        raise ValueError(f"keep policy must be one of {', '.join(POLICIES)}")
    key = _KEYS[policy]
    return min(members, key=lambda m: (key(m, look), m["id"]))["id"]


def read_clusters(lines: Iterable[str], name: str) -> Iterator[tuple[list[dict], str | None]]:
    """The members (dicts with at least ``id``) and the representative of each cluster line.

    Raises:
        RecordError: ``FILE:LINE: reason`` for a line that is not a cluster, or whose
            representative is not one of its members.
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            cluster = parse_json_line(line)
        except ValueError as exc:
            raise RecordError(f"{name}:{number}: {exc}") from None
        try:
            members = cluster["members"]
            members = [m if isinstance(m, dict) else {"id": m} for m in members]
            if not all(isinstance(m.get("id"), str) for m in members) or not members:
                raise TypeError
        except (KeyError, TypeError):
            raise RecordError(f"{name}:{number}: not a cluster line (no members with ids)") from None
        representative = cluster.get("representative")
        if representative is not None and (
            not isinstance(representative, str) or representative not in {m["id"] for m in members}
        ):
            raise RecordError(f"{name}:{number}: the representative {representative!r} is not a member")
        wrong = _wrong_number(cluster, members)
        if wrong is not None:
            raise RecordError(f"{name}:{number}: {wrong}")
        yield members, representative


#: the numbers of a cluster line and what each may be: a count (an integer, 0 or more), or a
#: similarity (a number from 0 to 1); a field absent is fine
_COUNTS = ("bytes", "distance")
_LINE_COUNTS = ("size", "max_distance")


def _wrong_number(cluster: dict, members: list[dict]) -> str | None:
    """What is wrong with a number of the cluster line (``cluster``, its ``members``), or None.
    Every number a command acts on or shows is checked here once: a size of -1 or a
    resemblance of 5 is damage, not data."""
    from .cluster_lines import SCORE_FIELDS

    def count(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    def similarity(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0

    for field_name in _LINE_COUNTS:
        if field_name in cluster and not count(cluster[field_name]):
            return f"{field_name} {cluster[field_name]!r} is not a count"
    if "size" in cluster and cluster["size"] != len(members):
        return f"size {cluster['size']} is not the number of members ({len(members)})"
    scores = (*SCORE_FIELDS, *(f"min_{name}" for name in SCORE_FIELDS))
    for where in (cluster, *members):
        for field_name in _COUNTS:
            if where is not cluster and field_name in where and not count(where[field_name]):
                return f"{field_name} {where[field_name]!r} of {where.get('id')!r} is not a count"
        for field_name in scores:
            if field_name in where and not similarity(where[field_name]):
                return f"{field_name} {where[field_name]!r} is not a similarity from 0 to 1"
    return None


@dataclass
class Selection:
    """What :func:`selection` decided: ids to drop and to keep, in cluster order; the members
    held back from the drop list with the reason; those not listed because the disk changed
    since clustering (``changed``, with the reason); and a member of each cluster that keeps
    none, since none is a readable regular file now (``lost``)."""

    dropped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    held: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


def _real_member(members: list[dict], keep: str, look: Look) -> str:
    """``keep``, or the member it is a symbolic link to: a link never wins over its target."""
    target = look(keep).identity
    if not look(keep).link or target is None:
        return keep
    for member in members:
        found = look(member["id"])
        if member["id"] != keep and not found.link and found.identity == target:
            return member["id"]
    return keep


def selection(
    clusters: Iterable[tuple[list[dict], str | None]],
    policy: str,
    files: bool | None = None,
    look_at: Look = found_on_disk,
) -> Selection:
    """The members to drop and to keep of every ``(members, representative)`` cluster.

    All clusters are read before anything is decided, so that a document kept by one cluster
    line is never dropped by another (cluster files concatenated, or hand-edited). ``files``
    says whether the ids are paths; None: when any of them names something on disk.
    """
    look = functools.cache(look_at)  # each id looked at once: every decision sees one disk
    clusters = list(clusters)
    if files is None:  # web pages' addresses (crawled data) are asked for only beside files or objects
        files = any(look(m["id"]).there for members, _ in clusters for m in members if not _web_page(m["id"]))
    chosen: list[tuple[list[dict], str | None]] = []
    kept_ids: set[str] = set()
    for members, representative in clusters:
        # whatever its kind (a file, a file:// URL, an object), a member is kept only when it is there now
        keepable = [m for m in members if look(m["id"]).file is not None] if files else members
        keep = _real_member(keepable, kept_member(keepable, policy, representative, look), look) if keepable else None
        chosen.append((members, keep))
        if keep is not None:
            kept_ids.add(keep)
    kept_files = {look(doc_id).identity for doc_id in kept_ids} - {None}
    result = Selection()
    kept_listed: set[str] = set()
    decided: set[str] = set()  # ids dropped or held back, and kept ids reported as held
    for members, keep in chosen:
        if keep is None:
            result.lost.append(members[0]["id"])
        for member in members:
            doc_id = member["id"]
            if doc_id in kept_ids:
                if doc_id not in kept_listed:
                    kept_listed.add(doc_id)
                    result.kept.append(doc_id)
                if doc_id != keep and doc_id not in decided:
                    decided.add(doc_id)
                    result.held.append((doc_id, "kept by another cluster"))
            elif doc_id not in decided:
                decided.add(doc_id)
                found = look(doc_id)
                if keep is None:
                    result.changed.append(
                        (doc_id, "no member of its cluster is a readable regular file now, so none is dropped")
                    )
                elif files and found.file is None:
                    why = "not a readable regular file now" if found.there else "no longer there"
                    result.changed.append((doc_id, f"cannot be checked: {found.unchecked}" if found.unchecked else why))
                elif found.identity is not None and found.identity in kept_files:
                    result.held.append((doc_id, "the same file as a kept member (a hard or symbolic link)"))
                else:
                    result.dropped.append(doc_id)
    return result


def select_files(
    files: Iterable[tuple[str, BinaryIO]], policy: str = "representative", look_at: Look = found_on_disk
) -> Selection:
    """The selection (:func:`selection`) over the cluster lines of named binary streams, all
    read before anything is decided; ``look_at`` looks at what an id names (:func:`found_on_disk`).

    Raises:
        RecordError: a line that is not UTF-8 or not a cluster, as ``FILE:LINE``.
    """
    return selection(
        itertools.chain.from_iterable(read_clusters(text_lines(stream, name), name) for name, stream in files),
        policy,
        look_at=look_at,
    )


def id_list(ids: Iterable[str], null: bool = False) -> bytes:
    """The ids as file names for ``xargs``: each ended by a newline, or by NUL with ``null``.

    Raises:
        SimdedupError: an id that cannot name a file, or holds the end character.
    """
    end = b"\0" if null else b"\n"
    out = bytearray()
    for doc_id in ids:
        name = os.fsencode(doc_id) if _is_path_text(doc_id) else None
        if name is None or end in name:
            raise SimdedupError(
                f"the id {doc_id!r} cannot be listed as a path" + ("; use -0" if name is not None else "")
            )
        out += name + end
    return bytes(out)


def _is_path_text(doc_id: str) -> bool:
    """Whether an id is a name the file system can take: no NUL, and no lone surrogate other
    than the ones that stand for a file name's undecodable bytes."""
    try:
        os.fsencode(doc_id)
    except UnicodeEncodeError:
        return False
    return "\0" not in doc_id
