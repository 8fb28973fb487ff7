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

from ..method_registry import DEFAULT_METHOD
from .base import Method
from .nilsimsa import NilsimsaMethod
from .sentences import SentencesMethod
from .simhash import GivenFeaturesMethod, SimhashMethod

__all__ = ["GivenFeaturesMethod", "Method", "NilsimsaMethod", "SentencesMethod", "SimhashMethod", "make_method"]


def make_method(method: str = DEFAULT_METHOD, **options: Any) -> Method:
    """The fingerprinting method these settings name: the fields of
    :class:`simdedup.options.FeatureOptions` (the options of ``simdedup fingerprint``, the
    tokenizer's options as a dict) and the method's own options (its spec's
    :attr:`~simdedup.method_registry.MethodSpec.options`, ``sentences=3`` for ``sentences``),
    each at its default when not given.

    Raises:
        UsageError: options that do not go together, an option the method does not take, or a
            value out of range.
        UnknownTokenizerError, TokenizerOptionError: no such tokenizer, or a bad option for it.
        PluginError: the tokenizer failed to load or start.
    """
    from ..options import FeatureOptions

    return FeatureOptions.of(method=method, **options).method_object()
