"""Parsing one JSON line from an untrusted file, with every way it can fail said in one line."""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Iterator

#: the deepest nesting of arrays and objects taken in a JSON line, whatever the line holds (a
#: document, a fingerprint record, a cluster): deeper is refused with a one-line reason, so that
#: whether a line is read never depends on how deep the reader's own stack happens to be
MAX_JSON_DEPTH = 200


#: the most digits of an integer in a record or cluster line: every count, size, offset and
#: distance they hold fits in 64 bits (20 digits), a 128-bit value in 39
MAX_INT_DIGITS = 40


class _NumberError(ValueError):
    """A number no record or cluster line holds (raised inside ``json.loads``)."""


def _constant(name: str) -> float:
    raise _NumberError(f"a JSON number that is not finite ({name})")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NumberError(f"a JSON number out of range ({text[:40]})")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _NumberError(f"a JSON number of more than {MAX_INT_DIGITS} digits ({len(text.lstrip('-'))})")
    return int(text)


def parse_json_line(raw: bytes | str, checked_numbers: bool = True) -> Any:
    """The value of one JSON line: a fingerprint record, a cluster line, a gold pair, a spans
    record. Every number read from them passes here, so it is checked here once: NaN, Infinity,
    a float beyond the double range (``1e400``) and an integer of more than
    :data:`MAX_INT_DIGITS` digits are refused (``checked_numbers=False`` takes them as Python
    does, for a document's line, whose other fields are not ours to judge).

    Raises:
        ValueError: why it is not usable, in words: not UTF-8, not JSON (and where), nested
            deeper than :data:`MAX_JSON_DEPTH`, or a number refused (as ``json.loads`` raises
            them: RecursionError, or ValueError from ``int``).
    """
    try:
        if checked_numbers:
            value = json.loads(raw, parse_constant=_constant, parse_float=_float, parse_int=_int)
        else:
            value = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON object ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except _NumberError as exc:
        raise ValueError(str(exc)) from None
    except ValueError as exc:  # int() refuses numbers of thousands of digits
        raise ValueError(f"a JSON number too long to read ({exc})") from None
    opening = b"[{" if isinstance(raw, bytes) else "[{"
    if raw.count(opening[:1]) + raw.count(opening[1:]) > MAX_JSON_DEPTH and _depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed JSON value, found without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def text_lines(stream: Iterable[bytes], name: str) -> Iterator[str]:
    """The lines of a binary stream as text, with ``FILE:LINE`` errors for bytes that are not UTF-8."""
    from .errors import RecordError

    for number, raw in enumerate(stream, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"{name}:{number}: not UTF-8 text") from None
