"""Why two documents are, or are not, near-duplicates: for a person choosing k and thresholds.

Simhash fingerprints are explained by their features; nilsimsa digests by their score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .methods import NilsimsaMethod, SimhashMethod
from .read import open_document
from .sketch import similarity as sketch_similarity
from .tokenizers import guard


@dataclass
class Explanation:
    """Distance, similarities and the features behind them for documents ``a`` and ``b``."""

    a: str
    b: str
    bits: int
    distance: int
    estimated_similarity: float | None  # from the sketches, as cluster sees it
    similarity: float  # exact weighted Jaccard of the two feature multisets (the bag measure)
    features: tuple[int, int]
    together: list[tuple[str, float, float]] = field(default_factory=list)  # shared, heaviest first
    apart_a: list[tuple[str, float]] = field(default_factory=list)  # weight in a beyond b
    apart_b: list[tuple[str, float]] = field(default_factory=list)
    resemblance: float | None = None  # exact Jaccard of the shingles (None: not the words tokenizer)
    share_band: bool | None = None  # whether the sketches share a band (None: no sketches)
    fewer_grams: int | None = None  # shingles of the document with fewer (with resemblance)
    shingles: str | None = None  # what was compared: "word 3-grams" or "5-character shingles"

    def as_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "bits": self.bits,
            "distance": self.distance,
            "estimated_similarity": self.estimated_similarity,
            "similarity": self.similarity,
            "resemblance": self.resemblance,
            "share_band": self.share_band,
            "fewer_grams": self.fewer_grams,
            "shingles": self.shingles,
            "features": list(self.features),
            "together": [{"feature": f, "a": wa, "b": wb} for f, wa, wb in self.together],
            "apart_a": [{"feature": f, "excess": w} for f, w in self.apart_a],
            "apart_b": [{"feature": f, "excess": w} for f, w in self.apart_b],
        }


def explain(method: SimhashMethod, path_a: str, path_b: str, top: int = 10) -> Explanation:
    """Fingerprint two files and compare them feature by feature.

    Features push two fingerprints together when both documents carry them (heaviest shared
    weight first) and apart when one document carries more of them than the other.

    Raises:
        SkipDocument: a file cannot be fingerprinted.
    """
    from .errors import SkipDocument
    from .similarity import ExactIndex, ExactUnavailable, exact_sets

    features, texts = [], []
    for path in (path_a, path_b):
        chunks = list(open_document(path, method.encoding).reader)  # type: ignore[arg-type]
        found = guard.features(method.tokenizer, path, chunks)
        if not found:
            raise SkipDocument(path, "no text to fingerprint")
        features.append(found)
        texts.append("".join(chunks))
    resemblance = fewer_grams = shingles = None
    if method.tokenizer.name == "words" and method.tokenizer.option("shingle") == 1:
        try:
            sets = [exact_sets(text, method.tokenizer.option("lowercase")) for text in texts]
            index = ExactIndex(sets)
            resemblance = round(float(index.jaccard("grams", [0], [1])[0]), 3)
            fewer_grams = int(index.shingles(np.array([0]), np.array([1]))[0])
            shingles = "5-character shingles" if index.texts_of_characters.all() else "word 3-grams"
        except ExactUnavailable:  # shown as not measured, as for other tokenizers
            pass
    fa, fb = features
    ra, rb = method.simhasher(fa), method.simhasher(fb)
    pulls = feature_pulls(fa, fb, top)
    estimated = band = None
    if ra.sketch is not None and rb.sketch is not None:
        from .verify import share_a_band

        estimated, band = round(sketch_similarity(ra.sketch, rb.sketch), 3), share_a_band(ra.sketch, rb.sketch)
    return Explanation(
        path_a,
        path_b,
        method.bits,
        (ra.simhash ^ rb.simhash).bit_count(),
        estimated,
        pulls.similarity,
        (len(fa), len(fb)),
        pulls.together,
        pulls.apart_a,
        pulls.apart_b,
        resemblance,
        band,
        fewer_grams,
        shingles,
    )


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
