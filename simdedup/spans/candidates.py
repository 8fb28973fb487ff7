"""Candidate pairs of near-duplicate units, in one function (:func:`candidate_pairs`), so that
another source of candidates can take the place of this one.

Two units are candidates when their sketches (``fingerprint``'s 128-byte MinHash of their
words) agree in all 8 bytes of one of their 16 bands: at a weighted Jaccard of 0.8 of their
words, with probability 1 - (1 - 0.8**8)**16 = 0.95, whatever else they share. A unit whose
shingles resemble another's at 0.8 shares more of its words than that (a changed word removes
up to three 3-grams and one word). Boilerplate shares band values among many units: a band
value shared by more than :data:`BAND_CROWD` units pairs each of them with the first
:data:`BAND_CROWD` only (units come in their order, earliest first), which are the ones a
later unit can repeat.
"""

from __future__ import annotations

import numpy as np

BAND_BYTES = 8
#: units of one band value each unit is paired with, earliest first
BAND_CROWD = 64


def candidate_pairs(sketches: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i < j``, of rows of ``sketches`` ((n, bytes) uint8) that agree
    in one band, each once, sorted."""
    n = len(sketches)
    if n < 2 or sketches.shape[1] < BAND_BYTES:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    rows = np.ascontiguousarray(sketches[:, : sketches.shape[1] // BAND_BYTES * BAND_BYTES])
    keys = rows.view(np.uint64)  # (n, bands)
    found = []
    for band in range(keys.shape[1]):
        order = np.argsort(keys[:, band], kind="stable")  # a run of one value in row order
        ordered = keys[order, band]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        sizes = np.diff(np.append(starts, n))
        for size in np.unique(sizes[sizes >= 2]).tolist():
            groups = order[starts[sizes == size][:, None] + np.arange(size)]
            i, j = _earliest_pairs(size)
            found.append(groups[:, i].ravel() * n + groups[:, j].ravel())
    if not found:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    pairs = np.unique(np.concatenate(found))
    return pairs // n, pairs % n


def _earliest_pairs(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i < j < size``, of a run of ``size`` rows, ``i`` among the first
    :data:`BAND_CROWD`."""
    firsts = min(size - 1, BAND_CROWD)
    counts = size - 1 - np.arange(firsts)
    i = np.repeat(np.arange(firsts), counts)
    j = i + 1 + np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, j
