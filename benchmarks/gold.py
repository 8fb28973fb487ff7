"""Gold definitions of the labelled sets: shingles and their exact Jaccard over all pairs.

Shared by the set builder (``eval_data.py``, in the project's virtualenv) and the baselines
(``baselines.py``, in ``.venv-eval``), so it needs only numpy.

- ``word3``: text -> Unicode NFKC -> lowercase -> words are the maximal runs of ``\\w+`` -> the
  set of runs of 3 consecutive words (``../shared/eval/dev-en``'s definition);
- ``char5``: text -> NFKC -> lowercase -> every whitespace character deleted -> the set of
  5-character substrings (``dev-zh``'s definition);
- ``by-language``: ``char5`` for a document whose non-whitespace characters are at least 20%
  CJK ideographs, else ``word3`` (``dev-synthetic``'s shingles).
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

import numpy as np

WORD = re.compile(r"\w+")
SPACE = re.compile(r"\s+")
CJK_IDEOGRAPH = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
NEAR_MISS = Fraction(7, 10)  # every pair at or above this is listed
DUPLICATE = Fraction(4, 5)  # the default gold: a duplicate pair


def cjk_share(text: str) -> float:
    """CJK ideographs among the non-whitespace characters."""
    chars = len(SPACE.sub("", text))
    return len(CJK_IDEOGRAPH.findall(text)) / chars if chars else 0.0


def word3(text: str) -> set[str]:
    words = WORD.findall(unicodedata.normalize("NFKC", text).lower())
    return {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}


def char5(text: str) -> set[str]:
    chars = SPACE.sub("", unicodedata.normalize("NFKC", text).lower())
    return {chars[i : i + 5] for i in range(len(chars) - 4)}


def by_language(text: str) -> set[str]:
    return char5(text) if cjk_share(text) >= 0.2 else word3(text)


SHINGLES = {"word3": word3, "char5": char5, "by-language": by_language}


def components(pairs, nodes=()) -> dict:
    """The connected component (a representative node) of every node named in ``nodes`` or
    in a pair."""
    parent = {node: node for node in nodes}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find(a)] = find(b)
    return {x: find(x) for x in parent}


def at_least(inter: int, union: int, threshold: Fraction) -> bool:
    """``inter / union >= threshold`` in integers."""
    return inter * threshold.denominator >= threshold.numerator * union


def similar_pairs(shingle_sets: list[set[str]], threshold: Fraction = NEAR_MISS) -> list[tuple[int, int, int, int]]:
    """Every pair ``(i, j, intersection, union)``, ``i < j``, whose exact Jaccard is at least
    ``threshold``, sorted.

    An exact all-pairs similarity join (prefix filtering, Chaudhuri et al. 2006): shingles are
    interned and ranked rarest first; a pair with Jaccard >= t shares at least ``ceil(t |x|)``
    shingles, so it shares one of the first ``|x| - ceil(t |x|) + 1`` shingles of each
    document. Pairs sharing a prefix shingle (and whose sizes allow the threshold) are
    counted exactly; no hashing or sampling is involved, so the list is complete.
    """
    interned: dict[str, int] = {}
    rows = [
        np.array(sorted(interned.setdefault(s, len(interned)) for s in shingles), dtype=np.int64)
        for shingles in shingle_sets
    ]
    frequency = np.bincount(np.concatenate(rows), minlength=len(interned)) if rows else np.zeros(0, np.int64)
    rank = np.empty(len(interned), dtype=np.int64)
    rank[np.lexsort((np.arange(len(interned)), frequency))] = np.arange(len(interned))
    rows = [np.sort(rank[row]) for row in rows]
    sizes = np.array([len(row) for row in rows], dtype=np.int64)
    postings: dict[int, list[int]] = {}
    for doc, row in enumerate(rows):
        size = len(row)
        if size == 0:
            continue
        need = -(-threshold.numerator * size // threshold.denominator)  # ceil(t |x|)
        for shingle in row[: size - need + 1].tolist():
            postings.setdefault(shingle, []).append(doc)
    candidates: set[tuple[int, int]] = set()
    for docs in postings.values():
        for n, i in enumerate(docs):
            for j in docs[n + 1 :]:
                small, large = sorted((int(sizes[i]), int(sizes[j])))
                if at_least(small, large, threshold):  # size filter: J <= |small| / |large|
                    candidates.add((i, j))
    pairs = []
    for i, j in sorted(candidates):
        inter = len(np.intersect1d(rows[i], rows[j], assume_unique=True))
        union = int(sizes[i] + sizes[j]) - inter
        if at_least(inter, union, threshold):
            pairs.append((i, j, inter, union))
    return pairs
