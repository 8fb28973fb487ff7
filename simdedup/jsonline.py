"""Parsing one JSON line from an untrusted file, with every way it can fail said in one line."""

from __future__ import annotations

import json
from typing import Any


def parse_json_line(raw: bytes | str) -> Any:
    """The value of one JSON line.

    Raises:
        ValueError: why it is not usable, in words: not UTF-8, not JSON (and where), nested too
            deeply for the parser, or a number with more digits than Python converts (as
            ``json.loads`` raises them: RecursionError, or ValueError from ``int``).
    """
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON object ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # int() refuses numbers of thousands of digits
        raise ValueError(f"a JSON number too long to read ({exc})") from None
