"""A compact binary form of fingerprint records, for corpora of many millions of documents.

JSON lines are the interchange format: readable, greppable, safe for many writers on one pipe.
Reading ten million of them is about half of what ``cluster`` spends on 10^7 fingerprints;
this form is read with a handful of numpy calls per block and takes about half the space.
``fingerprint --format binary`` and ``convert`` write it; every command that reads fingerprints
recognises it by its first bytes, so files of both kinds can be mixed.

A file is a sequence of self-describing blocks (so files can be concatenated). Each block::

    MAGIC                       b"SIMDEDUP-FP 1\\n"
    template line               the JSON line of one record of the block (its settings), "\\n"
    counts                      u64 records, u64 bytes of ids
    ids                         UTF-8 (surrogatepass), joined by "\\n"
    id lengths                  u32 per record, in bytes
    values                      u64 per 64 bits of fingerprint per record (word 0 low)
    features, sizes             i64 per record each (size -1: unknown)
    sketches                    the sketch bytes of each record, back to back

All integers are little-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from ..errors import RecordError
from ..jsonline import parse_json_line
from ..write import write_all
from .record import FingerprintRecord, record_fields

MAGIC = b"SIMDEDUP-FP 1\n"
_COUNTS = struct.Struct("<QQ")
BLOCK_RECORDS = 1 << 16


def encode_block(records: list[FingerprintRecord]) -> bytes:
    """One block holding ``records`` (all made with the same settings)."""
    first = records[0]
    mask = (1 << 64) - 1
    values = np.array(
        [[(r.simhash >> (64 * w)) & mask for w in range(first.bits // 64)] for r in records], dtype=np.uint64
    )
    sketches = None
    if first.sketch is not None:
        sketches = np.frombuffer(b"".join(r.sketch or b"" for r in records), dtype=np.uint8).reshape(len(records), -1)
    return encode_columns(
        first,
        [r.id for r in records],
        values,
        np.array([r.features for r in records]),
        np.array([-1 if r.bytes is None else r.bytes for r in records]),
        sketches,
    )


def encode_columns(
    first: FingerprintRecord,
    ids: list[str],
    values: np.ndarray,
    features: np.ndarray,
    sizes: np.ndarray,
    sketches: np.ndarray | None,
) -> bytes:
    """One block from columns (as :class:`simdedup.fingerprints.FingerprintColumns` holds them);
    ``first`` is a record with the block's settings."""
    encoded = [i.encode("utf-8", "surrogatepass") for i in ids]
    blob = b"\n".join(encoded)
    template = (
        FingerprintRecord("", first.simhash, first.bits, first.features, first.settings, first.bytes, first.sketch)
        .to_json()
        .encode("utf-8")
    )
    return b"".join(
        [
            MAGIC,
            template,
            b"\n",
            _COUNTS.pack(len(ids), len(blob)),
            blob,
            np.array([len(i) for i in encoded], dtype="<u4").tobytes(),
            np.ascontiguousarray(values, dtype="<u8").tobytes(),
            np.asarray(features, dtype="<i8").tobytes(),
            np.asarray(sizes, dtype="<i8").tobytes(),
            b"" if sketches is None else sketches.tobytes(),
        ]
    )


def write_columns(writer: "BinaryWriter", columns: Any) -> None:
    """Write :class:`simdedup.fingerprints.FingerprintColumns` as blocks, without making records."""

    writer.flush()
    for start in range(0, len(columns.ids), BLOCK_RECORDS):
        stop = start + BLOCK_RECORDS
        (first,) = next(columns.records(1, start))
        sketches = columns.sketches[start:stop] if columns.sketches is not None else None
        write_all(
            writer.target,
            encode_columns(
                first,
                columns.ids[start:stop],
                columns.values[start:stop],
                columns.features[start:stop],
                columns.sizes[start:stop],
                sketches,
            ),
        )


class BinaryWriter:
    """Writes records as blocks of up to ``block_records`` to a file descriptor or stream."""

    def __init__(self, target: int | BinaryIO, block_records: int = BLOCK_RECORDS):
        self.target = target
        self.block_records = block_records
        self._pending: list[FingerprintRecord] = []

    def write_records(self, records: Iterable[FingerprintRecord]) -> None:
        self._pending.extend(records)
        while len(self._pending) >= self.block_records:
            block, self._pending = self._pending[: self.block_records], self._pending[self.block_records :]
            self._write(encode_block(block))

    def flush(self) -> None:
        if self._pending:
            self._write(encode_block(self._pending))
            self._pending = []

    def _write(self, data: bytes) -> None:
        write_all(self.target, data)


@dataclass
class Block:
    """One block read back: the settings key of its template (see :mod:`simdedup.fingerprints.record`) and
    its columns."""

    key: tuple
    bits: int
    ids: list[str]
    values: np.ndarray  # (n, bits // 64) uint64
    features: np.ndarray
    sizes: np.ndarray
    sketches: np.ndarray | None


def read_blocks(stream: BinaryIO, name: str, first: bytes = b"") -> Iterator[Block]:
    """The blocks of a binary fingerprint stream, whose first bytes (``first``) may have been
    read already.

    Raises:
        RecordError: a block that does not start with :data:`MAGIC`, a bad template line, or a
            stream cut short.
    """

    number = 0
    head = first
    while True:
        head += stream.read(len(MAGIC) - len(head))
        if not head:
            return
        number += 1
        where = f"{name}: binary block {number}"
        if head != MAGIC:
            if MAGIC.startswith(head):
                raise RecordError(f"{where} is cut short (the file is truncated)")
            raise RecordError(f"{where} does not start with {MAGIC[:-1].decode()!r}")
        head = b""
        template = stream.readline()
        if not template.endswith(b"\n"):
            raise RecordError(f"{where} is cut short (the file is truncated)")
        try:
            obj = parse_json_line(template)
        except ValueError as exc:
            raise RecordError(f"{where}: its settings line: {exc}") from None
        _, _, bits, _, _, _, key = record_fields(obj, where)
        n, id_bytes = _COUNTS.unpack(_read_exactly(stream, _COUNTS.size, where))
        blob = _read_exactly(stream, id_bytes, where)
        lengths = np.frombuffer(_read_exactly(stream, 4 * n, where), dtype="<u4")
        if int(lengths.sum(dtype=np.int64)) + max(n - 1, 0) != len(blob):
            raise RecordError(f"{where}: the id lengths do not add up")
        try:
            text = blob.decode("utf-8", "surrogatepass")
            if text.count("\n") == max(n - 1, 0):
                ids = text.split("\n") if n else []
            else:  # some ids hold newlines: cut by length
                ends = np.cumsum(lengths.astype(np.int64) + 1) - 1
                ids = [
                    blob[a:b].decode("utf-8", "surrogatepass") for a, b in zip((ends - lengths).tolist(), ends.tolist())
                ]
        except UnicodeDecodeError as exc:
            raise RecordError(f"{where}: an id is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        words = bits // 64
        values = np.frombuffer(_read_exactly(stream, 8 * words * n, where), dtype="<u8").reshape(n, words)
        features = np.frombuffer(_read_exactly(stream, 8 * n, where), dtype="<i8")
        if n and features.min() < 0:
            raise RecordError(f"{where}: a negative number of features")
        sizes = np.frombuffer(_read_exactly(stream, 8 * n, where), dtype="<i8")
        sketches = None
        if key[-1]:
            raw = _read_exactly(stream, key[-1] * n, where)
            sketches = np.frombuffer(raw, dtype=np.uint8).reshape(n, key[-1])
        yield Block(
            key, bits, ids, values.astype(np.uint64), features.astype(np.int64), sizes.astype(np.int64), sketches
        )


def _read_exactly(stream: BinaryIO, size: int, where: str) -> bytes:
    """``size`` bytes, read in pieces: a damaged count ends in "cut short", not a huge allocation."""
    parts = []
    while size > 0:
        part = stream.read(min(size, 1 << 26))
        if not part:
            raise RecordError(f"{where} is cut short (the file is truncated)")
        parts.append(part)
        size -= len(part)
    return b"".join(parts)
