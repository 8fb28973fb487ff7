"""Why two documents are, or are not, near-duplicates: for a person choosing k and thresholds.

Simhash fingerprints are explained by their features; nilsimsa digests by their score.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .apart import why_apart
from .methods import NilsimsaMethod, SimhashMethod
from .options import ClusterOptions
from .read import open_document
from .tokenizers import guard


@dataclass
class Explanation:
    """Why documents ``a`` and ``b`` are (not) near-duplicates under some cluster options: their
    fingerprints' distance and whether they are a candidate pair, the measure exactly (as
    ``dedup`` decides) and as the sketches estimate it (as ``cluster`` decides from records),
    and the features behind their fingerprints."""

    a: str
    b: str
    bits: int
    distance: int
    features: tuple[int, int]
    k: int  # of the options, resolved
    bands: int | None  # the sketch bands both share (None: no bands searched)
    candidate: bool  # within k, sharing a band, and long enough (min_features, for the bag's sketches)
    measure: str  # what decides: "resemblance" or "bag"
    threshold: float  # the measure's smallest value of a near-duplicate
    measured: float | None  # the measure, exactly (None: the texts have no sets)
    estimated: float | None  # the measure as the records' sketches estimate it (None: no sketches)
    near: (
        bool | None
    )  # as dedup decides: a candidate whose measure passes (None: dedup refuses records without sketches)
    near_estimated: bool | None  # as cluster decides from the records (None: no sketches)
    bag: float  # the exact weighted Jaccard of the features (what the pulls below add up to)
    rule: str  # --similarity: resemblance, bag, or combined (either passes, the bag with enough order)
    estimate_measure: str | None  # what cluster's estimate is of (old records: the bag), None: no estimate
    cluster_refuses: str | None  # why cluster would refuse these records with these options
    bag_threshold: float  # --min-similarity: the bag's threshold (--similarity bag or combined)
    shingles: str | None = None  # what the resemblance compares: "word 3-grams" or "5-character shingles"
    fewer_shingles: int | None = None  # of the document with fewer
    #: the resemblance this pair needs, when fewer shingles raise it (simdedup.similarity.needed)
    raised: float | None = None
    together: list[tuple[str, float, float]] = field(default_factory=list)  # shared, heaviest first
    apart_a: list[tuple[str, float]] = field(default_factory=list)  # weight in a beyond b
    apart_b: list[tuple[str, float]] = field(default_factory=list)
    placement: Placement | None = None  # where the clusters given put them

    @property
    def estimate_threshold(self) -> float:
        """The threshold of what cluster's estimate is of."""
        return self.bag_threshold if self.estimate_measure == "bag" else self.threshold

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "bits": self.bits,
            "distance": self.distance,
            "features": list(self.features),
            "k": self.k,
            "bands_shared": self.bands,
            "candidate": self.candidate,
            "measure": self.measure,
            "threshold": self.threshold,
            self.measure: self.measured,
            "rule": self.rule,
            f"{self.estimate_measure or self.measure}_estimate": self.estimated,
            "cluster_refuses": self.cluster_refuses,
            "shingles": self.shingles,
            "fewer_shingles": self.fewer_shingles,
            "raised_threshold": self.raised,
            "near_duplicates": self.near,
            "near_duplicates_estimated": self.near_estimated,
            "bag": self.bag,
            "together": [{"feature": f, "a": wa, "b": wb} for f, wa, wb in self.together],
            "apart_a": [{"feature": f, "excess": w} for f, w in self.apart_a],
            "apart_b": [{"feature": f, "excess": w} for f, w in self.apart_b],
            **({"clusters": self.placement.as_dict()} if self.placement is not None else {}),
        }


@dataclass
class Placement:
    """Where clusters put ``a`` and ``b`` (their clusters' numbers from 1, in the order given,
    and sizes; None: in none of them, so alone), and, when they are near-duplicates in two
    clusters, their score and the pair across the clusters that kept them apart (``failing_a``
    in ``a``'s, ``failing_b`` in ``b``'s; :func:`simdedup.apart.failing_pair`). ``unread``:
    members whose texts could not be read, so not measured."""

    cluster_a: int | None
    cluster_b: int | None
    sizes: tuple[int, int]
    kept_apart: bool = False
    score: float | None = None
    failing_a: str | None = None
    failing_b: str | None = None
    failing_score: float | None = None
    unread: list[str] = field(default_factory=list)
    estimated: bool = False  # pairs judged by their sketches' estimate: the clusters are cluster's

    def as_dict(self) -> dict:
        return {
            "cluster_a": self.cluster_a,
            "cluster_b": self.cluster_b,
            "sizes": list(self.sizes),
            "kept_apart": self.kept_apart,
            "score": self.score,
            "failing_a": self.failing_a,
            "failing_b": self.failing_b,
            "failing_score": self.failing_score,
            "unread": self.unread,
            "estimated": self.estimated,
        }


def explain(
    method: SimhashMethod,
    path_a: str,
    path_b: str,
    options: ClusterOptions = ClusterOptions(),
    top: int = 10,
    clusters: Sequence[Sequence[str]] | None = None,
    clusters_estimated: bool = False,
    texts: TextsOf | None = None,
) -> Explanation:
    """Fingerprint two files and say what ``dedup`` and ``cluster`` decide of them with
    ``options``, by the same test they run (:class:`simdedup.verify.PairTest`), and compare
    their features; with ``clusters`` (member ids, each a file), where those put them and, if
    they are near-duplicates kept apart, by which member (members read only inside the two
    files and ``documents``: ids are data).

    Features push two fingerprints together when both documents carry them (heaviest shared
    weight first) and apart when one document carries more of them than the other.

    Raises:
        SkipDocument: a file cannot be fingerprinted.
        ValueError: an option out of range, or one that cannot apply (:meth:`ClusterOptions.resolve`).
    """
    from .errors import SkipDocument
    from .fingerprints import collect_records
    from .fingerprints.record import sketch_kind
    from .methods.simhash import visible_text
    from .read import Document
    from .read.document import text_chunks
    from .similarity import ExactIndex, ExactUnavailable, needed
    from .verify import PairTest, shared_bands

    # the records as dedup makes them: the visible text (--html) measured, unless too long
    texts = texts or TextsOf(method, given=(path_a, path_b))
    texts.read([path_a, path_b])  # one pass over --documents for both
    method.verify_exactly()
    records, features = [], []
    for side, path in (("A", path_a), ("B", path_b)):
        raw = texts.text(path)
        found = guard.features(method.tokenizer, path, list(visible_text(text_chunks(raw), method.html)))
        if not found:
            raise SkipDocument(path, "no text to fingerprint")
        features.append(found)
        records.append(method.record(Document(side, text=raw)))  # one path given twice: two records
    fingerprints = collect_records(records)
    sketch_of = sketch_kind(method.settings)
    resolved = options.resolve(method.bits, sketch_of, texts=True)  # as dedup: its refusals are explain's
    try:  # as cluster decides from the records, or why it would not
        estimating: ClusterOptions | None = options.resolve(method.bits, sketch_of, texts=False)
        refused = None
    except ValueError as exc:
        estimating, refused = None, str(exc)
    try:
        index: ExactIndex | None = ExactIndex([record.exact for record in records])
    except ExactUnavailable:
        index = None
    pair = np.array([0]), np.array([1])
    exact_test = PairTest(fingerprints.fps, fingerprints.sketches, resolved, index)
    measured: float | None = None
    if index is not None and index.has.all():
        measured = round(float(index.jaccard("bag" if exact_test.quantity == "bag" else "grams", *pair)[0]), 3)
    estimated = near_estimated = bands = None
    estimate_measure = None
    if fingerprints.sketches is None and estimating is not None:  # no sketch: the distance alone decides
        near_estimated = bool(PairTest(fingerprints.fps, None, estimating).passes(*pair)[0])
    if fingerprints.sketches is not None and estimating is not None:
        estimate_test = PairTest(fingerprints.fps, fingerprints.sketches, estimating)
        estimate_measure = estimate_test.quantity
        estimated = round(float(estimate_test.scores(*pair)[0][0]), 3)
        near_estimated = bool(estimate_test.passes(*pair)[0])
    if fingerprints.sketches is not None and resolved.bands:
        a, b = (fingerprints.sketches[i].tobytes() for i in (0, 1))
        bands = shared_bands(a, b, resolved.sketch_of)
    distance = int(np.bitwise_count(fingerprints.fps[0] ^ fingerprints.fps[1]).sum())
    fa, fb = features
    pairable = bool(resolved.may_pair(fingerprints.features, np.array([True, True])).all())
    candidate = (distance <= resolved.k or bool(bands)) and pairable  # type: ignore[operator]
    shingles = fewer = raised = None
    if index is not None and index.has.all():
        shingles = "5-character shingles" if index.texts_of_characters.all() else "word 3-grams"
        fewer = int(index.shingles(*pair)[0])
        needs = float(needed(resolved.min_resemblance, fewer))
        if exact_test.quantity == "resemblance" and needs >= resolved.min_resemblance + 0.001:
            raised = round(needs, 3)
    pulls = feature_pulls(fa, fb, top)
    placement = None
    if clusters is not None:
        placement = place(method, path_a, path_b, clusters, options, clusters_estimated, texts)
    return Explanation(
        path_a,
        path_b,
        method.bits,
        distance,
        (len(fa), len(fb)),
        resolved.k,  # type: ignore[arg-type]
        bands,
        candidate,
        exact_test.quantity,
        resolved.min_similarity if exact_test.quantity == "bag" else resolved.min_resemblance,
        measured,
        estimated,
        None if sketch_of is None else candidate and bool(exact_test.passes(*pair)[0]),
        None if near_estimated is None else candidate and near_estimated,
        pulls.similarity,
        resolved.similarity,
        estimate_measure,
        refused,
        resolved.min_similarity,
        shingles,
        fewer,
        raised,
        pulls.together,
        pulls.apart_a,
        pulls.apart_b,
        placement,
    )


class TextsOf:
    """The texts of documents by id, as ``method`` reads them. Ids are data: without ``paths``
    only the files ``a`` and ``b`` given are opened; with ``paths`` (``explain --documents``), an
    id is a document they hold, read as ``fingerprint`` reads them with ``inputs`` (rows of JSON
    lines, say), and nothing outside them is opened (:class:`simdedup.read.given.GivenDocuments`,
    links followed)."""

    def __init__(self, method: SimhashMethod, paths: Sequence[str] = (), inputs: Any = None, given: Sequence[str] = ()):
        from .read.given import GivenDocuments

        self.method, self.paths, self.inputs = method, tuple(paths), inputs
        self.gate = GivenDocuments(self.paths or tuple(given))
        self.found: dict[str, str] = {}
        self.missing: dict[str, str] = {}

    def read(self, ids: Iterable[str]) -> None:
        """Read the texts of ``ids`` not read yet: files inside the roots at once, the rest (rows
        of tables) in one pass over ``paths``."""
        from .read import Inputs, open_documents, read_sources
        from .read.remote import is_url

        wanted = set(ids) - self.found.keys() - self.missing.keys()
        for doc_id in sorted(wanted):
            if self.gate.refusal(doc_id) is None and not is_url(doc_id) and os.path.isfile(doc_id):
                self._take(open_document(doc_id, self.method.encoding))
                wanted.discard(doc_id)
        if not self.paths or not wanted:
            for doc_id in wanted:
                self.missing[doc_id] = self.gate.refusal(doc_id) or "not a file"
            return
        sources = read_sources(self.paths, self.inputs or Inputs()).sources
        for document in open_documents(sources, self.method.encoding):
            if document.id in wanted:
                self._take(document)
                wanted.discard(document.id)
                if not wanted:
                    break
        for doc_id in wanted:
            self.missing[doc_id] = "not among the --documents read"

    def _take(self, document: Any) -> None:
        from .errors import SkipDocument

        try:
            if document.reason is not None:
                self.missing[document.id] = document.reason
            elif document.text is not None:
                self.found[document.id] = document.text
            elif document.reader is not None:
                self.found[document.id] = "".join(document.reader)
        except (OSError, UnicodeError, SkipDocument) as exc:
            self.missing[document.id] = getattr(exc, "reason", None) or str(exc)

    def text(self, doc_id: str) -> str:
        """The text of ``doc_id``.

        Raises:
            SkipDocument: it is outside the documents given, or cannot be read.
        """
        from .errors import SkipDocument

        self.read([doc_id])
        if doc_id not in self.found:
            raise SkipDocument(doc_id, self.missing.get(doc_id, "not read"))
        return self.found[doc_id]


def place(
    method: SimhashMethod,
    path_a: str,
    path_b: str,
    clusters: Sequence[Sequence[str]],
    options: ClusterOptions,
    estimated: bool = False,
    texts_of: TextsOf | None = None,
) -> Placement:
    """Where ``clusters`` put two files, and who kept them apart (see :class:`Placement`); a
    member is read only through ``texts_of`` (:class:`TextsOf`: inside the documents given),
    else it is unread."""
    from .errors import SimdedupError

    where = {doc_id: i for i, members in enumerate(clusters) for doc_id in members}
    a, b = where.get(path_a), where.get(path_b)
    members_a = [path_a] if a is None else list(clusters[a])
    members_b = [path_b] if b is None else list(clusters[b])
    placement = Placement(
        None if a is None else a + 1,
        None if b is None else b + 1,
        (len(members_a), len(members_b)),
        estimated=estimated,
    )
    if a is not None and a == b:
        return placement
    texts_of = texts_of or TextsOf(method, given=(path_a, path_b))
    texts_of.read({*members_a, *members_b})
    texts = {}
    for doc_id in sorted({*members_a, *members_b}):
        try:
            texts[doc_id] = texts_of.text(doc_id)
        except (OSError, UnicodeError, SimdedupError):
            placement.unread.append(doc_id)
    found = why_apart(path_a, path_b, members_a, members_b, texts, options, method.folding, estimated)
    if found is not None:
        placement.kept_apart, placement.score = True, found[0]
        if found[1] is not None:
            placement.failing_a, placement.failing_b, placement.failing_score = found[1]
    return placement


@dataclass
class FeaturePulls:
    """The exact weighted Jaccard of two feature multisets and the ``top`` features behind it."""

    similarity: float
    together: list[tuple[str, float, float]]  # shared, heaviest shared weight first
    apart_a: list[tuple[str, float]]  # weight in a beyond b, largest first
    apart_b: list[tuple[str, float]]


def bag_similarity(fa: dict[str, float], fb: dict[str, float]) -> float:
    """The exact weighted Jaccard of two feature multisets (the bag measure), to 3 places."""
    keys = fa.keys() | fb.keys()
    low = sum(min(fa.get(f, 0), fb.get(f, 0)) for f in keys)
    high = sum(max(fa.get(f, 0), fb.get(f, 0)) for f in keys)
    return round(low / high, 3) if high else 1.0


def feature_pulls(fa: dict[str, float], fb: dict[str, float], top: int = 10) -> FeaturePulls:
    """What pulls two documents' features together (both carry them) and pushes them apart
    (one carries more of them than the other)."""
    shared = sorted(((f, fa[f], fb[f]) for f in fa.keys() & fb.keys()), key=lambda t: (-min(t[1], t[2]), t[0]))
    excess_a = sorted(((f, w - fb.get(f, 0)) for f, w in fa.items() if w > fb.get(f, 0)), key=lambda t: (-t[1], t[0]))
    excess_b = sorted(((f, w - fa.get(f, 0)) for f, w in fb.items() if w > fa.get(f, 0)), key=lambda t: (-t[1], t[0]))
    return FeaturePulls(bag_similarity(fa, fb), shared[:top], excess_a[:top], excess_b[:top])


@dataclass
class NilsimsaComparison:
    """The nilsimsa digests of documents ``a`` and ``b`` and their score (-128 to 128)."""

    a: str
    b: str
    digests: tuple[str, str]  # hex, as the reference writes them
    sizes: tuple[int, int]  # bytes
    score: int

    @property
    def differing_bits(self) -> int:
        return 128 - self.score

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "method": "nilsimsa",
            "digests": list(self.digests),
            "bytes": list(self.sizes),
            "score": self.score,
            "differing_bits": self.differing_bits,
        }


def compare_nilsimsa(method: NilsimsaMethod, path_a: str, path_b: str) -> NilsimsaComparison:
    """The nilsimsa digests of two files and their score.

    Raises:
        SkipDocument: a file cannot be read.
    """
    from .methods.nilsimsa import compare

    ra, rb = (method.record(open_document(path, method.encoding)) for path in (path_a, path_b))
    digests = (format(ra.simhash, "064x"), format(rb.simhash, "064x"))
    return NilsimsaComparison(path_a, path_b, digests, (ra.bytes, rb.bytes), compare(*digests))
