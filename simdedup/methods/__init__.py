"""The fingerprint stage: documents (from :mod:`simdedup.read`) in, fingerprint records out.

Each method is one module: :mod:`.simhash` (the default: tokenizer, simhash and sketch),
:mod:`.nilsimsa` (digests of the raw bytes) and :mod:`.sentences` (a signature of the longest
sentences). A new method subclasses :class:`~.base.Method`, implements ``record(document)``
and is named in :func:`simdedup.run.make_method` and the ``--method`` choice.
"""

from __future__ import annotations

from typing import Any

from .base import Method
from .nilsimsa import NilsimsaMethod
from .sentences import SentencesMethod
from .simhash import GivenFeaturesMethod, SimhashMethod

__all__ = ["GivenFeaturesMethod", "Method", "NilsimsaMethod", "SentencesMethod", "SimhashMethod", "make_method"]


def make_method(method: str = "simhash", *, tokenizer: str = "words", tokenizer_options: dict[str, Any] | None = None,
                bits: int = 64, hash_name: str = "xxh3", weighting: str | None = None, ties: str | None = None,
                sketch_bins: int = 128, encoding: str = "utf-8", html: bool = False, sentences: int = 3,
                given_features: bool = False) -> Method:
    """The fingerprinting method these settings name (the options of ``simdedup fingerprint``).

    Raises:
        UsageError: options that do not go together, or a value out of range.
        UnknownTokenizerError, TokenizerOptionError: no such tokenizer, or a bad option for it.
        PluginError: the tokenizer failed to load or start.
    """
    from ..errors import UsageError

    try:
        if method == "simhash":
            if given_features:
                from ..features import GivenFeatures

                return GivenFeaturesMethod(GivenFeatures(), int(bits), hash_name, encoding=encoding,
                                           sketch_bins=sketch_bins, weighting=weighting, ties=ties or "zero")
            from ..tokenizers import get_tokenizer

            return SimhashMethod(get_tokenizer(tokenizer, **(tokenizer_options or {})), int(bits), hash_name,
                                 encoding=encoding, sketch_bins=sketch_bins, weighting=weighting, html=html,
                                 ties=ties or "zero")
        if tokenizer_options or weighting or html or ties or given_features:
            raise UsageError(f"--method {method} takes no tokenizer options")
        if method == "nilsimsa":
            return NilsimsaMethod(encoding)
        if method == "sentences":
            return SentencesMethod(sentences, encoding)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    raise UsageError(f"unknown method {method!r}: simhash, nilsimsa or sentences")
