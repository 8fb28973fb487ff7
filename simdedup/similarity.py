"""Exact similarities of documents whose text was read in this run (``dedup``, ``explain``).

Two measures, both set Jaccard similarities of 64-bit hashes:

- **bag**: the weighted Jaccard of the documents' word counts (the ``words`` tokens:
  ``sum(min) / sum(max)`` over counts), as the set Jaccard of the elements
  ``(token, 0) .. (token, count - 1)``, the multiset the sketch samples (:mod:`simdedup.sketch`).
  Order and punctuation do not count.
- **resemblance** (Broder 1997): the Jaccard of the sets of token 3-grams, where a token is a
  run of letters and digits, one CJK character, or one punctuation or symbol character. Order,
  punctuation and table drawing count.

``combined`` (the default) calls a pair a duplicate when its resemblance is at least
``min_resemblance`` (0.8), or when its bag similarity is at least ``min_similarity`` (0.88) and
at least half of its 3-grams are shared: reworded or reflowed copies pass on their words,
reordered ones (same vocabulary in another order: tables, generated code, templates) fail on
their 3-grams.

Tokens are cut by per-code-point tables (the tokenizer's ``\\w``, CJK ranges and lower-casing for
the Basic Multilingual Plane; a code point beyond it is a token of its own) and hashed by a
compiled kernel (:mod:`simdedup._exact_kernel`): no Python work per token or per pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


MEASURES = ("combined", "bag", "resemblance")
DEFAULT_MEASURE = "combined"
RESEMBLANCE_N = 3  # tokens per n-gram (Broder's w; word 3-grams, as the English gold)
DEFAULT_MIN_RESEMBLANCE = 0.8
#: combined: the share of shared 3-grams a pair that passes on its words still needs
RESEMBLANCE_FLOOR = 0.5
#: exact sets kept for at most this many bytes in all (12 per distinct word, 8 per distinct
#: 3-gram: at most 20 per token, about 2.5 bytes per byte of English text); documents read after
#: that, and documents of more than MAX_DOCUMENT_CHARS characters, are verified with their sketches
BUDGET_BYTES = 2 << 30
MAX_DOCUMENT_CHARS = 4 << 20

_SPACE, _WORD, _ONE = 0, 1, 2  # classes of code points: separator, part of a run, token of its own
_BMP = 0x10000
_CJK = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class of each BMP code point, its lower-case code point, and whether it is punctuation
    (a token for resemblance only)."""
    chars = [chr(c) for c in range(_BMP)]
    word = np.array([c.isalnum() or c == "_" for c in chars])
    space = np.array([c.isspace() for c in chars])
    cls = np.where(word, _WORD, np.where(space, _SPACE, _ONE)).astype(np.uint8)
    for low, high in _CJK:
        cls[low : high + 1] = _ONE
    punct = ~word & ~space
    lower = np.array([ord(low) if len(low := c.lower()) == 1 else ord(c) for c in chars], dtype=np.uint32)
    return cls, lower, punct


@dataclass
class ExactSets:
    """One document's distinct word hashes (sorted) with their counts, and its distinct 3-gram
    hashes (sorted)."""

    words: np.ndarray  # uint64
    counts: np.ndarray  # uint32
    grams: np.ndarray  # uint64

    @property
    def nbytes(self) -> int:
        return self.words.nbytes + self.counts.nbytes + self.grams.nbytes


def exact_sets(text: str, lowercase: bool = True) -> ExactSets | None:
    """The exact sets of a text, or None when it has no word token."""
    from ._exact_kernel import token_arrays

    classes, lower, punctuation = _tables()
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    tokens, is_word, grams = token_arrays(points, classes, lower, punctuation, lowercase, RESEMBLANCE_N)
    words = np.sort(tokens[is_word])  # numpy sorts several times faster than numba's np.sort
    if len(words) == 0:
        return None
    first = np.flatnonzero(np.concatenate(([True], words[1:] != words[:-1])))
    counts = np.diff(np.append(first, len(words))).astype(np.uint32)
    grams = np.sort(grams)
    return ExactSets(words[first], counts, grams[np.concatenate(([True], grams[1:] != grams[:-1]))])


class ExactIndex:
    """The exact sets of many documents, to compute both measures for many pairs at once.

    Each kind is one sorted array of keys ``document << h | top h bits of the hash`` (h = 64
    minus the bits of the number of documents) with a weight per key (word counts; 1 for
    3-grams), so the elements of document a are looked up in document b with one
    ``searchsorted``: the weighted Jaccard ``sum(min) / (total a + total b - sum(min))``.
    """

    def __init__(self, sets: list[ExactSets | None]):
        self.n = len(sets)
        doc_bits = max(1, self.n.bit_length())
        if doc_bits > 32:
            raise ValueError("too many documents for exact verification")
        self.hash_bits = 64 - doc_bits
        self.has = np.array([s is not None for s in sets], dtype=bool)
        present = [s for s in sets if s is not None]
        self.kinds = {"bag": self._keys(sets, [s.words for s in present], [s.counts for s in present]),
                      "grams": self._keys(sets, [s.grams for s in present], None)}

    def _keys(self, sets: list[ExactSets | None], arrays: list[np.ndarray],
              weights: list[np.ndarray] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Keys, the weight of each, the offset of each document's keys, and each document's total."""
        sizes = np.zeros(self.n, dtype=np.int64)
        sizes[self.has] = [len(a) for a in arrays]
        docs = np.repeat(np.arange(self.n, dtype=np.uint64), sizes)
        hashes = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
        keys = (docs << np.uint64(self.hash_bits)) | (hashes >> np.uint64(64 - self.hash_bits))
        weight = np.concatenate(weights).astype(np.int64) if weights else np.ones(len(keys), dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        totals = np.bincount(docs.astype(np.int64), weight, minlength=self.n)
        return keys, weight, offsets, totals

    def jaccard(self, kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Exact (weighted) Jaccard of documents ``a[i]`` and ``b[i]`` (NaN where one has no sets)."""
        keys, weight, offsets, totals = self.kinds[kind]
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        sizes = np.diff(offsets)
        out = np.full(len(a), np.nan)
        known = np.flatnonzero(self.has[a] & self.has[b])
        mask = np.uint64((1 << self.hash_bits) - 1)
        start = 0
        while start < len(known):  # chunks of about 2**20 looked-up keys
            query_len = np.minimum(sizes[a[known[start:]]], sizes[b[known[start:]]])
            end = start + max(1, int(np.searchsorted(np.cumsum(query_len), 1 << 20, "right")))
            pairs = known[start:end]
            small_first = sizes[a[pairs]] <= sizes[b[pairs]]
            small = np.where(small_first, a[pairs], b[pairs])
            large = np.where(small_first, b[pairs], a[pairs])
            lengths = sizes[small]
            owner = np.repeat(np.arange(len(pairs)), lengths)
            position = offsets[small][owner] + np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            query = (large[owner].astype(np.uint64) << np.uint64(self.hash_bits)) | (keys[position] & mask)
            found = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
            hit = keys[found] == query
            shared = np.bincount(owner[hit], np.minimum(weight[position[hit]], weight[found[hit]]),
                                 minlength=len(pairs))
            out[pairs] = shared / (totals[a[pairs]] + totals[b[pairs]] - shared)
            start = end
        return out


def passes(measure: str, bag: np.ndarray, grams: np.ndarray, min_similarity: float,
           min_resemblance: float) -> np.ndarray:
    """Whether pairs with these similarities are duplicates under ``measure``; a pair without a
    resemblance (NaN: no exact sets) is judged on ``bag`` alone."""
    no_order = np.isnan(grams)
    if measure == "bag":
        return bag >= min_similarity
    if measure == "resemblance":
        return np.where(no_order, bag >= min_similarity, grams >= min_resemblance)
    combined = (grams >= min_resemblance) | ((bag >= min_similarity) & (grams >= RESEMBLANCE_FLOOR))
    return np.where(no_order, bag >= min_similarity, combined)
