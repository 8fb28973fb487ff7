"""The registry of fingerprinting methods: what each method declares once (:class:`MethodSpec`).

A method is one module in :mod:`simdedup.methods` and one registration: its spec in
:data:`BUILTIN`, or, from another package, in the ``simdedup.methods`` entry-point group
(pointing at its spec), or :func:`register_method`. The record format
(:mod:`simdedup.fingerprints.record`), the decision rules
(:meth:`simdedup.options.ClusterOptions.resolve`), :func:`simdedup.methods.make_method` and
the command line's ``--method`` choice and per-method options are built from the specs. Specs
are plain data, below the methods: reading records or building the command line imports no
method module.
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import click

from .limits import MAX_COUNT
from .sketch import DEFAULT_BINS

ENTRY_POINT_GROUP = "simdedup.methods"


#: The defaults of the feature options every method is given (the keywords of
#: :func:`simdedup.methods.make_method` beside a method's own :class:`MethodOption`\ s); the
#: command line's defaults are these.
FEATURE_DEFAULTS: dict[str, Any] = {
    "tokenizer": "words",
    "bits": 64,
    "hash_name": "xxh3",
    "sketch_bins": DEFAULT_BINS,
    "encoding": "utf-8",
}

#: the keywords every method's ``make`` is given, which no method's own option may take
SHARED_KEYWORDS = {*FEATURE_DEFAULTS, "method", "tokenizer_options", "weighting", "ties", "html", "given_features"}


@dataclass(frozen=True)
class MethodOption:
    """An option only one method takes, declared once: the keyword of its ``make`` (and of
    :func:`simdedup.methods.make_method`), its default, and the command-line option
    ``--NAME`` (underscores as dashes) of the commands that fingerprint."""

    name: str
    default: Any
    #: what it sets, for ``--help`` (which adds the method's name and the default)
    help: str
    #: a click type (``click.IntRange(1, 100)``, ``click.Choice([...])``); None: the default's type
    type: Any = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def click_option(self, method: str) -> click.Option:
        """The command-line option, for the commands of ``method``'s feature options."""
        return click.Option(
            [self.flag, self.name],
            type=self.type,
            default=self.default,
            show_default=True,
            help=f"--method {method}: {self.help}",
        )


@dataclass(frozen=True)
class MethodSpec:
    """What a fingerprinting method declares once."""

    name: str
    #: ``"module:function"``: builds the method from its name (``method``) and the feature
    #: options (the keywords of :func:`simdedup.methods.make_method`), raising ValueError for a
    #: value out of range
    make: str
    #: the record's field holding the fingerprint, and the widths (bits) allowed
    value_field: str
    widths: tuple[int, ...]
    #: what ``--method NAME`` makes, for the option's help
    help: str
    #: it takes the tokenizer's options (``--tokenizer``, ``-O``, ``--weighting``, ``--ties``,
    #: ``--html``, ``--features-field``)
    takes_features: bool = False
    #: whether ``--min-features`` applies to its fingerprints (short documents only group with
    #: exact copies)
    min_features: bool = True
    #: only identical fingerprints match (k is 0); the text of the error for another k
    exact_only: str | None = None
    #: its fingerprints are compared by a score, ``bits // 2 - distance`` (nilsimsa), with
    #: this default smallest score of a duplicate (``--min-score``)
    min_score: int | None = None
    #: the options only it takes, given to ``make`` (its command-line options follow ``--method``)
    options: tuple[MethodOption, ...] = ()
    #: command-line options of the cluster commands, for the fields of
    #: :class:`simdedup.options.ClusterOptions` it uses (after ``--min-features``; built-in
    #: methods only)
    cluster_options: tuple[Callable, ...] = ()
    #: ``"module:function"``: the fields of :class:`simdedup.options.FeatureOptions` (and the
    #: method's own options) that make records of the given settings, which an index keeps; an
    #: empty string: the settings of the method at its defaults
    options_of_settings: str = ""

    def __post_init__(self) -> None:
        for option in self.options:
            if not option.name.isidentifier() or option.name in SHARED_KEYWORDS:
                raise ValueError(f"method {self.name!r}: an option cannot be called {option.name!r}")

    def option_values(self, given: dict[str, Any]) -> dict[str, Any]:
        """Its own options: their defaults, with the values ``given`` for them (other keys of
        ``given`` are ignored)."""
        return {option.name: given.get(option.name, option.default) for option in self.options}

    def options_of(self, settings: dict[str, Any]) -> dict[str, Any]:
        """The fields of :class:`simdedup.options.FeatureOptions` (and the method's own
        options) that make records of ``settings`` (a record's or an index's)."""
        if not self.options_of_settings:
            return {}
        module, _, function = self.options_of_settings.partition(":")
        return getattr(importlib.import_module(module), function)(settings)

    def build(self, options: Any) -> Any:
        """The :class:`simdedup.methods.Method` these feature options
        (:class:`simdedup.options.FeatureOptions`) make. A method's ``make`` takes every field
        as a keyword (the tokenizer's options as a dict) and its own options beside them: the
        one place where the options are spread out, so that a field added there reaches every
        method."""
        module, _, function = self.make.partition(":")
        keywords = {name: getattr(options, name) for name in options.__dataclass_fields__}
        keywords["tokenizer_options"] = dict(options.tokenizer_options)
        keywords["bits"] = int(options.bits)
        keywords.update(self.option_values(dict(keywords.pop("method_options"))))
        return getattr(importlib.import_module(module), function)(**keywords)


#: nilsimsa's smallest score of a near-duplicate by default (see README, "Other methods")
NILSIMSA_MIN_SCORE = 90

#: Built-in methods, in the order of the ``--method`` choice (the first is the default).
BUILTIN = {
    spec.name: spec
    for spec in (
        MethodSpec(
            "simhash",
            "simdedup.methods.simhash:make",
            "simhash",
            (64, 128),
            "simhash of features",
            takes_features=True,
            options_of_settings="simdedup.methods.simhash:options_of_settings",
        ),
        MethodSpec(
            "nilsimsa",
            "simdedup.methods.nilsimsa:make",
            "nilsimsa",
            (256,),
            "nilsimsa digest of the raw bytes",
            min_features=False,
            min_score=NILSIMSA_MIN_SCORE,
            cluster_options=(
                click.option(
                    "--min-score",
                    type=click.IntRange(-128, 128),
                    help=f"nilsimsa: least score of a duplicate [default: {NILSIMSA_MIN_SCORE}].",
                ),
            ),
        ),
        MethodSpec(
            "sentences",
            "simdedup.methods.sentences:make",
            "signature",
            (64,),
            "signature of the longest sentences",
            min_features=False,
            exact_only="sentence signatures",
            options_of_settings="simdedup.methods.sentences:options_of_settings",
            options=(
                MethodOption(
                    "sentences", 3, "how many of the longest sentences to sign.", click.IntRange(1, MAX_COUNT)
                ),
            ),
        ),
    )
}
DEFAULT_METHOD = next(iter(BUILTIN))

_registry: dict[str, MethodSpec] | None = None


def _load_registry() -> dict[str, MethodSpec]:
    """The built-in specs, then those of the ``simdedup.methods`` entry points
    (``SIMDEDUP_LOAD_PLUGINS`` limits them as it limits tokenizers)."""
    global _registry
    if _registry is None:
        from importlib.metadata import entry_points

        registry = dict(BUILTIN)
        allowed = os.environ.get("SIMDEDUP_LOAD_PLUGINS")
        names = None if allowed is None else {n.strip() for n in allowed.split(",") if n.strip()}
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
            if names is not None and ep.name not in names:
                continue
            if ep.name in BUILTIN:
                warnings.warn(f"method plugin {ep.value} cannot replace built-in {ep.name!r}", stacklevel=2)
                continue
            try:
                spec = ep.load()
            except Exception as exc:  # a broken plugin must not take the others down
                warnings.warn(f"method plugin {ep.name!r} failed to load: {exc}", stacklevel=2)
                continue
            if isinstance(spec, MethodSpec) and spec.name == ep.name:
                registry[ep.name] = spec
            else:
                warnings.warn(f"method plugin {ep.name!r} does not point at a MethodSpec of that name", stacklevel=2)
        _registry = registry
    return _registry


def register_method(spec: MethodSpec) -> MethodSpec:
    """Register a method under its name (a built-in one cannot be replaced)."""
    if spec.name in BUILTIN:
        raise ValueError(f"method {spec.name!r} is built in")
    _load_registry()[spec.name] = spec
    return spec


def method_spec(name: str) -> MethodSpec | None:
    """The spec of the method ``name``, or None. A built-in name needs no scan of the installed
    packages' entry points."""
    if name in BUILTIN and _registry is None:
        return BUILTIN[name]
    return _load_registry().get(name)


def method_names() -> list[str]:
    return list(_load_registry())
