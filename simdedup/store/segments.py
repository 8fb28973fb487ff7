"""Immutable segment files: the fingerprints of some documents and their Manku tables.

A segment holds ``n`` rows, sorted by content (fingerprint words, word 0 first, then the
sketch bytes), so that the copies of one document are adjacent. Its arrays:

- ``fps`` ``(words, n)`` uint64 (word 0 holds bits 0-63; column-major so that word 0 is one
  sorted array), ``sketches`` ``(n, bins)`` uint8 (when the fingerprints carry sketches),
  ``features`` and ``sizes`` int64 (-1: unknown), ``seqs`` int64 (the document's number in the
  catalog) and ``units`` int64 (its content's number: equal content, equal unit, across
  segments);
- ``units_sorted`` / ``units_rows``: the rows by unit, to find a unit's rows;
- per Manku table ``t``: ``t{t}_keys`` (sorted) and ``t{t}_rows``: one entry per distinct unit
  of the segment that may pair (a row with at least ``min_features`` features), its key being
  the bits of the table's blocks (:func:`table_keys`);
- for every sorted array, its ``fence_`` array: every :data:`FENCE`-th value.

Integrity: the file is cut into blocks of :data:`BLOCK_BYTES`; a table of their xxh3-64
checksums and a 16-byte trailer end the file, and the catalog keeps the file's size and the
xxh3-128 of that table and trailer. Opening checks the size and that digest; every read goes
through :meth:`Segment.verify_bytes`, which checks the blocks it touches (once per process).
Sorted arrays are searched with their fences, so a search's answer rests on verified values
only (:meth:`Segment.search`). A damaged file raises :class:`DamagedIndexError` naming it.
"""

from __future__ import annotations

import json
import math
import mmap
import os
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Protocol

import numpy as np
import xxhash

from ..errors import SimdedupError
from ..pairs import block_ranges

MAGIC = b"SDIDXSEG"
SEGMENT_FORMAT = 1
BLOCK_BYTES = 1 << 16
FENCE = 8192  # elements between two fence values
_ALIGN = 64
_TRAILER = 16  # checksum table offset (uint64) and MAGIC
_FOLD = np.uint64(0x9E3779B97F4A7C15)


class DamagedIndexError(SimdedupError):
    """A segment file is missing, truncated or does not match its checksums."""


@dataclass(frozen=True)
class Tables:
    """The Manku tables of an index: ``bits``-bit fingerprints cut into ``blocks`` blocks; a
    table for each choice of ``blocks - k`` of them (none for k = 0: only copies match)."""

    bits: int
    k: int
    blocks: int

    @property
    def chosen(self) -> list[tuple[int, ...]]:
        if self.k == 0:
            return []
        return list(combinations(range(self.blocks), self.blocks - self.k))

    def keys(self, fps: np.ndarray, table: int) -> np.ndarray:
        """The key of each row of ``fps`` ``(n, words)`` in ``table``: the bits of its blocks side
        by side for 64-bit fingerprints, folded into 64 bits for wider ones (equal stays equal)."""
        ranges = block_ranges(self.bits, self.blocks)
        chosen = self.chosen[table]
        if fps.shape[1] == 1:
            values = fps[:, 0]
            key = np.zeros(len(fps), dtype=np.uint64)
            for i in chosen:
                start, size = ranges[i]
                key <<= np.uint64(size)
                key |= (values >> np.uint64(start)) & np.uint64((1 << size) - 1)
            return key
        mask = 0
        for i in chosen:
            start, size = ranges[i]
            mask |= ((1 << size) - 1) << start
        key = np.zeros(len(fps), dtype=np.uint64)
        for w in range(fps.shape[1]):
            key = (key * _FOLD) ^ (fps[:, w] & np.uint64((mask >> (64 * w)) & ((1 << 64) - 1)))
        return key

    def key_bits(self, table: int) -> int:
        if self.bits != 64:
            return 64
        ranges = block_ranges(self.bits, self.blocks)
        return sum(ranges[i][1] for i in self.chosen[table])


def default_blocks(k: int, bits: int, expected: int = 10**7) -> int:
    """Blocks of a new index: the fewest (from k + 2) whose table keys are long enough that a
    query meets few unrelated rows per table at ``expected`` documents (keys of at least
    log2(expected) - 3 bits: under 8 each). k = 3: 5 blocks, 10 tables; k = 6: 9 blocks, 84
    tables (k + 2 = 8 blocks would give 16-bit keys: 150 rows per table and query at 10^7).
    Never more than :data:`simdedup.pairs.MAX_TABLES` tables: a large k gets the most blocks
    within that, and shorter keys (k = 12 at 64 bits: 15 blocks, 455 tables of 12-bit keys)."""
    from ..pairs import MAX_TABLES

    if k == 0:
        return 1
    allowed = [blocks for blocks in range(k + 1, bits + 1) if math.comb(blocks, k) <= MAX_TABLES]
    for blocks in allowed:
        if blocks >= k + 2 and bits * (blocks - k) / blocks >= math.log2(expected) - 3:
            return blocks
    return allowed[-1]


def sort_by_key(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted keys, order)``; keys and positions packed into one uint64 when they fit
    (a plain sort, about twice as fast as an argsort)."""
    n = len(keys)
    index_bits = max(1, (n - 1).bit_length())
    if key_bits + index_bits <= 64:
        packed = (keys << np.uint64(index_bits)) | np.arange(n, dtype=np.uint64)
        packed.sort()
        order = (packed & np.uint64((1 << index_bits) - 1)).astype(np.int64)
        return packed >> np.uint64(index_bits), order
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def content_order(fps: np.ndarray, sketches: np.ndarray | None) -> np.ndarray:
    """The order of rows by content: fingerprint words (word 0 first), then sketch bytes. The
    sketches only order rows of equal fingerprints, which are few: they are sorted apart."""
    order = np.lexsort([fps[:, w] for w in range(fps.shape[1])][::-1])
    if sketches is None or len(order) < 2:
        return order
    ordered = fps[order]
    tied_with_next = (ordered[1:] == ordered[:-1]).all(axis=1)
    if not tied_with_next.any():
        return order
    tied = np.zeros(len(order), dtype=bool)
    tied[:-1] |= tied_with_next
    tied[1:] |= tied_with_next
    positions = np.flatnonzero(tied)
    run = np.cumsum(np.concatenate(([True], ~tied_with_next)))[positions]  # the run of equal fingerprints
    words = np.ascontiguousarray(sketches[order[positions]]).view(">u8")  # big-endian: byte order is value order
    within = np.lexsort([words[:, w] for w in range(words.shape[1])][::-1] + [run])
    order[positions] = order[positions][within]
    return order


#: rows of a column gathered and written at a time (a column in content order is never whole in memory)
CHUNK_ROWS = 1 << 18


class SegmentRows(Protocol):
    """The rows of a segment to write, in content order (:func:`content_order`): the small
    columns whole, the others (``features``, ``sizes``, ``seqs``, ``sketches``) a stretch of
    rows at a time, so that writing holds no copy of them."""

    rows: int
    fps: np.ndarray  # (rows, words) uint64
    units: np.ndarray  # int64
    pairable: np.ndarray  # bool: the row may pair (enough features)
    has_sketches: bool

    def chunk(self, name: str, start: int, stop: int) -> np.ndarray: ...


def first_of_units(source: SegmentRows) -> np.ndarray:
    """For rows in content order: whether each row's content (fingerprint and sketch) differs
    from the row before's, the sketches compared a stretch at a time."""
    fps, n = source.fps, source.rows
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = ~(fps[1:] == fps[:-1]).all(axis=1)
    if source.has_sketches:
        for start in range(1, n, CHUNK_ROWS):
            stop = min(n, start + CHUNK_ROWS)
            tied = np.flatnonzero(~first[start:stop]) + start
            if len(tied):
                sketches = source.chunk("sketches", start - 1, stop)
                same = (sketches[tied - start + 1] == sketches[tied - start]).all(axis=1)
                first[tied[~same]] = True
    return first


def write_segment(path: str, tables: Tables, source: SegmentRows) -> tuple[int, str]:
    """Write a segment of the rows of ``source`` to ``path`` (created; fsynced), one array at a
    time: memory holds the fingerprints, the units and one table's keys, never every column.

    Returns:
        ``(bytes, checksum)`` for the catalog.
    """
    n, fps, units = source.rows, source.fps, source.units
    words = fps.shape[1]
    first_of_unit = first_of_units(source)
    # A unit enters the tables once (its first row) when any of its rows may pair.
    unit_start = np.flatnonzero(first_of_unit)
    del first_of_unit
    any_pairable = np.logical_or.reduceat(source.pairable, unit_start) if n else np.zeros(0, dtype=bool)
    table_rows = unit_start[any_pairable]
    del unit_start, any_pairable
    count = len(tables.chosen)
    entries = len(table_rows)
    # every array's dtype and shape, in the order of the file (the layout depends on them alone)
    shapes: dict[str, tuple[str, tuple[int, ...]]] = {
        "fps": ("<u8", (words, n)),
        "features": ("<i8", (n,)),
        "sizes": ("<i8", (n,)),
        "seqs": ("<i8", (n,)),
        "units": ("<i8", (n,)),
    }
    if source.has_sketches:
        shapes["sketches"] = ("|u1", (n, source.chunk("sketches", 0, 0).shape[1]))
    shapes["units_sorted"], shapes["units_rows"] = ("<i8", (n,)), ("<u4", (n,))
    for t in range(count):
        shapes[f"t{t}_keys"], shapes[f"t{t}_rows"] = ("<u8", (entries,)), ("<u4", (entries,))
    fenced = ["fps"] + [f"t{t}_keys" for t in range(count)] + ["units_sorted"]
    for name in fenced:
        shapes[f"fence_{name}"] = (shapes[name][0], (-(-shapes[name][1][-1] // FENCE),))
    layout, offset = {}, 4096 + 96 * len(shapes)
    header_room = offset
    for name, (dtype, shape) in shapes.items():
        layout[name] = [offset, dtype, list(shape)]
        offset += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // _ALIGN) * _ALIGN
    checksums_at = offset
    header = json.dumps(
        {"format": SEGMENT_FORMAT, "rows": n, "block_bytes": BLOCK_BYTES, "fence": FENCE, "arrays": layout}
    ).encode()
    header = MAGIC + len(header).to_bytes(4, "little") + header
    assert len(header) <= header_room
    with open(path, "x+b") as out:
        # Every byte of the file is allocated before any is written: a file with holes, mapped,
        # dies of SIGBUS where reading a hole needs a block the file system no longer has (a
        # full tmpfs); and a disk without room for the segment says so here, at once.
        if checksums_at and hasattr(os, "posix_fallocate"):  # not on macOS: the zeros below do
            os.posix_fallocate(out.fileno(), 0, checksums_at)

        def put(name: str, array: np.ndarray, at: int = 0) -> None:
            """``array`` as the rows of ``name`` from row ``at`` on (the fence too, when whole)."""
            array = np.ascontiguousarray(array, dtype=shapes[name][0])
            row_bytes = array.nbytes // len(array) if len(array) else 0
            out.seek(layout[name][0] + at * row_bytes)
            out.write(memoryview(array).cast("B"))
            if name in fenced and name != "fps":
                put(f"fence_{name}", array[::FENCE])

        out.write(header)
        fps_words = np.ascontiguousarray(fps.T)
        put("fps", fps_words)
        put("fence_fps", fps_words[0][::FENCE])
        del fps_words
        for name in ("features", "sizes", "seqs", "units", "sketches"):
            if name in shapes:
                for start in range(0, n, CHUNK_ROWS):
                    put(name, source.chunk(name, start, min(n, start + CHUNK_ROWS)), start)
        unit_order = np.argsort(units, kind="stable")
        put("units_sorted", units[unit_order])
        put("units_rows", unit_order.astype(np.uint32))
        del unit_order
        for t in range(count):
            keys, order = sort_by_key(tables.keys(fps[table_rows], t), tables.key_bits(t))
            put(f"t{t}_keys", keys)
            put(f"t{t}_rows", table_rows[order].astype(np.uint32))
            del keys, order
        _write_gaps(out, len(header), layout, checksums_at)
        out.flush()
        out.seek(0)
        sums = []  # read back, not mapped: the file's pages then stay out of this process
        while len(sums) * BLOCK_BYTES < checksums_at:
            data = out.read(min(checksums_at - len(sums) * BLOCK_BYTES, 256 * BLOCK_BYTES))
            sums += [xxhash.xxh3_64_intdigest(data[at : at + BLOCK_BYTES]) for at in range(0, len(data), BLOCK_BYTES)]
        out.seek(checksums_at)
        tail = np.array(sums, dtype="<u8").tobytes() + checksums_at.to_bytes(8, "little") + MAGIC
        out.write(tail)
        out.flush()
        os.fsync(out.fileno())
    return checksums_at + len(tail), xxhash.xxh3_128_hexdigest(tail)


def _write_gaps(out: Any, header_bytes: int, layout: dict[str, list], end: int) -> None:
    """Write zeros where no array lies (the header's room, alignment), up to ``end``: every
    byte of a segment is written, so the file has no holes (see :func:`_mapped`)."""
    position = header_bytes
    for offset, dtype, shape in sorted(layout.values()):
        if offset > position:
            out.seek(position)
            out.write(bytes(offset - position))
        position = max(position, offset + int(np.prod(shape)) * np.dtype(dtype).itemsize)
    if end > position:
        out.seek(position)
        out.write(bytes(end - position))


def _has_holes(handle: Any) -> bool:
    """Whether the file has holes (blocks never written), as the file system tells."""
    size = os.fstat(handle.fileno()).st_size
    try:
        return os.lseek(handle.fileno(), 0, os.SEEK_HOLE) < size
    except (OSError, AttributeError):  # no SEEK_HOLE here: such file systems report none
        return False


def _mapped(handle: Any) -> Any:
    """The file's bytes to read: mapped, or, for a file with holes (written by an earlier
    version), read into memory, as a mapped hole may cost a block the disk no longer has
    (SIGBUS)."""
    if _has_holes(handle):
        handle.seek(0)
        return handle.read()
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class Segment:
    """An open segment file, memory-mapped; reads are verified block by block (see the module)."""

    def __init__(self, path: str, name: str, size: int, checksum: str):
        self.path, self.name, self.checksum = path, name, checksum
        try:
            with open(path, "rb") as handle:
                actual = os.fstat(handle.fileno()).st_size
                if actual != size:
                    raise DamagedIndexError(
                        f"{name}: segment file is truncated or extended: {actual} bytes, the catalog says {size}"
                    )
                self._map = _mapped(handle) if size else None
        except FileNotFoundError:
            raise DamagedIndexError(f"{name}: segment file is missing") from None
        data = self._map
        if data is None or size < _TRAILER or data[size - 8 :] != MAGIC:
            raise DamagedIndexError(f"{name}: not a segment file (no trailer)")
        checksums_at = int.from_bytes(data[size - 16 : size - 8], "little")
        if not 0 < checksums_at < size or xxhash.xxh3_128_hexdigest(data[checksums_at:]) != checksum:
            raise DamagedIndexError(f"{name}: segment file is damaged: its checksum table does not match the catalog")
        self._sums = np.frombuffer(data, dtype="<u8", count=(size - _TRAILER - checksums_at) // 8, offset=checksums_at)
        self._end = checksums_at
        self._verified = bytearray(len(self._sums))
        if len(self._sums) != -(-checksums_at // BLOCK_BYTES):
            raise DamagedIndexError(f"{name}: segment file is damaged: wrong number of block checksums")
        self.verify_bytes(np.array([0]), np.array([min(4096, checksums_at)]))
        if data[:8] != MAGIC:
            raise DamagedIndexError(f"{name}: not a segment file")
        length = int.from_bytes(data[8:12], "little")
        self.verify_bytes(np.array([0]), np.array([12 + length]))
        header = json.loads(data[12 : 12 + length])
        if header["format"] > SEGMENT_FORMAT:
            raise DamagedIndexError(f"{name}: segment format {header['format']} is newer than this simdedup reads")
        self.rows: int = header["rows"]
        self._layout = {
            key: (offset, np.dtype(dtype), tuple(shape)) for key, (offset, dtype, shape) in header["arrays"].items()
        }
        self.fence = header["fence"]
        self.tables = sum(1 for key in self._layout if key.endswith("_keys") and key.startswith("t"))
        self.has_sketches = "sketches" in self._layout
        self._fences: dict[str, np.ndarray] = {}
        self._arrays: dict[str, np.ndarray] = {}

    def close(self) -> None:
        self._fences.clear()
        self._arrays.clear()
        # The arrays handed out keep the map alive; it closes when the last goes.
        self._map = None

    def _array(self, name: str) -> np.ndarray:
        array = self._arrays.get(name)
        if array is None:
            offset, dtype, shape = self._layout[name]
            count = int(np.prod(shape)) if shape else 1
            array = self._arrays[name] = np.frombuffer(self._map, dtype=dtype, count=count, offset=offset).reshape(
                shape
            )
        return array

    def verify_bytes(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Check the blocks of the byte ranges ``[starts, ends)`` not yet checked.

        Raises:
            DamagedIndexError: a block does not match its checksum.
        """
        if len(starts) <= 4:  # a query's few reads: plain integers cost less than numpy's calls
            for start, end in zip(np.asarray(starts).tolist(), np.asarray(ends).tolist()):
                if end > start:
                    self._check_blocks(range(start // BLOCK_BYTES, (end - 1) // BLOCK_BYTES + 1))
            return
        starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
        keep = ends > starts
        if not keep.any():
            return
        first, last = starts[keep] // BLOCK_BYTES, (ends[keep] - 1) // BLOCK_BYTES
        if len(first) == 1:
            needed = np.arange(first[0], last[0] + 1)
        else:
            cover = np.zeros(len(self._sums) + 1, dtype=np.int64)
            np.add.at(cover, first, 1)
            np.add.at(cover, last + 1, -1)
            needed = np.flatnonzero(np.cumsum(cover[:-1]) > 0)
        self._check_blocks(needed.tolist())

    def _check_blocks(self, blocks: Iterable[int]) -> None:
        data, verified, sums = self._map, self._verified, self._sums
        for block in blocks:
            if verified[block]:
                continue
            start = block * BLOCK_BYTES
            if xxhash.xxh3_64_intdigest(data[start : min(start + BLOCK_BYTES, self._end)]) != int(sums[block]):
                raise DamagedIndexError(
                    f"{self.name}: segment file is damaged at byte {start} (block checksum does not match)"
                )
            verified[block] = True

    def verify_all(self) -> None:
        """Check every block of the file, a stretch at a time, each let go once checked."""
        step = 256
        for first in range(0, len(self._sums), step):
            self._check_blocks(range(first, min(first + step, len(self._sums))))
            self.release(first * BLOCK_BYTES, step * BLOCK_BYTES)

    def release(self, start: int = 0, length: int = 0) -> None:
        """Let the pages of the file read so far (of ``length`` bytes from ``start``; 0: to the
        end) go from this process's memory: they stay in the page cache, and a whole file read
        once then costs no memory. Arrays handed out stay valid (read again when used)."""
        if isinstance(self._map, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            length = min(length or len(self._map), len(self._map) - start)
            if length > 0:
                self._map.madvise(mmap.MADV_DONTNEED, start, length)

    def _verify_rows(self, name: str, lo: np.ndarray, hi: np.ndarray) -> None:
        offset, dtype, shape = self._layout[name]
        row_bytes = dtype.itemsize * (int(np.prod(shape[1:])) if len(shape) > 1 else 1)
        if len(lo) <= 4:
            self.verify_bytes(
                [offset + x * row_bytes for x in np.asarray(lo).tolist()],
                [offset + x * row_bytes for x in np.asarray(hi).tolist()],
            )
            return
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        self.verify_bytes(offset + lo * row_bytes, offset + hi * row_bytes)

    def column(self, name: str) -> np.ndarray:
        """A whole array, verified."""
        offset, dtype, shape = self._layout[name]
        if name == "fps":  # (words, n): each word's row is checked
            array = self._array(name)
            self.verify_bytes(np.array([offset]), np.array([offset + array.nbytes]))
            return array
        self._verify_rows(name, np.array([0]), np.array([shape[0]]))
        return self._array(name)

    def take(self, name: str, rows: np.ndarray) -> np.ndarray:
        """``name``'s values at ``rows`` (``fps``: an ``(len(rows), words)`` array), verified."""
        rows = np.asarray(rows, dtype=np.int64)
        array = self._array(name)
        if name == "fps":
            words, n = array.shape
            for w in range(words):
                self._verify_rows_of_word(w, rows)
            return np.ascontiguousarray(array[:, rows].T)
        self._verify_rows(name, rows, rows + 1)
        return array[rows]

    def _verify_rows_of_word(self, word: int, rows: np.ndarray) -> None:
        offset, _, (words, n) = self._layout["fps"]
        start = offset + (word * n + rows) * 8
        self.verify_bytes(start, start + 8)

    def sorted_values(self, name: str) -> np.ndarray:
        return self._array("fps")[0] if name == "fps" else self._array(name)

    def search(self, name: str, values: np.ndarray, side: str) -> np.ndarray:
        """``np.searchsorted`` in the sorted array ``name`` (``fps``: word 0 of the rows), its
        answer resting on verified values only: the fences (verified whole) bound each answer
        to one stretch between two fences; the values just around the answer are verified,
        and an answer outside its stretch is damage.

        Raises:
            DamagedIndexError: the array does not match its checksums.
        """
        array = self.sorted_values(name)
        n = len(array)
        fences = self._fences.get(name)
        if fences is None:
            fences = self._fences[name] = self.column(f"fence_{name}")
        values = np.asarray(values, dtype=array.dtype)
        if len(values) > 64:  # in order, each search starts where the last ended: far fewer page visits
            order = np.argsort(values, kind="stable")
            found = np.empty(len(values), dtype=np.int64)
            found[order] = np.searchsorted(array, values[order], side=side)
        else:
            found = np.searchsorted(array, values, side=side).astype(np.int64)
        if n == 0:
            return found
        stretch = np.searchsorted(fences, values, side=side).astype(np.int64)
        lo = np.maximum((stretch - 1) * self.fence + 1, 0)
        hi = np.minimum(stretch * self.fence, n)
        if name == "fps":
            self._verify_rows_of_word_range(np.maximum(found - 1, 0), np.minimum(found + 1, n))
        else:
            self._verify_rows(name, np.maximum(found - 1, 0), np.minimum(found + 1, n))
        if ((found < lo) | (found > hi)).any():
            raise DamagedIndexError(f"{self.name}: segment file is damaged: {name} is out of order")
        return found

    def _verify_rows_of_word_range(self, lo: np.ndarray, hi: np.ndarray) -> None:
        offset = self._layout["fps"][0]
        self.verify_bytes(offset + lo * 8, offset + hi * 8)

    def ranges(self, name: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(first, end)`` positions of each value's run in the sorted array ``name``."""
        return self.search(name, values, "left"), self.search(name, values, "right")
