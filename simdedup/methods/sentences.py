"""Longest-n-sentences signatures: a very fast exact-match grouping.

The text is split into sentences at Latin and Chinese sentence punctuation (. ! ? ; and
。！？；) and at blank lines; whitespace inside a sentence is collapsed. The ``n`` longest
sentences (by characters; ties by text) are kept, sorted, and hashed together with XXH3-64.
Documents with equal signatures are grouped. It catches copies that keep their longest
sentences intact (reposts, added headers and footers, reordered paragraphs, truncated tails)
and misses copies edited inside those sentences; short texts with one sentence are compared
whole.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import SkipDocument
from ..fingerprints import FingerprintRecord
from ..read import Document, DocumentReader, text_chunks, utf8_size
from .base import Method

_BOUNDARY = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n\s*\n")
_MARKS = ".!?;。！？；\n"  # every boundary holds one: text without them is not split (fast)


def _normalise(sentence: str) -> str:
    return " ".join(sentence.split())  # whitespace collapsed (str.split's is regex \s), in C


#: a sentence longer than this (characters, from its first that is not whitespace) counts as
#: pieces of this length, so that a document without sentence ends (a compressed file of one
#: word repeated) is read in bounded memory
MAX_SENTENCE = 1 << 22


def longest_sentences(chunks: Iterable[str], n: int, max_sentence: int = MAX_SENTENCE) -> tuple[int, list[str]]:
    """Number of sentences and the ``n`` longest of a text given in chunks (bounded memory: a
    sentence longer than ``max_sentence`` characters counts as pieces of that length)."""
    heap: list[tuple[int, str]] = []  # (length, sentence): the n largest so far
    count = 0

    def offer(sentence: str, whole: bool = True) -> None:
        """Count a sentence, or (``whole`` False) the rest of one whose first pieces were counted."""
        nonlocal count
        if whole:  # its pieces are counted from its first character that is not whitespace
            sentence = sentence.lstrip()
        for start in range(0, len(sentence), max_sentence):
            piece = _normalise(sentence[start : start + max_sentence])
            if piece:
                count += 1
                item = (len(piece), piece)
                if len(heap) < n:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)

    carry = ""  # the sentence begun and not ended yet: no boundary inside
    whole = True  # whether the carry holds its sentence from the start
    for chunk in chunks:
        # A new boundary lies in the chunk or across its start, so only the carry's end (from its
        # last character that is not whitespace) is scanned again, not all of it.
        kept = max(len(carry.rstrip()) - 1, 0)
        scanned = carry[kept:] + chunk
        parts = _BOUNDARY.split(scanned) if any(mark in scanned for mark in _MARKS) else [scanned]
        parts[0] = carry[:kept] + parts[0]
        carry = parts.pop()  # may continue in the next chunk: kept as it is
        for number, sentence in enumerate(parts):
            offer(sentence, whole or number > 0)
        whole = whole or bool(parts)
        if len(carry) > max_sentence:  # its first pieces, as offer would cut them
            carry = carry.lstrip() if whole else carry
            # (not its last character: whitespace in the next chunk could end the sentence there)
            cut = (len(carry) - 1) // max_sentence * max_sentence
            if cut:
                offer(carry[:cut], False)
                carry, whole = carry[cut:], False
    offer(carry, whole)
    return count, sorted(sentence for _, sentence in heap)


def signature(sentences: list[str]) -> int:
    """64-bit signature of sorted sentences."""
    import xxhash

    return xxhash.xxh3_64_intdigest("\n".join(sentences).encode("utf-8", "surrogatepass"))


@dataclass
class SentencesMethod(Method):
    """Signature of the ``n`` longest sentences."""

    n: int = 3
    encoding: str = "utf-8"
    bits: int = 64

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("the number of sentences must be at least 1")
        DocumentReader("", self.encoding)

    @property
    def settings(self) -> dict[str, Any]:
        return {"method": "sentences", "options": {"n": self.n}, "bits": 64}

    def record(self, document: Document) -> FingerprintRecord:
        chunks: Iterable[str] = text_chunks(document.text) if document.text is not None else document.reader  # type: ignore[assignment]
        count, longest = longest_sentences(chunks, self.n)
        if not longest:
            raise SkipDocument(document.id, "no sentence to sign")
        size = utf8_size(document.text) if document.text is not None else document.reader.bytes_read  # type: ignore[union-attr]
        return FingerprintRecord(document.id, signature(longest), 64, count, self.settings, size)


def make(*, sentences: int, encoding: str, **_: Any) -> SentencesMethod:
    """The method from the feature options (:func:`simdedup.methods.make_method`)."""
    return SentencesMethod(sentences, encoding)


def options_of_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The options that make records of ``settings`` (:meth:`MethodSpec.feature_options`)."""
    return {"sentences": (settings.get("options") or {}).get("n", 3)}
