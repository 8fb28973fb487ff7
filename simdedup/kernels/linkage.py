"""Complete linkage over many verified pairs (:mod:`simdedup.group`), with the sketches, the
fingerprints or the exact sets as the test (numba source: :mod:`simdedup.kernels.source.linkage`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .exact import _exact_arrays
from .load import Loaded, _some


class LinkageKernel(Loaded):
    """The loaded linkage kernel (:func:`simdedup.kernels.source.linkage.link_complete`)."""

    FUNCTIONS = ("linkage",)

    def link(
        self,
        n: int,
        left: np.ndarray,
        right: np.ndarray,
        sketches: np.ndarray | None,
        passing: np.ndarray | None,
        fps: np.ndarray,
        k: int,
        exact: "ExactTest | None" = None,
        first_bins: int = 0,
    ) -> tuple[np.ndarray, int]:
        """The cluster of each of ``n`` units (a unit of it) from the edges ``left``-``right`` in
        the order they are taken, and how many pairs were measured exactly. The test: with
        ``exact``, its measure for two units that both have exact sets; otherwise with
        ``sketches`` (``(n, bins)`` uint8), ``passing[m]`` for two that agree in ``m`` bins
        (sketches of shingles, with ``first_bins``: the tables of ``source.linkage.link_complete``);
        otherwise at most ``k`` bits between rows of ``fps``."""
        left = np.ascontiguousarray(left, dtype=np.int64)
        right = np.ascontiguousarray(right, dtype=np.int64)
        fps = np.ascontiguousarray(fps, dtype=np.uint64)
        if sketches is None:
            sketches, passing, bins = np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.uint8), 0
        else:
            sketches = np.ascontiguousarray(sketches, dtype=np.uint8)
            passing = np.ascontiguousarray(passing, dtype=np.uint8)
            bins = sketches.shape[1]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(left, minlength=n) + np.bincount(right, minlength=n), out=offsets[1:])
        adjacency = np.empty(max(2 * len(left), 1), dtype=np.int64)
        capacity = 1 << max(4, (2 * len(left)).bit_length())
        parent, size, volume, next_member = (np.empty(max(n, 1), dtype=np.int64) for _ in range(4))
        keys = np.full(capacity, np.iinfo(np.uint64).max, dtype=np.uint64)
        good = np.empty(capacity, dtype=np.int64)
        bad = np.empty(capacity, dtype=np.uint8)
        ends = (left, right) if len(left) else (np.zeros(1, dtype=np.int64),) * 2
        arrays = exact.arrays() if exact else [np.zeros(1, dtype=np.int64)] * 8  # offsets [0]: no sets
        rule = (
            (exact.measure, exact.min_similarity, exact.min_resemblance, exact.floor, exact.evidence)
            if exact
            else (0, 0.0, 0.0, 0.0, 0.0)
        )
        merged = self._functions["linkage"](
            n,
            len(left),
            ends[0].ctypes.data,
            ends[1].ctypes.data,
            offsets.ctypes.data,
            adjacency.ctypes.data,
            sketches.ctypes.data,
            bins,
            passing.ctypes.data,
            first_bins if bins else 0,
            fps.ctypes.data,
            fps.shape[1],
            k,
            parent.ctypes.data,
            size.ctypes.data,
            volume.ctypes.data,
            next_member.ctypes.data,
            keys.ctypes.data,
            good.ctypes.data,
            bad.ctypes.data,
            capacity,
            exact is not None,
            *(a.ctypes.data for a in arrays),
            *rule,
        )
        if merged < 0:
            raise RuntimeError("the linkage kernel lost count of the edges between two clusters")
        return parent[:n], merged

    def check(self) -> None:
        # Checked as the others: fingerprints 0, 1, 2, 3 at k = 1 join 0 with 1 and 2 with 3, and
        # refuse 0-2 and 1-3 (0 and 3 are two bits apart).
        label, _ = self.link(
            4,
            np.array([0, 2, 0, 1]),
            np.array([1, 3, 2, 3]),
            None,
            None,
            np.arange(4, dtype=np.uint64).reshape(4, 1),
            1,
        )
        if not (label[0] == label[1] != label[2] == label[3]):
            raise RuntimeError("the linkage kernel gives wrong results")


@dataclass
class ExactTest:
    """The exact test of :func:`simdedup.kernels.source.linkage.link_complete`: which units have exact sets
    (``has``), their runs of sorted hashes as :class:`simdedup.similarity.ExactIndex` keeps them
    (``bag`` and ``grams``: hashes, weights, offsets, totals), and the measure (by its number,
    :data:`MEASURE_CODES`) with its thresholds."""

    has: np.ndarray
    bag: tuple
    grams: tuple
    measure: int
    min_similarity: float
    min_resemblance: float
    floor: float
    evidence: float

    def arrays(self) -> list[np.ndarray]:
        """The arrays the kernel reads, in its order, contiguous and none empty."""
        return [_some(self.has, np.uint8), *_exact_arrays(self.bag, self.grams)]
