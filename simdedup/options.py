"""How clustering decides: the one options object every engine, the command line and the
persistent index take, with its defaults.

The command line's cluster options take their defaults and choices from here
(:mod:`simdedup.cli_options`), the one-process run (:mod:`simdedup.group`), the stages
(:mod:`simdedup.engines.groups`) and the index (:mod:`simdedup.store`) take a
:class:`ClusterOptions` resolved for their fingerprints, and none of them restates a default.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .method_registry import DEFAULT_METHOD, method_names, method_spec
from .similarity import DEFAULT_MEASURE, DEFAULT_MIN_RESEMBLANCE, MEASURES

if TYPE_CHECKING:
    from .fingerprints import FingerprintSet

LINKAGES = ("complete", "star", "single")
#: one line per cluster, or one per member
OUTPUT_FORMATS = ("clusters", "members")


@dataclass(frozen=True)
class ClusterOptions:
    """How ``cluster`` decides; None values take the defaults for the input (:meth:`resolve`)."""

    k: int | None = None
    min_similarity: float = 0.88
    linkage: str = LINKAGES[0]
    min_features: int = 10
    singletons: bool = False
    min_score: int | None = None  # methods compared by a score (nilsimsa): k = 128 - min_score
    similarity: str = DEFAULT_MEASURE  # simdedup.similarity.MEASURES
    min_resemblance: float = DEFAULT_MIN_RESEMBLANCE
    #: sketch bands as a second source of candidates; None: exactly when k is not given (a k
    #: given is the whole candidate search: only the pairs within k)
    bands: bool | None = None
    output_format: str = OUTPUT_FORMATS[0]
    #: set by :meth:`resolve`: k, bands and min_features are filled in and checked
    resolved: bool = field(default=False, repr=False, compare=False)

    #: k when the records carry sketches (the sketch gives the precision, a larger k the recall)
    #: and when they do not (Manku et al.'s setting for 64-bit fingerprints).
    DEFAULT_K_VERIFIED = 10
    DEFAULT_K_PLAIN = 3
    #: (largest number of documents, k): the default k with sketches shrinks for large corpora,
    #: where the tables for k = 10 cost minutes (k = 10: 137 s for 4·10^5 distinct fingerprints;
    #: k = 8: 20 s; k = 6: 7 s). On the dev sets k = 8 loses under 0.005 F1.
    VERIFIED_K_BY_SIZE = ((200_000, 10), (2_000_000, 8))
    DEFAULT_K_VERIFIED_LARGE = 6

    @classmethod
    def default_verified_k(cls, n: int) -> int:
        for limit, k in cls.VERIFIED_K_BY_SIZE:
            if n <= limit:
                return k
        return cls.DEFAULT_K_VERIFIED_LARGE

    def resolve(self, bits: int, verified: bool, method: str = DEFAULT_METHOD, n: int = 0) -> ClusterOptions:
        """These options with k filled in and checked for the fingerprints' width and method
        (:class:`simdedup.methods.MethodSpec`: exact only, compared by a score, or by distance).

        Raises:
            ValueError: an option out of range or not meant for the method.
        """
        k, min_features = self.k, self.min_features
        spec = method_spec(method)
        if spec is None:
            raise ValueError(f"unknown method {method!r}")
        if self.min_score is not None and spec.min_score is None:
            scored = " or ".join(name for name in method_names() if method_spec(name).min_score is not None)  # type: ignore[union-attr]
            raise ValueError(f"--min-score is for {scored} fingerprints; use -k")
        top = bits // 2  # a score of S or more is any distance up to top - S
        if spec.exact_only:
            if k not in (None, 0):
                raise ValueError(f"{spec.exact_only} only match exactly: k must be 0")
            k = 0
        elif spec.min_score is not None:
            if self.min_score is not None and k is not None:
                raise ValueError("give -k or --min-score, not both")
            if not -top <= (self.min_score if self.min_score is not None else 0) <= top:
                raise ValueError(f"--min-score must be between {-top} and {top}")
            if k is None:
                k = top - (spec.min_score if self.min_score is None else self.min_score)
        elif k is None:
            k = self.default_verified_k(n) if verified else self.DEFAULT_K_PLAIN
            k = k * bits // 64
        if not spec.min_features:
            min_features = 0
        if spec.min_score is None:
            check_k(k, bits)
        if not 0.0 <= self.min_similarity <= 1.0 or not 0.0 <= self.min_resemblance <= 1.0:
            raise ValueError("min-similarity and min-resemblance must be between 0 and 1")
        if self.similarity not in MEASURES:
            raise ValueError(f"similarity must be one of {', '.join(MEASURES)}")
        bands = self.k is None if self.bands is None else self.bands
        return replace(self, k=k, min_features=min_features, bands=bands, resolved=True)

    @classmethod
    def take(cls, values: dict[str, Any]) -> ClusterOptions:
        """The options named in ``values`` (keyword arguments, the command line's among them),
        taken out of it: what is left names other things (inputs, features)."""
        return cls(**{f.name: values.pop(f.name) for f in fields(cls) if f.name != "resolved" and f.name in values})

    def for_fingerprints(self, fingerprints: FingerprintSet) -> ClusterOptions:
        """These options resolved for a loaded fingerprint set (see :meth:`resolve`)."""
        return self.resolve(
            fingerprints.bits, fingerprints.sketches is not None, fingerprints.method, len(fingerprints.ids)
        )


#: every option at its default, unresolved: what the command line's defaults read
DEFAULTS = ClusterOptions()


def max_k(bits: int) -> int:
    """Largest meaningful k: beyond half the bits, unrelated fingerprints match."""
    return bits // 2 - 1


def check_k(k: int, bits: int) -> None:
    if not 0 <= k <= max_k(bits):
        raise ValueError(f"k must be between 0 and {max_k(bits)} for {bits}-bit fingerprints, not {k}")
