"""The shingle sketch: what a fingerprint record carries to estimate the resemblance, the measure
``dedup`` computes exactly (:mod:`simdedup.similarity`), where the texts are not at hand.

A text's shingles are the exact kernel's (word 3-grams; 5-character shingles for a text of
characters; NFKC, lower-cased). Their set is sketched by fast similarity sketching (Dahlgaard,
Knudsen and Thorup 2017; :mod:`simdedup.kernels.source.shingles`) into ``bins`` bins of
:data:`VALUE_BITS` bits: two sketches agree in a bin with probability ``J + (1 - J) / 16`` for a
resemblance ``J``, which :func:`resemblance` inverts. Unlike a one-permutation sketch, the bins
of a short text are not copies of each other: a text of 20 shingles is estimated about as well
as one of 2,000.

Sized by measurement (docs/quality.md, "The shingle sketch"): at 128 bytes (256 bins) the
estimate's error at 0.8 is about 0.02, and two sketches of resemblance 0.8 share one of its 32
bands of 8 bins (:data:`BAND_BINS`) with probability 0.9988, a candidate whatever their
fingerprints' distance.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

import numpy as np

#: bytes of a record's shingle sketch by default (``--shingle-sketch``)
DEFAULT_BYTES = 128
VALUE_BITS = 4
#: distinct shingles of each kind a streamed text keeps for the sketch's later rounds: with more,
#: the first round fills every bin (each of 256 bins is empty with probability e^-128)
CAPACITY = 1 << 16
#: bins of a band: two sketches sharing all of one band's bins are a candidate pair (32 bits
#: of key, which two unrelated sketches share with probability 2^-32 a band)
BAND_BINS = 8


def bins_of(nbytes: int) -> int:
    return nbytes * 8 // VALUE_BITS


def check_bytes(nbytes: int) -> None:
    """Raises ValueError unless ``nbytes`` is a multiple of 8 from 8 to 4096 (whole bands)."""
    if not 8 <= nbytes <= 4096 or nbytes % 8:
        raise ValueError(f"a shingle sketch takes 8 to 4096 bytes, a multiple of 8, not {nbytes}")


def kernel() -> Any:
    """The compiled kernels (:class:`simdedup.kernels.shingles.ShingleKernel`).

    Raises:
        ExactUnavailable: they cannot be loaded here.
    """
    from .kernels.shingles import ShingleKernel
    from .similarity import ExactUnavailable

    loaded = ShingleKernel.loaded()
    if loaded is None:
        raise ExactUnavailable(
            "shingle sketches need compiled kernels, which numba or llvmlite cannot make here (short of memory?)"
        )
    return loaded


def sketch_texts(
    texts: list[bytes], nbytes: int = DEFAULT_BYTES, lowercase: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The sketches of whole texts in UTF-8 (lone surrogates as ``surrogatepass`` writes them):
    an ``(n, nbytes)`` uint8 array, and whether each text has one (a text of white space only
    has none: its row is zeros).

    Raises:
        UnicodeDecodeError: a text is not such UTF-8.
    """
    data = texts[0] if len(texts) == 1 else b"".join(texts)
    sketches, has, bad = sketch_joined(data, np.cumsum([0, *map(len, texts)]), nbytes, lowercase)
    if bad:
        texts[bad[0]].decode("utf-8", "surrogatepass")  # raises the decoder's error at its byte
    return sketches, has


def sketch_joined(
    data: bytes | bytearray | memoryview, offsets: np.ndarray, nbytes: int = DEFAULT_BYTES, lowercase: bool = True
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """:func:`sketch_texts` of texts held back to back in ``data`` (text ``t`` at
    ``offsets[t]:offsets[t + 1]``): the sketches, whether each has one, and the texts that are
    not UTF-8 (which have none)."""
    from .similarity import CJK_SHARE, _tables

    n = len(offsets) - 1
    sketches, has, bad = np.zeros((n, nbytes), dtype=np.uint8), np.zeros(n, dtype=bool), []
    loaded, table, start = kernel(), _tables(lowercase), 0
    offsets = np.asarray(offsets, dtype=np.int64)
    while start < n:
        found = loaded.texts(data, offsets[start:], table, CJK_SHARE, bins_of(nbytes), VALUE_BITS, CAPACITY)
        done = n if not isinstance(found, int) else start + found
        if isinstance(found, int):
            made, kinds = loaded.texts(
                data, offsets[start : done + 1], table, CJK_SHARE, bins_of(nbytes), VALUE_BITS, CAPACITY
            )
            bad.append(done)
        else:
            made, kinds = found
        sketches[start:done], has[start:done] = made[: done - start], kinds[: done - start] >= 0
        start = done + 1
    return sketches, has, bad


def sketch_stream(chunks: Iterable[bytes], nbytes: int = DEFAULT_BYTES, lowercase: bool = True) -> bytes | None:
    """The sketch of a text given as chunks of UTF-8 that each end with a whole character, in
    bounded memory (:data:`CAPACITY`); the same as :func:`sketch_texts` of the whole text."""
    from .similarity import CJK_SHARE, _tables

    stream = kernel().stream(_tables(lowercase), CJK_SHARE, bins_of(nbytes), VALUE_BITS, CAPACITY)
    for chunk in chunks:
        stream.update(chunk)
    return stream.finish()


@lru_cache(maxsize=8)
def agreement_resemblance(bins: int) -> np.ndarray:
    """The resemblance :func:`resemblance` gives two sketches of ``bins`` bins that agree in
    ``m`` of them, at index ``m``."""
    chance = 2.0**-VALUE_BITS
    return np.clip((np.arange(bins + 1) / bins - chance) / (1.0 - chance), 0.0, 1.0)


_NIBBLE_LOWS = np.uint64(0x1111111111111111)


def agreements(sketches: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """How many bins rows ``left[i]`` and ``right[i]`` of an ``(n, bytes)`` uint8 array of
    sketches agree in (int64)."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    bins = bins_of(sketches.shape[1])
    out = np.empty(len(left), dtype=np.int64)
    step = max(1, (1 << 22) // max(sketches.shape[1], 1))
    for start in range(0, len(left), step):
        differ = np.bitwise_xor(sketches[left[start : start + step]], sketches[right[start : start + step]])
        words = np.ascontiguousarray(differ).view(np.uint64)
        # a nibble that differs has some bit set: fold its four bits onto its lowest
        folded = (words | (words >> np.uint64(1)) | (words >> np.uint64(2)) | (words >> np.uint64(3))) & _NIBBLE_LOWS
        out[start : start + step] = bins - np.bitwise_count(folded).sum(axis=1, dtype=np.int64)
    return out


def resemblance(sketches: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The estimated resemblance of the texts of rows ``left[i]`` and ``right[i]``."""
    return agreement_resemblance(bins_of(sketches.shape[1]))[agreements(sketches, left, right)]


def unpacked(sketches: np.ndarray) -> np.ndarray:
    """Sketches with a bin a byte: ``(n, bins)`` uint8 (the linkage kernel counts equal bytes)."""
    out = np.empty((len(sketches), 2 * sketches.shape[1]), dtype=np.uint8)
    out[:, 0::2] = sketches & 15
    out[:, 1::2] = sketches >> 4
    return out


def band_keys(sketches: np.ndarray, band: int) -> np.ndarray:
    """Each sketch's key of band ``band`` (:data:`BAND_BINS` bins: 32 bits) as uint64."""
    width = BAND_BINS * VALUE_BITS // 8
    part = np.ascontiguousarray(sketches[:, band * width : (band + 1) * width])
    return part.view(np.uint32).ravel().astype(np.uint64)


def bands_of(nbytes: int) -> int:
    return bins_of(nbytes) // BAND_BINS
