"""Which member of each cluster to keep, and so which to drop (the ``select`` command).

Policies: ``representative`` (the cluster's medoid, the default), ``first`` (smallest id;
members are sorted by id), ``longest`` / ``shortest`` (by
the member's ``bytes`` in the cluster line, else the file's size), ``newest`` / ``oldest`` (the
file's modification time). Ties go to the smallest id, so the choice is deterministic.

A drop list is read by ``xargs rm``, so it never names the only real copy of a file:

- exactly one member of every cluster is kept, so a drop list never names a whole cluster;
- a member that is a symbolic link never wins over the file it points to, when that file is a
  member too (keeping the link and dropping its target would delete the data);
- a member that is the same file as a kept one (the same device and inode, through a hard or a
  symbolic link), or that some cluster keeps, is never dropped: it is held back and reported.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from .errors import RecordError, SimdedupError
from .jsonline import parse_json_line
from .write import identity

POLICIES = ("representative", "first", "longest", "shortest", "newest", "oldest")


def _size(member: dict) -> int:
    if isinstance(member.get("bytes"), int) and not isinstance(member.get("bytes"), bool):
        return member["bytes"]
    return _stat(member["id"]).st_size


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SimdedupError(f"cannot look at {path}: {reason} (the policy needs the file)") from None


_KEYS: dict[str, Callable[[dict], object]] = {
    "first": lambda m: 0,
    "longest": lambda m: -_size(m),
    "shortest": _size,
    "newest": lambda m: -_stat(m["id"]).st_mtime_ns,
    "oldest": lambda m: _stat(m["id"]).st_mtime_ns,
}


def kept_member(members: list[dict], policy: str, representative: str | None = None) -> str:
    """The id of the member that ``policy`` keeps (before the link rule of :func:`selection`)."""
    if policy == "representative":
        if representative is None:
            raise SimdedupError("the cluster line names no representative; choose another --keep policy")
        return representative
    if policy not in _KEYS:
        raise ValueError(f"keep policy must be one of {', '.join(POLICIES)}")
    key = _KEYS[policy]
    return min(members, key=lambda m: (key(m), m["id"]))["id"]


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
        if representative is not None and (not isinstance(representative, str)
                                           or representative not in {m["id"] for m in members}):
            raise RecordError(f"{name}:{number}: the representative {representative!r} is not a member")
        yield members, representative


@dataclass
class Selection:
    """What :func:`selection` decided: ids to drop and to keep, in cluster order, and the members
    held back from the drop list with the reason."""

    dropped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    held: list[tuple[str, str]] = field(default_factory=list)


def _is_link(path: str) -> bool:
    try:
        return os.path.islink(path)
    except (OSError, ValueError):
        return False


def _real_member(members: list[dict], keep: str) -> str:
    """``keep``, or the member it is a symbolic link to: a link never wins over its target."""
    if not _is_link(keep):
        return keep
    target = identity(keep)
    if target is None:
        return keep
    for member in members:
        if member["id"] != keep and not _is_link(member["id"]) and identity(member["id"]) == target:
            return member["id"]
    return keep


def selection(clusters: Iterable[tuple[list[dict], str | None]], policy: str) -> Selection:
    """The members to drop and to keep of every ``(members, representative)`` cluster.

    All clusters are read before anything is decided, so that a document kept by one cluster
    line is never dropped by another (cluster files concatenated, or hand-edited).
    """
    chosen: list[tuple[list[dict], str]] = []
    kept_ids: set[str] = set()
    for members, representative in clusters:
        keep = _real_member(members, kept_member(members, policy, representative))
        chosen.append((members, keep))
        kept_ids.add(keep)
    kept_files = set(map(identity, kept_ids)) - {None}
    result = Selection()
    kept_listed: set[str] = set()
    decided: set[str] = set()  # ids dropped or held back, and kept ids reported as held
    for members, keep in chosen:
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
                if identity(doc_id) in kept_files:
                    result.held.append((doc_id, "the same file as a kept member (a hard or symbolic link)"))
                else:
                    result.dropped.append(doc_id)
    return result


def select_files(files: Iterable[tuple[str, BinaryIO]], policy: str = "representative") -> Selection:
    """The selection (:func:`selection`) over the cluster lines of named binary streams, all
    read before anything is decided.

    Raises:
        RecordError: a line that is not UTF-8 or not a cluster, as ``FILE:LINE``.
    """
    return selection(itertools.chain.from_iterable(read_clusters(_text_lines(stream, name), name)
                                                   for name, stream in files), policy)


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
            raise SimdedupError(f"the id {doc_id!r} cannot be listed as a path" + ("; use -0" if name is not None else ""))
        out += name + end
    return bytes(out)


def _text_lines(stream: Any, name: str) -> Iterator[str]:
    """The lines of a binary stream as text, with ``FILE:LINE`` errors for bytes that are not UTF-8."""
    for number, raw in enumerate(stream, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"{name}:{number}: not UTF-8 text") from None


def _is_path_text(doc_id: str) -> bool:
    """Whether an id is a name the file system can take: no NUL, and no lone surrogate other
    than the ones that stand for a file name's undecodable bytes."""
    try:
        os.fsencode(doc_id)
    except UnicodeEncodeError:
        return False
    return "\0" not in doc_id
