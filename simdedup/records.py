"""Fingerprint records and their JSON-lines form.

One record per document::

    {"id": "corpus/a.txt", "simhash": "8f3a...", "bits": 64, "features": 312, "bytes": 2048,
     "tokenizer": "words", "options": {"shingle": 1}, "hash": "xxh3", "sketch": "q83F..."}

``simhash`` is fixed-width lower-case hex (never a JSON number: jq and JavaScript read numbers as
doubles and corrupt values above 2**53). ``sketch`` (optional) is URL-safe base64 of the
feature sketch (:mod:`simdedup.sketch`). ``tokenizer``, ``options``, ``bits``, ``hash`` and the
sketch size are the record's *settings*; fingerprints are only comparable when their settings
are equal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Iterator

from .errors import IncompatibleSettingsError, RecordError
from .sketch import decode as decode_sketch
from .sketch import encode as encode_sketch

_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE64 = re.compile(r"[A-Za-z0-9_-]+")
SETTING_KEYS = ("method", "tokenizer", "options", "bits", "hash", "weighting")  # and "sketch": its size
#: the field holding the fingerprint, and the widths allowed, for each method
VALUE_FIELDS = {"simhash": "simhash", "nilsimsa": "nilsimsa", "sentences": "signature"}
WIDTHS = {"simhash": (64, 128), "nilsimsa": (256,), "sentences": (64,)}


@dataclass
class FingerprintRecord:
    """A document's fingerprint and what it was made with.

    ``simhash`` holds the fingerprint value whatever the method; the JSON field that carries it
    is named after the method (:data:`VALUE_FIELDS`).
    """

    id: str
    simhash: int
    bits: int
    features: int
    settings: dict[str, Any] = field(default_factory=dict)
    bytes: int | None = None
    sketch: bytes | None = None
    encoding: str | None = None  # what --encoding auto chose (not written to the record)

    def to_json(self) -> str:
        """The record as one JSON line (without the newline)."""
        method = self.settings.get("method") or "simhash"
        parts = ['{"id":', _json_string(self.id), ',"', VALUE_FIELDS[method], '":"',
                 format(self.simhash, f"0{self.bits // 4}x"), '","bits":', str(self.bits),
                 ',"features":', str(self.features)]
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
    text = "".join(f',"{key}":' + json.dumps(settings[key], ensure_ascii=False, separators=(",", ":"))
                   for key in ("method", "tokenizer", "options", "hash", "weighting") if key in settings)
    if len(_settings_text) > 64:
        _settings_text.clear()
    _settings_text[id(settings)] = (settings, text)
    return text


def describe_settings(settings: dict[str, Any]) -> str:
    """Settings in a short human form, e.g. ``whitespace(shingle=1) xxh3 64-bit``."""
    options = ",".join(f"{k}={v}" for k, v in sorted((settings.get("options") or {}).items()))
    method = settings.get("method") or "simhash"
    if method != "simhash":
        return f"{method}({options}) {settings.get('bits')}-bit"
    sketch = f"{settings['sketch']}-byte sketch" if settings.get("sketch") else "no sketch"
    return (f"simhash {settings.get('tokenizer')}({options}) {settings.get('hash')} {settings.get('bits')}-bit, "
            f"{settings.get('weighting')} weights, {sketch}")


def _fields(obj: Any, where: str) -> tuple[str, str, int, int, Any, Any, tuple]:
    """Check a decoded record: ``(id, hex, bits, features, bytes, sketch text, settings key)``.

    The settings key is a tuple in :data:`SETTING_KEYS` order plus the sketch size in bytes
    (:func:`settings_dict` turns it into the settings dict); tuples compare fast.
    """
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: not a JSON object")
    method = obj.get("method", "simhash")
    field_name = VALUE_FIELDS.get(method) if isinstance(method, str) else None
    if field_name is None:
        raise RecordError(f"{where}: unknown method {method!r}")
    for key in ("id", field_name, "bits"):
        if key not in obj:
            raise RecordError(f"{where}: missing field {key!r}")
    doc_id, hexdigest, bits = obj["id"], obj[field_name], obj["bits"]
    if not isinstance(doc_id, str):
        raise RecordError(f"{where}: field 'id' must be a string")
    if type(bits) is not int or bits not in WIDTHS[method]:
        allowed = " or ".join(map(str, WIDTHS[method]))
        raise RecordError(f"{where}: field 'bits' must be {allowed} for {method}, not {bits!r}")
    if not isinstance(hexdigest, str) or len(hexdigest) != bits // 4:
        raise RecordError(
            f"{where}: field {field_name!r} must be {bits // 4} hex digits for {bits} bits"
            + (f", got {len(hexdigest)}" if isinstance(hexdigest, str) else "")
        )
    if not _HEX.fullmatch(hexdigest):
        raise RecordError(f"{where}: field {field_name!r} is not hexadecimal")
    features = obj.get("features", 0)
    if type(features) is not int or features < 0:
        raise RecordError(f"{where}: field 'features' must be a non-negative integer")
    size = obj.get("bytes")
    if size is not None and type(size) is not int:
        raise RecordError(f"{where}: field 'bytes' must be an integer")
    sketch = obj.get("sketch")
    if sketch is not None and (not isinstance(sketch, str) or not _BASE64.fullmatch(sketch)):
        raise RecordError(f"{where}: field 'sketch' is not URL-safe base64")
    weighting = obj.get("weighting", "feature" if method == "simhash" else None)
    key = (method, obj.get("tokenizer"), obj.get("options"), bits, obj.get("hash"), weighting,
           len(sketch) * 3 // 4 if sketch else 0)
    return doc_id, hexdigest, bits, features, size, sketch, key


def settings_dict(key: tuple) -> dict[str, Any]:
    """The settings dict of a settings key from :func:`_fields`."""
    return {**dict(zip(SETTING_KEYS, key)), "sketch": key[-1]}


def parse_record(line: str, where: str) -> FingerprintRecord:
    """Parse one JSON line; ``where`` (``FILE:LINE``) starts every error message.

    Raises:
        RecordError: not JSON, a missing or mistyped field, a fingerprint of the wrong width.
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not a JSON object ({exc.msg} at column {exc.colno})") from None
    doc_id, hexdigest, bits, features, size, sketch, key = _fields(obj, where)
    return FingerprintRecord(doc_id, int(hexdigest, 16), bits, features, settings_dict(key), size,
                             decode_sketch(sketch) if sketch else None)


@dataclass
class FingerprintColumns:
    """Fingerprint lines read column-wise, ready for arrays."""

    ids: list[str] = field(default_factory=list)
    hexes: list[str] = field(default_factory=list)
    features: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # bytes, -1 when the record does not say
    sketches: bytearray = field(default_factory=bytearray)  # decoded, back to back
    where: list[tuple[str, int]] = field(default_factory=list)  # (file, line) of each record
    bits: int = 64
    settings: dict[str, Any] | None = None


def read_fingerprint_files(files: Iterable[tuple[str, BinaryIO]]) -> FingerprintColumns:
    """Every record of the named binary streams, all with equal settings.

    Raises:
        RecordError: a malformed line (stops at the first), with ``FILE:LINE:``.
        IncompatibleSettingsError: a record whose settings differ from the first one's.
    """
    columns = FingerprintColumns()
    first_where = ""
    first_key = None
    loads = json.loads
    for name, stream in files:
        for number, raw in enumerate(stream, 1):
            try:
                obj = loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise RecordError(f"{name}:{number}: not UTF-8 text") from None
            except json.JSONDecodeError as exc:
                if not raw.strip():
                    continue
                raise RecordError(f"{name}:{number}: not a JSON object ({exc.msg} at column {exc.colno})") from None
            doc_id, hexdigest, bits, features, size, sketch, key = _fields(obj, f"{name}:{number}")
            if first_key is None:
                first_key, columns.settings, columns.bits = key, settings_dict(key), bits
                first_where = f"{name}:{number}"
            elif key != first_key:
                raise IncompatibleSettingsError(
                    f"{name}:{number}: fingerprint made with {describe_settings(settings_dict(key))}, but "
                    f"{first_where} was made with {describe_settings(columns.settings)}; fingerprint all "
                    "documents with the same settings"
                )
            columns.ids.append(doc_id)
            columns.hexes.append(hexdigest)
            columns.features.append(features)
            columns.sizes.append(-1 if size is None else size)
            if sketch:
                try:
                    columns.sketches += decode_sketch(sketch)
                except ValueError as exc:
                    raise RecordError(f"{name}:{number}: field 'sketch': {exc}") from None
            columns.where.append((name, number))
    return columns
