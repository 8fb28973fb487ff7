"""What a fingerprint set looks like: nearest-neighbour distances, cluster sizes, a suggested k.

The nearest-neighbour distance of a document is the smallest Hamming distance to any other
document, found exactly up to ``max_k`` with the block index (beyond it: "more"). Near-duplicates
make a peak at small distances; unrelated documents sit near ``bits / 2``.

Suggested k: with sketches, the smallest k that keeps 99% of the verified pairs found within
``max_k`` (pairs whose sketches' estimate passes the options' test), and at least 3; with
sketches of shingles, their bands find the pairs beyond it by default. Without
sketches, the first valley of the nearest-neighbour histogram between the duplicate peak and the
unrelated mass, else Manku et al.'s 3 (for 64 bits). Both are heuristics: check a few pairs near
the suggested k with ``simdedup explain``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fingerprints import FingerprintSet
from .group import cluster_fingerprints
from .options import ClusterOptions
from .pairs import near_pairs
from .verify import PairTest

SIZE_BINS = ((2, 2), (3, 3), (4, 5), (6, 10), (11, 100), (101, None))


@dataclass
class Stats:
    documents: int
    max_k: int
    nearest: list[int]  # documents whose nearest neighbour is at distance d, d = 0..max_k
    beyond: int  # documents with no neighbour within max_k
    verified_distances: list[int] | None  # verified pairs at distance d (with sketches)
    cluster_sizes: list[tuple[str, int]]
    suggested_k: int
    reason: str

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "max_k": self.max_k,
            "nearest": self.nearest,
            "beyond": self.beyond,
            "verified_distances": self.verified_distances,
            "cluster_sizes": dict(self.cluster_sizes),
            "suggested_k": self.suggested_k,
            "reason": self.reason,
        }


def fingerprint_stats(
    fingerprints: FingerprintSet, max_k: int = 12, options: ClusterOptions = ClusterOptions()
) -> Stats:
    """Distributions and a suggested k for a loaded fingerprint set (see the module docstring)."""
    n = len(fingerprints.ids)
    uniq, of_doc, copies = np.unique(fingerprints.fps, axis=0, return_inverse=True, return_counts=True)
    of_doc = of_doc.reshape(-1)
    left, right, dist = near_pairs(uniq, max_k) if len(uniq) > 1 else (np.empty(0, int),) * 3
    best = np.full(len(uniq), max_k + 1, dtype=np.int64)
    np.minimum.at(best, left, dist)
    np.minimum.at(best, right, dist)
    best[copies > 1] = 0
    per_doc = best[of_doc]
    nearest = np.bincount(per_doc, minlength=max_k + 2)
    verified = None
    options = options if options.resolved else options.for_fingerprints(fingerprints)
    if fingerprints.sketches is not None and len(left):
        # representatives of each distinct fingerprint stand for their copies
        first_doc = np.full(len(uniq), n, dtype=np.int64)
        np.minimum.at(first_doc, of_doc, np.arange(n))
        test = PairTest(fingerprints.fps, fingerprints.sketches, options)
        passed = test.passes(first_doc[left], first_doc[right])
        verified = np.bincount(dist[passed], minlength=max_k + 1).tolist()
    suggested, reason = _suggest_k(nearest[: max_k + 1], verified, fingerprints.bits)
    clusters = cluster_fingerprints(fingerprints, options)
    sizes = [len(c.members) for c in clusters]
    size_hist = []
    for low, high in SIZE_BINS:
        label = f"{low}" if low == high else (f"{low}-{high}" if high else f">{low - 1}")
        size_hist.append((label, sum(1 for s in sizes if s >= low and (high is None or s <= high))))
    return Stats(
        n, max_k, nearest[: max_k + 1].tolist(), int(nearest[max_k + 1]), verified, size_hist, suggested, reason
    )


def _suggest_k(nearest: np.ndarray, verified: list[int] | None, bits: int) -> tuple[int, str]:
    if verified is not None and sum(verified):
        cumulative = np.cumsum(verified) / sum(verified)
        k = max(3, int(np.searchsorted(cumulative, 0.99)))
        return k, "smallest k keeping 99% of the sketch-verified pairs"
    for d in range(2, len(nearest) - 1):
        if nearest[d] < nearest[d - 1] and nearest[d] <= nearest[d + 1] and nearest[:d].sum() > 0:
            if nearest[d + 1 :].sum() > nearest[d] * 2:
                return d, "first valley of the nearest-neighbour histogram"
    return 3 * bits // 64, "no clear valley; Manku et al.'s k for this width"


def histogram(rows: list[tuple[str, int]], width: int = 50) -> list[str]:
    """Text bars, one line per (label, count)."""
    top = max((c for _, c in rows), default=0) or 1
    label_width = max((len(label) for label, _ in rows), default=1)
    return [f"{label:>{label_width}} | {'#' * round(width * c / top):<{width}} {c}" for label, c in rows]
