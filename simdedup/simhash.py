"""Charikar's simhash (2002) over weighted features.

Every feature is hashed to ``bits`` bits. Bit ``i`` of the fingerprint is 1 when the features
whose hash has bit ``i`` set outweigh those whose hash has it clear, strictly:
``sum(w for bit set) - sum(w for bit clear) > 0``. A tie gives 0 (so an empty document has the
all-zero fingerprint), or 1 with ``ties="one"`` (python-hashes' ``>= 0``). Bit 0 is the least
significant bit of both the feature hash and the fingerprint.

Weights are turned into fixed-point integers (:data:`WEIGHT_SCALE` steps per unit) before they
are summed, so the sums are exact and the fingerprint does not depend on the order of floating
point additions, which differs between BLAS builds and CPUs. Integer counts stay exact.

The bit votes are summed with numpy: the feature hashes are unpacked into a (features × bits)
0/1 matrix and multiplied by the weight vector. There is no Python loop over bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from .hashing import BatchHash, FeatureHash, batch_of, get_batch_hash, get_feature_hash

#: How features vote in the simhash (see :class:`Simhasher`).
WEIGHTINGS = ("feature", "binary")
#: What a bit whose votes tie becomes: 0 (the default, as PyPI simhash) or 1 (as python-hashes).
TIES = ("zero", "one")

#: Fixed-point scale for non-integer weights (24 fractional bits).
WEIGHT_SCALE = 1 << 24

#: features whose votes :meth:`Simhasher.many` adds up in one step (a 4 MB int64 matrix)
FEATURES_AT_ONCE = 1 << 13

#: Largest sum of a document's weights: scaled by :data:`WEIGHT_SCALE`, twice the sum still fits
#: in int64, so the vote sums are exact.
MAX_WEIGHT_SUM = 1 << 38

#: Integer weights summing to more than this are sketched as a set, not a multiset: the sketch
#: draws one element per unit of weight (text documents of the compiled path stay far below).
MULTISET_LIMIT = 1 << 26

_MASK64 = (1 << 64) - 1


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two fingerprints given as integers."""
    return (a ^ b).bit_count()


def integer_weights(weights: Iterable[float]) -> np.ndarray:
    """Weights as int64: integers are kept, other numbers are fixed-point scaled.

    Raises:
        ValueError: a negative or non-finite weight, or weights summing to more than
            :data:`MAX_WEIGHT_SUM`.
    """
    return _integer_weights(weights)[0]


def _integer_weights(weights: Iterable[float]) -> tuple[np.ndarray, bool]:
    """:func:`integer_weights` and whether the weights were integer counts already."""
    w = np.fromiter(weights, dtype=np.float64)
    if w.size and not (np.all(np.isfinite(w)) and w.min() >= 0):
        raise ValueError("feature weights must be finite and non-negative")
    if w.sum() > MAX_WEIGHT_SUM:
        raise ValueError(f"feature weights sum to more than 2**{MAX_WEIGHT_SUM.bit_length() - 1}")
    if np.all(w == np.floor(w)):
        return w.astype(np.int64), True
    # Scale every weight of the document by the same factor so ratios are kept; a positive
    # weight never rounds to zero.
    scaled = np.rint(w * WEIGHT_SCALE).astype(np.int64)
    return np.where((scaled == 0) & (w > 0), 1, scaled), False


def hash_words(hashes: np.ndarray | list[int], bits: int) -> np.ndarray:
    """Feature hashes (Python ints) as an (n, bits // 64) little-endian uint64 array, word 0 low."""
    if bits == 64:
        return np.array(hashes, dtype=np.uint64).reshape(-1, 1)
    return np.array([(h & _MASK64, h >> 64) for h in hashes], dtype=np.uint64).reshape(-1, 2)


def as_integers(words: np.ndarray) -> list[int]:
    """Fingerprints as ``(n, bits // 64)`` uint64 words (word 0 low) as Python ints: the
    inverse of :func:`hash_words`."""
    if words.shape[1] == 1:
        return words[:, 0].tolist()
    return [low | high << 64 for low, high in words.tolist()]


def _set_bits(balance: np.ndarray, ties: str) -> np.ndarray:
    """Which bits are 1, from each bit's weight for minus weight against (``2 * for - total``)."""
    return balance >= 0 if ties == "one" else balance > 0


def simhash_words(words: np.ndarray, weights: np.ndarray, bits: int, ties: str = "zero") -> int:
    """Simhash of features given as hash words (see :func:`hash_words`) and int64 weights."""
    if words.shape[0] == 0:
        return (1 << bits) - 1 if ties == "one" else 0
    as_bytes = np.ascontiguousarray(words.astype("<u8", copy=False)).view(np.uint8)
    bit_matrix = np.unpackbits(as_bytes, axis=1, bitorder="little")  # column i = bit i
    votes_for = weights @ bit_matrix  # int64, exact
    total = int(weights.sum())
    packed = _set_bits(2 * votes_for - total, ties).astype(np.uint8)
    return int.from_bytes(np.packbits(packed, bitorder="little").tobytes(), "little")


def simhash(
    features: Mapping[str, float], bits: int = 64, hashfunc: FeatureHash | None = None, ties: str = "zero"
) -> int:
    """Simhash of a mapping ``feature -> weight``.

    Args:
        features: weighted features of one document.
        bits: fingerprint width, 64 or 128.
        hashfunc: feature hash returning ``bits``-bit integers (default: xxh3).
        ties: what a bit whose votes tie becomes, ``zero`` or ``one`` (:data:`TIES`).

    Returns:
        The fingerprint as a non-negative integer below ``2**bits``.
    """
    hashfunc = hashfunc or get_feature_hash("xxh3", bits)
    hashes = [hashfunc(f) for f in features]
    return simhash_words(hash_words(hashes, bits), integer_weights(features.values()), bits, ties)


class Fingerprint(NamedTuple):
    """A document's simhash and, when asked for, the sketch of its features."""

    simhash: int
    sketch: bytes | None


@dataclass
class Simhasher:
    """Turns weighted features into fingerprints with one fixed width, feature hash and sketch.

    ``weighting`` is how features vote in the simhash: ``feature`` with their own weights
    (counts, TF-IDF scores), ``binary`` once each. Counts let frequent words ("the", "of")
    decide most bits, so that unrelated documents of one language land a few bits apart and
    every pair becomes a candidate; ``binary`` keeps them near ``bits / 2`` apart.
    ``ties`` is what a bit whose votes tie becomes (:data:`TIES`).
    ``sketch_bins`` > 0 also makes a :mod:`simdedup.sketch` of the features from the same feature
    hashes (their low 64 bits): integer weights count as multiplicities (whatever the
    weighting) up to a sum of :data:`MULTISET_LIMIT`; other weights make it a plain set.
    """

    bits: int = 64
    hash_name: str = "xxh3"
    hashfunc: FeatureHash | None = None
    sketch_bins: int = 0
    weighting: str = "feature"
    ties: str = "zero"
    _hash_many: BatchHash = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.bits not in (64, 128):
            raise ValueError(f"bits must be 64 or 128, not {self.bits}")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}, not {self.weighting!r}")
        if self.ties not in TIES:
            raise ValueError(f"ties must be one of {', '.join(TIES)}, not {self.ties!r}")
        if self.hashfunc is None:
            self.hashfunc = get_feature_hash(self.hash_name, self.bits)
            self._hash_many = get_batch_hash(self.hash_name, self.bits)
        else:
            self._hash_many = batch_of(self.hashfunc)
        if self.sketch_bins:
            from .sketch import _check_bins

            _check_bins(self.sketch_bins)

    def __call__(self, features: Mapping[str, float]) -> Fingerprint:
        hashes = self._hash_many(features)
        words = hash_words(hashes, self.bits)
        weights, counts = _integer_weights(features.values())
        votes = weights if self.weighting == "feature" else np.ones(len(weights), dtype=np.int64)
        value = simhash_words(words, votes, self.bits, self.ties)
        if not self.sketch_bins:
            return Fingerprint(value, None)
        from .sketch import make_sketch

        multiset = counts and int(weights.sum()) <= MULTISET_LIMIT
        return Fingerprint(value, make_sketch(words[:, 0], weights if multiset else None, self.sketch_bins))

    def many(self, documents: Sequence[Mapping[str, float]]) -> list[Fingerprint]:
        """``[self(features) for features in documents]``, with the arithmetic done for many
        documents at once (about :data:`FEATURES_AT_ONCE` features: the vote matrix stays in
        cache): the same integer sums, so the same fingerprints.

        Raises:
            ValueError: a negative or non-finite weight (raised for the first such document).
        """
        fingerprints: list[Fingerprint] = []
        start = 0
        while start < len(documents):
            end, features = start + 1, len(documents[start])
            while end < len(documents) and features + len(documents[end]) <= FEATURES_AT_ONCE:
                features += len(documents[end])
                end += 1
            fingerprints += self._many(documents[start:end])
            start = end
        return fingerprints

    def _many(self, documents: Sequence[Mapping[str, float]]) -> list[Fingerprint]:
        sizes = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
        if not len(documents) or not sizes.all():  # rare: the one-document path handles empty ones
            return [self(features) for features in documents]
        weights = np.fromiter(
            chain.from_iterable(f.values() for f in documents), dtype=np.float64, count=int(sizes.sum())
        )
        starts = np.cumsum(sizes) - sizes
        sums = np.add.reduceat(weights, starts)
        if not (np.all(np.isfinite(weights)) and weights.min() >= 0 and sums.max() <= MAX_WEIGHT_SUM):
            return [self(features) for features in documents]  # raises at the bad document
        words = hash_words(self._hash_many(chain.from_iterable(documents)), self.bits)
        document = np.repeat(np.arange(len(documents)), sizes)
        # Per document, as _integer_weights: counts when all its weights are whole, else scaled.
        whole = np.bincount(document, weights=weights != np.floor(weights), minlength=len(documents)) == 0
        scaled = np.rint(weights * WEIGHT_SCALE).astype(np.int64)
        scaled[(scaled == 0) & (weights > 0)] = 1
        integers = np.where(whole[document], weights.astype(np.int64), scaled)
        votes = integers if self.weighting == "feature" else np.ones(len(integers), dtype=np.int64)
        as_bytes = np.ascontiguousarray(words.astype("<u8", copy=False)).view(np.uint8)
        bit_matrix = np.unpackbits(as_bytes, axis=1, bitorder="little")
        votes_for = np.add.reduceat(bit_matrix * votes[:, None], starts, axis=0)  # int64, exact
        totals = np.add.reduceat(votes, starts)
        set_bits = np.packbits(_set_bits(2 * votes_for - totals[:, None], self.ties), axis=1, bitorder="little")
        lanes = np.ascontiguousarray(set_bits).view("<u8")
        values = as_integers(lanes)
        if not self.sketch_bins:
            return [Fingerprint(value, None) for value in values]
        from .sketch import sketches_of

        multiset = whole & (sums <= MULTISET_LIMIT)
        multiplicity = np.where(multiset[document], integers, 1)
        sketches = sketches_of(words[:, 0], multiplicity, sizes, self.sketch_bins)
        return [Fingerprint(value, sketch) for value, sketch in zip(values, sketches)]
