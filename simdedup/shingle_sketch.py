"""The shingle sketch: what a fingerprint record carries to estimate the resemblance, the measure
``dedup`` computes exactly (:mod:`simdedup.similarity`), where the texts are not at hand.

A text's shingles are the exact kernel's: word 3-grams, or 5-character shingles for a text of
characters (NFKC, lower-cased); two texts of characters are compared on their 5-character
shingles, any other pair on its word 3-grams. Sets are sketched by fast similarity sketching
(Dahlgaard, Knudsen and Thorup 2017; :mod:`simdedup.kernels.source.shingles`) into bins of
:data:`VALUE_BITS` bits: two sketches agree in a bin with probability ``J + (1 - J) / 16`` for
a resemblance ``J``, which :func:`resemblance` inverts. Unlike a one-permutation sketch, the
bins of a short text are not copies of each other: a text of 20 shingles is estimated about as
well as one of 2,000.

A sketch of ``bins`` bins has three parts (:func:`layout`): the first :func:`part_bins` bins
sketch the text's word 3-grams, whatever it is (what a text of characters and one of words are
compared on); the next sketch its own shingles (its word 3-grams again, hashed apart, or its
5-character shingles); the last bin says which (0: words, 1: characters). Two texts of words
are compared on all but that bin, two of characters on their own parts, a text of each on the
first parts.

Sized by measurement (docs/quality.md, "The shingle sketch"): at 128 bytes (256 bins) the
estimate's error at resemblance 0.8 is about 0.02 for texts of words and 0.03 for texts of
characters, and two sketches of resemblance 0.8 share one of their bands of 8 bins
(:data:`BAND_BINS`) with probability 0.999.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

import numpy as np

from .similarity import DEFAULT_FOLDING

#: bytes of a record's shingle sketch by default (``--sketch``)
DEFAULT_BYTES = 128
VALUE_BITS = 4
#: distinct shingles of each kind a streamed text keeps for the sketch's later rounds: with more,
#: the first round fills every bin (each of 256 bins is empty with probability e^-128)
CAPACITY = 1 << 16
#: bins of a band: two sketches sharing all of one band's bins are a candidate pair (32 bits
#: of key, which two unrelated sketches share with probability 2^-32 a band)
BAND_BINS = 8
#: what the kind bin holds
WORDS, CHARACTERS = 0, 1


def bins_of(nbytes: int) -> int:
    return nbytes * 8 // VALUE_BITS


def part_bins(bins: int) -> int:
    """Bins of the first part (word 3-grams, every text): a fifth, in whole bands."""
    return max(BAND_BINS, bins // 5 // BAND_BINS * BAND_BINS)


def layout(nbytes: int) -> tuple[int, int, int]:
    """``(bins, first part's bins, own part's bins)`` of a sketch of ``nbytes`` bytes."""
    bins = bins_of(nbytes)
    first = part_bins(bins)
    return bins, first, bins - first - 1


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
    texts: list[bytes], nbytes: int = DEFAULT_BYTES, folding: int = DEFAULT_FOLDING
) -> tuple[np.ndarray, np.ndarray]:
    """The sketches of whole texts in UTF-8 (lone surrogates as ``surrogatepass`` writes them):
    an ``(n, nbytes)`` uint8 array, and whether each text has one (a text of white space only
    has none: its row is zeros).

    Raises:
        UnicodeDecodeError: a text is not such UTF-8.
    """
    data = texts[0] if len(texts) == 1 else b"".join(texts)
    sketches, has, bad = sketch_joined(data, np.cumsum([0, *map(len, texts)]), nbytes, folding)
    if bad:
        texts[bad[0]].decode("utf-8", "surrogatepass")  # raises the decoder's error at its byte
    return sketches, has


def sketch_joined(
    data: bytes | bytearray | memoryview,
    offsets: np.ndarray,
    nbytes: int = DEFAULT_BYTES,
    folding: int = DEFAULT_FOLDING,
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """:func:`sketch_texts` of texts held back to back in ``data`` (text ``t`` at
    ``offsets[t]:offsets[t + 1]``): the sketches, whether each has one, and the texts that are
    not UTF-8 (which have none)."""
    from .similarity import CJK_SHARE, _tables

    n = len(offsets) - 1
    bins, first, _ = layout(nbytes)
    sketches, has, bad = np.zeros((n, nbytes), dtype=np.uint8), np.zeros(n, dtype=bool), []
    loaded, table, start = kernel(), _tables(folding), 0
    offsets = np.asarray(offsets, dtype=np.int64)

    def texts(upto: int) -> Any:
        return loaded.texts(data, offsets[start:upto], table, CJK_SHARE, bins, first, VALUE_BITS, CAPACITY)

    while start < n:
        found = texts(n + 1)
        done = n if not isinstance(found, int) else start + found
        if isinstance(found, int):
            found = texts(done + 1)
            bad.append(done)
        made, kinds = found
        sketches[start:done], has[start:done] = made[: done - start], kinds[: done - start] >= 0
        start = done + 1
    return sketches, has, bad


def sketch_stream(chunks: Iterable[bytes], nbytes: int = DEFAULT_BYTES, folding: int = DEFAULT_FOLDING) -> bytes | None:
    """The sketch of a text given as chunks of UTF-8 that each end with a whole character, in
    bounded memory (:data:`CAPACITY`); the same as :func:`sketch_texts` of the whole text."""
    stream = new_stream(nbytes, folding)
    for chunk in chunks:
        stream.update(chunk)
    return stream.finish()


def new_stream(nbytes: int = DEFAULT_BYTES, folding: int = DEFAULT_FOLDING) -> Any:
    """A :class:`simdedup.kernels.shingles.ShingleStream` for one text's sketch."""
    from .similarity import CJK_SHARE, _tables

    bins, first, _ = layout(nbytes)
    return kernel().stream(_tables(folding), CJK_SHARE, bins, first, VALUE_BITS, CAPACITY)


@lru_cache(maxsize=32)
def agreement_resemblance(bins: int) -> np.ndarray:
    """The resemblance two sketches agreeing in ``m`` of ``bins`` compared bins give, at index ``m``."""
    chance = 2.0**-VALUE_BITS
    return np.clip((np.arange(bins + 1) / max(bins, 1) - chance) / (1.0 - chance), 0.0, 1.0)


def unpacked(sketches: np.ndarray) -> np.ndarray:
    """Sketches with a bin a byte: ``(n, bins)`` uint8."""
    out = np.empty((len(sketches), 2 * sketches.shape[1]), dtype=np.uint8)
    out[:, 0::2] = sketches & 15
    out[:, 1::2] = sketches >> 4
    return out


def compared(sketches: np.ndarray, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each pair of rows ``left[i]``, ``right[i]`` of an ``(n, bytes)`` uint8 array of
    sketches: the bins compared (by the two texts' kinds, see the module) and how many of them
    agree."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    bins, first, own = layout(sketches.shape[1])
    agree, count = np.empty(len(left), dtype=np.int64), np.empty(len(left), dtype=np.int64)
    step = max(1, (1 << 21) // max(sketches.shape[1], 1))
    for start in range(0, len(left), step):
        a, b = sketches[left[start : start + step]], sketches[right[start : start + step]]
        same = np.empty((len(a), bins), dtype=bool)
        differ = a ^ b
        same[:, 0::2], same[:, 1::2] = (differ & 15) == 0, (differ >> 4) == 0
        in_first, in_own = same[:, :first].sum(axis=1), same[:, first : bins - 1].sum(axis=1)
        kind_a, kind_b = a[:, -1] >> 4, b[:, -1] >> 4  # the last bin: the high half of the last byte
        words = (kind_a == WORDS) & (kind_b == WORDS)
        characters = (kind_a == CHARACTERS) & (kind_b == CHARACTERS)
        agree[start : start + step] = np.where(words, in_first + in_own, np.where(characters, in_own, in_first))
        count[start : start + step] = np.where(words, first + own, np.where(characters, own, first))
    return count, agree


def resemblance(sketches: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The estimated resemblance of the texts of rows ``left[i]`` and ``right[i]``."""
    count, agree = compared(sketches, left, right)
    chance = 2.0**-VALUE_BITS
    return np.clip((agree / np.maximum(count, 1) - chance) / (1.0 - chance), 0.0, 1.0)


def band_ranges(nbytes: int) -> list[tuple[int, int]]:
    """The byte ranges of the bands of a sketch of ``nbytes`` bytes: whole bands of the first
    part, then of the own part (the last bin, the kind, in none)."""
    bins, first, own = layout(nbytes)
    width = BAND_BINS * VALUE_BITS // 8
    starts = [b * width for b in range(first // BAND_BINS)]
    starts += [(first // BAND_BINS + b) * width for b in range(own // BAND_BINS)]
    return [(s, s + width) for s in starts]
