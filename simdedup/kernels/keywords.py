"""``jieba-fast``'s TF-IDF keywords of a batch of segmented documents
(:mod:`simdedup.tokenizers.jieba_tfidf`; numba source: :mod:`simdedup.kernels.source.keywords`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .load import Loaded


@dataclass(frozen=True)
class KeywordRules:
    """What the keyword kernel needs to score words as ``jieba.analyse.extract_tags`` does.

    ``keys``/``idf``: an open-addressing table of the XXH3-64 of each word of the IDF table
    (a power of two of slots, key 0 empty, linear probing) and the word's IDF, NaN for a word
    that is dropped; ``median``: the IDF of other words; ``stop``: the stop words, lower-case
    ASCII, back to back, the ``i``-th ending at ``stop_ends[i]``; ``spaces``: the code points
    that ``str.strip`` removes.
    """

    keys: np.ndarray
    idf: np.ndarray
    median: float
    stop: bytes
    stop_ends: np.ndarray
    spaces: np.ndarray


class KeywordKernel(Loaded):
    """The loaded keyword kernel (:func:`simdedup.kernels.source.keywords.keyword_batch`) and its scratch table."""

    FUNCTIONS = ("keywords",)

    def __init__(self, functions: dict[str, Any]):
        import threading

        super().__init__(functions)
        self._lock = threading.Lock()
        self._capacity = 0
        self._table: tuple[np.ndarray, ...] = ()
        self._ahead = np.zeros(16, np.uint64)  # the kernel's AHEAD hashes

    def keywords(
        self, words: list[str], doc_words: np.ndarray, rules: KeywordRules, topk: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(best, scores, found)``: document ``d``'s keywords are ``words[best[d, i]]`` with
        ``scores[d, i]`` for ``i < found[d]``, best first. Its words are
        ``words[doc_words[d]:doc_words[d + 1]]``."""
        data = "".join(words).encode("utf-8", "surrogatepass")
        chars = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        return self.text_keywords(data, chars, doc_words, rules, topk)

    def text_keywords(
        self, data: bytes, chars: np.ndarray, doc_words: np.ndarray, rules: KeywordRules, topk: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`keywords` of words given as text: ``data`` (UTF-8, with ``surrogatepass``) is
        every word back to back, word ``t`` being ``chars[t]`` code points long."""
        best, scores, found, _ = self._run(data, chars, doc_words, rules, topk)
        return best, scores, found

    def text_counts(
        self, data: bytes, chars: np.ndarray, doc_words: np.ndarray, rules: KeywordRules
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(first, idf, counts, found)``: the words of :meth:`text_keywords` that jieba keeps,
        counted, not scored: document ``d``'s are the words of index ``first[d, i]``, with their
        IDF and count, for ``i < found[d]``, first seen first."""
        best, idf, found, counts = self._run(data, chars, doc_words, rules, None)
        return best, idf, counts, found

    def _run(
        self, data: bytes, chars: np.ndarray, doc_words: np.ndarray, rules: KeywordRules, topk: int | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The kernel on words given as text: the ``topk`` keywords, or (None) the counts."""
        ndocs = len(doc_words) - 1
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        chars = np.ascontiguousarray(chars, dtype=np.int64)
        doc_words = np.ascontiguousarray(doc_words, dtype=np.int64)
        most = int(np.diff(doc_words).max()) if ndocs else 0
        room = max(1, min(topk, most) if topk is not None else most)  # no document has more keywords than words
        best = np.zeros((ndocs, room), dtype=np.int64)
        scores = np.zeros((ndocs, room), dtype=np.float64)
        counts = np.zeros((ndocs, room) if topk is None else 1, dtype=np.int64)
        found = np.zeros(ndocs, dtype=np.int64)
        with self._lock:
            if 2 * most > self._capacity:
                self._capacity = 1 << max(10, (2 * most - 1).bit_length())
                self._table = (
                    np.zeros(self._capacity, np.uint64),
                    np.zeros(self._capacity, np.int64),
                    np.zeros(self._capacity, np.int64),
                    np.zeros(self._capacity, np.float64),
                    np.zeros(self._capacity, np.int64),
                )
            stop = np.frombuffer(rules.stop, dtype=np.uint8) if rules.stop else np.zeros(1, dtype=np.uint8)
            self._functions["keywords"](
                buffer.ctypes.data,
                len(data),
                buffer.ctypes.data,
                chars.ctypes.data,
                doc_words.ctypes.data,
                ndocs,
                rules.keys.ctypes.data,
                rules.idf.ctypes.data,
                len(rules.keys),
                rules.median,
                rules.spaces.ctypes.data,
                len(rules.spaces),
                stop.ctypes.data,
                rules.stop_ends.ctypes.data,
                len(rules.stop_ends),
                room if topk is not None else -room,
                *(array.ctypes.data for array in self._table),
                self._capacity,
                best.ctypes.data,
                scores.ctypes.data,
                found.ctypes.data,
                counts.ctypes.data,
                self._ahead.ctypes.data,
            )
        return best, scores, found, counts

    def check(self) -> None:
        # A check against the arithmetic of extract_tags, as for the other kernels: with an empty
        # IDF table every kept word gets the median; "a" is too short, "The" a stop word.
        rules = KeywordRules(np.zeros(2, np.uint64), np.zeros(2), 3.0, b"the", np.array([3]), np.array([32]))
        best, scores, found = self.keywords(["中文", " ", "a", "The", "中文", "词"], np.array([0, 6]), rules, 2)
        if found.tolist() != [1] or best[0, 0] != 0 or scores[0, 0] != 2.0 * (3.0 / 2.0):
            raise RuntimeError("the keyword kernel gives wrong results")
