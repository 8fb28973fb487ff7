"""Which member of each cluster to keep, and so which to drop.

Policies: ``representative`` (the cluster's medoid, the default), ``first`` (smallest id;
members are sorted by id), ``longest`` / ``shortest`` (by
the member's ``bytes`` in the cluster line, else the file's size), ``newest`` / ``oldest`` (the
file's modification time). Ties go to the smallest id, so the choice is deterministic. Exactly
one member of every cluster is kept: a drop list never names a whole cluster.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Iterator

from .errors import RecordError, SimdedupError
from .jsonline import parse_json_line

POLICIES = ("representative", "first", "longest", "shortest", "newest", "oldest")


def _size(member: dict) -> int:
    if isinstance(member.get("bytes"), int):
        return member["bytes"]
    return _stat(member["id"]).st_size


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as exc:
        raise SimdedupError(f"cannot look at {path}: {exc.strerror or exc} (the policy needs the file)") from None


_KEYS: dict[str, Callable[[dict], object]] = {
    "first": lambda m: 0,
    "longest": lambda m: -_size(m),
    "shortest": _size,
    "newest": lambda m: -_stat(m["id"]).st_mtime_ns,
    "oldest": lambda m: _stat(m["id"]).st_mtime_ns,
}


def kept_member(members: list[dict], policy: str, representative: str | None = None) -> str:
    """The id of the member that ``policy`` keeps."""
    if policy == "representative":
        if representative is None:
            raise SimdedupError("the cluster line names no representative; choose another --keep policy")
        return representative
    if policy not in _KEYS:
        raise ValueError(f"keep policy must be one of {', '.join(POLICIES)}")
    key = _KEYS[policy]
    return min(members, key=lambda m: (key(m), m["id"]))["id"]


def read_clusters(lines: Iterable[str], name: str) -> Iterator[tuple[list[dict], str | None]]:
    """The members (dicts with at least ``id``) and the representative of each cluster line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            cluster = parse_json_line(line)
            members = cluster["members"]
            members = [m if isinstance(m, dict) else {"id": m} for m in members]
            if not all(isinstance(m.get("id"), str) for m in members) or not members:
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise RecordError(f"{name}:{number}: not a cluster line (no members with ids)") from None
        yield members, cluster.get("representative")


def selection(clusters: Iterable[tuple[list[dict], str | None]], policy: str, kept: bool = False) -> Iterator[str]:
    """Ids to drop (or, with ``kept``, to keep) from each ``(members, representative)`` cluster."""
    for members, representative in clusters:
        keep = kept_member(members, policy, representative)
        if kept:
            yield keep
        else:
            yield from (m["id"] for m in members if m["id"] != keep)
