"""A fingerprint record and its JSON-line form.

One record per document::

    {"id": "corpus/a.txt", "simhash": "8f3a...", "bits": 64, "features": 312, "bytes": 2048,
     "tokenizer": "words", "options": {"shingle": 1}, "hash": "xxh3", "sketch": "q83F..."}

``simhash`` is fixed-width lower-case hex (never a JSON number: jq and JavaScript read numbers as
doubles and corrupt values above 2**53). ``sketch`` (optional) is URL-safe base64 of the
record's sketch: of the text's shingles (``"sketch_of":"shingles"``, :mod:`simdedup.shingle_sketch`,
what verification estimates the resemblance from) or of the features' counts (no ``sketch_of``,
:mod:`simdedup.sketch`: records made before shingle sketches, or ``--sketch-of features``).
``method``, ``tokenizer``, ``options``, ``bits``, ``hash``, ``weighting``, ``ties``,
``sketch_of`` and the sketch size are the record's *settings*; fingerprints are only comparable
when their settings are equal. ``ties`` and ``sketch_of`` are written only when they are not the
defaults of the records made before them (``"ties":"one"``), so those read as they were.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import RecordError
from ..method_registry import DEFAULT_METHOD, method_spec
from ..similarity import FOLDS
from ..sketch import encode as encode_sketch
from ..write import json_text_bytes

_HEX = re.compile(r"[0-9a-fA-F]+")
_INT64_END = 1 << 63  # features and bytes are kept as int64
_BASE64 = re.compile(r"[A-Za-z0-9_-]+")
SETTING_KEYS = (
    "method",
    "tokenizer",
    "options",
    "bits",
    "hash",
    "weighting",
    "ties",
    "sketch_of",
    "fold",
)  # and "sketch": its size
#: the settings a JSON line carries, in the order it carries them
_WRITTEN_SETTINGS = ("method", "tokenizer", "options", "hash", "weighting", "ties", "sketch_of", "fold")
#: what a record's sketch is of (``sketch_of``): the text's shingles; None: the features' counts
SKETCH_OF_SHINGLES = "shingles"


@dataclass
class FingerprintRecord:
    """A document's fingerprint and what it was made with.

    ``simhash`` holds the fingerprint value whatever the method; the JSON field that carries it
    is named by the method (:attr:`simdedup.methods.MethodSpec.value_field`).
    """

    id: str
    simhash: int
    bits: int
    features: int
    settings: dict[str, Any] = field(default_factory=dict)
    bytes: int | None = None
    sketch: bytes | None = None
    encoding: str | None = None  # what --encoding auto chose (not written to the record)
    exact: Any = None  # simdedup.similarity.ExactSets of the text read in this run (not written)

    def __reduce__(self) -> tuple:
        # The fields in order, to the constructor: a worker's records reach the parent about
        # 3 us a record sooner than as pickle's default, the state as a dict.
        return type(self), (
            self.id,
            self.simhash,
            self.bits,
            self.features,
            self.settings,
            self.bytes,
            self.sketch,
            self.encoding,
            self.exact,
        )

    def replaced(self, **changes: Any) -> FingerprintRecord:
        """A copy with ``changes``, as :func:`dataclasses.replace` makes it (the fields are all
        set by ``__init__`` as given) in a fraction of its time: it is made once per exact copy
        of a document."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    def to_json(self) -> str:
        """The record as one JSON line (without the newline)."""
        method = self.settings.get("method") or DEFAULT_METHOD
        parts = [
            '{"id":',
            _json_string(self.id),
            ',"',
            method_spec(method).value_field,
            '":"',  # type: ignore[union-attr]
            format(self.simhash, f"0{self.bits // 4}x"),
            '","bits":',
            str(self.bits),
            ',"features":',
            str(self.features),
        ]
        if self.bytes is not None:
            parts += [',"bytes":', str(self.bytes)]
        parts.append(_settings_json(self.settings))
        if self.sketch is not None:
            parts += [',"sketch":"', encode_sketch(self.sketch), '"']
        parts.append("}")
        return "".join(parts)


_json_string = json.encoder.encode_basestring  # as json.dumps(text, ensure_ascii=False)
_settings_text: dict[int, tuple[dict[str, Any], str]] = {}


def _settings_json(settings: dict[str, Any]) -> str:
    """The settings fields of a JSON line, from ``,"method":``; the records of one run share one
    settings dict, so its text is made once (keyed by identity, checked)."""
    cached = _settings_text.get(id(settings))
    if cached is not None and cached[0] is settings:
        return cached[1]
    text = "".join(
        f',"{key}":' + json.dumps(settings[key], ensure_ascii=False, separators=(",", ":"))
        for key in _WRITTEN_SETTINGS
        if settings.get(key) is not None
    )
    if len(_settings_text) > 64:
        _settings_text.clear()
    _settings_text[id(settings)] = (settings, text)
    return text


def json_lines(records: Iterable[FingerprintRecord]) -> bytes:
    """The records as JSON lines, each ending with a newline, encoded as the writers send them."""
    return json_text_bytes("".join([record.to_json() + "\n" for record in records]))


def sketch_kind(settings: dict[str, Any] | None) -> str | None:
    """What records of these settings (or a method's) carry sketches of: ``"shingles"``,
    ``"features"``, or None without sketches."""
    if not (settings or {}).get("sketch"):
        return None
    return "shingles" if settings.get("sketch_of") == SKETCH_OF_SHINGLES else "features"  # type: ignore[union-attr]


def describe_settings(settings: dict[str, Any]) -> str:
    """Settings in a short human form, e.g. ``whitespace(shingle=1) xxh3 64-bit``."""
    options = ",".join(f"{k}={v}" for k, v in sorted((settings.get("options") or {}).items()))
    method = settings.get("method") or DEFAULT_METHOD
    if method != "simhash":
        return f"{method}({options}) {settings.get('bits')}-bit"
    of = "shingles" if settings.get("sketch_of") == SKETCH_OF_SHINGLES else "features"
    sketch = f"{settings['sketch']}-byte sketch of {of}" if settings.get("sketch") else "no sketch"
    ties = ", ties give 1" if settings.get("ties") == "one" else ""
    ties += f", {settings['fold']} folded" if settings.get("fold") else ""
    return (
        f"simhash {settings.get('tokenizer')}({options}) {settings.get('hash')} {settings.get('bits')}-bit, "
        f"{settings.get('weighting')} weights{ties}, {sketch}"
    )


def record_fields(obj: Any, where: str) -> tuple[str, str, int, int, Any, Any, tuple]:
    """Check a decoded record: ``(id, hex, bits, features, bytes, sketch text, settings key)``.

    The settings key is a tuple in :data:`SETTING_KEYS` order plus the sketch size in bytes
    (:func:`settings_dict` turns it into the settings dict); tuples compare fast.
    """
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: not a JSON object")
    method = obj.get("method", DEFAULT_METHOD)
    spec = method_spec(method) if isinstance(method, str) else None
    if spec is None:
        raise RecordError(f"{where}: unknown method {method!r}")
    field_name = spec.value_field
    for key in ("id", field_name, "bits"):
        if key not in obj:
            raise RecordError(f"{where}: missing field {key!r}")
    doc_id, hexdigest, bits = obj["id"], obj[field_name], obj["bits"]
    if not isinstance(doc_id, str):
        raise RecordError(f"{where}: field 'id' must be a string")
    if type(bits) is not int or bits not in spec.widths:
        allowed = " or ".join(map(str, spec.widths))
        raise RecordError(f"{where}: field 'bits' must be {allowed} for {method}, not {bits!r}")
    if not isinstance(hexdigest, str) or len(hexdigest) != bits // 4:
        raise RecordError(
            f"{where}: field {field_name!r} must be {bits // 4} hex digits for {bits} bits"
            + (f", got {len(hexdigest)}" if isinstance(hexdigest, str) else "")
        )
    if not _HEX.fullmatch(hexdigest):
        raise RecordError(f"{where}: field {field_name!r} is not hexadecimal")
    features = obj.get("features", 0)
    if type(features) is not int or not 0 <= features < _INT64_END:
        raise RecordError(f"{where}: field 'features' must be a non-negative integer below 2**63")
    size = obj.get("bytes")
    if size is not None and (type(size) is not int or not -_INT64_END <= size < _INT64_END):
        raise RecordError(f"{where}: field 'bytes' must be an integer of 64 bits")
    sketch = obj.get("sketch")
    if sketch is not None and (not isinstance(sketch, str) or not _BASE64.fullmatch(sketch)):
        raise RecordError(f"{where}: field 'sketch' is not URL-safe base64")
    sketch_of = obj.get("sketch_of")
    if sketch_of not in (None, SKETCH_OF_SHINGLES):
        raise RecordError(f"{where}: field 'sketch_of' must be \"{SKETCH_OF_SHINGLES}\" when given")
    fold = obj.get("fold")
    if fold not in (None, *FOLDS):
        raise RecordError(f"{where}: field 'fold' must be one of {', '.join(FOLDS)} when given")
    sketch_size = len(sketch) * 3 // 4 if sketch else 0
    sizes = SHINGLE_SKETCH_SIZES if sketch_of else SKETCH_SIZES
    if sketch and (sketch_size not in sizes or len(sketch) != -(-sketch_size * 4 // 3)):
        kind = "a multiple of 8 from 8" if sketch_of else "a power of two of 8"
        raise RecordError(
            f"{where}: field 'sketch' must hold {kind} to 4096 bytes (unpadded base64), not {len(sketch)} characters"
        )
    weighting = obj.get("weighting", "feature" if method == "simhash" else None)
    for name in ("tokenizer", "hash", "weighting"):
        if not isinstance(obj.get(name), (str, type(None))):
            raise RecordError(f"{where}: field {name!r} must be a string")
    options = obj.get("options")
    if options is not None and not (isinstance(options, dict) and all(map(_is_scalar, options.values()))):
        raise RecordError(f"{where}: field 'options' must be an object of strings, numbers and booleans")
    ties = obj.get("ties", "zero")
    if ties not in ("zero", "one"):
        raise RecordError(f'{where}: field \'ties\' must be "zero" or "one"')
    key = (
        method,
        obj.get("tokenizer"),
        options,
        bits,
        obj.get("hash"),
        weighting,
        "one" if ties == "one" else None,
        sketch_of,
        fold,
        sketch_size,
    )
    return doc_id, hexdigest, bits, features, size, sketch, key


#: the sketch sizes :class:`simdedup.simhash.Simhasher` makes (bytes), and those of shingle sketches
SKETCH_SIZES = frozenset(1 << n for n in range(3, 13))
SHINGLE_SKETCH_SIZES = frozenset(range(8, 4097, 8))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, type(None))) or (isinstance(value, float) and math.isfinite(value))


def settings_dict(key: tuple) -> dict[str, Any]:
    """The settings dict of a settings key from :func:`record_fields`."""
    return {**dict(zip(SETTING_KEYS, key)), "sketch": key[-1]}
