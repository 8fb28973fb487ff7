"""Verification: a candidate pair of units (documents of one fingerprint, sketch and text) to
its verdict, in one place for every engine.

Candidates come from the pair search (:func:`simdedup.pairs.near_pairs`: fingerprints within
``k`` bits) and, when ``k`` was not given, from the sketches' bands (:func:`with_band_pairs`).
A candidate becomes an edge when its similarity passes the measure
(:func:`simdedup.similarity.passes`):

- exactly, where the documents' texts were kept (``dedup``): the units of the pairs that may
  pass (:func:`exact_may_pass`) get exact sets (:func:`unit_exact_sets`), measured by
  :class:`simdedup.similarity.ExactIndex`;
- on the sketches' estimate otherwise: of the resemblance from sketches of shingles
  (:mod:`simdedup.shingle_sketch`), of the bag from sketches of features (:mod:`simdedup.sketch`);
- without sketches, every candidate (within ``k``) is an edge.

:class:`PairTest` gives that verdict for the candidates and for the pairs linkage
(:mod:`simdedup.linkage`) tests inside a cluster, and hands the same test to the compiled
complete linkage; the staged engines find the groups that can pair with :func:`may_pass`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import shingle_sketch, similarity
from .options import ClusterOptions
from .pairs import distinct
from .similarity import ExactIndex, KeptText, passes
from .similarity import may_pass as bounds_may_pass
from .sketch import agreement_similarity, pair_similarity


def decided_by(options: ClusterOptions, texts: bool) -> str:
    """What decides pairs under resolved ``options``, with or without ``texts`` measured: the
    resemblance, unless the bag does (``--similarity bag``, or sketches of features without
    texts: records made before shingle sketches)."""
    bag = options.similarity == "bag" or (not texts and options.sketch_of == "features")
    return "bag" if bag else "resemblance"


class PairTest:
    """Whether two units may be in one cluster, as resolved ``options`` say: their measure
    verified exactly where ``exact`` has both units' sets, else estimated from their sketches
    (the resemblance from sketches of shingles; the bag from sketches of features, by which
    records made before shingle sketches are verified whatever the measure), or a distance of at
    most k without sketches.

    Each pair also has its *score*: the number that decides it, the resemblance (or the bag
    under ``--similarity bag`` and for sketches of features), exact or estimated
    (:meth:`scores`), which linkage orders edges by and cluster lines show."""

    def __init__(
        self, fps: np.ndarray, sketches: np.ndarray | None, options: ClusterOptions, exact: ExactIndex | None = None
    ):
        self.fps, self.sketches, self.exact = fps, sketches, exact
        self.k, self.min_similarity = options.k, options.min_similarity
        self.measure, self.min_resemblance = options.similarity, options.min_resemblance
        self.sketch_of = None if sketches is None else options.sketch_of or "features"
        #: what the scores are (:func:`decided_by`)
        self.quantity = decided_by(options, exact is not None)

    def _estimates(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The sketches' estimate of the pairs: the resemblance, or the bag for sketches of features."""
        if self.sketch_of == "shingles":
            return shingle_sketch.resemblance(self.sketches, a, b)  # type: ignore[arg-type]
        return pair_similarity(self.sketches, a, b)

    def _estimate_passes(self, estimate: np.ndarray) -> np.ndarray:
        """Whether pairs of these estimates pass (the old rule for sketches of features: the bag)."""
        if self.sketch_of == "shingles":
            return estimate >= self.min_resemblance
        return passes(self.measure, estimate, np.full(len(estimate), np.nan), self.min_similarity, self.min_resemblance)

    def scores(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The score of each pair (see the class), and whether it was measured exactly (False:
        estimated from the sketches, or from the distance without them)."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        measured = np.zeros(len(a), dtype=bool)
        if self.sketches is None:
            distance = np.bitwise_count(self.fps[a] ^ self.fps[b]).sum(axis=1)
            return 1.0 - distance / (64 * self.fps.shape[1]), measured
        if self.exact is None:
            return self._estimates(a, b), measured
        values = self.exact.jaccard("bag" if self.quantity == "bag" else "grams", a, b)
        measured = ~np.isnan(values)
        unknown = np.flatnonzero(~measured)
        if len(unknown):
            values[unknown] = self._estimates(a[unknown], b[unknown])
        return values, measured

    def passes(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether each pair passes the test."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        if self.sketches is None:
            return np.bitwise_count(self.fps[a] ^ self.fps[b]).sum(axis=1) <= self.k
        if self.exact is None:
            return self._estimate_passes(self._estimates(a, b))
        ok = np.zeros(len(a), dtype=bool)
        measured = np.arange(len(a))
        if self.exact.bounds_pay(len(a)):  # measure only the pairs whose upper bounds may pass
            most_bag, most_grams = self._upper_bounds(a, b)
            may = bounds_may_pass(self.measure, most_bag, most_grams, self.min_similarity, self.min_resemblance)
            measured = np.flatnonzero(may | np.isnan(most_bag))
        a, b = a[measured], b[measured]
        known, exact_ok = self.exact.verdicts(a, b, self.measure, self.min_similarity, self.min_resemblance)
        unknown = np.flatnonzero(~known)  # a unit without exact sets: judged on the sketches' estimate
        if len(unknown):
            exact_ok[unknown] = self._estimate_passes(self._estimates(a[unknown], b[unknown]))
        ok[measured] = exact_ok
        return ok

    def _upper_bounds(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Upper bounds of the bag and the resemblance of each pair, as far as the measure looks
        at them: under ``resemblance`` the bag's are the resemblance's (NaN alike, where a unit
        has no sets), under ``bag`` the resemblance's are the bag's."""
        if self.measure == "resemblance":
            most_grams = self.exact.upper_bounds("grams", a, b)
            return most_grams, most_grams
        most_bag = self.exact.upper_bounds("bag", a, b)
        return most_bag, most_bag if self.measure == "bag" else self.exact.upper_bounds("grams", a, b)

    def verified(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidate pairs that are edges (with sketches, those that pass; without, every
        candidate: it is within k), with the order linkage takes them in: the sketches'
        estimates (the fingerprints' closeness without sketches), which measured texts do not
        change, so that ``dedup`` and ``cluster`` link alike wherever their verdicts agree."""
        if self.sketches is None:
            return left, right, self.scores(left, right)[0]
        ok = self.passes(left, right)
        left, right = left[ok], right[ok]
        return left, right, self._estimates(left, right)

    def kernel_arguments(self) -> tuple:
        """The test as :func:`simdedup.kernels.source.linkage.link_complete` takes it: sketches
        (a bin a byte), which numbers of agreeing bins pass, fingerprints, k, the exact sets
        (the sketches' estimate only where a unit has none), and the bins of the first part of
        sketches of shingles (0: of features)."""
        from .kernels.exact import MEASURE_CODES
        from .kernels.linkage import ExactTest

        sketches, exact, passing, first_bins = self.sketches, None, None, 0
        if self.sketch_of == "shingles":
            bins, first_bins, own = shingle_sketch.layout(sketches.shape[1])  # type: ignore[union-attr]
            sketches = shingle_sketch.unpacked(sketches)  # type: ignore[arg-type]
            tables = []  # both of words, both of characters, one of each
            for compared in (first_bins + own, own, first_bins):
                table = np.zeros(bins + 1, dtype=bool)
                table[: compared + 1] = shingle_sketch.agreement_resemblance(compared) >= self.min_resemblance
                tables.append(table)
            passing = np.concatenate(tables)
        elif sketches is not None:
            estimated = agreement_similarity(sketches.shape[1])
            passing = passes(self.measure, estimated, np.full(len(estimated), np.nan), self.min_similarity, 1.0)
        if self.exact is not None:
            exact = ExactTest(
                self.exact.has,
                self.exact.kinds["bag"],
                self.exact.kinds["grams"],
                MEASURE_CODES[self.measure],
                self.min_similarity,
                self.min_resemblance,
                similarity.BAG_MARGIN,  # read here: the benchmarks move them
                similarity.EVIDENCE_GRAMS,
            )
        return sketches, passing, self.fps, self.k, exact, first_bins


def old_rule_note(options: ClusterOptions) -> str | None:
    """What a run says when its records carry sketches of features and no texts, while the
    resemblance was asked for: the records of before shingle sketches, verified as then."""
    if options.sketch_of != "features" or options.texts or options.similarity == "bag":
        return None
    return (
        "simdedup: note: these records carry sketches of their features, not of their shingles (records made "
        f"before simdedup 0.1.0's shingle sketches, or --sketch-of features): pairs are verified by the bag "
        f"similarity at {options.min_similarity}; fingerprint them again to verify by the resemblance"
    )


def may_pass(sketches: np.ndarray, a: np.ndarray, b: np.ndarray, options: ClusterOptions, exact: bool) -> np.ndarray:
    """Whether a pair of documents with these sketches could become an edge: with ``exact``
    verification, whether it is measured (:func:`exact_may_pass`), else whether the sketches'
    estimate passes (as :class:`PairTest`)."""
    if exact:
        return exact_may_pass(sketches, a, b, options.similarity, options.min_similarity, options.sketch_of)
    test = PairTest(np.zeros((len(sketches), 1), dtype=np.uint64), sketches, options)
    return test.passes(a, b)


#: with exact verification under the bag measure, candidate pairs whose sketch estimate is this
#: far below the threshold are not measured: about eight standard errors of the 128-byte sketch
EXACT_MARGIN = 0.25


def exact_may_pass(
    sketches: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    measure: str,
    min_similarity: float,
    sketch_of: str | None = "features",
) -> np.ndarray:
    """Which candidate pairs (rows ``left``, ``right`` of ``sketches``) exact verification
    measures: all of them, unless the measure is the bag alone and the sketches are of
    features, whose pairs the sketches' estimate puts :data:`EXACT_MARGIN` below the threshold
    are left out. The estimate says nothing sure about 3-grams: a page whose words repeat more
    often than in its copy has a low bag similarity and the same 3-grams."""
    if measure != "bag" or sketch_of != "features":
        return np.ones(len(left), dtype=bool)
    return pair_similarity(sketches, left, right) >= min_similarity - EXACT_MARGIN


def unit_exact_sets(
    sketches: np.ndarray,
    of_doc: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    exact: Sequence[KeptText | None],
    options: ClusterOptions,
    release_texts: bool,
    texts_in_workers: Any = None,
) -> tuple[np.ndarray, np.ndarray, ExactIndex]:
    """The candidate pairs of units (rows of ``sketches``) that exact verification measures
    (:func:`exact_may_pass`), and the exact sets of their units, from one document's text each
    (``of_doc``: each document's unit). Every other pair linkage tests is inside a cluster, so
    between such units. With ``release_texts``, ``exact`` (a list) is emptied and each text let
    go once its sets are made. ``texts_in_workers``: the worker processes that keep the texts
    whose handles ``exact`` holds, which make the sets there."""
    possible = exact_may_pass(sketches, left, right, options.similarity, options.min_similarity, options.sketch_of)
    left, right = left[possible], right[possible]
    some_doc = np.full(len(sketches), -1, dtype=np.int64)
    some_doc[np.concatenate((left, right))] = 0
    some_doc[of_doc] = np.where(some_doc[of_doc] == 0, np.arange(len(of_doc)), -1)
    kept = [exact[d] if d >= 0 else None for d in some_doc.tolist()]
    if release_texts:
        exact.clear()  # type: ignore[attr-defined]
    if texts_in_workers is not None:
        return left, right, texts_in_workers.index(kept)
    return left, right, ExactIndex(texts_releasing(kept) if release_texts else kept)


#: LSH over the sketch: a second candidate source. Units whose sketches agree in all
#: BAND_BINS bins of one of their bands are candidates too: two documents of resemblance 0.8
#: share one of the 32 bands of 4-bit bins of a 128-byte sketch of shingles with probability
#: 1 - (1 - 0.8125**8)**32 = 0.9988, two of weighted Jaccard 0.8 one of the 16 bands of 8-bit bins
#: of a sketch of features with probability 1 - (1 - 0.8**8)**16 = 0.95. A band value shared by
#: more than BAND_LIMIT units is boilerplate and gives no pairs.
BAND_BINS = 8
BAND_LIMIT = 100


def band_ranges(sketch_of: str | None, nbytes: int) -> list[tuple[int, int]]:
    """The byte ranges of the bands of sketches of ``sketch_of`` of ``nbytes`` bytes: of 8-bit
    bins of features; of 4-bit bins of shingles, each part's whole bands
    (:func:`simdedup.shingle_sketch.band_ranges`)."""
    if sketch_of == "shingles":
        return shingle_sketch.band_ranges(nbytes)
    return [(start, start + BAND_BINS) for start in range(0, nbytes // BAND_BINS * BAND_BINS, BAND_BINS)]


def shared_bands(a: bytes, b: bytes, sketch_of: str | None = "features") -> int:
    """How many bands two sketches agree in every bin of (band candidates, bar BAND_LIMIT)."""
    x, y = np.frombuffer(a, dtype=np.uint8), np.frombuffer(b, dtype=np.uint8)
    return sum(bool((x[lo:hi] == y[lo:hi]).all()) for lo, hi in band_ranges(sketch_of, len(x)))


def share_a_band(a: bytes, b: bytes, sketch_of: str | None = "features") -> bool:
    """Whether two sketches agree in every bin of one band."""
    return shared_bands(a, b, sketch_of) > 0


def with_band_pairs(
    left: np.ndarray,
    right: np.ndarray,
    sketches: np.ndarray,
    eligible: np.ndarray,
    sketch_of: str | None = "features",
    classes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(left, right)`` of rows (distinct, left < right) and the pairs of the
    ``eligible`` rows of ``sketches`` that share a band, without repeats, in order. A band value
    held by more than :data:`BAND_LIMIT` rows gives no pairs; with ``classes`` (a number per
    row), rows of one class count once towards it (the units of ``dedup``, which texts tell
    apart, count as the fingerprint and sketch they share: as in the staged engines)."""
    found = [left * len(sketches) + right]
    rows = np.ascontiguousarray(sketches[eligible])
    of_row = None if classes is None else np.asarray(classes)[eligible]
    for lo, hi in band_ranges(sketch_of, rows.shape[1]):
        keys = np.ascontiguousarray(rows[:, lo:hi]).view(np.uint64 if hi - lo == 8 else np.uint32).ravel()
        order = np.argsort(keys, kind="stable") if of_row is None else np.lexsort((of_row, keys))
        ordered = keys[order]
        new_key = np.concatenate(([True], ordered[1:] != ordered[:-1]))
        starts = np.flatnonzero(new_key)
        sizes = np.diff(np.append(starts, len(ordered)))
        weight = sizes  # what counts towards the limit: rows, or their classes
        if of_row is not None:
            sorted_classes = of_row[order]
            first_of_class = new_key | np.concatenate(([True], sorted_classes[1:] != sorted_classes[:-1]))
            weight = np.add.reduceat(first_of_class.astype(np.int64), starts) if len(starts) else sizes
        for size in np.unique(sizes[(sizes >= 2) & (weight <= BAND_LIMIT)]).tolist():
            groups = order[starts[(sizes == size) & (weight <= BAND_LIMIT)][:, None] + np.arange(size)]
            i, j = np.triu_indices(size, 1)
            a, b = eligible[groups[:, i]].ravel(), eligible[groups[:, j]].ravel()
            found.append(np.minimum(a, b) * len(sketches) + np.maximum(a, b))
    pairs = distinct(np.concatenate(found))
    return pairs // len(sketches), pairs % len(sketches)


#: bytes of texts let go between two returns of free memory to the system
TRIM_EVERY_BYTES = 16 << 20


def texts_releasing(kept: list[KeptText | None]) -> Iterator[KeptText | None]:
    """Each text in turn, let go once the next is asked for (its sets made by then): the texts
    and the sets they become are not all held at once."""
    return_free_memory()  # the texts of documents in no candidate pair, let go before
    released = 0
    for i, text in enumerate(kept):
        kept[i] = None
        yield text
        released += 0 if text is None else text.nbytes
        if released >= TRIM_EVERY_BYTES:
            return_free_memory()
            released = 0
    return_free_memory()


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim  # the symbols the process has loaded: its C library's
    except (OSError, AttributeError, TypeError):  # not glibc
        return None


def return_free_memory() -> None:
    """Give the pages the allocator holds free back to the system (glibc's ``malloc_trim``;
    nothing elsewhere). Texts are many small blocks in the allocator's heap: freed, they would
    stay in the process, and the index's large arrays, mapped apart, could not reuse them."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
