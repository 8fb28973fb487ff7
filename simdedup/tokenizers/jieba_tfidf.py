"""jieba TF-IDF keywords: the Chinese recipe of the simhash literature.

Features are the ``topk`` words with the highest TF-IDF score, weighted by that score as a float
(the fingerprint turns it into exact fixed-point, see :mod:`simdedup.fingerprint`). The widely
copied ``int(weight * 20)`` is not used: on long documents TF is small and that rounds most
weights to zero.

The keywords equal ``jieba.analyse.extract_tags(text, topK=topk, withWeight=True)``: same
segmentation (``jieba.cut`` with HMM), same filters (words shorter than two characters and jieba's
stop words dropped), same IDF table, same tie order. Long documents are segmented in chunks cut at
whitespace, which jieba treats as a boundary anyway, so they stay in bounded memory.
"""

from __future__ import annotations

import logging
from typing import Iterable

from . import Tokenizer


class JiebaTfidfTokenizer(Tokenizer):
    name = "jieba"
    description = "jieba segmentation, TF-IDF top-k keywords weighted by their TF-IDF score (Chinese)"
    defaults = {"topk": 20}

    def __init__(self, **options):
        super().__init__(**options)
        if self.options["topk"] < 1:
            from ..errors import TokenizerOptionError

            raise TokenizerOptionError("topk must be at least 1")
        self._tfidf = None

    def prepare(self) -> None:
        if self._tfidf is None:
            import jieba
            import jieba.analyse  # noqa: F401  (creates default_tfidf)

            jieba.setLogLevel(logging.ERROR)  # its "Building prefix dict" lines would mix with ours
            jieba.initialize()
            self._tfidf = jieba.analyse.default_tfidf

    def tokens(self, text: str) -> Iterable[str]:
        self.prepare()
        return self._tfidf.tokenizer.cut(text)  # type: ignore[union-attr]

    def features(self, chunks: Iterable[str]) -> dict[str, float]:
        self.prepare()
        tfidf = self._tfidf
        stop_words = tfidf.stop_words  # type: ignore[union-attr]
        freq: dict[str, float] = {}
        for chunk in chunks:
            for word in tfidf.tokenizer.cut(chunk):  # type: ignore[union-attr]
                if len(word.strip()) < 2 or word.lower() in stop_words:
                    continue
                freq[word] = freq.get(word, 0.0) + 1.0
        total = sum(freq.values())
        idf, median = tfidf.idf_freq, tfidf.median_idf  # type: ignore[union-attr]
        scored = {word: count * (idf.get(word, median) / total) for word, count in freq.items()}
        top = sorted(scored.items(), key=lambda item: item[1], reverse=True)[: self.options["topk"]]
        return dict(top)
