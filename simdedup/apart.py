"""Near-duplicates that linkage kept apart: two documents in different clusters whose measure
passes, and the member that kept them apart.

Complete linkage merges two clusters only when every pair across them passes, and star linkage
a member only when it passes with the centre; so a verified pair can end in two clusters. What
kept it apart is a *failing pair* across the two clusters: a member of one and a member of the
other that do not pass. ``explain A B --clusters FILE`` names it for one pair, the report lists
such pairs among all its clusters (:func:`kept_apart`).

Pairs are measured on the texts, by the test ``dedup`` runs (:class:`simdedup.verify.PairTest`
over :class:`simdedup.similarity.ExactIndex`), or, for clusters that ``cluster`` made from
records, by the same test on the texts' sketches (``estimated``): the measure that made them. The
report's pairs are those whose sketches of
shingles share a band (the candidates of a default run: at resemblance 0.8 with probability
0.999).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .options import ClusterOptions
from .similarity import DEFAULT_FOLDING

#: pairs the report lists at most (the largest clusters' pairs are the first to be left out)
MOST_LISTED = 500
#: pairs across two clusters measured at most in looking for a failing one, beyond those of
#: the near-duplicates themselves (two clusters of 450 members)
MOST_MEASURED = 200_000


@dataclass(frozen=True)
class KeptApart:
    """Documents ``a`` and ``b``, in clusters ``cluster_a`` and ``cluster_b`` (indices into the
    clusters given), whose measure ``score`` passes; ``failing_a`` (in ``a``'s cluster) and
    ``failing_b`` (in ``b``'s) do not pass, at ``failing_score`` (None: no failing pair found)."""

    a: str
    b: str
    cluster_a: int
    cluster_b: int
    score: float
    failing_a: str | None
    failing_b: str | None
    failing_score: float | None

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "cluster_a": self.cluster_a,
            "cluster_b": self.cluster_b,
            "score": self.score,
            "failing_a": self.failing_a,
            "failing_b": self.failing_b,
            "failing_score": self.failing_score,
        }


class _Measured:
    """The texts of some documents, measured pair by pair as ``dedup`` measures them (with
    ``estimated``, as ``cluster`` estimates them from their records' sketches)."""

    def __init__(
        self, ids: list[str], texts: Mapping[str, str], options: ClusterOptions, folding: int, estimated: bool = False
    ):
        from . import shingle_sketch
        from .similarity import ExactIndex, KeptText
        from .verify import PairTest

        self.row = {doc_id: row for row, doc_id in enumerate(ids)}
        utf8 = [texts[doc_id].encode("utf-8", "surrogatepass") for doc_id in ids]
        self.sketches, _ = shingle_sketch.sketch_texts(utf8, shingle_sketch.DEFAULT_BYTES, folding)
        self.index = None if estimated else ExactIndex(KeptText(texts[doc_id], folding) for doc_id in ids)
        resolved = options.resolve(64, "shingles", texts=not estimated)
        fingerprints = np.zeros((len(ids), 1), dtype=np.uint64)  # unused: every pair has sketches
        self.test = PairTest(fingerprints, self.sketches, resolved, self.index)

    def passes(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return self.test.passes(self._rows(a), self._rows(b))

    def scores(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return self.test.scores(self._rows(a), self._rows(b))[0]

    def _rows(self, ids: Sequence[str]) -> np.ndarray:
        return np.array([self.row[doc_id] for doc_id in ids], dtype=np.int64)


def failing_pair(
    a: str, b: str, cluster_a: Sequence[str], cluster_b: Sequence[str], measured: _Measured
) -> tuple[str, str, float] | None:
    """``(member of a's cluster, member of b's cluster, score)``: the least resembling pair
    across the two clusters that does not pass, looked for first among the pairs of ``a`` or
    ``b`` themselves, then among all (up to :data:`MOST_MEASURED`); None when none is found.
    Members without texts are not measured."""
    in_a = [m for m in cluster_a if m in measured.row]
    in_b = [m for m in cluster_b if m in measured.row]
    own = [(a, m) for m in in_b if m != b] + [(m, b) for m in in_a if m != a]
    rest = [(x, y) for x in in_a if x != a for y in in_b if y != b] if len(in_a) * len(in_b) <= MOST_MEASURED else []
    for pairs in (own, rest):
        if not pairs:
            continue
        left, right = [x for x, _ in pairs], [y for _, y in pairs]
        failing = np.flatnonzero(~measured.passes(left, right))
        if len(failing):
            scores = measured.scores([left[i] for i in failing], [right[i] for i in failing])
            worst = min(range(len(failing)), key=lambda k: (scores[k], pairs[failing[k]]))
            x, y = pairs[failing[worst]]
            return x, y, round(float(scores[worst]), 3)
    return None


def why_apart(
    a: str,
    b: str,
    cluster_a: Sequence[str],
    cluster_b: Sequence[str],
    texts: Mapping[str, str],
    options: ClusterOptions = ClusterOptions(),
    folding: int = DEFAULT_FOLDING,
    estimated: bool = False,
) -> tuple[float, tuple[str, str, float] | None] | None:
    """Whether ``a`` and ``b``, in the clusters of members ``cluster_a`` and ``cluster_b``
    (``[a]`` for a document alone), are near-duplicates, measured on ``texts``: None if not,
    else their score and :func:`failing_pair`'s answer. Members without texts are not measured;
    ``estimated``: by the sketches' estimate, as ``cluster`` decides."""
    if a not in texts or b not in texts:
        return None
    ids = sorted({doc_id for doc_id in (a, b, *cluster_a, *cluster_b) if doc_id in texts})
    measured = _Measured(ids, texts, options, folding, estimated)
    if not measured.passes([a], [b])[0]:
        return None
    return round(float(measured.scores([a], [b])[0]), 3), failing_pair(a, b, cluster_a, cluster_b, measured)


def kept_apart(
    clusters: Sequence[Sequence[str]],
    texts: Mapping[str, str],
    options: ClusterOptions = ClusterOptions(),
    folding: int = DEFAULT_FOLDING,
    most: int = MOST_LISTED,
    estimated: bool = False,
) -> list[KeptApart]:
    """The near-duplicate pairs across ``clusters`` whose sketches of shingles share a band, at
    most ``most`` of them (one per pair of clusters: the most resembling), with their failing
    pairs; ordered by the clusters' indices."""
    from .verify import with_band_pairs

    cluster_of = {doc_id: i for i, members in enumerate(clusters) for doc_id in members if doc_id in texts}
    ids = sorted(cluster_of)
    if len(ids) < 2:
        return []
    measured = _Measured(ids, texts, options, folding, estimated)
    empty = np.zeros(0, dtype=np.int64)
    left, right = with_band_pairs(empty, empty, measured.sketches, np.arange(len(ids)), "shingles")
    across = np.array([cluster_of[ids[i]] != cluster_of[ids[j]] for i, j in zip(left.tolist(), right.tolist())])
    if not len(across) or not across.any():
        return []
    left, right = left[across], right[across]
    ok = measured.test.passes(left, right)
    left, right = left[ok], right[ok]
    scores = measured.test.scores(left, right)[0]
    best: dict[tuple[int, int], tuple[float, str, str]] = {}
    for i, j, score in zip(left.tolist(), right.tolist(), scores.tolist()):
        a, b = ids[i], ids[j]
        if cluster_of[a] > cluster_of[b]:
            a, b = b, a
        key = (cluster_of[a], cluster_of[b])
        if key not in best or (-score, a, b) < (-best[key][0], best[key][1], best[key][2]):
            best[key] = (score, a, b)
    found = []
    for (ca, cb), (score, a, b) in sorted(best.items())[:most]:
        why = failing_pair(a, b, clusters[ca], clusters[cb], measured)
        found.append(KeptApart(a, b, ca, cb, round(score, 3), *(why or (None, None, None))))
    return found
