"""Candidate pairs of near-duplicate units, behind one function (:func:`candidate_pairs`), so
that another source of candidates can take the place of this one.

Each unit has a one-permutation MinHash (Li, Owen & Zhang 2012; empty bins filled from the
next filled one, Shrivastava & Li 2014) of the shingles the resemblance measures (word
3-grams, or 5-character substrings without white space for Chinese and Japanese text; ASCII
letters lower-cased), in ``BANDS * ROWS`` bins; band ``b`` is the bins ``b, b + BANDS, ...``
hashed together. A band's bins are spread over the sketch because a short unit fills few
bins and each empty bin copies the next filled one: the bins of a run (the fingerprints'
bands) are copies of one shingle's, and units that share that shingle would share the band.
Spread, a band stands for about ``ROWS`` shingles, and two units whose shingles have Jaccard J
share one of the 20 bands with probability about ``1 - (1 - J**6)**20``: 0.998 at 0.8, 0.27
at 0.5, 0.015 at 0.3; every candidate is then measured exactly. A band key shared by more
than :data:`BAND_CROWD` units pairs each of them with the first :data:`BAND_CROWD` only
(units come in their order, earliest first): those are the ones a later unit can repeat.

The units kernel (:mod:`simdedup.kernels.source.units`) makes the band keys as it cuts the
units; :func:`band_keys` is its reference.
"""

from __future__ import annotations

import numpy as np

#: units of one band key each unit is paired with, the earliest
BAND_CROWD = 64
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_PRIME = 0x100000001B3
_CHAR_GRAM = 5
_CJK_SHARE = 0.01


def candidate_pairs(bands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i < j``, of rows of ``bands`` ((n, bands) uint32 keys) that share
    a band's key, each once, sorted."""
    n = len(bands)
    empty = np.empty(0, dtype=np.int64)
    if n < 2:
        return empty, empty
    rows = np.arange(n, dtype=np.uint64)
    found = []
    for band in range(bands.shape[1]):
        keyed = (bands[:, band].astype(np.uint64) << np.uint64(32)) | rows
        keyed.sort()  # runs of one key, each in row order
        keys = keyed >> np.uint64(32)
        same = np.concatenate(([False], keys[1:] == keys[:-1], [False])).astype(np.int8)
        edges = np.flatnonzero(np.diff(same))
        if not len(edges):
            continue
        starts, sizes = edges[0::2], edges[1::2] - edges[0::2] + 1
        members = (keyed & np.uint64(0xFFFFFFFF)).astype(np.int64)
        for size in np.unique(sizes).tolist():
            groups = members[starts[sizes == size][:, None] + np.arange(size)]
            i, j = _earliest_pairs(size)
            found.append(groups[:, i].ravel() * n + groups[:, j].ravel())
    if not found:
        return empty, empty
    pairs = np.concatenate(found)
    pairs.sort()
    pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    return pairs // n, pairs % n


def _earliest_pairs(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(i, j)``, ``i < j < size``, of a run of ``size`` rows, ``i`` among the first
    :data:`BAND_CROWD`."""
    firsts = min(size - 1, BAND_CROWD)
    counts = size - 1 - np.arange(firsts)
    i = np.repeat(np.arange(firsts), counts)
    j = i + 1 + np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, j


def _mix(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def band_keys(piece: str) -> list[int]:
    """The band keys of the unit ``piece`` (the reference of the kernel's, in Python)."""
    from ..kernels.units import BANDS, ROWS
    from .units import is_cjk, is_word

    bins = BANDS * ROWS
    visible = [c for c in piece if not c.isspace()]
    characters = any(is_cjk(c) for c in visible) and sum(map(is_cjk, visible)) >= _CJK_SHARE * len(visible)
    lowered = [ord(c) + 32 if "A" <= c <= "Z" else ord(c) for c in (visible if characters else piece)]
    shingles = []
    if characters:
        for k in range(len(lowered) - _CHAR_GRAM + 1):
            shingles.append(_chain(lowered[k : k + _CHAR_GRAM]))
        if 0 < len(lowered) < _CHAR_GRAM:
            shingles.append(_chain([0] * (_CHAR_GRAM - 1 - len(lowered)) + lowered + [0]))
    else:
        tokens = []
        word = None
        for code, c in zip(lowered, piece):
            if is_word(c):
                word = code + _PRIME if word is None else (word * _PRIME + code) & _MASK
            elif word is not None:
                tokens.append(_mix(word))
                word = None
        if word is not None:
            tokens.append(_mix(word))
        for k in range(len(tokens) - 2):
            shingles.append(_chain(tokens[k : k + 3]))
        if 0 < len(tokens) < 3:
            shingles.append(_chain([0] * (2 - len(tokens)) + tokens + [0]))
    minima: list[int | None] = [None] * bins
    for shingle in shingles:
        k, value = ((shingle >> 32) * bins) >> 32, shingle & 0xFFFFFFFF
        minima[k] = value if minima[k] is None else min(minima[k], value)  # type: ignore[type-var]
    filled = [k for k in range(bins) if minima[k] is not None]
    dense = []
    for k in range(bins):
        if not filled:
            dense.append(0)
        elif minima[k] is not None:
            dense.append(minima[k])
        else:
            source = next((f for f in filled if f > k), filled[0])
            distance = (source - k) % bins
            dense.append(_mix((minima[source] + distance * _GOLDEN) & _MASK) & 0xFFFFFFFF)  # type: ignore[operator]
    keys = []
    for band in range(BANDS):
        key = band
        for k in range(band, bins, BANDS):
            key = _mix((key * _GOLDEN + dense[k]) & _MASK)
        keys.append(key >> 32)
    return keys


def _chain(values: list[int]) -> int:
    """The kernel's hash of a shingle of ``values``: ``mix(((v0 G + v1) G + v2) ...)``."""
    h = values[0]
    for value in values[1:]:
        h = (h * _GOLDEN + value) & _MASK
    return _mix(h)
