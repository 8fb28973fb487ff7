"""jieba TF-IDF keywords: the Chinese recipe of the simhash literature.

Features are the ``topk`` words with the highest TF-IDF score, weighted by that score as a float
(the fingerprint turns it into exact fixed-point, see :mod:`simdedup.simhash`). The widely
copied ``int(weight * 20)`` is not used: on long documents TF is small and that rounds most
weights to zero.

The keywords equal ``jieba.analyse.extract_tags(text, topK=topk, withWeight=True)``: same
segmentation (``jieba.cut`` with HMM), same filters (words shorter than two characters and jieba's
stop words dropped), same IDF table, same tie order. They are computed by two compiled kernels
from jieba's own dictionary, HMM and IDF table (:class:`JiebaTfidfTokenizer`), jieba itself where
the kernels cannot load. Long documents are segmented in chunks cut at whitespace, which jieba
treats as a boundary anyway, so they stay in bounded memory.

Two options reproduce the widely copied jieba simhash recipe, for stored fingerprints only:
``recut`` segments the words of ``jieba.cut`` joined with ``|`` again (its
``extract_tags("|".join(jieba.cut(text)))``: a word found by the HMM can split in two), and
``scale`` N > 0 makes each weight ``int(weight * N)``.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter
from typing import Callable, Iterable, Iterator, Sequence

from ..limits import MAX_COUNT
from . import Tokenizer

MAX_SCALE = 1 << 32
#: characters of a document that the kernels take at once (about 100 bytes each while they work)
HELD_CHARS = 1 << 20


class _JiebaKeywords(Tokenizer):
    """The keywords of ``extract_tags`` from the words of a segmenter (``_cut``, set by
    :meth:`prepare`), counted and scored in Python (:class:`_KeywordScores`)."""

    defaults = {"topk": 20}
    optional = {"recut": False, "scale": 0}

    def __init__(self, **options):
        super().__init__(**options)
        # A document's scores (its words' shares of its length times their IDF, under 16) sum
        # to less than 16: scaled, they stay within simhash's 2**38.
        if not 1 <= self.options["topk"] <= MAX_COUNT or not 0 <= self.option("scale") <= MAX_SCALE:
            from ..errors import TokenizerOptionError

            raise TokenizerOptionError(f"topk must be 1 to {MAX_COUNT}, and scale 0 to {MAX_SCALE}")
        self._tfidf = None
        self._keyword_scores: _KeywordScores | None = None

    def __getstate__(self) -> dict:
        # What prepare() loaded (jieba's objects, a compiled kernel) is loaded again where the
        # tokenizer is unpickled, e.g. in a worker process started by "spawn".
        return {"options": self.options}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["options"])

    def tokens(self, text: str) -> Iterable[str]:
        self.prepare()
        return self._cut(text)

    def _cut(self, text: str) -> Iterable[str]:
        raise NotImplementedError

    def features(self, chunks: Iterable[str]) -> dict[str, float]:
        self.prepare()
        # Count every word in C (Counter), then score the distinct ones: the same counts, in the
        # same first-seen order, as jieba's loop over every word.
        counts: Counter[str] = Counter()
        for chunk in chunks:
            counts.update(self._words(chunk))
        return self._weights(self._scores.top(counts, self.options["topk"]))

    def _words(self, chunk: str) -> Iterable[str]:
        """The words of a chunk, segmented again after joining them with ``|`` with ``recut``."""
        words = self._cut(chunk)
        return self._cut("|".join(words)) if self.option("recut") else words

    def _weights(self, scores: dict[str, float]) -> dict[str, float]:
        """The keywords' scores, or ``int(score * scale)`` with ``scale``."""
        scale = self.option("scale")
        return {word: float(int(score * scale)) for word, score in scores.items()} if scale else scores

    @property
    def _scores(self) -> "_KeywordScores":
        if self._keyword_scores is None:
            if self._tfidf is None:  # jieba's IDF table, read without jieba
                self._tfidf = _jieba_idf()
            tfidf = self._tfidf
            self._keyword_scores = _KeywordScores(tfidf.idf_freq, tfidf.median_idf, tfidf.stop_words)  # type: ignore[union-attr]
        return self._keyword_scores


class JiebaTfidfTokenizer(_JiebaKeywords):
    """``jieba.analyse.extract_tags(text, topK, withWeight=True)``'s keywords, computed from
    jieba's own dictionary, HMM and IDF table by two compiled kernels: jieba's segmentation
    (:func:`simdedup.kernels.source.jieba_cut.cut_batch`) and its scoring
    (:func:`simdedup.kernels.source.keywords.keyword_batch`), a batch of documents in one call.

    Where the kernels cannot load (no numba and no kept machine code; ``SIMDEDUP_FASTPATH=0``),
    or this process changed jieba's dictionary, HMM or IDF table before the tokenizer was
    prepared (``jieba.load_userdict``, ``add_word``, ``set_dictionary``, ``set_idf_path`` ...;
    ``del_word`` of a shipped word is not seen), jieba itself segments and the keywords are
    scored in Python: the same results. The keyword kernel knows a document's words by their
    64-bit XXH3 hash: two words of one document with one hash would be counted as one.
    """

    name = "jieba"
    description = (
        "jieba segmentation, TF-IDF top-k keywords weighted by their TF-IDF score (Chinese): "
        "extract_tags exactly, by compiled kernels"
    )

    def __init__(self, **options):
        super().__init__(**options)
        self._kernels: _Kernels | None = None
        self._prepared = False

    def prepare(self) -> None:
        if self._prepared:
            return
        kernels = _kernels()
        if kernels is not None and _jieba_as_shipped(kernels.tables):
            self._kernels = kernels
        else:
            import jieba
            import jieba.analyse  # noqa: F401  (creates default_tfidf)

            jieba.setLogLevel(logging.ERROR)  # its "Building prefix dict" lines would mix with ours
            jieba.initialize()
            self._tfidf = jieba.analyse.default_tfidf
        self._prepared = True

    def _cut(self, text: str) -> Iterable[str]:
        if self._kernels is None:
            return self._tfidf.tokenizer.cut(text)  # type: ignore[union-attr]
        return self._kernels.words(text, recut=False)

    def _words(self, chunk: str) -> Iterable[str]:
        if self._kernels is None:
            return super()._words(chunk)
        # The words of the "|"-joined words, less the "|"s, which are never keywords.
        return self._kernels.words(chunk, recut=self.option("recut"))

    def features(self, chunks: Iterable[str]) -> dict[str, float]:
        self.prepare()
        if self._kernels is None or self._kernels.rules is None:
            return super().features(chunks)
        # A document up to HELD_CHARS goes to the kernels whole; a larger one streams through
        # them, HELD_CHARS at a time, its kept words counted (and scored once) in Python.
        recut = self.option("recut")
        merged: dict[str, list] = {}  # word: [IDF, count], first seen first
        for group, whole in _groups(chunks):
            if whole:
                return self._weights(self._kernels.keywords([group], self.options["topk"], recut)[0])
            for word, idf, count in zip(*self._kernels.counts(group, recut)):
                if word in merged:
                    merged[word][1] += count
                else:
                    merged[word] = [idf, count]
        import numpy as np

        idfs = np.array([entry[0] for entry in merged.values()], dtype=np.float64)
        counts = np.array([entry[1] for entry in merged.values()], dtype=np.float64)
        return self._weights(_top_keywords(list(merged), idfs, counts, self.options["topk"]))

    def features_many(self, documents: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        self.prepare()
        if self._kernels is None or self._kernels.rules is None:
            return super().features_many(documents)
        kernels = self._kernels
        return _held_or_streamed(
            documents,
            lambda held: map(self._weights, kernels.keywords(held, self.options["topk"], self.option("recut"))),
            self.features,
        )


def _groups(chunks: Iterable[str]) -> Iterator[tuple[list[str], bool]]:
    """A document's chunks in groups of up to HELD_CHARS characters (a longer chunk alone), each
    with whether it is the whole document."""
    group: list[str] = []
    size, first = 0, True
    for chunk in chunks:
        if group and size + len(chunk) > HELD_CHARS:
            yield group, False
            group, size, first = [], 0, False
        group.append(chunk)
        size += len(chunk)
    yield group, first and size <= HELD_CHARS


def _held_or_streamed(
    documents: Sequence[Sequence[str]],
    together: Callable[[list[Sequence[str]]], Iterable[dict[str, float]]],
    alone: Callable[[Sequence[str]], dict[str, float]],
) -> list[dict[str, float]]:
    """The keywords of documents (each given as its chunks): those up to HELD_CHARS
    ``together`` in the kernels, a longer one (a long text held in memory) ``alone``, its
    words counted as its chunks stream."""
    sizes = [sum(map(len, chunks)) for chunks in documents]
    found = iter(together([chunks for chunks, size in zip(documents, sizes) if size <= HELD_CHARS]))
    return [next(found) if size <= HELD_CHARS else alone(chunks) for chunks, size in zip(documents, sizes)]


#: words that :meth:`_Kernels.words` makes strings of at a time
_WORDS_AT_ONCE = 4096
#: words that :meth:`_Kernels.counts` has the keyword kernel count at a time
_COUNTED_WORDS = 1 << 19


class _Kernels:
    """The segmentation and keyword kernels with jieba's tables (:func:`_kernels`)."""

    def __init__(self, cut, tables, keywords, rules):
        import numpy as np

        self.cut, self.tables, self.keyword_kernel, self.rules = cut, tables, keywords, rules
        self._bounds = np.zeros(1, dtype=np.int64)  # kept, as the kernels' arrays (used under cut.lock)

    def words(self, text: str, recut: bool) -> Iterator[str]:
        """``jieba.cut(text)``'s words (with ``recut``, those of each word cut again), made a
        few thousand at a time: a chunk of megabytes would otherwise hold a string per word."""
        import numpy as np

        with self.cut.lock:
            lengths, _ = self.cut.cut(text.encode("utf-8", "surrogatepass"), np.array([len(text)]), self.tables, recut)
            ends = np.cumsum(lengths)
        for first in range(0, len(ends), _WORDS_AT_ONCE):
            bounds = ends[max(first - 1, 0) : first + _WORDS_AT_ONCE].tolist()
            if first == 0:
                bounds.insert(0, 0)
            yield from map(text.__getitem__, map(slice, bounds, bounds[1:]))

    def counts(self, chunks: Sequence[str], recut: bool) -> tuple[list[str], list[float], list[int]]:
        """The words of a part of a document (given as chunks) that jieba keeps, first seen first,
        with their IDF and count, counted by the keyword kernel _COUNTED_WORDS at a time (its
        table grows with the words it takes)."""
        import numpy as np

        text = "".join(chunks)
        data = text.encode("utf-8", "surrogatepass")
        chunk_ends = np.cumsum(np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks)))
        words: list[str] = []
        idfs: list[float] = []
        counts: list[int] = []
        with self.cut.lock:
            lengths, _ = self.cut.cut(data, chunk_ends, self.tables, recut)
            parts = np.append(np.arange(0, len(lengths), _COUNTED_WORDS), len(lengths))
            first, idf, count, found = self.keyword_kernel.text_counts(data, lengths, parts, self.rules)
            bounds = self._word_bounds(lengths)
            for part, n in enumerate(found.tolist()):
                chosen = first[part, :n]
                words += map(text.__getitem__, map(slice, bounds[chosen].tolist(), bounds[chosen + 1].tolist()))
                idfs += idf[part, :n].tolist()
                counts += count[part, :n].tolist()
        return words, idfs, counts

    def _word_bounds(self, lengths):
        """Where each word starts, and the last ends: ``text[bounds[t]:bounds[t + 1]]`` is word
        ``t`` (an array of this object's, valid while ``cut.lock`` is held)."""
        import numpy as np

        if len(self._bounds) <= len(lengths):
            self._bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=self._bounds[1 : len(lengths) + 1])
        return self._bounds

    def keywords(self, documents: Sequence[Sequence[str]], topk: int, recut: bool) -> list[dict[str, float]]:
        """Each document's keywords and their scores, best first (documents given as chunks)."""
        import numpy as np

        chunks = [chunk for chunks in documents for chunk in chunks]
        text = "".join(chunks)
        data = text.encode("utf-8", "surrogatepass")
        chunk_ends = np.cumsum(np.fromiter(map(len, chunks), dtype=np.int64, count=len(chunks)))
        with self.cut.lock:
            lengths, chunk_words = self.cut.cut(data, chunk_ends, self.tables, recut)
            doc_words = chunk_words[np.cumsum([0, *map(len, documents)])]
            best, scores, found = self.keyword_kernel.text_keywords(data, lengths, doc_words, self.rules, topk)
            bounds = self._word_bounds(lengths)
            kept = np.arange(best.shape[1]) < found[:, None]  # every document's keywords, in order
            chosen = best[kept]
            keywords = list(map(text.__getitem__, map(slice, bounds[chosen].tolist(), bounds[chosen + 1].tolist())))
            weights = scores[kept].tolist()
        ends = np.cumsum(found).tolist()
        return [dict(zip(keywords[end - n : end], weights[end - n : end])) for n, end in zip(found.tolist(), ends)]


def _kernels() -> _Kernels | None:
    """The kernels and jieba's tables, or None when the segmentation kernel does not load or
    ``SIMDEDUP_FASTPATH=0`` (the keyword kernel alone may fail: then the words are scored in
    Python)."""
    import os

    return None if os.environ.get("SIMDEDUP_FASTPATH", "1") == "0" else _loaded_kernels()


@functools.cache
def _loaded_kernels() -> _Kernels | None:
    from ..kernels.jieba_cut import JiebaCutKernel
    from ..kernels.keywords import KeywordKernel

    cut = JiebaCutKernel.loaded()
    if cut is None:
        return None
    tables = _segment_tables()
    if tables is None:
        return None
    keywords = KeywordKernel.loaded()
    rules = _keyword_rules() if keywords is not None else None
    return _Kernels(cut, tables, keywords, rules)


def _top_keywords(words: list[str], idfs, counts, topk: int) -> dict[str, float]:
    """``extract_tags``'s ``topk`` keywords and weights of distinct words (first seen first) with
    their IDF (NaN: dropped) and counts (float64 arrays): ``count * (idf / total)``, ``total`` the
    kept words' count, the heaviest first, ties in first-seen order."""
    import numpy as np

    kept = np.flatnonzero(~np.isnan(idfs))
    if not len(kept):
        return {}
    frequency = counts[kept]
    scores = frequency * (idfs[kept] / float(frequency.sum()))
    best = np.argsort(-scores, kind="stable")[:topk]
    return {words[i]: score for i, score in zip(kept[best].tolist(), scores[best].tolist())}


class _KeywordScores:
    """``extract_tags``'s choice and weights of keywords, given the words' counts.

    jieba drops words shorter than two characters (after stripping) and its stop words, weighs
    each other word by ``count * (idf / total)`` (``total``: the kept words' count; unknown words
    get the median IDF) and keeps the ``topk`` heaviest, ties in first-seen order. Here what
    depends on the word alone (dropped, or its IDF) is remembered per word, and the arithmetic
    runs in numpy, with the same float64 operations in the same order.
    """

    def __init__(self, idf: dict[str, float], median: float, stop_words: frozenset[str] | set[str]):
        self._idf, self._median, self._stop_words = idf, median, stop_words
        self._word_idf: dict[str, float] = {}  # NaN: not a keyword (jieba's IDF values are finite)

    def top(self, counts: Counter[str], topk: int) -> dict[str, float]:
        import numpy as np

        words = list(counts)
        values = list(map(self._word_idf.get, words))
        if None in values:  # words not met before
            for i in [i for i, value in enumerate(values) if value is None]:
                values[i] = self._word_idf[words[i]] = self._idf_of(words[i])
        frequency = np.fromiter(counts.values(), dtype=np.float64, count=len(words))
        return _top_keywords(words, np.array(values, dtype=np.float64), frequency, topk)

    def _idf_of(self, word: str) -> float:
        """The word's IDF, or NaN when jieba drops it (too short, a stop word)."""
        if len(word.strip()) < 2 or word.lower() in self._stop_words:
            return math.nan
        return self._idf.get(word, self._median)


class JiebaFastTokenizer(_JiebaKeywords):
    """The same keywords with jieba-rs (``rjieba``) segmenting, and the keywords of a batch of
    documents scored by the keyword kernel (:func:`simdedup.kernels.source.keywords.keyword_batch`)
    where it loads. Kept for the scripts and records that name it: ``jieba`` is now exact and
    faster (its own kernel segments as jieba does).

    jieba-rs reproduces jieba's segmentation (dictionary, DAG, HMM for unknown words); on the
    bundled and benchmark Chinese text the two agree on every document, and then the keywords
    and fingerprints are identical to ``jieba``'s. Agreement is measured, not guaranteed. The
    kernel knows words by their 64-bit XXH3 hash, as the fingerprint does: two different words
    with one hash (about one chance in 10^7 for a corpus of a million distinct words) would be
    counted as one.
    """

    name = "jieba-fast"
    description = (
        "jieba TF-IDF keywords with the jieba-rs segmenter (rjieba): same results where they agree "
        "(jieba is now exact and faster)"
    )

    def prepare(self) -> None:
        if getattr(self, "_rjieba_cut", None) is not None:
            return
        from ..optional import need

        self._rjieba_cut = need("rjieba", "the jieba-fast tokenizer").cut
        from ..kernels.keywords import KeywordKernel

        self._kernel = KeywordKernel.loaded()
        self._rules = _keyword_rules() if self._kernel is not None else None

    def _cut(self, text: str) -> list[str]:
        try:
            return self._rjieba_cut(text, True)
        except UnicodeEncodeError:
            # Lone surrogates (JSON lines may escape them) cannot cross into Rust. jieba makes
            # each one a word of its own, and a boundary, as any character outside its word
            # classes: so do the same around rjieba.
            words: list[str] = []
            for piece in _SURROGATE.split(text):
                if piece:
                    words += [piece] if _SURROGATE.fullmatch(piece) else self._rjieba_cut(piece, True)
            return words

    def features_many(self, documents: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        self.prepare()
        if self._rules is None:
            return super().features_many(documents)
        return _held_or_streamed(documents, self._kernel_keywords, self.features)

    def _kernel_keywords(self, documents: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        """The keywords of documents of up to HELD_CHARS, their words counted by the kernel."""
        import numpy as np

        words: list[str] = []
        ends = [0]
        for chunks in documents:
            for chunk in chunks:
                words += self._words(chunk)
            ends.append(len(words))
        topk = self.options["topk"]
        best, scores, found = self._kernel.keywords(words, np.array(ends), self._rules, topk)
        return [
            self._weights(dict(zip(map(words.__getitem__, best[d, :n].tolist()), scores[d, :n].tolist())))
            for d, n in enumerate(found.tolist())
        ]


_SURROGATE = re.compile("([\ud800-\udfff])")

# jieba's KeywordExtractor.STOP_WORDS, so that jieba.analyse (which loads jieba's whole
# dictionary and part-of-speech table, about a second) need not be imported here.
_STOP_WORDS = frozenset(
    (
        "the",
        "of",
        "is",
        "and",
        "to",
        "in",
        "that",
        "we",
        "for",
        "an",
        "are",
        "by",
        "be",
        "as",
        "on",
        "with",
        "can",
        "if",
        "from",
        "which",
        "you",
        "it",
        "this",
        "then",
        "at",
        "have",
        "all",
        "not",
        "one",
        "has",
        "or",
    )
)


def _jieba_folder() -> str:
    """Where jieba is installed: found, not imported (importing jieba takes 0.1-0.2 s)."""
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        from ..errors import TokenizerOptionError

        raise TokenizerOptionError("the jieba tokenizers need jieba: pip install jieba")
    return spec.submodule_search_locations[0]


def _idf_path() -> str:
    """Where jieba's IDF table is."""
    import os

    return os.path.join(_jieba_folder(), "analyse", "idf.txt")


#: jieba's files that its segmentation depends on: its rules, its dictionary, its HMM
_SEGMENTATION_FILES = (
    "__init__.py",
    "dict.txt",
    "finalseg/__init__.py",
    "finalseg/prob_start.py",
    "finalseg/prob_trans.py",
    "finalseg/prob_emit.py",
)


@functools.cache
def _segment_tables():
    """jieba's dictionary, HMM and character classes as the segmentation kernel takes them
    (:class:`~simdedup.kernels.jieba_cut.JiebaTables`), kept in :mod:`simdedup.cache` under the
    hash of jieba's files (built in about 3 s, loaded in about 15 ms); None when they do not
    fit the kernel's layout."""
    import os
    import unicodedata

    import xxhash

    from .. import cache
    from ..kernels.jieba_cut import JiebaTables

    folder = _jieba_folder()
    digest = xxhash.xxh3_128()
    for name in _SEGMENTATION_FILES:
        with open(os.path.join(folder, name), "rb") as handle:
            digest.update(handle.read())
    digest.update(f"{unicodedata.unidata_version} layout 4".encode())
    name = f"jieba-cut-{digest.hexdigest()[:24]}.bin"
    data = cache.read_view(name)
    if data is not None:
        try:
            return JiebaTables.from_bytes(data)
        except ValueError:
            pass
    tables = _build_segment_tables(folder)
    if tables is not None:
        cache.write(name, tables.to_bytes())
    return tables


def _build_segment_tables(folder: str):
    """:func:`_segment_tables` read from jieba: the prefix dictionary as ``jieba.Tokenizer``
    builds it from ``dict.txt``, ``finalseg``'s probabilities, and each character's classes as
    jieba's regular expressions match it."""
    import os
    import sys

    import jieba
    import jieba.finalseg
    import numpy as np

    from ..kernels.jieba_cut import ALNUM, BLOCK, DIGIT, HMM_HAN, build_tables

    with open(os.path.join(folder, "dict.txt"), "rb") as handle:
        freq, total = jieba.Tokenizer.gen_pfdict(handle)
    # every code point, each between two NULs (in no class), so that each match is one character
    separated = "\0" + "\0".join(map(chr, range(sys.maxunicode + 1))) + "\0"
    classes = np.zeros(sys.maxunicode + 1, dtype=np.uint8)
    for pattern, bit in (
        (jieba.re_han_default, BLOCK),
        (jieba.finalseg.re_han, HMM_HAN),
        (jieba.finalseg.re_skip, ALNUM),
        (re.compile(r"\d"), DIGIT),
    ):
        classes[[match.start() // 2 for match in pattern.finditer(separated)]] |= bit
    classes = classes[: int(np.flatnonzero(classes)[-1]) + 1]
    finalseg = jieba.finalseg
    return build_tables(freq, total, classes, (finalseg.start_P, finalseg.trans_P, finalseg.emit_P))


def _jieba_as_shipped(tables) -> bool:
    """Whether jieba, if this process imported it, still has the dictionary, HMM, IDF table and
    stop words it ships (which the kernels' tables hold): no user dictionary, added word, forced
    split or other IDF table."""
    import os
    import sys

    jieba = sys.modules.get("jieba")
    if jieba is None:
        return True
    analyse = sys.modules.get("jieba.analyse")
    segmenter = analyse.default_tfidf.tokenizer if analyse is not None else jieba.dt
    if segmenter.dictionary != jieba.DEFAULT_DICT or segmenter.user_word_tag_tab:
        return False
    if segmenter.initialized and (segmenter.total != tables.total or len(segmenter.FREQ) != tables.entries):
        return False
    if getattr(sys.modules.get("jieba.finalseg"), "Force_Split_Words", None):
        return False
    if analyse is not None:
        tfidf = analyse.default_tfidf
        if os.path.realpath(tfidf.idf_loader.path) != os.path.realpath(_idf_path()) or tfidf.stop_words != set(
            _STOP_WORDS
        ):
            return False
    return True


def _idf_identity() -> str:
    """What names jieba's IDF table in the cache: its path, size and modification time (reading
    and hashing its 6 MB would cost more than the cache saves)."""
    import os

    path = _idf_path()
    status = os.stat(path)
    return f"{path} {status.st_size} {status.st_mtime_ns}"


@functools.cache
def _jieba_idf():
    """jieba's IDF table and median, read as jieba.analyse reads them, kept in
    :mod:`simdedup.cache` (reading the text takes 0.4 s, the kept copy 0.05 s)."""
    import hashlib
    import marshal
    from types import SimpleNamespace

    from .. import cache

    name = f"jieba-idf-{hashlib.sha256(_idf_identity().encode()).hexdigest()[:24]}.marshal"
    try:
        idf, median = marshal.loads(cache.read(name) or b"")
    except (EOFError, ValueError, TypeError):
        idf = {}
        with open(_idf_path(), "rb") as handle:
            content = handle.read()
        for line in content.decode("utf-8").splitlines():  # as jieba.analyse.tfidf.IDFLoader
            word, freq = line.strip().split(" ")
            idf[word] = float(freq)
        median = sorted(idf.values())[len(idf) // 2]
        cache.write(name, marshal.dumps((idf, median)))
    return SimpleNamespace(stop_words=_STOP_WORDS, idf_freq=idf, median_idf=median)


@functools.cache
def _keyword_rules():
    """jieba's IDF table and filters as the keyword kernel takes them (:class:`KeywordRules`),
    kept in :mod:`simdedup.cache` (built in about 0.3 s, loaded in a few ms); None when two of
    jieba's words share a hash (the Python path then does the work)."""
    import hashlib

    import numpy as np

    from .. import cache
    from ..kernels.keywords import KeywordRules

    digest = hashlib.sha256(f"{_idf_identity()} {sorted(_STOP_WORDS)} layout 2".encode()).hexdigest()[:24]
    # KELVIN SIGN is the one non-ASCII character that lower-cases to ASCII ("k"): the kernel
    # takes non-ASCII words for never being stop words, true while no stop word has a "k".
    assert all(word.isascii() and word == word.lower() and "k" not in word for word in _STOP_WORDS)
    stop_words = sorted(_STOP_WORDS)
    stop = "".join(stop_words).encode("ascii")
    stop_ends = np.cumsum([len(word) for word in stop_words]).astype(np.int64)
    spaces = np.array(_SPACES, dtype=np.int64)
    name = f"jieba-keywords-{digest}.bin"
    data = cache.read_view(name)
    slots = (len(data) - 8) // 16 if data is not None else 0
    if data is None or len(data) != 8 + 16 * slots or slots < 2 or slots & (slots - 1):
        data = _build_keyword_table(_jieba_idf())
        if data is None:
            return None
        cache.write(name, data)
        slots = (len(data) - 8) // 16
    median = float(np.frombuffer(data[:8], dtype=np.float64)[0])
    keys = np.frombuffer(data, dtype=np.uint64, count=slots, offset=8)
    idf = np.frombuffer(data, dtype=np.float64, count=slots, offset=8 + 8 * slots)
    return KeywordRules(keys, idf, median, stop, stop_ends, spaces)


#: the code points ``str.strip()`` removes (``str.isspace``), as the keyword kernel compares them
_SPACES = (
    0x9,
    0xA,
    0xB,
    0xC,
    0xD,
    0x1C,
    0x1D,
    0x1E,
    0x1F,
    0x20,
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)


def _build_keyword_table(tfidf) -> bytes | None:
    """The median IDF, then an open-addressing table of XXH3-64 word hashes, then each slot's IDF
    (NaN: a dropped word), as :func:`_keyword_rules` reads them; None if two words share a hash."""
    import numpy as np
    import xxhash

    scores = _KeywordScores(tfidf.idf_freq, tfidf.median_idf, tfidf.stop_words)
    hashes = [xxhash.xxh3_64_intdigest(word.encode("utf-8", "surrogatepass")) for word in tfidf.idf_freq]
    if 0 in hashes or len(set(hashes)) != len(hashes):
        return None
    slots = 1 << max(1, (3 * len(hashes) // 2).bit_length())  # at most two thirds full
    keys = np.zeros(slots, dtype=np.uint64)
    idf = np.zeros(slots, dtype=np.float64)
    mask = slots - 1
    for word, key in zip(tfidf.idf_freq, hashes):
        slot = key & mask
        while keys[slot]:
            slot = (slot + 1) & mask
        keys[slot] = key
        idf[slot] = scores._idf_of(word)
    return np.array([tfidf.median_idf], dtype=np.float64).tobytes() + keys.tobytes() + idf.tobytes()
