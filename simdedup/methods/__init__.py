"""The fingerprint stage: documents (from :mod:`simdedup.read`) in, fingerprint records out.

Each method is one module and one registration. The module holds the :class:`~.base.Method`
subclass (``record(document)``) and a ``make(**options)`` that builds it from the feature
options; the registration is its :class:`~simdedup.method_registry.MethodSpec` (record field,
widths, how clustering chooses k, its own command-line options) in
:data:`simdedup.method_registry.BUILTIN`, or an entry point of another package.

Built-in methods: :mod:`.simhash` (the default: tokenizer, simhash and sketch),
:mod:`.nilsimsa` (digests of the raw bytes) and :mod:`.sentences` (a signature of the longest
sentences).
"""

from __future__ import annotations

from typing import Any

from ..method_registry import DEFAULT_METHOD, FEATURE_DEFAULTS, method_names, method_spec
from .base import Method
from .nilsimsa import NilsimsaMethod
from .sentences import SentencesMethod
from .simhash import GivenFeaturesMethod, SimhashMethod

__all__ = ["GivenFeaturesMethod", "Method", "NilsimsaMethod", "SentencesMethod", "SimhashMethod", "make_method"]


def make_method(
    method: str = DEFAULT_METHOD,
    *,
    tokenizer: str = FEATURE_DEFAULTS["tokenizer"],
    tokenizer_options: dict[str, Any] | None = None,
    bits: int = FEATURE_DEFAULTS["bits"],
    hash_name: str = FEATURE_DEFAULTS["hash_name"],
    weighting: str | None = None,
    ties: str | None = None,
    sketch_bins: int = FEATURE_DEFAULTS["sketch_bins"],
    encoding: str = FEATURE_DEFAULTS["encoding"],
    html: bool = False,
    given_features: bool = False,
    **options: Any,
) -> Method:
    """The fingerprinting method these settings name (the options of ``simdedup fingerprint``);
    ``options`` are the method's own (its spec's :attr:`~simdedup.method_registry.MethodSpec.options`,
    ``sentences=3`` for ``sentences``), at their declared defaults when not given.

    Raises:
        UsageError: options that do not go together, an option the method does not take, or a
            value out of range.
        UnknownTokenizerError, TokenizerOptionError: no such tokenizer, or a bad option for it.
        PluginError: the tokenizer failed to load or start.
    """
    from ..errors import UsageError

    spec = method_spec(method)
    if spec is None:
        names = method_names()
        raise UsageError(f"unknown method {method!r}: {', '.join(names[:-1])} or {names[-1]}")
    if not spec.takes_features and (tokenizer_options or weighting or html or ties or given_features):
        raise UsageError(f"--method {method} takes no tokenizer options")
    unknown = sorted(set(options) - {option.name for option in spec.options})
    if unknown:
        raise UsageError(f"method {method} has no option {unknown[0]!r}")
    try:
        return spec.build(
            method=method,
            tokenizer=tokenizer,
            tokenizer_options=tokenizer_options or {},
            bits=int(bits),
            hash_name=hash_name,
            weighting=weighting,
            ties=ties,
            sketch_bins=sketch_bins,
            encoding=encoding,
            html=html,
            given_features=given_features,
            **spec.option_values(options),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
