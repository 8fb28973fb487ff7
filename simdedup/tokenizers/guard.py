"""Every call into a tokenizer's code, guarded: tokenizers are plugins, other people's code.

A tokenizer that fails on a document (raises anything, calls ``sys.exit``, returns something
that is not a dict of string features to finite, non-negative weights within
:data:`simdedup.simhash.MAX_WEIGHT_SUM`) costs that document alone: :class:`SkipDocument`
naming it and saying what the tokenizer did. One that fails to start or prepare is a
:class:`PluginError`. What a tokenizer prints or writes to descriptor 1 goes to stderr, never
into the output. A stop (Ctrl-C, SIGTERM, SIGHUP: :data:`simdedup.errors.STOPS`) is the
user's, and ends the run.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from .. import stops
from ..errors import STOPS, PluginError, SimdedupError, SkipDocument, first_line

if TYPE_CHECKING:
    from . import Tokenizer


@contextmanager
def guarded(
    name: str, failed: Callable[[str], Exception], passes: tuple[type[BaseException], ...] = (), doing: str = ""
) -> Iterator[None]:
    """Run a tokenizer's code with its prints sent to stderr; what it raises (but a stop, and
    ``passes``) becomes ``failed(what it did)``."""
    stdout = sys.stdout
    sys.stdout = sys.stderr
    saved = _stdout_to_stderr()
    stops_before = stops.raised()
    try:
        yield
    except (*STOPS, *passes):
        raise
    except BaseException as exc:  # SystemExit and the like too: the plugin ends no run
        stops.raise_if_swallowed(stops_before)
        raise failed(f"tokenizer {name!r} failed{doing}: {type(exc).__name__}: {first_line(exc)}") from None
    finally:
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
        sys.stdout = stdout
    stops.raise_if_swallowed(stops_before)  # by a bare ``except:`` of the tokenizer's


def _stdout_to_stderr() -> int | None:
    """Point descriptor 1 at stderr (what C code or ``os.write(1, ...)`` writes must not reach
    the output); returns a copy of the real one to put back, or None when either is missing."""
    try:
        saved = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return None
    return saved


def started(cls: type[Tokenizer], name: str, options: dict[str, Any]) -> Tokenizer:
    """An instance of a tokenizer class, its settings checked.

    Raises:
        PluginError: it fails to start, or its name or settings are not what a record holds.
        TokenizerOptionError: an option it does not take.
    """
    import json

    with guarded(name, PluginError, passes=(SimdedupError,), doing=" to start"):
        tokenizer = cls(**options)
        settings = tokenizer.settings()
        json.dumps(settings, allow_nan=False)
    from ..simhash import WEIGHTINGS

    if not isinstance(settings, dict) or settings.get("tokenizer") != name:
        raise PluginError(f"tokenizer {name!r} describes itself as {first_line(ValueError(repr(settings)))[:80]}")
    if tokenizer.weighting not in WEIGHTINGS:
        raise PluginError(
            f"tokenizer {name!r} asks for weighting {tokenizer.weighting!r}, not one of {', '.join(WEIGHTINGS)}"
        )
    return tokenizer


def prepared(tokenizer: Tokenizer) -> None:
    """``tokenizer.prepare()``.

    Raises:
        PluginError: it fails.
    """
    with guarded(tokenizer.name, PluginError, passes=(SimdedupError,), doing=" to prepare"):
        tokenizer.prepare()


class _Input:
    """A document's chunks as the tokenizer iterates them, keeping what reading them raised
    (the document's own error: unreadable, undecodable), which is not the tokenizer's."""

    def __init__(self, chunks: Iterable[str]):
        self._chunks = chunks
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[str]:
        try:
            yield from self._chunks
        except GeneratorExit:  # the tokenizer stopped reading
            raise
        except BaseException as exc:
            self.error = exc
            raise


def features(tokenizer: Tokenizer, doc_id: str, chunks: Iterable[str]) -> dict[str, float]:
    """``tokenizer.features(chunks)`` of the document ``doc_id``, checked.

    Raises:
        SkipDocument: the tokenizer failed on it (or reading it failed: that error as it was).
    """
    text = _Input(chunks)
    try:
        with guarded(tokenizer.name, lambda reason: SkipDocument(doc_id, reason), passes=(SkipDocument,)):
            found = checked(tokenizer.name, tokenizer.features(text))
    except BaseException:
        if text.error is not None:
            raise text.error from None
        raise
    if text.error is not None:  # the tokenizer swallowed it: the document is still unread
        raise text.error
    return found


def features_many(
    tokenizer: Tokenizer, ids: Sequence[str], documents: Sequence[Sequence[str]]
) -> list[dict[str, float] | SkipDocument]:
    """``tokenizer.features_many(documents)``, checked; when it fails, the documents one at a
    time, so that only those it fails on are skipped (each one's :class:`SkipDocument`)."""
    frozen = [tuple(chunks) for chunks in documents]  # the tokenizer cannot change them
    try:
        with guarded(tokenizer.name, lambda reason: SkipDocument("", reason)):
            found = tokenizer.features_many([list(chunks) for chunks in frozen])
            if not isinstance(found, list) or len(found) != len(frozen):
                raise ValueError(f"features_many gave {_kind(found)}, not a list of {len(frozen)}")
            return [checked(tokenizer.name, one) for one in found]
    except SkipDocument:
        pass
    results: list[dict[str, float] | SkipDocument] = []
    for doc_id, chunks in zip(ids, frozen):
        try:
            results.append(features(tokenizer, doc_id, chunks))
        except SkipDocument as exc:
            results.append(exc)
    return results


def checked(name: str, found: Any) -> dict[str, float]:
    """What a tokenizer gave as a document's features, if it is a dict of string features to
    finite, non-negative weights that sum to at most :data:`simdedup.simhash.MAX_WEIGHT_SUM`.

    Raises:
        ValueError: it is not.
    """
    from ..simhash import MAX_WEIGHT_SUM

    if not isinstance(found, dict):
        raise ValueError(f"gave {_kind(found)}, not a dict of features")
    odd = [kind for kind in set(map(type, found)) if not issubclass(kind, str)]
    if odd:
        raise ValueError(f"gave a feature that is a {odd[0].__name__}, not a string")
    odd = [kind for kind in set(map(type, found.values())) if not issubclass(kind, numbers.Real)]
    if odd:
        raise ValueError(f"gave a weight that is a {odd[0].__name__}, not a number")
    total = sum(found.values())  # NaN or infinite when a weight is
    if not (math.isfinite(total) and min(found.values(), default=0) >= 0 and total <= MAX_WEIGHT_SUM):
        raise ValueError(
            f"gave weights that are not finite and non-negative, or sum to more than "
            f"2**{MAX_WEIGHT_SUM.bit_length() - 1}"
        )
    return found


def _kind(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"
