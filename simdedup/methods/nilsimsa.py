"""Nilsimsa digests (cmeclax 2001; Damiani et al. 2004), computed with numpy.

A 5-byte window slides over the document's raw bytes; each position contributes up to eight
trigrams of the window, each hashed by the Trans53 function into one of 256 accumulators. Bit i
of the 256-bit digest is 1 where accumulator i is above the mean (the number of trigrams / 256).
The digest is written, as every nilsimsa implementation writes it, with accumulator 255's byte
first. Two digests are compared by ``128 - (differing bits)``: -128 to 128, identical texts 128,
unrelated ones near 0; scores above 24 are unlikely for independent texts.

The trigrams of all positions are computed as whole arrays (no Python loop over bytes), and the
document is processed in chunks that carry the last four bytes over, so memory stays bounded.
The hex digest equals the PyPI ``nilsimsa`` package's ``hexdigest()`` (checked in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..fingerprints import FingerprintRecord
from ..read import Document, DocumentReader, text_chunks
from .base import Method

# The Trans53 permutation of 0..255 that defines nilsimsa's trigram hash.
TRAN = np.frombuffer(
    bytes.fromhex(
        "02d69e6ff91d04abd022161fd873a1ac3b7062961e6e8f399d05144aa6beae0e"
        "cfb99c9ac76813e12da4eb518d646b5023800341ecbb71cc7a867f98f2365eee"
        "8ece4fb832b65f59dc1b314c7bf063016cba07e81277493cda46fe2f791c9b30"
        "e300067e2e0f383321ada554caa729fc5a47697dc595b5f40b90a3816d255535"
        "f575740a26bf195c1ac6ff995d84aa663eaf78b32043c1ed24eae63f18f3a042"
        "57085360c3c0834082d709bd442a67a893e0c2569fd9dd8515b48a27289276de"
        "eff8b2b7c93d45944b110d65d5348b910cfa87e97c5bb14de5d4cb10a21789bc"
        "dbb0e2978852f748d3612c3a2bd18cfbf1cde46ae7a9fdc437c8d2f6df58724e"
    ),
    dtype=np.uint8,
).astype(np.int64)

# (first, second, third) byte of each of the eight trigrams, as offsets back from the current
# byte: 0 is the current byte, 1 the previous one, and so on; and the minimum position at which
# the trigram exists.
_TRIGRAMS = (
    (0, 1, 2, 2),
    (0, 1, 3, 3),
    (0, 2, 3, 3),
    (0, 1, 4, 4),
    (0, 2, 4, 4),
    (0, 3, 4, 4),
    (4, 1, 0, 4),
    (4, 3, 0, 4),
)


def _tran(a: np.ndarray, b: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    return ((TRAN[(a + n) & 255] ^ (TRAN[b] * (2 * n + 1))) + TRAN[c ^ TRAN[n]]) & 255


class NilsimsaAccumulator:
    """Accumulates the trigram counts of a byte stream fed in pieces."""

    def __init__(self) -> None:
        self.counts = np.zeros(256, dtype=np.int64)
        self.length = 0
        self._tail = np.empty(0, dtype=np.int64)  # the last four bytes seen

    def update(self, data: bytes) -> None:
        if not data:
            return
        new = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
        window = np.concatenate([self._tail, new])
        start = len(self._tail)  # index in ``window`` of the first new byte
        first_position = self.length  # stream position of window[start]
        for n, (o_a, o_b, o_c, needed) in enumerate(_TRIGRAMS):
            # new bytes at stream position >= needed have all three bytes of this trigram
            lo = max(start, start + needed - first_position)
            if lo >= len(window):
                continue
            idx = np.arange(lo, len(window))
            hashed = _tran(window[idx - o_a], window[idx - o_b], window[idx - o_c], n)
            self.counts += np.bincount(hashed, minlength=256)
        self.length += len(new)
        self._tail = window[-4:]

    @property
    def trigrams(self) -> int:
        """How many trigrams the stream has had (none under 3 bytes)."""
        n = self.length
        return 1 if n == 3 else 4 if n == 4 else 8 * n - 28 if n > 4 else 0

    def digest(self) -> bytes:
        bits = self.counts > self.trigrams / 256.0
        return np.packbits(bits, bitorder="little")[::-1].tobytes()


def nilsimsa_digest(chunks: Iterable[bytes]) -> bytes:
    """The 32-byte nilsimsa digest of a byte stream given in pieces."""
    acc = NilsimsaAccumulator()
    for chunk in chunks:
        acc.update(chunk)
    return acc.digest()


def compare(a: bytes | str, b: bytes | str) -> int:
    """Nilsimsa score of two digests (bytes or hex): 128 minus the number of differing bits."""
    x = bytes.fromhex(a) if isinstance(a, str) else a
    y = bytes.fromhex(b) if isinstance(b, str) else b
    return 128 - (int.from_bytes(x, "big") ^ int.from_bytes(y, "big")).bit_count()


@dataclass
class NilsimsaMethod(Method):
    """Nilsimsa digests of the documents' raw bytes."""

    encoding: str = "utf-8"
    bits: int = 256

    def __post_init__(self) -> None:
        DocumentReader("", self.encoding)  # fail early on an encoding that is unknown or not text

    @property
    def settings(self) -> dict[str, Any]:
        return {"method": "nilsimsa", "bits": 256}

    def record(self, document: Document) -> FingerprintRecord:
        if document.text is not None:
            blocks: Iterable[bytes] = (chunk.encode("utf-8", "surrogatepass") for chunk in text_chunks(document.text))
        else:
            blocks = document.reader.raw_blocks()  # type: ignore[union-attr]
        acc = NilsimsaAccumulator()
        for block in blocks:
            acc.update(block)
        # Under 3 bytes there is no trigram: the digest is all zeros, as the reference's.
        return FingerprintRecord(
            document.id, int.from_bytes(acc.digest(), "big"), 256, acc.trigrams, self.settings, acc.length
        )


def make(*, encoding: str, **_: Any) -> NilsimsaMethod:
    """The method from the feature options (:func:`simdedup.methods.make_method`)."""
    return NilsimsaMethod(encoding)
