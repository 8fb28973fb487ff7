"""How records are made and how clustering decides: the two options objects every engine, the
command line, the persistent index and the Python API take whole, with their defaults.

:class:`FeatureOptions` says how a document becomes a fingerprint record (the options of
``fingerprint``); :class:`ClusterOptions` how records become clusters (the options of
``cluster``). The command line's options take their defaults and choices from here
(:mod:`simdedup.cli_options`); the one-process run (:mod:`simdedup.group`), the stages
(:mod:`simdedup.engines`) and the index (:mod:`simdedup.store`) are handed the objects
themselves, never their fields one by one, and none of them restates a default
(``tests/test_options_travel.py`` changes each field in turn and compares every path).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from .method_registry import DEFAULT_METHOD, FEATURE_DEFAULTS, method_names, method_spec
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
    #: set by :meth:`resolve`: k, bands and min_features are filled in and checked, and what
    #: verification has: the records' sketches (of "shingles", of "features", or None) and, with
    #: ``texts``, the texts, measured exactly
    resolved: bool = field(default=False, repr=False, compare=False)
    sketch_of: str | None = field(default=None, repr=False, compare=False)
    texts: bool = field(default=False, repr=False, compare=False)

    #: k with sketches of shingles, whose bands find the pairs at the threshold (they share one
    #: of 32 bands with probability 0.9988 at resemblance 0.8; on the dev sets k = 3, 6 and 10
    #: find the same clusters beside them, and 3 costs the fewest tables), with
    #: sketches of features (k gives the recall), and without sketches (Manku et al.'s setting
    #: for 64-bit fingerprints); all for 64 bits, doubled for 128
    DEFAULT_K_SHINGLES = 3
    DEFAULT_K_VERIFIED = 10
    DEFAULT_K_PLAIN = 3
    #: (largest number of documents, k): the default k with sketches of features shrinks for
    #: large corpora, where the tables for k = 10 cost minutes (k = 10: 137 s for 4·10^5
    #: distinct fingerprints; k = 8: 20 s; k = 6: 7 s). On the dev sets k = 8 loses under 0.005 F1.
    VERIFIED_K_BY_SIZE = ((200_000, 10), (2_000_000, 8))
    DEFAULT_K_VERIFIED_LARGE = 6

    @classmethod
    def default_verified_k(cls, n: int) -> int:
        for limit, k in cls.VERIFIED_K_BY_SIZE:
            if n <= limit:
                return k
        return cls.DEFAULT_K_VERIFIED_LARGE

    def default_k(self, sketch_of: str | None, n: int = 0) -> int:
        """k for 64-bit fingerprints when it is not given."""
        if sketch_of == "shingles":
            return self.DEFAULT_K_SHINGLES
        return self.default_verified_k(n) if sketch_of == "features" else self.DEFAULT_K_PLAIN

    def resolve(
        self, bits: int, sketch_of: str | None, method: str = DEFAULT_METHOD, n: int = 0, texts: bool = False
    ) -> ClusterOptions:
        """These options with k filled in and checked for the fingerprints' width and method
        (:class:`simdedup.methods.MethodSpec`: exact only, compared by a score, or by
        distance), what their sketches are of (``"shingles"``, ``"features"``, None: no
        sketch) and whether their ``texts`` are measured exactly (``dedup``). A decision
        option set to something else than its default that cannot change what these decide
        is refused (:meth:`refused`).

        Raises:
            ValueError: an option out of range, not meant for the method, or that cannot apply.
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
            k = self.default_k(sketch_of, n) * bits // 64
        if not spec.min_features:
            min_features = 0
        if spec.min_score is None:
            check_k(k, bits)
        if not 0.0 <= self.min_similarity <= 1.0 or not 0.0 <= self.min_resemblance <= 1.0:
            raise ValueError("min-similarity and min-resemblance must be between 0 and 1")
        if self.similarity not in MEASURES:
            raise ValueError(f"similarity must be one of {', '.join(MEASURES)}")
        refused = self.refused(sketch_of, texts)
        if refused:
            raise ValueError(refused)
        bands = (self.k is None and sketch_of is not None) if self.bands is None else self.bands
        return replace(
            self, k=k, min_features=min_features, bands=bands, resolved=True, sketch_of=sketch_of, texts=texts
        )

    def refused(self, sketch_of: str | None, texts: bool) -> str | None:
        """Why an option set here cannot change what records with sketches of ``sketch_of``
        (and, with ``texts``, their texts measured exactly) decide, in one line; None when
        every one can."""
        default = DEFAULTS
        bag = self.similarity == "bag"
        if self.similarity == "combined" and not texts:
            return "--similarity combined needs the texts (dedup): it weighs the bag and the resemblance together"
        if sketch_of == "shingles" and bag and not texts:
            return (
                "these records carry sketches of their shingles, which estimate the resemblance: --similarity bag "
                "needs sketches of the features (fingerprint --sketch-of features) or the texts (dedup)"
            )
        if sketch_of is None and not texts:
            for name, flag in (("min_similarity", "--min-similarity"), ("min_resemblance", "--min-resemblance")):
                if getattr(self, name) != getattr(default, name):
                    return f"these records carry no sketch: every pair within k is a duplicate, and {flag} cannot apply"
            if self.bands:
                return "these records carry no sketch to band"
            return None
        resemblance_decides = not bag and (texts or sketch_of == "shingles")
        if self.min_similarity != default.min_similarity and resemblance_decides and self.similarity == "resemblance":
            return "--min-similarity is the threshold of --similarity bag and combined; the resemblance's is --min-resemblance"
        if self.min_resemblance != default.min_resemblance and not resemblance_decides:
            if bag:
                return "--min-resemblance is the threshold of --similarity resemblance and combined; the bag's is --min-similarity"
            return (
                "these records carry sketches of their features, which estimate the bag (--min-similarity); "
                "fingerprint them again to estimate the resemblance"
            )
        if self.min_features != default.min_features and sketch_of == "shingles":
            return "--min-features applies to sketches of features: the resemblance is measured on short texts too"
        return None

    @classmethod
    def take(cls, values: dict[str, Any]) -> ClusterOptions:
        """The options named in ``values`` (keyword arguments, the command line's among them),
        taken out of it: what is left names other things (inputs, features)."""
        return cls(
            **{f.name: values.pop(f.name) for f in fields(cls) if f.name not in RESOLVED_FIELDS and f.name in values}
        )

    #: the share of near-duplicate pairs (resemblance 0.8 to 0.85) whose 64-bit fingerprints
    #: (``words``, one vote a feature) lie within k bits, for k = 0, 1, ...: measured on the dev
    #: sets (docs/quality.md); the resemblance at which half are within k
    WITHIN_K_AT_THRESHOLD = (0.01, 0.04, 0.07, 0.15, 0.27, 0.39, 0.56, 0.68, 0.77, 0.83, 0.91, 0.94, 0.96, 0.99)
    HALF_WITHIN_K = (0.98, 0.975, 0.95, 0.93, 0.91, 0.86, 0.78, 0.74, 0.66)

    def k_note(self, bits: int) -> str | None:
        """What a resolved run says when its k was given and is the whole candidate search
        (no bands), while sketches of shingles could have found the pairs at the threshold."""
        if self.k is None or self.bands or self.sketch_of != "shingles":
            return None
        k64 = self.k * 64 // bits
        if k64 >= len(self.WITHIN_K_AT_THRESHOLD):
            return None
        share = self.WITHIN_K_AT_THRESHOLD[k64]
        half = f" and half at {self.HALF_WITHIN_K[k64]}" if k64 < len(self.HALF_WITHIN_K) else ""
        return (
            f"simdedup: note: -k {self.k} alone finds about {share:.0%} of the near-duplicates at resemblance 0.8"
            f"{half} (measured on the dev sets); without -k, the sketches' bands also find 99.9% of those at 0.8"
        )

    def may_pair(self, features: Any, measured: Any = None) -> Any:
        """Which documents (their numbers of distinct ``features``) may pair with another than an
        exact copy: with sketches of shingles, all (the resemblance is estimated well however
        short the text); else those with at least ``min_features``, and, where ``measured`` says a
        document's text is measured exactly, that one too (the measure then decides, as for any
        pair). The one statement of the rule for every engine and the index."""
        import numpy as np

        if self.sketch_of == "shingles":  # estimated from the shingles: short texts are measured too
            return np.ones(len(features), dtype=bool)
        pairable = np.asarray(features) >= self.min_features
        return pairable if measured is None else pairable | np.asarray(measured, dtype=bool)

    def linking_as(self, other: ClusterOptions) -> ClusterOptions:
        """These options with the linkage and output of ``other`` (:data:`LINKING_FIELDS`)."""
        return replace(self, **{name: getattr(other, name) for name in LINKING_FIELDS})

    def for_fingerprints(self, fingerprints: FingerprintSet) -> ClusterOptions:
        """These options resolved for a loaded fingerprint set (see :meth:`resolve`): what its
        sketches are of, and whether it holds texts to measure."""
        return self.resolve(
            fingerprints.bits,
            fingerprints.sketch_of,
            fingerprints.method,
            len(fingerprints.ids),
            fingerprints.exact is not None,
        )


#: every option at its default, unresolved: what the command line's defaults read
DEFAULTS = ClusterOptions()
#: the fields that say how verified pairs become clusters and how clusters are written, chosen by
#: each run that writes clusters; a persistent index fixes every other field when it is created
LINKING_FIELDS = ("linkage", "singletons", "output_format")
#: the fields that decide which pairs are verified (an index keeps them)
#: what :meth:`ClusterOptions.resolve` sets: no option of its own
RESOLVED_FIELDS = ("resolved", "sketch_of", "texts")
DECISION_FIELDS = tuple(f.name for f in fields(ClusterOptions) if f.name not in (*LINKING_FIELDS, *RESOLVED_FIELDS))


def max_k(bits: int) -> int:
    """Largest meaningful k: beyond half the bits, unrelated fingerprints match."""
    return bits // 2 - 1


def check_k(k: int, bits: int) -> None:
    if not 0 <= k <= max_k(bits):
        raise ValueError(f"k must be between 0 and {max_k(bits)} for {bits}-bit fingerprints, not {k}")


#: the fields of FeatureOptions of methods that read tokens (MethodSpec.takes_features), and
#: their flags
TOKEN_OPTIONS = {
    "tokenizer": "--tokenizer",
    "tokenizer_options": "-O (or --shingle, --topk)",
    "hash_name": "--hash",
    "weighting": "--weighting",
    "ties": "--ties",
    "sketch_bins": "--sketch",
    "sketch_of": "--sketch-of",
    "html": "--html",
    "fold": "--fold",
    "given_features": "--features-field",
}


@dataclass(frozen=True)
class FeatureOptions:
    """How documents become fingerprint records: the feature options of ``fingerprint``,
    ``dedup``, ``explain`` and ``index create`` (``--compat`` already applied), handed whole to
    every stage that makes records. :meth:`method` builds the fingerprinting method.

    ``tokenizer_options`` are the tokenizer's options as sorted ``(key, value)`` pairs (``-O``,
    ``--shingle``, ``--topk``); ``method_options`` the chosen method's own options (its
    :class:`~simdedup.method_registry.MethodOption` s), also sorted pairs.
    """

    method: str = DEFAULT_METHOD
    tokenizer: str = FEATURE_DEFAULTS["tokenizer"]
    tokenizer_options: tuple[tuple[str, Any], ...] = ()
    bits: int = FEATURE_DEFAULTS["bits"]
    hash_name: str = FEATURE_DEFAULTS["hash_name"]
    weighting: str | None = None  # None: the tokenizer's own
    ties: str | None = None  # None: zero
    sketch_bins: int = FEATURE_DEFAULTS["sketch_bins"]
    #: what the sketch is of: the text's shingles or the features' counts (None: the shingles
    #: where there is a text, the features where they are given)
    sketch_of: str | None = None
    encoding: str = FEATURE_DEFAULTS["encoding"]
    html: bool = False
    #: what the texts' words and shingles are folded by beside case (simdedup.similarity.FOLDS;
    #: None: nothing else)
    fold: str | None = None
    #: the input gives the features (``--features-field``): no tokenizer runs
    given_features: bool = False
    method_options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, **values: Any) -> FeatureOptions:
        """The options from keywords: the fields by name (the tokenizer's options as a dict),
        and any other keyword as an option of the method."""
        names = {f.name for f in fields(cls)}
        own = {key: values.pop(key) for key in list(values) if key not in names}
        tokenizer_options = values.pop("tokenizer_options", None) or {}
        if "bits" in values:
            values["bits"] = int(values["bits"])
        return cls(
            tokenizer_options=tuple(sorted(dict(tokenizer_options).items())),
            method_options=tuple(sorted({**dict(values.pop("method_options", ())), **own}.items())),
            **values,
        )

    @classmethod
    def of_settings(cls, settings: dict[str, Any]) -> FeatureOptions:
        """The options that make records of ``settings`` (a record's or an index's), as the
        method declares (:meth:`simdedup.method_registry.MethodSpec.options_of`).

        Raises:
            ValueError: an unknown method.
        """
        method = settings.get("method") or DEFAULT_METHOD
        spec = method_spec(method)
        if spec is None:
            raise ValueError(f"fingerprints of an unknown method {method!r}")
        return cls.of(method=method, **spec.options_of(settings))

    def for_measure(self, options: ClusterOptions) -> FeatureOptions:
        """These options for a run that decides as ``options`` say: under ``--similarity bag``,
        sketches of features unless what the sketch is of was chosen (the bag is what they
        estimate, for the documents whose texts are not measured)."""
        if self.sketch_of is None and options.similarity == "bag" and not self.given_features:
            return replace(self, sketch_of="features")
        return self

    def method_object(self) -> Any:
        """The fingerprinting method (:class:`simdedup.methods.Method`) these options make.

        Raises:
            UsageError: options that do not go together, an option the method does not take,
                or a value out of range.
            UnknownTokenizerError, TokenizerOptionError: no such tokenizer, or a bad option for it.
            PluginError: the tokenizer failed to load or start.
        """
        from .errors import UsageError

        spec = method_spec(self.method)
        if spec is None:
            names = method_names()
            raise UsageError(f"unknown method {self.method!r}: {', '.join(names[:-1])} or {names[-1]}")
        if not spec.takes_features:
            defaults = FeatureOptions()
            for name, flag in TOKEN_OPTIONS.items():
                value = getattr(self, name)
                if value != getattr(defaults, name) and not (name == "sketch_bins" and value == 0):  # none: as it has
                    raise UsageError(f"--method {self.method} reads no tokens: {flag} does not apply")
        own = dict(self.method_options)
        unknown = sorted(set(own) - {option.name for option in spec.options})
        if unknown:
            raise UsageError(f"method {self.method} has no option {unknown[0]!r}")
        try:
            return spec.build(self)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def as_json(self) -> dict[str, Any]:
        """The options as JSON values (a work directory's claim records them)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["tokenizer_options"] = [list(item) for item in self.tokenizer_options]
        values["method_options"] = [list(item) for item in self.method_options]
        return values
