"""Fingerprint files read column-wise into numpy arrays, in either form: JSON lines
(:mod:`.record`) or the compact binary form (:mod:`.binary`)."""

from __future__ import annotations

import binascii
import gc
import json
import operator
import re
import secrets
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from ..errors import IncompatibleSettingsError, RecordError
from ..jsonline import parse_json_line
from ..kernels.scan import FIELD_BYTES, FIELD_FEATURES, FIELD_HEX, FIELD_ID, FIELD_SKETCH, RecordScanner
from ..limits import MAX_RECORD_LINE
from ..method_registry import BUILTIN, method_spec
from ..sketch import decode as decode_sketch
from .binary import MAGIC, read_blocks
from .record import (
    _BASE64,
    _HEX,
    _INT64_END,
    SETTING_KEYS,
    FingerprintRecord,
    describe_settings,
    record_fields,
    settings_dict,
)


@dataclass
class FingerprintColumns:
    """Fingerprint lines read column-wise, as arrays."""

    ids: list[str]
    values: np.ndarray  # (n, bits // 64) uint64, word 0 low
    features: np.ndarray  # int64
    sizes: np.ndarray  # int64 bytes, -1 when the record does not say
    sketches: np.ndarray | None  # (n, sketch bytes) uint8, when the records carry sketches
    files: list[str]  # names of the files read
    file_index: np.ndarray  # int32: the file of each record (an index into ``files``)
    lines: np.ndarray  # int64: the line of each record in its file
    bits: int = 64
    settings: dict[str, Any] | None = None

    def records(self, size: int = 1 << 16, first: int = 0) -> Iterator[list[FingerprintRecord]]:
        """The records held here from record ``first`` on, ``size`` at a time."""
        settings = {k: v for k, v in (self.settings or {}).items() if v is not None}
        words = self.values.shape[1]
        for start in range(first, len(self.ids), size):
            stop = start + size
            values = [0] * len(self.ids[start:stop])
            for w in range(words):
                values = [v | (int(x) << (64 * w)) for v, x in zip(values, self.values[start:stop, w].tolist())]
            sketches = self.sketches[start:stop] if self.sketches is not None else None
            yield [
                FingerprintRecord(
                    doc_id,
                    value,
                    self.bits,
                    features,
                    settings,
                    None if size_ == -1 else size_,
                    sketches[i].tobytes() if sketches is not None else None,
                )
                for i, (doc_id, value, features, size_) in enumerate(
                    zip(
                        self.ids[start:stop],
                        values,
                        self.features[start:stop].tolist(),
                        self.sizes[start:stop].tolist(),
                    )
                )
            ]


#: the id: plain characters and backslash escapes, unrolled (``a*(?:\\.a*)*``: the same strings as
#: ``(?:a|\\.)*``, a quarter faster to match)
_ID = r'^\{"id":"([^"\\\x00-\x1f]*(?:\\[^\x00-\x1f][^"\\\x00-\x1f]*)*)",'
#: at most 19 digits: a longer number goes to the line-by-line reader, which checks every number
#: in one place (:func:`simdedup.jsonline.parse_json_line`)
_NUMBERS = r'"features":(0|[1-9][0-9]{0,18})(?:,"bytes":(-?(?:0|[1-9][0-9]{0,18})))?'
#: A line exactly as :meth:`FingerprintRecord.to_json` writes it: groups id, value field, hex,
#: bits, features, bytes, the settings fields, sketch. Blocks whose every line has this form
#: are read by regular expression and numpy; any other line goes through ``json.loads``.
_CANONICAL = re.compile(
    _ID
    + f'"({"|".join(spec.value_field for spec in BUILTIN.values())})":"([0-9a-fA-F]+)",'
    + f'"bits":({"|".join(sorted({str(bits) for spec in BUILTIN.values() for bits in spec.widths}, key=int))}),'
    + _NUMBERS
    + r'((?:,"(?:method|tokenizer|options|hash|weighting|ties|sketch_of|fold)":(?:"[^"\\\x00-\x1f]*"|\{[^{}\\\x00-\x1f]*\}|null))*)'
    + r'(?:,"sketch":"([A-Za-z0-9_-]+)")?\}\r?$',
    re.M,
)


def _same_form(first: re.Match) -> re.Pattern:
    """The lines of :data:`_CANONICAL` with the field, width, settings and sketch length of
    ``first``, capturing only what differs between records: id, hex, features, bytes, sketch
    (empty when there is none). It matches a line exactly when ``_CANONICAL`` does with those
    parts equal, so a block it matches whole needs no further check; and it runs faster."""
    field, hexdigits, bits, settings, sketch = first.group(2, 3, 4, 7, 8)
    sketch_part = f',"sketch":"([A-Za-z0-9_-]{{{len(sketch)}}})"' if sketch else "()"
    return re.compile(
        _ID
        + f'"{field}":"([0-9a-fA-F]{{{len(hexdigits)}}})","bits":{bits},'
        + _NUMBERS
        + re.escape(settings)
        + sketch_part
        + r"\}\r?$",
        re.M,
    )


@dataclass(frozen=True)
class Template:
    """One spelling of the records of a file, for the compiled scanner
    (:func:`simdedup.kernels.source.scan.scan_records`): the literal ``pieces`` of a line (keys,
    separators, settings) around its fields ``kinds`` (id, value, features, bytes, sketch, in
    the line's order), the value's hex digits and the sketch's characters. A line that fits it
    is JSON, and reads as the record the fields say with the settings the pieces spell."""

    pieces: tuple[bytes, ...]
    kinds: tuple[int, ...]
    hex_digits: int
    sketch_chars: int

    def scan(self, scanner: RecordScanner, data: memoryview | bytes, capacity: int) -> Any:
        return scanner.scan(data, self.pieces, self.kinds, self.hex_digits, self.sketch_chars, capacity)

    @classmethod
    def of(cls, line: bytes, record: dict, value_field: str) -> Template | None:
        """The template that ``line`` fits, ``record`` being what it reads as (a record with
        checked fields); None when no spelling that ``json.dumps`` makes is the line's (compact
        or with spaces after the separators, as jq and pandas write)."""
        fields = {
            "id": FIELD_ID,
            value_field: FIELD_HEX,
            "features": FIELD_FEATURES,
            "bytes": FIELD_BYTES,
            "sketch": FIELD_SKETCH,
        }
        shaped = {
            key: f"{_MARK}{fields[key]}" if key in fields and value not in (None, "") or key == "id" else value
            for key, value in record.items()
        }
        scanner = RecordScanner.loaded()
        for separators in ((",", ":"), (", ", ": ")):
            for ensure_ascii in (True, False):
                text = json.dumps(shaped, separators=separators, ensure_ascii=ensure_ascii)
                for kind in (FIELD_FEATURES, FIELD_BYTES):  # numbers, not strings
                    text = text.replace(f'"{_MARK}{kind}"', f"{_MARK}{kind}")
                parts = re.split(f"{_MARK}([0-4])", text)
                template = cls(
                    tuple(p.encode() for p in parts[0::2]),
                    tuple(int(k) for k in parts[1::2]),
                    len(record[value_field]),
                    len(record.get("sketch") or ""),
                )
                if scanner is not None and template.scan(scanner, line, 1) is not None:
                    return template
        return None


#: bytes of a JSON-lines fingerprint file read (and parsed) at once
BLOCK_BYTES = 1 << 25
#: bytes read at first; the buffer doubles while the file fills it, up to BLOCK_BYTES
FIRST_BLOCK_BYTES = 1 << 20
#: blocks of at least this many bytes are read by the compiled scanner, which costs a load
#: (about 40 ms, or a compile the first time) that smaller blocks would not repay
SCAN_AFTER_BYTES = 1 << 22
_MARK = secrets.token_hex(16)  # between the lines of a block read as one JSON array
_LINE_MARK = f',"{_MARK}",'

_TO_STANDARD = bytes.maketrans(b"-_", b"+/")


def _decode_sketches(texts: list[str]) -> np.ndarray:
    """Equal-length URL-safe base64 texts (no padding; checked by the caller's pattern) decoded
    together: ``(n, bytes)`` uint8. The whole groups of four characters of all texts are
    decoded in one call; the last, short group of each is padded with ``A`` (zero bits) and
    decoded in another."""
    length, count = len(texts[0]), len(texts)
    size = length * 3 // 4
    chars = np.frombuffer("".join(texts).encode("ascii").translate(_TO_STANDARD), dtype=np.uint8).reshape(count, length)
    whole = length // 4 * 4
    out = np.empty((count, size), dtype=np.uint8)
    out[:, : whole // 4 * 3] = np.frombuffer(binascii.a2b_base64(chars[:, :whole].tobytes()), dtype=np.uint8).reshape(
        count, -1
    )
    if whole < length:
        tail = np.full((count, 4), ord("A"), dtype=np.uint8)
        tail[:, : length - whole] = chars[:, whole:]
        decoded = np.frombuffer(binascii.a2b_base64(tail.tobytes()), dtype=np.uint8).reshape(count, 3)
        out[:, whole // 4 * 3 :] = decoded[:, : size - whole // 4 * 3]
    return out


class _ColumnReader:
    """Gathers records block by block, checking every one against the first record's settings."""

    def __init__(self, block_bytes: int = BLOCK_BYTES) -> None:
        self.block_bytes = block_bytes
        self.ids: list[str] = []
        self.parts: dict[str, list[np.ndarray]] = {
            "values": [],
            "features": [],
            "sizes": [],
            "sketches": [],
            "file_index": [],
            "lines": [],
        }
        self.files: list[str] = []
        self.first_key: tuple | None = None
        self.first_where = ""
        self.settings: dict[str, Any] | None = None
        self.bits = 64
        self.same_form: re.Pattern | None = None  # canonical lines with the first canonical record's settings
        self.template: Template | None = None  # the spelling of a block read as JSON, for the scanner
        self.spelled: bytes | None = None  # a line of the last spelling read in bulk, to learn from

    def add_file(self, name: str, stream: BinaryIO) -> None:

        file_number = len(self.files)
        self.files.append(name)
        line = 1
        pending = stream.read(len(MAGIC))
        if pending == MAGIC or (pending and len(pending) < len(MAGIC) and MAGIC.startswith(pending)):
            self._add_binary(name, file_number, stream, pending)
            return
        # One buffer for the whole file, its lines read in place and the cut line moved to its
        # start: fresh blocks would cost a page fault every 4 kB, three times (read, join, cut).
        # It starts small (a small file should not pay for zeroing 32 MB) and doubles while the
        # stream fills it, up to ``block_bytes``.
        buffer = bytearray(max(min(self.block_bytes, FIRST_BLOCK_BYTES), len(pending)))
        buffer[: len(pending)] = pending
        held = len(pending)  # bytes at the start of the buffer, not yet read as lines
        while True:
            if held == len(buffer):  # a line longer than the buffer
                if held > MAX_RECORD_LINE:  # an endless line (/dev/zero) must not take all memory
                    raise RecordError(
                        f"{name}:{line}: a line of more than {MAX_RECORD_LINE >> 20} MiB: not a file of "
                        "fingerprint records"
                    )
                buffer.extend(bytes(len(buffer)))
            with memoryview(buffer) as view:
                got = _fill(stream, view[held:])
            end = held + got
            cut = buffer.rfind(b"\n", 0, end) + 1 if got else end
            if cut:
                with memoryview(buffer) as view, view[:cut] as block:
                    line = self._add_block(
                        name,
                        file_number,
                        line,
                        block,
                        buffer.count(b"\n", 0, cut) + (0 if buffer[cut - 1] == 10 else 1),
                    )
                buffer[: end - cut] = buffer[cut:end]
            held = end - cut
            if not got:
                return
            if end == len(buffer) < self.block_bytes:
                buffer.extend(bytes(min(len(buffer), self.block_bytes - len(buffer))))

    def _add_binary(self, name: str, file_number: int, stream: BinaryIO, first: bytes) -> None:
        """Records of a binary fingerprint file (:mod:`simdedup.fingerprints.binary`); their "line" is their
        position in the file."""

        position = 1
        for number, block in enumerate(read_blocks(stream, name, first), 1):
            self._check_key(block.key, block.bits, f"{name}: binary block {number}")
            n = len(block.ids)
            self._append(
                block.ids,
                block.values,
                block.features,
                block.sizes,
                block.sketches,
                file_number,
                np.arange(position, position + n, dtype=np.int64),
            )
            position += n

    def _append(
        self,
        ids: Iterable[str],
        values: np.ndarray,
        features: np.ndarray,
        sizes: np.ndarray,
        sketches: np.ndarray | None,
        file_number: int,
        lines: np.ndarray,
    ) -> None:
        """Add the columns of some records read from file ``file_number``, at ``lines``."""
        self.ids.extend(ids)
        for part, column in (("values", values), ("features", features), ("sizes", sizes), ("lines", lines)):
            self.parts[part].append(column)
        if sketches is not None:
            self.parts["sketches"].append(sketches)
        self.parts["file_index"].append(np.full(len(lines), file_number, dtype=np.int32))

    def _check_key(self, key: tuple, bits: int, where: str) -> None:
        """Take the first settings key seen, or check that ``key`` equals it.

        Raises:
            IncompatibleSettingsError: it does not.
        """
        if self.first_key is None:
            self.first_key, self.settings, self.bits = key, settings_dict(key), bits
            self.first_where = where
        elif key != self.first_key:
            raise IncompatibleSettingsError(
                f"{where}: fingerprint made with {describe_settings(settings_dict(key))}, but "
                f"{self.first_where} was made with {describe_settings(self.settings or {})}; fingerprint all "
                "documents with the same settings"
            )

    def _add_block(self, name: str, file_number: int, line: int, view: memoryview | bytes, count: int) -> int:
        """Read the ``count`` lines of ``view`` (the first is line ``line``); returns the next line
        number.

        Once a canonical record has been read the long way, blocks whose every line has its
        form and settings are read by the compiled scanner or :meth:`_add_matches`; any other
        block line by line.
        """
        end = line + count
        if len(view) >= SCAN_AFTER_BYTES:
            if self.spelled is not None:  # a spelling read in bulk since the template was learnt
                self._learn_template(self.spelled)
                self.spelled = None
            if self.template is not None and self._add_scanned(file_number, line, view, count):
                return end
        block = bytes(view)
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and self.same_form is None and (first := _CANONICAL.match(text)):
            first_line, rest = block.split(b"\n", 1) if b"\n" in block else (block, b"")
            self._add_lines(name, file_number, line, first_line)
            self.same_form = _same_form(first)
            self.spelled = first_line
            return self._add_block(name, file_number, line + 1, rest, count - 1) if rest else end
        if text is not None and self.same_form is not None:
            matches = self.same_form.findall(text)
            if len(matches) == count and self._add_matches(matches, file_number, line):
                return end
        if text is None or not self._add_decoded(name, file_number, line, text):
            self._add_lines(name, file_number, line, block)
        else:
            first_end = block.find(b"\n")  # (not split: that would copy the rest of the block)
            self.spelled = block if first_end < 0 else block[:first_end]
        return end

    def _learn_template(self, line: bytes) -> None:
        """Take the spelling of ``line``, a record just read, for the scanner; none when it
        has no scanner or the line no spelling it can take."""
        if RecordScanner.loaded() is None:
            return
        record = parse_json_line(line.decode("utf-8"))
        value_field = method_spec(record_fields(record, "")[6][0]).value_field  # type: ignore[union-attr]
        self.template = Template.of(line, record, value_field)

    def _add_decoded(self, name: str, file_number: int, line: int, text: str) -> bool:
        """Add the lines of a block in any JSON spelling (keys in another order, spaces after
        the separators, escapes, as ``jq`` or pandas write them): the block is parsed as one
        JSON array, a mark between every two lines, and checked a column at a time; False
        (nothing added) when a line is not one record with the fields and settings of the
        block's first, spelled as it spells them, so that :meth:`_add_lines` says which line
        is wrong and how."""
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()  # after the last newline
        try:
            values = parse_json_line(f"[{_LINE_MARK.join(lines)}]")
        except ValueError:  # not JSON (blank lines too), or nested or numbered beyond the parser
            return False
        # A line that is not one JSON value alone would shift or swallow the marks, which are
        # random and so cannot be spelled by a line.
        if len(values) != 2 * len(lines) - 1 or values[1::2].count(_MARK) != len(lines) - 1:
            return False
        objects = values[::2]
        if set(map(type, objects)) != {dict}:
            return False
        first = objects[0]
        try:
            key = record_fields(first, "")[6]
        except RecordError:
            return False
        if self.first_key is not None and key != self.first_key:
            return False
        method, bits, sketch_bytes = key[0], key[3], key[-1]
        settings_of = operator.itemgetter(*(k for k in SETTING_KEYS if k in first))
        try:  # the same keys as the first (as many, and all of its), and the same settings
            if list(map(len, objects)).count(len(first)) != len(objects) or list(map(settings_of, objects)).count(
                settings_of(first)
            ) != len(objects):
                return False
            columns = {
                k: list(map(operator.itemgetter(k), objects))  # settings_of has checked the others
                for k in first
                if k == "bits" or k not in SETTING_KEYS
            }
        except KeyError:
            return False
        ids, hexes = columns["id"], columns[method_spec(method).value_field]  # type: ignore[union-attr]
        features, sizes = columns.get("features", [0] * len(objects)), columns.get("bytes", [None] * len(objects))
        if not (
            set(map(type, ids)) == {str}
            and set(map(type, hexes)) == {str}
            and set(map(type, columns["bits"])) == {int}
            and set(map(len, hexes)) == {bits // 4}
            and _HEX.fullmatch("".join(hexes))
            and set(map(type, features)) == {int}
            and 0 <= min(features)
            and max(features) < _INT64_END
            and (
                set(map(type, sizes)) == {type(None)}
                or (set(map(type, sizes)) == {int} and -_INT64_END <= min(sizes) and max(sizes) < _INT64_END)
            )
        ):
            return False  # (64.0 equals 64 and True equals 1, but they are not what a record says)
        sketches = columns.get("sketch")
        if sketches is not None and not (
            set(map(type, sketches)) == {str}
            and set(map(len, sketches)) == {len(sketches[0])}
            and _BASE64.fullmatch("".join(sketches))
        ):
            return False
        self._check_key(key, bits, f"{name}:{line}")
        self._append(
            ids,
            _words_from_hex(hexes, bits),
            np.array(features, dtype=np.int64),
            np.array([-1] * len(sizes) if sizes[0] is None else sizes, dtype=np.int64),
            _decode_sketches(sketches) if sketch_bytes else None,
            file_number,
            np.arange(line, line + len(ids), dtype=np.int64),
        )
        return True

    def _add_scanned(self, file_number: int, line: int, block: memoryview | bytes, count: int) -> bool:
        """Add the lines of a block that all fit :attr:`template`, read by the compiled
        scanner; False (nothing added) when there is no scanner, a line does not fit, or an id
        is not UTF-8 or not a JSON string, so that the other readers take the block."""
        scanner = RecordScanner.loaded()
        found = self.template.scan(scanner, block, count) if scanner and self.template else None
        if found is None:
            return False
        id_bytes, _, escaped, values, features, sizes, sketches = found
        try:
            texts = id_bytes[:-1].decode("utf-8").split("\n") if len(escaped) else []
        except UnicodeDecodeError:
            return False
        ids = _unescaped(texts, np.flatnonzero(escaped).tolist())
        if ids is None or len(ids) != count:
            return False
        self._append(
            ids,
            values,
            features,
            sizes,
            sketches if self.template.sketch_chars else None,
            file_number,
            np.arange(line, line + count, dtype=np.int64),
        )
        return True

    def _add_matches(self, matches: list[tuple[str, ...]], file_number: int, line: int) -> bool:
        """Add lines matched by :attr:`same_form`; False (nothing added) when a number is beyond
        64 bits or an id has an escape that JSON does not, so that the line-by-line reader says
        where."""
        ids, hexes, features, sizes, sketches = zip(*matches)
        try:
            counts, byte_sizes = _integers(features), _integers(sizes)
        except OverflowError:
            return False
        unescaped = _unescaped(list(ids), [i for i, text in enumerate(ids) if "\\" in text])
        if unescaped is None:
            return False
        self._append(
            unescaped,
            _words_from_hex(hexes, self.bits),
            counts,
            byte_sizes,
            _decode_sketches(list(sketches)) if sketches[0] else None,
            file_number,
            np.arange(line, line + len(ids), dtype=np.int64),
        )
        return True

    def _add_lines(self, name: str, file_number: int, line: int, block: bytes) -> None:
        """Read ``block`` line by line with ``json.loads``, saying where a line is wrong."""
        ids, hexes, features, sizes, sketches, lines = [], [], [], [], bytearray(), []
        for number, raw in enumerate(block.split(b"\n"), line):
            if not raw.strip():
                continue
            try:
                obj = parse_json_line(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise RecordError(f"{name}:{number}: not UTF-8 text") from None
            except ValueError as exc:
                raise RecordError(f"{name}:{number}: {exc}") from None
            doc_id, hexdigest, bits, count, size, sketch, key = record_fields(obj, f"{name}:{number}")
            self._check_key(key, bits, f"{name}:{number}")
            ids.append(doc_id)
            hexes.append(hexdigest)
            features.append(count)
            sizes.append(-1 if size is None else size)
            if sketch:
                try:
                    sketches += decode_sketch(sketch)
                except ValueError as exc:
                    raise RecordError(f"{name}:{number}: field 'sketch': {exc}") from None
            lines.append(number)
        if ids:
            self._append(
                ids,
                _words_from_hex(hexes, self.bits),
                np.array(features, dtype=np.int64),
                np.array(sizes, dtype=np.int64),
                np.frombuffer(bytes(sketches), dtype=np.uint8).reshape(len(ids), -1) if sketches else None,
                file_number,
                np.array(lines, dtype=np.int64),
            )

    def finish(self) -> FingerprintColumns:
        words = self.bits // 64

        def joined(name: str, dtype: Any, shape: tuple[int, ...] = ()) -> np.ndarray:
            """The parts as one array, each let go once copied: memory holds the array and one
            part, not two copies of the column."""
            parts = self.parts[name]
            if not parts:
                return np.zeros((0, *shape), dtype=dtype)
            out = np.empty((sum(len(part) for part in parts), *parts[0].shape[1:]), dtype=np.result_type(*parts))
            at = 0
            parts.reverse()
            while parts:
                part = parts.pop()
                out[at : at + len(part)] = part
                at += len(part)
            return out

        sketches = joined("sketches", np.uint8) if self.parts["sketches"] else None
        return FingerprintColumns(
            self.ids,
            joined("values", np.uint64, (words,)),
            joined("features", np.int64),
            joined("sizes", np.int64),
            sketches,
            self.files,
            joined("file_index", np.int32),
            joined("lines", np.int64),
            self.bits,
            self.settings,
        )


def _unescaped(ids: list[str], escaped: list[int]) -> list[str] | None:
    """``ids`` (JSON string contents) with those at ``escaped`` read as JSON; None when one has
    an escape JSON does not (the line-by-line reader then says where)."""
    try:
        for i in escaped:
            ids[i] = json.loads(f'"{ids[i]}"')
    except ValueError:
        return None
    return ids


def _fill(stream: BinaryIO, view: memoryview) -> int:
    """Read into ``view`` until it is full or the stream ends (a pipe gives less at a time)."""
    filled = 0
    while filled < len(view):
        got = stream.readinto(view[filled:])
        if not got:
            break
        filled += got
    return filled


def _integers(texts: tuple[str, ...]) -> np.ndarray:
    """Decimal texts as int64, -1 for an empty one (a field the line does not have).

    Raises:
        OverflowError: one is beyond int64.
    """
    if all(texts):
        values: Iterable[int] = map(int, texts)
    elif not any(texts):
        return np.full(len(texts), -1, dtype=np.int64)
    else:
        values = (int(text) if text else -1 for text in texts)
    return np.fromiter(values, dtype=np.int64, count=len(texts))


def _words_from_hex(hexes: Iterable[str], bits: int) -> np.ndarray:
    """Fixed-width hex fingerprints as an ``(n, bits // 64)`` uint64 array, word 0 low."""
    words = bits // 64
    big_endian = np.frombuffer(bytes.fromhex("".join(hexes)), dtype=">u8").reshape(-1, words)
    return np.ascontiguousarray(big_endian[:, ::-1].astype(np.uint64))


def read_fingerprint_files(files: Iterable[tuple[str, BinaryIO]], block_bytes: int = BLOCK_BYTES) -> FingerprintColumns:
    """Every record of the named binary streams, all with equal settings; JSON lines are read
    ``block_bytes`` at a time.

    Raises:
        RecordError: a malformed line (stops at the first), with ``FILE:LINE:``.
        IncompatibleSettingsError: a record whose settings differ from the first one's.
    """
    reader = _ColumnReader(block_bytes)
    collecting = gc.isenabled()
    gc.disable()  # millions of short-lived match tuples would set off full collections, for nothing
    try:
        for name, stream in files:
            reader.add_file(name, stream)
    finally:
        if collecting:
            gc.enable()
    return reader.finish()
