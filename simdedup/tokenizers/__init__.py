"""Tokenizers: text in, weighted features out.

A tokenizer is a subclass of :class:`Tokenizer` with a ``name`` and one method to write,
:meth:`Tokenizer.tokens` (ordered tokens of a piece of text). The base class turns tokens into
features: word n-grams ("shingles") when the ``shingle`` option is above 1, weighted by their
counts. A tokenizer that weights features itself (TF-IDF) overrides :meth:`Tokenizer.features`.

Built-in tokenizers and third-party ones are found the same way: built-ins are listed in
:data:`BUILTIN`, others come from the ``simdedup.tokenizers`` entry-point group, whose values
point at Tokenizer subclasses. Both are loaded lazily on first lookup. The environment variable
``SIMDEDUP_LOAD_PLUGINS`` (comma-separated entry-point names; empty for none) limits which
third-party tokenizers load.
"""

from __future__ import annotations

import importlib
import itertools
import os
import warnings
from collections import Counter
from typing import Any, ClassVar, Iterable, Iterator, Sequence

from ..errors import PluginError, TokenizerOptionError, UnknownTokenizerError
from ..limits import MAX_COMPARED, MAX_SHINGLE
from .guard import guarded, started

ENTRY_POINT_GROUP = "simdedup.tokenizers"

#: chunks of a document remembered, and counts of repeated chunks kept, by Tokenizer.features
_REPEATS_KEPT = 8

#: Built-in tokenizers, ``name -> "module:Class"``, imported on first use.
BUILTIN = {
    "words": "simdedup.tokenizers.words:WordsTokenizer",
    "whitespace": "simdedup.tokenizers.whitespace:WhitespaceTokenizer",
    "jieba": "simdedup.tokenizers.jieba_tfidf:JiebaTfidfTokenizer",
    "jieba-fast": "simdedup.tokenizers.jieba_tfidf:JiebaFastTokenizer",
    "simhash-pypi": "simdedup.tokenizers.simhash_pypi:SimhashPypiTokenizer",
}


class Tokenizer:
    """Base class of tokenizers.

    Subclasses set ``name`` and ``description`` and implement :meth:`tokens`. Options are
    declared in ``defaults`` (name -> default value); the type of the default is the option's
    type (a bool option takes true/false, yes/no, on/off or 1/0). Every tokenizer takes
    ``shingle`` unless it sets ``shingle`` out of ``defaults``. Options in ``optional`` are taken
    the same way but kept in ``options``, and so recorded, only when given another value than
    their default: an option added this way leaves the settings of earlier fingerprints as they
    were. :meth:`option` reads either kind.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    defaults: ClassVar[dict[str, Any]] = {"shingle": 1}
    optional: ClassVar[dict[str, Any]] = {}
    #: joins the tokens of a shingle
    shingle_separator: ClassVar[str] = " "
    #: how its features vote in the simhash unless the user says (see simdedup.simhash)
    weighting: ClassVar[str] = "feature"

    def __init__(self, **options: Any):
        known = {**self.defaults, **self.optional}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TokenizerOptionError(
                f"tokenizer {self.name!r} takes no option {', '.join(unknown)} "
                f"(its options: {', '.join(sorted(known)) or 'none'})"
            )
        self.options: dict[str, Any] = dict(self.defaults)
        for key, value in options.items():
            value = _option_value(key, value, type(known[key]))
            if key in self.defaults or value != self.optional[key]:
                self.options[key] = value
        if "shingle" in self.options and not 1 <= self.options["shingle"] <= MAX_SHINGLE:
            raise TokenizerOptionError(f"shingle must be 1 to {MAX_SHINGLE}, not {self.options['shingle']}")

    def option(self, key: str) -> Any:
        """The value of option ``key``, declared in ``defaults`` or ``optional``."""
        return self.options[key] if key in self.options else self.optional[key]

    def tokens(self, text: str) -> Iterable[str]:
        """Ordered tokens of ``text`` (one chunk of a document; chunks end at whitespace)."""
        raise NotImplementedError

    def _tokens(self, text: str) -> Iterable[str]:
        """:meth:`tokens`, which must give tokens (None, which counting would take for none, is a mistake)."""
        found = self.tokens(text)
        if found is None:
            raise TypeError("tokens() gave None, not tokens")
        return found

    def prepare(self) -> None:
        """Load whatever the tokenizer needs (dictionaries) before documents arrive."""

    def features(self, chunks: Iterable[str]) -> dict[str, float]:
        """Weighted features of a document given as text chunks that end at whitespace.

        The default counts tokens, or shingles of ``shingle`` tokens (a document with fewer
        tokens than that has one shingle of all its tokens). Shingles span chunk boundaries.
        """
        n = self.options.get("shingle", 1)
        counts: Counter[str] = Counter()
        if n == 1:
            # A chunk equal to one of the few before it (a compressed file of one phrase repeated
            # expands to the same few chunks over and over) is tokenized once and its counts kept.
            recent: list[str] = []
            repeated: dict[str, Counter[str]] = {}
            for chunk in chunks:
                if chunk in repeated:
                    counts.update(repeated[chunk])
                elif chunk in recent:
                    repeated[chunk] = Counter(self._tokens(chunk))
                    counts.update(repeated[chunk])
                    if len(repeated) > _REPEATS_KEPT:
                        del repeated[next(iter(repeated))]
                else:
                    counts.update(self._tokens(chunk))
                recent = [*recent[1 - _REPEATS_KEPT :], chunk]
            return dict(counts)
        join = self.shingle_separator.join
        tail: list[str] = []
        for chunk in chunks:
            window = tail + list(self._tokens(chunk))
            if len(window) >= n:  # n views of the window, not n copies of it
                counts.update(map(join, zip(*(itertools.islice(window, i, None) for i in range(n)))))
                tail = window[len(window) - n + 1 :]
            else:
                tail = window
        if not counts and tail:
            counts[join(tail)] = 1
        return dict(counts)

    def features_many(self, documents: Sequence[Sequence[str]]) -> list[dict[str, float]]:
        """:meth:`features` of many documents (each given as its chunks). A tokenizer that can
        do them faster together overrides this; the pipeline then hands it batches."""
        return [self.features(chunks) for chunks in documents]

    def text_features(self, text: str) -> dict[str, float]:
        """Weighted features of a whole text held in memory."""
        return self.features([text])

    def settings(self) -> dict[str, Any]:
        """What a fingerprint record says about this tokenizer: its name and all its options."""
        return {"tokenizer": self.name, "options": dict(sorted(self.options.items()))}


_BOOLEANS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}


def _option_value(key: str, value: Any, kind: type) -> Any:
    """``value`` (a string from the command line, or a value) as an option of type ``kind``.

    Raises:
        TokenizerOptionError: it is not one.
    """
    if kind is bool and isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    if kind is bool and not isinstance(value, bool):  # bool("false") would be True
        raise TokenizerOptionError(f"tokenizer option {key} must be true or false, not {value!r}")
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise TokenizerOptionError(f"tokenizer option {key} must be {kind.__name__}, not {value!r}") from None
    if kind in (int, float) and not -MAX_COMPARED <= number <= MAX_COMPARED:  # NaN and infinities too
        raise TokenizerOptionError(
            f"tokenizer option {key} must be between {-MAX_COMPARED} and {MAX_COMPARED}, not {value!r}"
        )
    return number


_registry: dict[str, Any] | None = None


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    found = list(entry_points(group=ENTRY_POINT_GROUP))
    allowed = os.environ.get("SIMDEDUP_LOAD_PLUGINS")
    if allowed is not None:
        names = {n.strip() for n in allowed.split(",") if n.strip()}
        found = [ep for ep in found if ep.name in names]
    return sorted(found, key=lambda ep: ep.name)


def _load_registry() -> dict[str, Any]:
    global _registry
    if _registry is None:
        registry: dict[str, Any] = dict(BUILTIN)
        for ep in _entry_points():
            if ep.name in BUILTIN:
                warnings.warn(f"tokenizer plugin {ep.value} cannot replace built-in {ep.name!r}", stacklevel=2)
                continue
            registry[ep.name] = ep
        _registry = registry
    return _registry


def register(cls: type[Tokenizer]) -> type[Tokenizer]:
    """Register a Tokenizer subclass under its ``name`` (usable as a class decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Tokenizer)) or not cls.name:
        raise TypeError("register() takes a Tokenizer subclass with a name")
    _load_registry()[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove a tokenizer registered with :func:`register`."""
    _load_registry().pop(name, None)


def _resolve(name: str) -> type[Tokenizer]:
    # A built-in name needs no scan of the installed packages' entry points (about 40 ms):
    # plugins cannot replace built-ins, and nothing was registered yet.
    registry = _load_registry() if _registry is not None or name not in BUILTIN else dict(BUILTIN)
    try:
        target = registry[name]
    except KeyError:
        raise UnknownTokenizerError(f"unknown tokenizer {name!r}; available: {', '.join(sorted(registry))}") from None
    if isinstance(target, type):
        return target
    with guarded(name, PluginError, doing=" to load"):  # a broken plugin must not take the others down
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            cls = getattr(importlib.import_module(module), attr)
        else:
            cls = target.load()
    if not (isinstance(cls, type) and issubclass(cls, Tokenizer)):
        raise PluginError(f"tokenizer {name!r} does not point at a Tokenizer subclass")
    registry[name] = cls
    return cls


def tokenizer_class(name: str) -> type[Tokenizer]:
    """The class of the tokenizer registered as ``name`` (see :func:`get_tokenizer`)."""
    return _resolve(name)


#: how a tokenizer reads an option's value (``-O lowercase=no``): public for those that compare them
option_value = _option_value


def get_tokenizer(name: str, **options: Any) -> Tokenizer:
    """An instance of the tokenizer registered as ``name`` with ``options``.

    Raises:
        UnknownTokenizerError: no such tokenizer.
        TokenizerOptionError: an option it does not take.
        PluginError: it failed to load or start (:mod:`simdedup.tokenizers.guard`).
    """
    return started(_resolve(name), name, options)


def available_tokenizers() -> Iterator[dict[str, Any]]:
    """Describe every registered tokenizer; one that fails to load is described with its error."""
    for name in sorted(_load_registry()):
        try:
            cls = _resolve(name)
        except PluginError as exc:
            yield {"name": name, "error": str(exc)}
            continue
        info = {"name": name, "description": cls.description, "options": dict(cls.defaults)}
        if cls.optional:  # recorded only when set: listed apart, as records show them apart
            info["optional"] = dict(cls.optional)
        yield {**info, "source": "builtin" if name in BUILTIN else cls.__module__}


__all__ = [
    "BUILTIN",
    "option_value",
    "tokenizer_class",
    "ENTRY_POINT_GROUP",
    "Tokenizer",
    "available_tokenizers",
    "get_tokenizer",
    "register",
    "unregister",
]
