"""Exact duplicates: a content hash of the normalised text, kept in a set or a bloom filter.

Normalisation makes byte-different but text-identical documents equal: the text is split on
Unicode whitespace and re-joined with single spaces (line endings, indentation, reflowing and
trailing blanks do not count). The digest is XXH3-128 of the UTF-8 of that, computed while the
document streams in chunks.

:class:`SeenDigests` remembers every digest with the id that first had it (about 100 bytes per
distinct document). For streams too large for that, :class:`BloomFilter` answers "probably
seen" in a fixed bit array: with ``capacity`` n and target ``error_rate`` p it uses
``m = ceil(-n ln p / (ln 2)^2)`` bits and ``k = round(m / n * ln 2)`` bit positions per item
(Kirsch-Mitzenmacher double hashing of the two 64-bit halves of the digest); after n distinct
documents a new document is wrongly reported as seen with probability about p (1e-6 by
default, 3.6 MB per million documents), and a true duplicate is never missed.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import replace
from typing import Any, Iterable, Iterator

import numpy as np

from .errors import SkipDocument
from .fingerprints import FingerprintRecord
from .limits import check_memory
from .read import Source, documents, open_documents, text_chunks


def content_digest(chunks: Iterable[str]) -> bytes:
    """XXH3-128 of the whitespace-normalised text given in chunks that end at whitespace."""
    import xxhash

    state = xxhash.xxh3_128()
    first = True
    for chunk in chunks:
        words = chunk.split()
        if not words:
            continue
        if not first:
            state.update(b" ")
        state.update(" ".join(words).encode("utf-8", "surrogatepass"))
        first = False
    return state.digest()


class SeenDigests:
    """Every digest seen, with the first id that had it."""

    def __init__(self) -> None:
        self.first: dict[bytes, str] = {}

    def check(self, digest: bytes, doc_id: str) -> str | None:
        """The id that had ``digest`` before, or None (and ``doc_id`` is remembered)."""
        earlier = self.first.get(digest)
        if earlier is None:
            self.first[digest] = doc_id
        return earlier


class BloomFilter:
    """A fixed-size set of digests that may answer "seen" wrongly, with a known rate."""

    def __init__(self, capacity: int, error_rate: float = 1e-6):
        if capacity < 1:
            raise ValueError("bloom capacity must be at least 1")
        if not 0 < error_rate < 1:
            raise ValueError("bloom error rate must be between 0 and 1")
        self.bits = max(64, math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2))
        check_memory(self.bits / 8, f"a bloom filter for {capacity} documents at error rate {error_rate}")
        self.hashes = max(1, round(self.bits / capacity * math.log(2)))
        self.array = np.zeros((self.bits + 7) // 8, dtype=np.uint8)
        self.capacity, self.error_rate, self.count = capacity, error_rate, 0

    def _positions(self, digest: bytes) -> np.ndarray:
        h1 = int.from_bytes(digest[:8], "little")
        h2 = int.from_bytes(digest[8:16], "little") | 1
        return np.array([(h1 + i * h2) % self.bits for i in range(self.hashes)], dtype=np.int64)

    def add(self, digest: bytes) -> bool:
        """Add ``digest``; True if it was (probably) there already."""
        positions = self._positions(digest)
        byte, mask = positions >> 3, (1 << (positions & 7)).astype(np.uint8)
        present = bool(np.all(self.array[byte] & mask))
        if not present:
            np.bitwise_or.at(self.array, byte, mask)
            self.count += 1
        return present

    def check(self, digest: bytes, doc_id: str) -> str | None:
        """Same contract as :meth:`SeenDigests.check`; a bloom filter cannot name the earlier id."""
        return "" if self.add(digest) else None


def source_digest(source: Source, encoding: str = "utf-8") -> bytes:
    """Content hash of one document's whitespace-normalised text (:func:`content_digest`).

    Raises:
        SkipDocument: it cannot be read as text.
    """
    (document,) = open_documents([source], encoding)  # (a single JSON line is parsed here)
    if document.reason is not None:
        raise SkipDocument(document.id, document.reason)
    return content_digest(text_chunks(document.text) if document.text is not None else document.reader)  # type: ignore[arg-type]


def _checked(sources: Iterable[Source], encoding: str, seen: Any) -> Iterator[tuple[Source, str | None, str | None]]:
    """For each document of ``sources``: ``(document, earlier id, None)``, with the id of the first
    document of the same text in ``seen`` (None: its text is new; "" when ``seen`` is a bloom
    filter, which cannot say), or ``(document, None, reason)`` for one that cannot be read."""
    for source in itertools.chain.from_iterable(map(documents, sources)):
        if source.reason is not None:
            yield source, None, source.reason
            continue
        try:
            earlier = seen.check(source_digest(source, encoding), source.path)
        except SkipDocument as exc:
            yield source, None, exc.reason
            continue
        yield source, earlier, None


def repeats(sources: Iterable[Source], encoding: str, seen: Any) -> Iterator[tuple[Source, str | None, str | None]]:
    """``exact``: ``(document, earlier id, reason)`` for each document of ``sources`` (see :func:`_checked`)."""
    yield from _checked(sources, encoding, seen)


def exact_duplicates(
    sources: Iterable[Source], encoding: str, seen: Any, duplicates: dict[str, str]
) -> Iterator[Source]:
    """The sources whose normalised text was not seen before: the pre-pass of ``dedup
    --exact-first``.

    A source whose text was seen is left out and recorded in ``duplicates`` as ``path -> first
    path`` ("" when ``seen`` is a bloom filter, which cannot say). A source that cannot be read
    is passed on, so that fingerprinting reports why.
    """
    for source, earlier, _ in _checked(sources, encoding, seen):
        if earlier is not None:
            duplicates[source.path] = earlier
            continue
        yield source


def add_exact_duplicates(
    records: Iterable[FingerprintRecord], duplicates: dict[str, str]
) -> Iterator[FingerprintRecord]:
    """``records``, then a copy of the first record for each exact duplicate found before."""
    by_id: dict[str, FingerprintRecord] = {}
    for record in records:
        by_id[record.id] = record
        yield record
    for path, first in duplicates.items():
        original = by_id.get(first)
        if original is not None:
            size = os.path.getsize(path) if os.path.isfile(path) else original.bytes
            yield replace(original, id=path, bytes=size)
