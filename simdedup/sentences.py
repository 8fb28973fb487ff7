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
from typing import Iterable

_BOUNDARY = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n\s*\n")
_SPACE = re.compile(r"\s+")


def _normalise(sentence: str) -> str:
    return _SPACE.sub(" ", sentence).strip()


def longest_sentences(chunks: Iterable[str], n: int) -> tuple[int, list[str]]:
    """Number of sentences and the ``n`` longest of a text given in chunks (bounded memory)."""
    heap: list[tuple[int, str]] = []  # (length, sentence): the n largest so far
    count = 0

    def offer(sentence: str) -> None:
        nonlocal count
        if sentence:
            count += 1
            item = (len(sentence), sentence)
            if len(heap) < n:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)

    carry = ""
    for chunk in chunks:
        parts = _BOUNDARY.split(carry + chunk)
        carry = parts.pop()  # may continue in the next chunk: kept as it is
        for sentence in parts:
            offer(_normalise(sentence))
    offer(_normalise(carry))
    return count, sorted(sentence for _, sentence in heap)


def signature(sentences: list[str]) -> int:
    """64-bit signature of sorted sentences."""
    import xxhash

    return xxhash.xxh3_64_intdigest("\n".join(sentences).encode("utf-8", "surrogatepass"))
