"""Stage 1: fingerprints, one task per input shard, each writing a part in the binary form.

A shard is a run of consecutive documents in the inputs' sorted order: a group of files, a
stretch of lines of a plain JSON-lines file, a run of row groups of a Parquet file, or one other
table file (compressed JSON lines, CSV, WARC: they are read from the start), read whole by its
task. Parts are numbered in input order, so a row's
number (its position among all documents) comes from the parts' counts, never from which task
finished first. Next to each part: ``part-N.npz`` with the 64-bit hash of each id (repeated ids
are found from these) and, for exact verification, the size of each kept text, whose bytes are
in ``part-N.texts``.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np
import xxhash

from ..errors import IncompatibleSettingsError, SimdedupError
from ..fingerprints import describe_settings, read_fingerprint_files
from ..fingerprints.binary import BinaryWriter, read_blocks, write_columns
from ..options import FeatureOptions
from ..read import Inputs, Source, is_compressed
from ..read.remote import open_stored
from ..read.tables import expand_tables, iter_jsonl_unparsed, iter_parquet, table_kind, with_origin
from ..run import fingerprint_batch
from ..similarity import DEFAULT_FOLDING
from .workdir import WorkDir

STAGE = "fingerprint"
#: a shard of files or JSON-line stretches ends after this many bytes or documents
SHARD_BYTES = 64 << 20
SHARD_DOCUMENTS = 20_000
#: records of a binary fingerprint file read by one task of ``cluster`` (whole blocks)
IMPORT_RECORDS = 1 << 20


@dataclass(frozen=True)
class TableFile:
    """A table file (not plain JSON lines) whose documents its task reads."""

    path: str
    kind: str


@dataclass(frozen=True)
class RowGroups:
    """Row groups ``first .. end - 1`` of a Parquet file, whose rows its task reads (numbered
    as in the whole file)."""

    path: str
    first: int
    end: int


@dataclass(frozen=True)
class Recipe:
    """How to make the fingerprinting method in a task: the command's feature options whole
    (:class:`simdedup.options.FeatureOptions`), since the method itself holds unpicklable hash
    functions; ``exact``: it keeps the texts for exact verification."""

    features: FeatureOptions
    exact: bool = False

    def build(self) -> Any:
        method = self.features.method_object()
        if self.exact and hasattr(method, "verify_exactly"):
            method.verify_exactly()
        return method


def plan_shards(
    sources: Iterable[Source], reading: Inputs, shard_bytes: int = SHARD_BYTES, shard_documents: int = SHARD_DOCUMENTS
) -> list[list[Any]]:
    """The shards of the walked ``sources``, in order: lists of Sources and :class:`TableFile`.
    Plain JSON-lines files are cut into stretches of lines here (only their line ends are read)."""
    shards: list[list[Any]] = []
    current: list[Any] = []
    size = 0

    def cut() -> None:
        nonlocal current, size
        if current:
            shards.append(current)
        current, size = [], 0

    for source in sources:
        kind = None
        if source.reason is None and source.text is None and reading.jsonl is not False:
            kind = "jsonl" if reading.jsonl else table_kind(source.path)
        if kind is None:
            entries: Iterator[Source] = iter([source])
        elif kind == "jsonl" and not is_compressed(source.path) and os.path.isfile(source.path):
            entries = iter_jsonl_unparsed(source.path, reading.text_field, reading.id_field, reading.max_line_bytes)
        else:
            cut()
            runs = row_group_runs(source.path, reading, shard_bytes, shard_documents) if kind == "parquet" else None
            shards.extend([[run] for run in runs] if runs else [[TableFile(source.path, kind)]])
            continue
        for entry in entries:
            current.append(entry)
            size += entry.span[1] if entry.span is not None else (entry.size or 0)
            if size >= shard_bytes or len(current) >= shard_documents:
                cut()
    cut()
    return shards


def row_group_runs(path: str, reading: Inputs, shard_bytes: int, shard_documents: int) -> list[RowGroups] | None:
    """A Parquet file's row groups cut into runs of about ``shard_bytes`` (uncompressed) or
    ``shard_documents`` rows; None when its metadata does not read or lacks the columns (its
    one task then says what is wrong, as one process does)."""
    try:
        import pyarrow.parquet as pq

        with open_stored(path) as stored:
            metadata = pq.read_metadata(stored)
        names = metadata.schema.to_arrow_schema().names
    except (ImportError, OSError, ValueError):  # pyarrow's errors derive from these
        return None
    if any(column not in names for column in [reading.text_field] + ([reading.id_field] if reading.id_field else [])):
        return None
    runs: list[RowGroups] = []
    start = rows = size = 0
    for group in range(metadata.num_row_groups):
        rows += metadata.row_group(group).num_rows
        size += metadata.row_group(group).total_byte_size
        if rows >= shard_documents or size >= shard_bytes or group == metadata.num_row_groups - 1:
            runs.append(RowGroups(path, start, group + 1))
            start, rows, size = group + 1, 0, 0
    return runs or None


def shard_sources(shard: list[Any], reading: Inputs) -> Iterator[Source]:
    for entry in shard:
        if isinstance(entry, RowGroups):
            yield from with_origin(
                iter_parquet(
                    entry.path, reading.text_field, reading.id_field, reading.max_line_bytes, (entry.first, entry.end)
                ),
                entry.path,
            )
        elif isinstance(entry, TableFile):
            yield from expand_tables(
                [Source(entry.path)],
                True if entry.kind == "jsonl" else None,
                reading.text_field,
                reading.id_field,
                None,
                reading.max_line_bytes,
                reading.encoding,
            )
        else:
            yield entry


def part_name(index: int) -> str:
    return f"fingerprints/part-{index:05d}"


#: documents fingerprinted at once in a task (one call of the method's batch path)
_BATCH = 64


def fingerprint_shard(work: WorkDir, index: int, shard: list[Any], recipe: Recipe, reading: Inputs) -> dict:
    """Fingerprint one shard into ``part-N.sdfp`` (+ ``.npz``, ``.texts``); returns what the
    driver needs: counts, the skipped documents with their reasons, notes, settings."""
    method = recipe.build()
    method.prepare()
    sources = list(shard_sources(shard, reading))
    out = io.BytesIO()
    writer = BinaryWriter(out)
    skipped: list[list[str]] = []
    notes: list[str] = []
    hashes: list[int] = []
    kept: list[Any] = []
    count = size = 0
    for start in range(0, len(sources), _BATCH):
        for result in fingerprint_batch(sources[start : start + _BATCH], method).results:
            if isinstance(result, Source):
                skipped.append([result.path, result.reason or "", result.origin, result.place])
                continue
            writer.write_records([result])
            hashes.append(id_hash(result.id))
            kept.append(result.exact)
            if result.encoding:
                notes.append(f"{result.id}: read as {result.encoding}")
            count += 1
            size += result.bytes or 0
    writer.flush()
    name = part_name(index)
    texts, offsets, nbytes, kinds = _texts(kept)
    work.write_bytes(f"{name}.sdfp", out.getvalue())
    work.write_bytes(f"{name}.texts", texts)
    work.write_arrays(
        f"{name}.npz",
        id_hash=np.array(hashes, dtype=np.uint64),
        text_offsets=offsets,
        text_nbytes=nbytes,
        text_kinds=kinds,
    )
    folding = getattr(method, "folding", DEFAULT_FOLDING)
    return {
        "count": count,
        "bytes": size,
        "skipped": skipped,
        "notes": notes,
        "settings": getattr(method, "settings", None),
        "folding": folding,
    }


def _texts(kept: list[Any]) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray]:
    """The kept texts back to back (UTF-8), their offsets, their ``nbytes`` as the one-process
    run counts them against its budget (-1: none), and their kind (0 none, 1 bytes, 2 str)."""
    parts, offsets, nbytes, kinds = [], [0], [], []
    for text in kept:
        if text is None:
            data, nbytes_, kind = b"", -1, 0
        elif isinstance(text.text, bytes):
            data, nbytes_, kind = text.text, text.nbytes, 1
        else:
            data, nbytes_, kind = text.text.encode("utf-8", "surrogatepass"), text.nbytes, 2
        parts.append(data)
        offsets.append(offsets[-1] + len(data))
        nbytes.append(nbytes_)
        kinds.append(kind)
    return (
        b"".join(parts),
        np.array(offsets, dtype=np.int64),
        np.array(nbytes, dtype=np.int64),
        np.array(kinds, dtype=np.int8),
    )


def id_hash(doc_id: str) -> int:
    return xxhash.xxh3_64_intdigest(doc_id.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class FileRange:
    """Whole blocks of a binary fingerprint file (or the whole file: ``length`` None), with the
    position of its first record and the number of its first block in the file."""

    path: str
    offset: int = 0
    length: int | None = None
    first_record: int = 1
    first_block: int = 1


def plan_imports(files: list[str], records_per_task: int = IMPORT_RECORDS) -> list[FileRange]:
    """``cluster``'s shards: binary files cut at block bounds into ranges of about
    ``records_per_task`` records (only the blocks' heads are read); other files whole, and so is
    a binary file whose heads do not read back (its task then says what is wrong, as one
    process would)."""
    shards: list[FileRange] = []
    for path in files:
        try:
            blocks = _block_heads(path)
        except (OSError, ValueError, SimdedupError):
            blocks = None
        if not blocks:
            shards.append(FileRange(path))
            continue
        start = records = 0
        first_record = first_block = 1
        for number, (offset, end, count) in enumerate(blocks, 1):
            records += count
            if records >= records_per_task or number == len(blocks):
                shards.append(FileRange(path, start, end - start, first_record, first_block))
                start, first_record, first_block, records = end, first_record + records, number + 1, 0
    return shards


def _block_heads(path: str) -> list[tuple[int, int, int]] | None:
    """``(offset, end, records)`` of each block of a binary file, or None for another form."""
    import os
    import struct

    from ..fingerprints.binary import MAGIC
    from ..fingerprints.record import record_fields
    from ..jsonline import parse_json_line

    heads = []
    with open_stored(path) as handle:
        size = handle.seek(0, os.SEEK_END)
        offset = 0
        while offset < size:
            handle.seek(offset)
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            _, _, bits, _, _, _, key = record_fields(parse_json_line(handle.readline()), path)
            n, id_bytes = struct.unpack("<QQ", handle.read(16))
            end = handle.tell() + id_bytes + n * (4 + 8 * (bits // 64) + 16 + key[-1])
            if end > size:
                return None
            heads.append((offset, end, n))
            offset = end
    return heads


def import_file(work: WorkDir, index: int, shard: FileRange) -> dict:
    """``cluster``'s first stage: fingerprint records (either form) of one file or range as a part."""
    import re

    try:
        with open_stored(shard.path) as handle:
            handle.seek(shard.offset)
            data = handle.read() if shard.length is None else handle.read(shard.length)
        columns = read_fingerprint_files([(shard.path, io.BytesIO(data))])
    except OSError as exc:
        return {"error": f"cannot read {shard.path}: {exc.strerror or exc}"}
    except SimdedupError as exc:  # block numbers as in the whole file
        return {
            "error": re.sub(
                r"binary block (\d+)", lambda m: f"binary block {int(m[1]) + shard.first_block - 1}", str(exc)
            )
        }
    out = io.BytesIO()
    if columns.ids:
        write_columns(BinaryWriter(out), columns)
    name = part_name(index)
    work.write_bytes(f"{name}.sdfp", out.getvalue())
    work.write_bytes(f"{name}.texts", b"")
    n = len(columns.ids)
    work.write_arrays(
        f"{name}.npz",
        id_hash=np.array([id_hash(i) for i in columns.ids], dtype=np.uint64),
        text_offsets=np.zeros(n + 1, dtype=np.int64),
        text_nbytes=np.full(n, -1, dtype=np.int64),
        text_kinds=np.zeros(n, dtype=np.int8),
    )
    return {
        "count": n,
        "bytes": len(data),
        "skipped": [],
        "notes": [],
        "settings": columns.settings if n else None,
        "bits": columns.bits,
        "folding": DEFAULT_FOLDING,
        "lines": (columns.lines + shard.first_record - 1).tolist(),
        "path": shard.path,
    }


@dataclass
class Part:
    """The columns of one part (the binary form read back)."""

    ids: list[str]
    values: np.ndarray
    features: np.ndarray
    sizes: np.ndarray
    sketches: np.ndarray | None
    bits: int


def read_part(work: WorkDir, index: int) -> Part:
    name = part_name(index)
    blocks = list(read_blocks(io.BytesIO(work.read_bytes(f"{name}.sdfp")), f"{name}.sdfp"))
    if not blocks:
        return Part(
            [], np.empty((0, 1), dtype=np.uint64), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), None, 64
        )
    sketches = None if blocks[0].sketches is None else np.concatenate([b.sketches for b in blocks])
    return Part(
        [i for b in blocks for i in b.ids],
        np.concatenate([b.values for b in blocks]),
        np.concatenate([b.features for b in blocks]),
        np.concatenate([b.sizes for b in blocks]),
        sketches,
        blocks[0].bits,
    )


def read_texts(work: WorkDir, index: int, rows: np.ndarray, folding: int) -> list[Any]:
    """The kept texts (:class:`simdedup.similarity.KeptText` or None) of ``rows`` of a part."""
    from ..similarity import KeptText

    arrays = work.read_arrays(f"{part_name(index)}.npz")
    offsets, kinds = arrays["text_offsets"], arrays["text_kinds"]
    if not (kinds[rows] > 0).any():
        return [None] * len(rows)
    blob = work.read_bytes(f"{part_name(index)}.texts")
    texts: list[Any] = []
    for row in rows.tolist():  # a str was kept as its surrogatepass UTF-8, which KeptText takes as it is
        texts.append(None if kinds[row] == 0 else KeptText(blob[offsets[row] : offsets[row + 1]], folding))
    return texts


def check_settings(results: list[dict], names: list[str]) -> dict | None:
    """The settings all parts share; the first part that differs is an error, as in one process."""
    first = None
    for result, name in zip(results, names):
        settings = result.get("settings")
        if settings is None:
            continue
        if first is None:
            first = settings
        elif settings != first:
            raise IncompatibleSettingsError(
                f"{name}: fingerprints made with other settings ({describe_settings(settings)}) than the first "
                f"({describe_settings(first)}); they cannot be compared"
            )
    return first
