#!/usr/bin/env python3
"""Does an order-aware alignment ratio separate the pairs the word-count (bag) path accepts
that are in the gold from those that are not? (issue 29; the answer, docs/quality.md: no)

The ratio of two token sequences is ``2 * LCS / (n + m)`` (LCS: their longest common
subsequence, bit-parallel). Each set is fingerprinted once with ``dedup``'s defaults; every
candidate pair exact verification measures while clustering is recorded with its bag
similarity, resemblance and the resemblance the default threshold needs of it, and the pairs
whose resemblance is below that (where the bag path decides) and whose bag is at least
:data:`RECORDED_BAG` with the ratio of two sequences:
words (the bag's tokens, in order) and words with every punctuation character a token.

    python benchmarks/alignment.py                    # quantiles of the ratio, per set and class
    python benchmarks/alignment.py --pairs pairs.tsv  # and every such pair
    python benchmarks/alignment.py --rules            # F1 of rules that use the ratio

``--rules`` clusters each set again under rules that add the ratio to the bag path, on the
Python linkage (every verdict through :meth:`simdedup.similarity.ExactIndex.verdicts`, which
it patches; no upper bounds), and prints pairwise F1 per set and the minimum.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import available_sets  # noqa: E402
from scoring import gold_pairs  # noqa: E402
from sensitivity import fingerprinted  # noqa: E402

from simdedup import similarity  # noqa: E402
from simdedup.group import ClusterOptions, cluster_fingerprints  # noqa: E402


@numba.njit
def lcs_length(a, b):  # pragma: no cover - compiled
    """The length of the longest common subsequence of int64 sequences ``a`` and ``b``,
    bit-parallel over ``a`` (Crochemore et al. 2001: for each token y of ``b``, with M the bits
    of ``a``'s positions holding y, ``V = (V + (V & M)) | (V & ~M)``; the LCS is the number of
    zero bits among V's first len(a)): O(len(a) * len(b) / 64)."""
    n = len(a)
    if n == 0 or len(b) == 0:
        return 0
    words = (n + 63) // 64
    symbols = np.unique(a)
    masks = np.zeros((len(symbols), words), dtype=np.uint64)
    for i in range(n):
        s = np.searchsorted(symbols, a[i])
        masks[s, i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    v = np.full(words, ~np.uint64(0), dtype=np.uint64)
    for y in b:
        s = np.searchsorted(symbols, y)
        if s >= len(symbols) or symbols[s] != y:
            continue
        carry = np.uint64(0)
        for w in range(words):
            m = masks[s, w]
            x = v[w]
            u = x & m
            total = x + u
            c1 = np.uint64(1) if total < x else np.uint64(0)
            total2 = total + carry
            c2 = np.uint64(1) if total2 < total else np.uint64(0)
            carry = c1 | c2
            v[w] = total2 | (x & ~m)
    zeros = 0
    for i in range(n):
        if (v[i >> 6] >> np.uint64(i & 63)) & np.uint64(1) == 0:
            zeros += 1
    return zeros


def token_sequences(text: str | bytes, codes: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(words, words and every punctuation character)`` of a text, cut as the exact kernel
    cuts its tokens (``simdedup.kernels.source.exact.exact_tokens``), each token a number
    (``codes``: token to number, shared by the texts compared)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogatepass")
    table = similarity._tables(True)
    words: list[int] = []
    every: list[int] = []
    run: list[str] = []

    def add(token: str, is_word: bool) -> None:
        code = codes.setdefault(token, len(codes))
        if is_word:
            words.append(code)
        every.append(code)

    for ch in text:
        point = ord(ch)
        entry = int(table[point]) if point < 0x10000 else point << 2 | similarity._ONE_WORD
        kind, low = entry & 3, chr(entry >> 2)
        if kind == similarity._RUN:
            run.append(low)
            continue
        if run:
            add("".join(run), True)
            run = []
        if kind != similarity._SPACE:
            add(low, kind == similarity._ONE_WORD)
    if run:
        add("".join(run), True)
    return np.array(words, dtype=np.int64), np.array(every, dtype=np.int64)


def ratio(a: np.ndarray, b: np.ndarray) -> float:
    """``2 * LCS / (n + m)``: 1 for equal sequences, lower as they differ or are reordered."""
    if len(a) + len(b) == 0:
        return 1.0
    return 2.0 * lcs_length(a, b) / (len(a) + len(b))


#: pairs recorded have at least this bag similarity (below it, no rule here would accept them)
RECORDED_BAG = 0.7


class _Recorder:
    """Patches :class:`simdedup.similarity.ExactIndex` so that each index keeps the texts it was
    made from (to align them), and each call of ``verdicts`` goes through :meth:`verdicts`:
    pairs are recorded, and with a ``rule``, its verdicts replace the kernel's where the
    resemblance is below what is needed."""

    SEQUENCES = {"words": 0, "punct": 1}

    def __init__(self, prints, rule: dict | None = None):
        self.rule, self.found = rule, []
        self.doc = {}  # text digest -> a document with that text
        for i, kept in enumerate(prints.exact):
            if kept is not None:
                self.doc.setdefault(kept.digest(), i)
        self.codes: dict = {}
        self.sequences: dict = {}
        self.ratios: dict = {}

    def align(self, index, x: int, y: int, sequence: str) -> float:
        tx, ty = index.texts[x], index.texts[y]
        dx, dy = tx.digest(), ty.digest()
        key = (min(dx, dy), max(dx, dy), sequence)
        if key not in self.ratios:
            for digest, kept in ((dx, tx), (dy, ty)):
                if digest not in self.sequences:
                    self.sequences[digest] = token_sequences(kept.text, self.codes)
            which = self.SEQUENCES[sequence]
            self.ratios[key] = ratio(self.sequences[dx][which], self.sequences[dy][which])
        return self.ratios[key]

    def run(self, prints) -> list:
        """Cluster ``prints`` with the defaults, patched; returns the clusters."""
        from simdedup import linkage

        recorder, index_class = self, similarity.ExactIndex
        saved = (index_class.__init__, index_class.verdicts, index_class.bounds_pay, linkage.KERNEL_AFTER_EDGES)
        original_init, original_verdicts = saved[0], saved[1]

        def init(index, sets):
            index.texts = list(sets)
            original_init(index, index.texts)

        def verdicts(index, a, b, measure, min_similarity, min_resemblance):
            bag, ok = original_verdicts(index, a, b, measure, min_similarity, min_resemblance)
            return bag, recorder.verdicts(index, a, b, bag, ok, min_similarity, min_resemblance)

        index_class.__init__, index_class.verdicts = init, verdicts
        if self.rule is not None:  # every verdict through verdicts: Python linkage, no upper bounds
            index_class.bounds_pay = lambda index, pairs: False
            linkage.KERNEL_AFTER_EDGES = 1 << 62
        try:
            return cluster_fingerprints(prints, ClusterOptions().for_fingerprints(prints))
        finally:
            index_class.__init__, index_class.verdicts, index_class.bounds_pay, linkage.KERNEL_AFTER_EDGES = saved

    def verdicts(self, index, a, b, bag, ok, min_similarity, min_resemblance) -> np.ndarray:
        grams = index.measures(a, b, ("grams",))[0]
        needed = np.broadcast_to(similarity.needed(min_resemblance, index.shingles(a, b)), grams.shape)
        ok = ok.copy()
        for p in np.flatnonzero(grams < needed).tolist():  # NaN (no sets) compares False
            x, y = int(a[p]), int(b[p])
            if self.rule is None:
                if not bag[p] >= RECORDED_BAG:
                    continue
                dx, dy = self.doc.get(index.texts[x].digest()), self.doc.get(index.texts[y].digest())
                if dx is not None and dy is not None:
                    words, punct = self.align(index, x, y, "words"), self.align(index, x, y, "punct")
                    self.found.append((dx, dy, bag[p], grams[p], needed[p], ok[p], words, punct))
                continue
            rule, bag_passes = self.rule, bag[p] >= min_similarity
            if rule["name"] == "gate":  # today's verdict, and the ratio
                ok[p] = ok[p] and bag_passes and self.align(index, x, y, rule["sequence"]) >= rule["t"]
            elif rule["name"] == "replace":  # the bag and the ratio, instead of the 3-grams' margin
                ok[p] = bag_passes and self.align(index, x, y, rule["sequence"]) >= rule["t"]
            elif rule["name"] == "ratio":  # the ratio alone, for pairs of bag at least `low`
                ok[p] = bag[p] >= rule["low"] and self.align(index, x, y, rule["sequence"]) >= rule["t"]
        return ok


def rules() -> list[dict | None]:
    found: list[dict | None] = [None]
    for sequence in ("words", "punct"):
        found += [{"name": "gate", "sequence": sequence, "t": t} for t in (0.5, 0.7, 0.9, 0.92, 0.93, 0.94, 0.95)]
    found += [{"name": "replace", "sequence": "words", "t": t} for t in (0.9, 0.92, 0.94)]
    found += [{"name": "ratio", "sequence": "words", "t": t, "low": 0.75} for t in (0.92, 0.94, 0.96)]
    return found


def main() -> int:
    from scoring import score

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", metavar="FILE", help="also write every pair measured (TSV)")
    parser.add_argument("--rules", action="store_true", help="F1 of each set under rules that use the ratio")
    args = parser.parse_args()
    sets, notes = available_sets()
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    prints = {name: fingerprinted(folder) for name, (folder, _) in sets.items()}
    if args.rules:
        print("| rule | " + " | ".join(sets) + " | minimum |")
        print("|" + " --- |" * (len(sets) + 2))
        for rule in rules():
            f1s = []
            for name, (folder, _) in sets.items():
                ids = prints[name].ids
                clusters = _Recorder(prints[name], rule).run(prints[name])
                f1s.append(score(folder, [[Path(ids[m]).stem for m in c.members] for c in clusters])["f1"])
            label = "today's" if rule is None else " ".join(f"{k}={v}" for k, v in rule.items())
            print(f"| {label} | " + " | ".join(f"{f:.3f}" for f in f1s) + f" | **{min(f1s):.3f}** |", flush=True)
        return 0
    out = open(args.pairs, "w", encoding="utf-8") if args.pairs else None  # noqa: SIM115
    if out:
        print("set\ta\tb\tgold\tbag\tresemblance\tneeded\tpasses\tratio_words\tratio_punct", file=out)
    print("pairs whose resemblance is below what the default threshold needs; ratio quantiles 10% / 50% / 90%\n")
    print("| set | pairs | in the gold | n | ratio of words | ratio with punctuation | resemblance |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    min_similarity = ClusterOptions().min_similarity
    for name, (folder, _) in sets.items():
        ids = [Path(i).stem for i in prints[name].ids]
        gold = {frozenset(p) for p in gold_pairs(folder)}
        recorder = _Recorder(prints[name])
        recorder.run(prints[name])
        rows = {}
        for a, b, bag, grams, needed, ok, words, punct in recorder.found:
            key = frozenset((ids[a], ids[b]))
            rows[key] = (ids[a], ids[b], key in gold, bag, grams, needed, ok, words, punct)
        for row in rows.values():
            if out:
                print("\t".join(str(v) for v in (name, *row)), file=out)
        classes = {
            "accepted on the bag path": lambda r: r[6] and r[3] >= min_similarity,
            "bag passes, refused": lambda r: not r[6] and r[3] >= min_similarity,
            "bag below its threshold": lambda r: r[3] < min_similarity,
        }
        for label, wanted in classes.items():
            for in_gold in (True, False):
                chosen = [r for r in rows.values() if wanted(r) and r[2] == in_gold]
                if not chosen:
                    continue
                cells = [
                    " / ".join(f"{q:.3f}" for q in np.quantile([r[i] for r in chosen], [0.1, 0.5, 0.9]))
                    for i in (7, 8, 4)
                ]
                print(
                    f"| {name} | {label} | {'yes' if in_gold else 'no'} | {len(chosen)} | " + " | ".join(cells) + " |"
                )
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
