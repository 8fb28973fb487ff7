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
SETTING_KEYS = ("method", "tokenizer", "options", "bits", "hash")  # and "sketch": its size in bytes
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

    def to_json(self) -> str:
        """The record as one JSON line (without the newline)."""
        method = self.settings.get("method") or "simhash"
        out: dict[str, Any] = {
            "id": self.id,
            VALUE_FIELDS[method]: format(self.simhash, f"0{self.bits // 4}x"),
            "bits": self.bits,
            "features": self.features,
        }
        if self.bytes is not None:
            out["bytes"] = self.bytes
        for key in ("method", "tokenizer", "options", "hash"):
            if key in self.settings:
                out[key] = self.settings[key]
        if self.sketch is not None:
            out["sketch"] = encode_sketch(self.sketch)
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def describe_settings(settings: dict[str, Any]) -> str:
    """Settings in a short human form, e.g. ``whitespace(shingle=1) xxh3 64-bit``."""
    options = ",".join(f"{k}={v}" for k, v in sorted((settings.get("options") or {}).items()))
    method = settings.get("method") or "simhash"
    if method != "simhash":
        return f"{method}({options}) {settings.get('bits')}-bit"
    sketch = f"{settings['sketch']}-byte sketch" if settings.get("sketch") else "no sketch"
    return f"simhash {settings.get('tokenizer')}({options}) {settings.get('hash')} {settings.get('bits')}-bit, {sketch}"


def parse_record(line: str, where: str) -> FingerprintRecord:
    """Parse one JSON line; ``where`` (``FILE:LINE``) starts every error message.

    Raises:
        RecordError: not JSON, a missing or mistyped field, a fingerprint of the wrong width.
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{where}: not a JSON object ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: not a JSON object")
    method = obj.get("method", "simhash")
    if method not in VALUE_FIELDS:
        raise RecordError(f"{where}: unknown method {method!r}")
    field_name = VALUE_FIELDS[method]
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
    value = int(hexdigest, 16)
    features = obj.get("features", 0)
    if not isinstance(features, int) or isinstance(features, bool) or features < 0:
        raise RecordError(f"{where}: field 'features' must be a non-negative integer")
    size = obj.get("bytes")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
        raise RecordError(f"{where}: field 'bytes' must be an integer")
    sketch = obj.get("sketch")
    if sketch is not None:
        try:
            if not isinstance(sketch, str):
                raise ValueError("not a string")
            sketch = decode_sketch(sketch)
        except ValueError as exc:
            raise RecordError(f"{where}: field 'sketch': {exc}") from None
    settings = {key: obj.get(key) for key in SETTING_KEYS}
    settings["method"] = method
    settings["sketch"] = len(sketch) if sketch else 0
    return FingerprintRecord(doc_id, value, bits, features, settings, size, sketch)


class SettingsGuard:
    """Refuses records whose settings differ from the first record's."""

    def __init__(self) -> None:
        self.settings: dict[str, Any] | None = None
        self.where = ""

    def check(self, record: FingerprintRecord, where: str) -> None:
        if self.settings is None:
            self.settings, self.where = record.settings, where
        elif record.settings != self.settings:
            raise IncompatibleSettingsError(
                f"{where}: fingerprint made with {describe_settings(record.settings)}, but {self.where} "
                f"was made with {describe_settings(self.settings)}; fingerprint all documents with "
                "the same settings"
            )


def read_fingerprint_files(files: Iterable[tuple[str, BinaryIO]]) -> Iterator[tuple[str, FingerprintRecord]]:
    """``(where, record)`` for every record of the named binary streams, all with equal settings.

    Raises:
        RecordError: a malformed line (stops at the first).
        IncompatibleSettingsError: a record whose settings differ from the first one's.
    """
    guard = SettingsGuard()
    for name, stream in files:
        for number, raw in enumerate(stream, 1):
            where = f"{name}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise RecordError(f"{where}: not UTF-8 text") from None
            if not line.strip():
                continue
            record = parse_record(line, where)
            guard.check(record, where)
            yield where, record
