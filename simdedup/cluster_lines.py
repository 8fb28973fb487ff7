"""Cluster lines: the JSON lines ``cluster`` and ``dedup`` write, one per cluster or one per
member (README, "Output formats"), the same from every engine."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Sequence

import xxhash

from .write import LineWriter

if TYPE_CHECKING:
    from .group import Cluster
    from .options import ClusterOptions


def cluster_id(representative_id: str) -> str:
    """A cluster's id: 16 hex digits of the hash of its representative's id.

    It depends on nothing else, so a cluster keeps its id when other documents come and go.
    """
    return xxhash.xxh3_64_hexdigest(representative_id.encode("utf-8", "surrogatepass"))


def score_field(quantity: str, measured: bool) -> str:
    """The name of a score in cluster lines: the quantity (``resemblance``, ``bag``), or its
    estimate from the sketches (``resemblance_estimate``)."""
    return quantity if measured else f"{quantity}_estimate"


#: the score fields a cluster line's member may carry, what each is, and whether it was measured
#: exactly; ``similarity`` is the bag estimate of the lines of simdedup before shingle sketches
SCORE_FIELDS = {
    "resemblance": ("resemblance", True),
    "resemblance_estimate": ("resemblance", False),
    "bag": ("bag", True),
    "bag_estimate": ("bag", False),
    "similarity": ("bag", False),
}


def member_score(member: dict) -> tuple[float, str, bool] | None:
    """A cluster line member's score to the representative, what it is and whether it was
    measured exactly (``(0.93, "resemblance", False)``); None when it has no finite one."""
    import math

    for name, (quantity, measured) in SCORE_FIELDS.items():
        value = member.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value), quantity, measured
    return None


def cluster_record(
    cluster: Cluster, ids: Sequence[str], sizes: Sequence[int] | None = None, new: Sequence[bool] | None = None
) -> dict:
    """The JSON-ready description of a cluster (members' ``bytes`` where ``sizes`` knows them,
    and whether each is ``new`` in an incremental run): the least score to the representative
    (``min_resemblance`` or ``min_resemblance_estimate``: :func:`score_field`), and each member's."""
    record = {
        "cluster": cluster_id(ids[cluster.representative]),
        "size": len(cluster.members),
        "representative": ids[cluster.representative],
        "max_distance": cluster.max_distance,
    }
    members = [{"id": ids[m], "distance": d} for m, d in zip(cluster.members, cluster.distances)]
    for member, m in zip(members, cluster.members):
        if sizes is not None and sizes[m] >= 0:
            member["bytes"] = int(sizes[m])
        if new is not None:
            member["new"] = bool(new[m])
    if cluster.scores is not None and cluster.measured is not None and cluster.quantity is not None:
        least = min(range(len(cluster.scores)), key=lambda i: (cluster.scores[i], cluster.measured[i]))  # type: ignore[index]
        record["min_" + score_field(cluster.quantity, cluster.measured[least])] = cluster.scores[least]
        for member, score, measured in zip(members, cluster.scores, cluster.measured):
            member[score_field(cluster.quantity, measured)] = score
    if cluster.bags is not None:  # --similarity combined: a pair passes by its bag too
        for member, bag in zip(members, cluster.bags):
            if bag is not None:
                member["bag"] = bag
    record["members"] = members
    return record


def member_records(cluster: Cluster, ids: Sequence[str]) -> list[dict]:
    """One JSON-ready line per member: id, cluster id, whether it is the one kept (the
    representative), distance and score to it."""
    name = cluster_id(ids[cluster.representative])
    lines = []
    for i, m in enumerate(cluster.members):
        line = {"id": ids[m], "cluster": name, "kept": m == cluster.representative, "distance": cluster.distances[i]}
        if cluster.scores is not None and cluster.measured is not None and cluster.quantity is not None:
            line[score_field(cluster.quantity, cluster.measured[i])] = cluster.scores[i]
        lines.append(line)
    return lines


def cluster_records(
    cluster: Cluster,
    ids: Sequence[str],
    sizes: Sequence[int] | None,
    options: ClusterOptions,
    new: Sequence[bool] | None = None,
) -> list[dict]:
    """The records of a cluster in the output form of ``options``
    (:data:`simdedup.options.OUTPUT_FORMATS`): its :func:`cluster_record`, or the
    :func:`member_records`."""
    if options.output_format == "clusters":
        return [cluster_record(cluster, ids, sizes, new)]
    return member_records(cluster, ids)


def record_line(record: dict) -> str:
    """A record as its JSON line (without the newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_clusters(
    fd: int | BinaryIO, clusters: list[Any], fingerprints: Any, options: ClusterOptions, new: Any = None
) -> None:
    """Clusters (:class:`simdedup.group.Cluster`, members indexing ``fingerprints.ids``) as JSON
    lines in the output form of ``options`` (see README, Output formats); ``new`` marks the
    documents of an incremental run."""
    writer = LineWriter(fd)
    for cluster in clusters:
        for record in cluster_records(cluster, fingerprints.ids, fingerprints.sizes, options, new):
            writer.write_line(record_line(record))
    writer.flush()


def made_from_estimates(clusters: Iterable[Sequence[dict]]) -> bool:
    """Whether cluster lines' members (``clusters``: each line's members) were mostly decided by
    the sketches' estimate (lines of ``cluster``), not measured exactly (lines of ``dedup``, where
    only texts too long to measure are estimated)."""
    estimated = exact = 0
    for members in clusters:
        for member in members:
            score = member_score(member)
            if score is not None and not score[2]:
                estimated += 1
            elif score is not None and score[0] < 1.0:
                exact += 1
    return estimated > exact
