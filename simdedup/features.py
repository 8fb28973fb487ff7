"""Features that come made: a JSON value read instead of text (``--features-field``).

The value is one of

- a list of tokens, ``["the", "cat", "the"]``: each occurrence weighs 1 (here ``the`` 2);
- a list of ``[token, weight]`` pairs, ``[["the", 2], ["cat", 1]]`` (tokens and pairs may mix);
- an object mapping token to weight, ``{"the": 2, "cat": 1}``.

A weight is a number or a string holding one (``"2"``, ``"0.5"``), from 0 to 2**38; a token
repeated in a list adds up its weights, whose sum must stay within 2**38 too. This is how python-hashes' ``simhash`` and PyPI
``simhash`` take features, and how features made by any other tool come in.
"""

from __future__ import annotations

import math
from typing import Any

from .simhash import MAX_WEIGHT_SUM, integer_weights
from .tokenizers import Tokenizer


class GivenFeatures(Tokenizer):
    """What a record says of features given in the input: ``"tokenizer":"given"``, no options."""

    name = "given"
    description = "features given in the input (--features-field), not made from text"
    defaults: dict[str, Any] = {}


def given_features(value: Any) -> dict[str, float]:
    """The weighted features that a JSON value gives (see the module docstring).

    Raises:
        ValueError: the value is not one of those forms, or a weight is not a number of them;
            the message says which token.
    """
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = (_pair(element) for element in value)
    else:
        raise ValueError("must be a list of tokens or of [token, weight] pairs, or an object of weights")
    features: dict[str, float] = {}
    for token, weight in items:
        features[token] = features.get(token, 0) + _weight(token, weight)
    integer_weights(features.values())  # their sum must stay in range too
    return features


def _pair(element: Any) -> tuple[str, Any]:
    if isinstance(element, str):
        return element, 1
    if isinstance(element, list) and len(element) == 2 and isinstance(element[0], str):
        return element[0], element[1]
    raise ValueError(f"{_shown(element)} is neither a token (a string) nor a [token, weight] pair")


def _weight(token: str, weight: Any) -> float:
    """``weight`` as a number (an int stays an int: exact above 2**53 until it is summed)."""
    number: Any = weight
    if isinstance(weight, str):
        try:
            number = int(weight)
        except ValueError:
            try:
                number = float(weight)
            except ValueError:
                number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ValueError(f"the weight of {_shown(token)} is not a number: {_shown(weight)}")
    if number < 0 or number > MAX_WEIGHT_SUM or not math.isfinite(number):
        raise ValueError(f"the weight of {_shown(token)} must be a number from 0 to 2**38, not {_shown(weight)}")
    return number


def _shown(value: Any) -> str:
    """A value as the message shows it: its JSON-like repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
