"""Compiled kernels for the hot loops, loaded without numba, each with a Python path that gives
the same results.

- :class:`Kernel`, the fast path for the common case: UTF-8 text, ``words`` or ``whitespace``
  tokens, with or without shingles. The Python path reads, decodes, tokenizes into strings,
  counts them in a Counter and hashes each distinct one: about 10 MB/s. Here one call takes a
  whole batch of documents, decodes the UTF-8 (strictly, as Python does: a document that is not
  UTF-8 goes to the Python path, which says why it skips it), lower-cases and classes each
  character with tables made from this Python's own ``str.lower``, ``words`` pattern and
  ``str.isspace`` (:class:`UnicodeTables`; the final sigma is decided from its neighbours as
  ``str.lower`` does), hashes each token or shingle with the very same XXH3-64, or XXH3-128 for
  128-bit fingerprints (the C functions exported by the ``xxhash`` package's extension, linked by
  symbol name), counts them, and adds up the simhash bit votes and the sketch's bin minima.
  Results are identical to the Python path (the tests compare them on random Unicode): the
  tokens are the same strings, so the same hashes, and the sums are exact integers. It is used
  only where it gives the same answer: 64- or 128-bit fingerprints, the ``xxh3`` hash, the
  built-in ``words`` or ``whitespace`` tokenizer, UTF-8 input (or ``auto``, which reads valid
  UTF-8 as UTF-8), documents at most :data:`MAX_BYTES` long that the reader would cut only at
  whitespace; anything else takes the Python path.
- :class:`KeywordKernel`: ``jieba-fast``'s TF-IDF keywords of a batch of segmented documents
  (:mod:`simdedup.tokenizers.jieba_tfidf`).
- :class:`PairKernel`: the candidate pairs of a crowded block table (:mod:`simdedup.index`).
- :class:`CrossKernel`: the pairs between two chunks of a crowd (:mod:`simdedup.distributed.pairs`).
- :class:`CanonicalKernel`: which of those pairs every table that found the crowd is the
  canonical table of (:func:`simdedup.index.chunk_pairs`).
- :class:`PackedKernel`: the pairs of a block table sorted packed with its row numbers
  (:mod:`simdedup.distributed.pairs`).
- :class:`LinkageKernel`: complete linkage over many verified pairs (:mod:`simdedup.group`),
  with the sketches, the fingerprints or the exact sets as the test.
- :class:`ExactKernel`: exact similarities (:mod:`simdedup.similarity`). These have no Python
  path (``SIMDEDUP_FASTPATH=0`` leaves them on); where they cannot load, ``dedup`` verifies
  with sketches and says so.

Loading: numba compiles a kernel once (about 2 s) and its machine code is kept in a cache file
(:mod:`simdedup.cache`), keyed by the kernel source, the llvmlite version, the CPU and the
Unicode version (the tables are kept beside it, keyed by their sources and Python). Later
processes load that file with llvmlite alone in about 40 ms, without importing numba (about
0.4 s), so the fast path pays from half a megabyte (:data:`START_AFTER_BYTES`); ``--help``
and small runs never load it. A kernel is checked against the Python arithmetic when it loads.
Without numba, llvmlite or the XXH3 symbol everything works, only slower.
``SIMDEDUP_FASTPATH=0`` turns them all off.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import cache

MAX_BYTES = 64 << 20
# Loading costs what the Python path takes for about 0.4 MB of text; a batch that brings this
# process past this many bytes is the first to take the kernel.
START_AFTER_BYTES = 1 << 19
BATCH_BYTES = 4 << 20  # documents handed to the kernel at once
TABLE_SLOTS = 1 << 16  # largest table of a batch call; a document with more distinct tokens is retried alone
TOKEN_ROOM = 1 << 20  # bytes for the tokens kept in a batch call; a document that needs more is retried alone
PLANES = 48  # as simdedup._kernels (which cannot be imported without numba)
SCRATCH_WORDS = 2 * PLANES + 4096
MAX_BINS = SCRATCH_WORDS - 2 * PLANES
# As simdedup._kernels: the layout of an entry of the Unicode tables, a document's flag, the
# features of a document to retry alone or to leave to the Python path.
CODE, WORDS_SHIFT, WHITESPACE_SHIFT = 0x1FFFFF, 21, 23
MULTI, IGNORABLE, CASED, SIGMA = 1 << 25, 1 << 26, 1 << 27, 1 << 28
SURROGATES = 1
RETRY, INVALID = -1, -2
CLASS_SHIFTS = {"words": WORDS_SHIFT, "whitespace": WHITESPACE_SHIFT}
CAPITAL_SIGMA = 0x3A3

_ARGTYPES = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
             ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
             ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint64, ctypes.c_int64,
             ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]


@dataclass(frozen=True)
class UnicodeTables:
    """What the kernel knows of each character, made from this Python's own ``str.lower``, its
    ``words`` pattern and ``str.isspace``, so that it cuts and lower-cases exactly as the Python
    tokenizers do on this Python's Unicode version.

    ``entries[blocks[c >> 8] * 256 + (c & 255)]`` is character ``c``'s entry (the first block
    is that of code points 0-255, so ASCII is ``entries[c]``): the code point of its lower
    case minus ``c``, modulo 2**21, or, with :data:`MULTI`, where in ``extra`` the count and
    entries (with their own code points) of its several lower-case characters start; at
    :data:`WORDS_SHIFT` and :data:`WHITESPACE_SHIFT` two bits each of the lower-case
    character's class for the ``words`` and ``whitespace`` tokenizers (0 separates tokens, 1
    continues one, 2 is a token of its own); :data:`IGNORABLE` and :data:`CASED`, the
    properties ``str.lower`` looks at around a capital sigma, whose entry has :data:`SIGMA`
    (its lower case depends on them).
    """

    blocks: np.ndarray
    entries: np.ndarray
    extra: np.ndarray


def _word_class(character: str) -> int:
    """0, 1 or 2 (separator, inside a token, a token of its own) for the ``words`` pattern."""
    from .tokenizers.words import TOKEN

    found = TOKEN.findall(character * 2)
    if not found:
        return 0
    if found == [character * 2]:
        return 1
    if found == [character, character]:
        return 2
    raise ValueError(f"the words pattern cuts {character!r} in a way the kernel cannot")


def _class_bits(character: str) -> int:
    return _word_class(character) << WORDS_SHIFT | (0 if character.isspace() else 1) << WHITESPACE_SHIFT


def _build_unicode_tables() -> UnicodeTables:
    entries = np.zeros(0x110000, dtype=np.uint32)
    extra = [0]  # offset 0 is never a MULTI entry's
    for code in range(0x110000):
        character = chr(code)
        lower = character.lower()
        if len(lower) == 1:  # as a difference, so that the blocks of most scripts are alike
            entry = (ord(lower) - code) & CODE | _class_bits(lower)
        else:
            entry = MULTI | len(extra)
            extra += [len(lower), *(ord(c) | _class_bits(c) for c in lower)]
            if len(lower.encode("utf-8", "surrogatepass")) > 2 * len(character.encode("utf-8", "surrogatepass")):
                raise ValueError(f"{character!r} lower-cases to more than twice its bytes")  # TOKEN_ROOM's bound
        # str.lower makes a capital sigma final after a cased character, looking past
        # case-ignorable ones; these two tests tell which characters are which.
        after_cased = ("A" + character + "\u03a3").lower().endswith("\u03c2")
        alone = (character + "\u03a3").lower().endswith("\u03c2")
        if after_cased and not alone:
            entry |= IGNORABLE
        if alone:
            entry |= CASED
        entries[code] = entry
    entries[CAPITAL_SIGMA] |= SIGMA
    if any(len(chr(c).lower()) != 1 or not chr(c).lower().isascii() for c in range(0x80)):
        raise ValueError("an ASCII character lower-cases to something else than one ASCII character")
    rows = entries.reshape(-1, 256)
    numbers: dict[bytes, int] = {}
    blocks = np.array([numbers.setdefault(row.tobytes(), len(numbers)) for row in rows], dtype=np.uint16)
    unique = np.frombuffer(b"".join(numbers), dtype=np.uint32).copy()
    return UnicodeTables(blocks, unique, np.array(extra, dtype=np.uint32))


def _tables_key() -> str:
    import unicodedata

    sources = [(Path(__file__).parent / name).read_bytes() for name in ("fastpath.py", "tokenizers/words.py")]
    parts = [*sources, unicodedata.unidata_version.encode(), sys.version.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]


def unicode_tables() -> UnicodeTables:
    """The kernel's Unicode tables: kept in the cache (:mod:`simdedup.cache`), made on first
    use (a few seconds) for this Python, its Unicode version and its tokenizers."""
    import io

    name = f"unicode-{_tables_key()}.npz"
    cached = cache.read(name)
    if cached is not None:
        try:
            with np.load(io.BytesIO(cached)) as kept:
                return UnicodeTables(kept["blocks"], kept["entries"], kept["extra"])
        except (OSError, ValueError, KeyError):
            pass  # damaged: made again
    tables = _build_unicode_tables()
    out = io.BytesIO()
    np.savez(out, blocks=tables.blocks, entries=tables.entries, extra=tables.extra)
    cache.write(name, out.getvalue())
    return tables


class Kernel:
    """The loaded batch kernel, the Unicode tables and its scratch buffers (one per process;
    calls from several threads take turns, as ctypes lets them run at once and the scratch is
    shared)."""

    def __init__(self, address: int, engine: Any, tables: UnicodeTables):
        import threading

        self._engine = engine  # owns the machine code: keep it alive
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, *_ARGTYPES)(address)
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._scratch = np.zeros(SCRATCH_WORDS, dtype=np.uint64)
        self._tokens = np.zeros(TOKEN_ROOM, dtype=np.uint8)
        self.unicode = tables

    def _table(self, slots: int, words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hash table (key and count side by side) and list of used slots, all zero, and the
        high halves of the keys of 128-bit hashes (``words`` 2; else one word, unused)."""
        def made() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return (np.zeros(2 * slots, np.uint64), np.zeros(slots, np.int64),
                    np.zeros(slots if words == 2 else 1, np.uint64))

        if slots > TABLE_SLOTS:  # a one-off for a huge document: not kept
            return made()
        if (slots, words) not in self._tables:
            self._tables[slots, words] = made()
        return self._tables[slots, words]

    def fingerprint(self, documents: list[bytes], token_class: str, bins: int, binary: bool, shingle: int = 1,
                    flags: list[int] | None = None, bits: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(simhash values (n, bits // 64), distinct feature counts, sketches (n, bins))`` of
        UTF-8 documents (``flags``: :data:`SURROGATES` for a document that may hold lone
        surrogates, encoded with ``surrogatepass``); a value is one uint64 word, or two (low
        first) at 128 bits (:func:`simdedup.simhash.as_integers`); a count is :data:`INVALID` for a document
        that is not UTF-8."""
        if bins & (bins - 1) or not 0 <= bins <= MAX_BINS:
            raise ValueError(f"sketch bins must be 0 or a power of two up to {MAX_BINS}")
        if bits not in (64, 128):
            raise ValueError(f"bits must be 64 or 128, not {bits}")
        n = len(documents)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in documents], out=offsets[1:])
        flag_array = np.zeros(max(n, 1), dtype=np.uint8)
        if flags is not None:
            flag_array[:n] = flags
        values = np.zeros((n, bits // 64), dtype=np.uint64)
        features = np.zeros(n, dtype=np.int64)
        sketches = np.zeros((n, bins), dtype=np.uint8)
        settings = (CLASS_SHIFTS[token_class], shingle, bins, binary, bits // 64)
        self._run(b"".join(documents), offsets, flag_array, settings, values, features, sketches, TABLE_SLOTS,
                  self._tokens)
        for d in np.flatnonzero(features == RETRY):  # more distinct features or longer tokens than a batch holds
            size = len(documents[d])
            # Alone, in a table 16 times larger each time, up to one that holds every token distinct:
            # a table sized for that at once (and first filled to a quarter of the bytes) would take
            # about 5 bytes per byte of a large document, whatever its vocabulary.
            most, slots = 1 << max(10, (size + 2).bit_length()), TABLE_SLOTS
            single = np.array([0, size], dtype=np.int64)
            room = np.zeros(3 * size + 64, dtype=np.uint8)  # lower case at most doubles a token, plus spaces
            while features[d] == RETRY and slots < most:
                slots = min(slots << 4, most)
                self._run(documents[d], single, flag_array[d:], settings, values[d:], features[d:], sketches[d:],
                          slots, room)
        return values, features, sketches

    def _run(self, data: bytes, offsets: np.ndarray, flags: np.ndarray, settings: tuple[int, int, int, bool, int],
             values: np.ndarray, features: np.ndarray, sketches: np.ndarray, slots: int, tokens: np.ndarray) -> None:
        class_shift, shingle, bins, binary, words = settings
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        shift = 64 - bins.bit_length() + 1 if bins else 0
        starts = np.zeros(shingle, dtype=np.int64)
        unicode = self.unicode
        with self._lock:
            table, used, highs = self._table(slots, words)
            self._function(buffer.ctypes.data, offsets.ctypes.data, len(offsets) - 1, flags.ctypes.data,
                           unicode.blocks.ctypes.data, unicode.entries.ctypes.data, len(unicode.entries),
                           unicode.extra.ctypes.data, len(unicode.extra), class_shift, shingle, starts.ctypes.data,
                           tokens.ctypes.data, tokens.ctypes.data, len(tokens), bins, shift, int(binary), words,
                           values.ctypes.data, features.ctypes.data, sketches.ctypes.data, table.ctypes.data,
                           highs.ctypes.data, used.ctypes.data, slots, self._scratch.ctypes.data)


@dataclass(frozen=True)
class KeywordRules:
    """What the keyword kernel needs to score words as ``jieba.analyse.extract_tags`` does.

    ``keys``/``idf``: an open-addressing table of the XXH3-64 of each word of the IDF table
    (a power of two of slots, key 0 empty, linear probing) and the word's IDF, NaN for a word
    that is dropped; ``median``: the IDF of other words; ``stop``: the stop words, lower-case
    ASCII, back to back, the ``i``-th ending at ``stop_ends[i]``; ``spaces``: the code points
    that ``str.strip`` removes.
    """

    keys: np.ndarray
    idf: np.ndarray
    median: float
    stop: bytes
    stop_ends: np.ndarray
    spaces: np.ndarray


class KeywordKernel:
    """The loaded keyword kernel (:func:`simdedup._kernels.keyword_batch`) and its scratch table."""

    def __init__(self, address: int, engine: Any):
        import threading

        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, *_KEYWORD_ARGTYPES)(address)
        self._lock = threading.Lock()
        self._capacity = 0
        self._table: tuple[np.ndarray, ...] = ()

    def keywords(self, words: list[str], doc_words: np.ndarray, rules: KeywordRules,
                 topk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(best, scores, found)``: document ``d``'s keywords are ``words[best[d, i]]`` with
        ``scores[d, i]`` for ``i < found[d]``, best first. Its words are
        ``words[doc_words[d]:doc_words[d + 1]]``."""
        ndocs = len(doc_words) - 1
        data = "".join(words).encode("utf-8", "surrogatepass")
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        chars = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        doc_words = np.ascontiguousarray(doc_words, dtype=np.int64)
        most = int(np.diff(doc_words).max()) if ndocs else 0
        topk = max(1, min(topk, most))  # no document has more keywords than words
        best = np.zeros((ndocs, topk), dtype=np.int64)
        scores = np.zeros((ndocs, topk), dtype=np.float64)
        found = np.zeros(ndocs, dtype=np.int64)
        with self._lock:
            if 2 * most > self._capacity:
                self._capacity = 1 << max(10, (2 * most - 1).bit_length())
                self._table = (np.zeros(self._capacity, np.uint64), np.zeros(self._capacity, np.int64),
                               np.zeros(self._capacity, np.int64), np.zeros(self._capacity, np.float64),
                               np.zeros(self._capacity, np.int64))
            stop = np.frombuffer(rules.stop, dtype=np.uint8) if rules.stop else np.zeros(1, dtype=np.uint8)
            self._function(buffer.ctypes.data, len(data), buffer.ctypes.data, chars.ctypes.data, doc_words.ctypes.data,
                           ndocs, rules.keys.ctypes.data, rules.idf.ctypes.data, len(rules.keys), rules.median,
                           rules.spaces.ctypes.data, len(rules.spaces), stop.ctypes.data, rules.stop_ends.ctypes.data,
                           len(rules.stop_ends), topk, *(array.ctypes.data for array in self._table), self._capacity,
                           best.ctypes.data, scores.ctypes.data, found.ctypes.data)
        return best, scores, found


_KEYWORD_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                     ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                     ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


class _LoadedPairs:
    """A pair kernel of kept machine code, called through ctypes with :attr:`ARGUMENTS`; the
    engine that owns the code lives as long as it does."""

    ARGUMENTS: tuple[Any, ...] = ()

    def __init__(self, address: int, engine: Any):
        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, *self.ARGUMENTS)(address)


def _rows(values: np.ndarray) -> np.ndarray:
    """Fingerprints as the kernels take them: ``(n, words)`` uint64, C order (a 1-d array is
    one word each)."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    return values.reshape(len(values), -1) if values.ndim == 1 else values


class PairKernel(_LoadedPairs):
    """The loaded pair kernel (:func:`simdedup._kernels.table_pairs`)."""

    ARGUMENTS = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

    def pairs(self, values: np.ndarray, order: np.ndarray, keys: np.ndarray, k: int,
              expected: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``(left, right)`` of the pairs within ``k`` among sorted positions with equal
        ``keys``; ``values`` (``(n,)`` or ``(n, words)``) and ``order`` are the fingerprints and
        rows in sorted order. Room is made for ``expected`` pairs at first (more pairs cost a
        second pass)."""
        values = _rows(values)
        order = np.ascontiguousarray(order, dtype=np.int64)
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        return _growing(lambda left, right, capacity: self._function(
            values.ctypes.data, order.ctypes.data, keys.ctypes.data, len(values), values.shape[1], k,
            left.ctypes.data, right.ctypes.data, capacity), expected)


def _growing(call: Any, expected: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of a pair kernel ``call(left, right, capacity)``, which fills at most
    ``capacity`` of them and returns how many it found: run again with room for all when they
    did not fit (room for ``expected`` at first, at least 65,536)."""
    capacity = max(1 << 16, expected)
    while True:
        left = np.empty(capacity, dtype=np.int64)
        right = np.empty(capacity, dtype=np.int64)
        found = call(left, right, capacity)
        if found <= capacity:
            return left[:found], right[:found]
        capacity = found


class CrossKernel(_LoadedPairs):
    """The loaded cross-pair kernel (:func:`simdedup._kernels.cross_pairs`)."""

    ARGUMENTS = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

    def pairs(self, first: np.ndarray, second: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions ``(i, j)`` of the pairs within ``k`` of ``first[i]`` and ``second[j]``
        (``(n,)`` or ``(n, words)`` fingerprints, both of one width)."""
        first, second = _rows(first), _rows(second)
        if first.shape[1] != second.shape[1]:
            raise ValueError("fingerprints of two widths")
        return _growing(lambda left, right, capacity: self._function(
            first.ctypes.data, len(first), second.ctypes.data, len(second), first.shape[1], k, left.ctypes.data,
            right.ctypes.data, capacity))


class CanonicalKernel(_LoadedPairs):
    """The loaded canonical-table filter (:func:`simdedup._kernels.canonical_pairs`)."""

    ARGUMENTS = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)

    def keep(self, values: np.ndarray, left: np.ndarray, right: np.ndarray, masks: np.ndarray, chosen: np.ndarray,
             level_ends: np.ndarray, limits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of rows of ``values`` (``(n, words)``) canonical at every level (see the
        kernel; ``masks``: ``(blocks, words)``), in their order."""
        values = _rows(values)
        npairs, nlevels = len(left), len(level_ends)
        left, right = _some(np.array(left, dtype=np.int64), np.int64), _some(np.array(right, dtype=np.int64), np.int64)
        arrays = [_some(masks, np.uint64), _some(chosen, np.uint8), _some(level_ends, np.int64),
                  _some(limits, np.int64)]
        kept = self._function(values.ctypes.data, len(values), values.shape[1], left.ctypes.data, right.ctypes.data,
                              npairs, arrays[0].ctypes.data, arrays[1].ctypes.data, arrays[2].ctypes.data, nlevels,
                              arrays[3].ctypes.data)  # kept in place: left and right are copies
        return left[:kept], right[:kept]


class PackedKernel(_LoadedPairs):
    """The loaded packed-table kernel (:func:`simdedup._kernels.packed_pairs`)."""

    ARGUMENTS = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                 ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                 ctypes.c_void_p, ctypes.c_int64)

    def pairs(self, packed: np.ndarray, index_bits: int, values: np.ndarray, k: int, crowd: int,
              masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows ``(left, right)`` of the pairs within ``k`` in the runs of equal keys of at most
        ``crowd`` rows that differ in each block of ``masks`` (bit masks of the values, of their
        width: ``(blocks,)`` or ``(blocks, words)``), and ``(start, length)`` of the longer runs
        (sorted positions)."""
        packed = np.ascontiguousarray(packed, dtype=np.uint64)
        values = _rows(values)
        words = values.shape[1]
        masks = np.ascontiguousarray(masks if masks is not None else np.zeros((0, words)), dtype=np.uint64)
        masks = masks.reshape(len(masks), -1) if masks.ndim == 1 else masks
        if len(masks) and masks.shape[1] != words:
            raise ValueError("masks and fingerprints of two widths")
        held = masks if len(masks) else np.zeros(words, dtype=np.uint64)
        runs = np.empty(2 * (len(packed) // (crowd + 1)) + 2, dtype=np.int64)
        counts = np.zeros(1, dtype=np.int64)
        left, right = _growing(lambda left, right, capacity: self._function(
            packed.ctypes.data, len(packed), index_bits, values.ctypes.data, words, k, crowd, left.ctypes.data,
            right.ctypes.data, capacity, runs.ctypes.data, counts.ctypes.data, held.ctypes.data, len(masks)))
        crowded = runs[: 2 * int(counts[0])]  # as the last, complete call left them
        return left, right, crowded[0::2], crowded[1::2]


_loaded: dict[str, Any] = {}  # kernel name -> the loaded kernel, or False when it cannot load
_bytes_seen = 0


def _llvm() -> Any:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


def _bind_symbols(llvm: Any, names: list[str]) -> None:
    """Give llvmlite the address of each external symbol of the kernel's machine code.

    ``XXH3_64bits`` and ``XXH3_128bits`` come from the ``xxhash`` extension. The cfunc wrapper
    that numba puts around the kernel also names Python's error functions (found in the process)
    and numba's GIL and refcount helpers, on error paths the kernel never takes (it raises
    nothing and allocates nothing); those are bound to ``abort``, so that such a path, were it
    ever taken, would stop the process rather than jump to nowhere, unless numba is loaded and
    has bound them already (binding them over would make every function numba compiles later in
    the process abort).

    Raises:
        LookupError: a symbol is nowhere to be found (then the Python path does the work).
    """
    import xxhash._xxhash

    libraries = [ctypes.CDLL(xxhash._xxhash.__file__), ctypes.pythonapi]
    abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
    for name in names:
        if name.startswith(("numba_", "NRT_")) and llvm.address_of_symbol(name):
            continue  # numba, imported in this process, registered its own: functions it compiles call them
        address = abort if name.startswith(("numba_", "NRT_")) else None
        for library in libraries if address is None else ():
            try:
                address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                break
            except AttributeError:
                continue
        if not address:
            raise LookupError(f"symbol {name} not found")
        llvm.add_symbol(name, address)


def _cache_key(llvm: Any) -> str:
    import unicodedata

    import llvmlite

    source = (Path(__file__).parent / "_kernels.py").read_bytes()
    parts = [source, llvmlite.__version__.encode(), llvm.get_process_triple().encode(),
             llvm.get_host_cpu_name().encode(), llvm.get_host_cpu_features().flatten().encode(),
             sys.version.encode(), unicodedata.unidata_version.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]


def _target_machine(llvm: Any) -> Any:
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, codemodel="jitdefault")


def _compile_object(llvm: Any, machine: Any, name: str) -> tuple[list[str], bytes]:
    """Compile kernel ``name`` with numba: ``([symbol name, external symbols...], object code)``."""
    import re

    from . import _kernels

    compiled = _kernels.compile_kernel(name)
    text = compiled._library.get_llvm_str()
    externals = re.findall(r"^declare [^@]*@([A-Za-z_][\w]*)\(", text, re.M)
    externals += re.findall(r"^@([A-Za-z_]\w*) = external global", text, re.M)
    names = [compiled.native_name] + sorted(symbol for symbol in set(externals) if not symbol.startswith("llvm"))
    return names, machine.emit_object(llvm.parse_assembly(text))


def _load_code(name: str) -> tuple[int, Any]:
    """``(address, engine)`` of a kernel of :mod:`simdedup._kernels`: its kept machine code, or
    compiled by ``_kernels.compile_kernel(name)`` and kept."""
    llvm = _llvm()
    machine = _target_machine(llvm)
    kept = f"{name}-{_cache_key(llvm)}.o"
    cached = cache.read(kept)
    if cached is not None and b"\n" in cached:
        header, code = cached.split(b"\n", 1)
        names = header.decode().split()
    else:
        names, code = _compile_object(llvm, machine, name)
        cache.write(kept, " ".join(names).encode() + b"\n" + code)
    _bind_symbols(llvm, names[1:])
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return engine.get_function_address(names[0]), engine


def _load() -> Kernel:
    kernel = Kernel(*_load_code("fastpath"), unicode_tables())
    # Run it once now against the Python arithmetic, so that a failure (a symbol bound wrong,
    # stale machine code) shows here, and the Python path takes over, not mid-corpus.
    from .simhash import as_integers, simhash

    document, features = ["Ab ab c \u00c9\u00e9".encode()], {"ab": 1, "c": 1, "\u00e9\u00e9": 1}
    for bits in (64, 128):
        values, counts, _ = kernel.fingerprint(document, "whitespace", 8, True, bits=bits)
        if counts.tolist() != [3] or as_integers(values) != [simhash(features, bits)]:
            raise RuntimeError("the fast-path kernel gives wrong results")
    return kernel


def _load_keywords() -> KeywordKernel:
    kernel = KeywordKernel(*_load_code("keywords"))
    # A check against the arithmetic of extract_tags, as for the other kernel: with an empty
    # IDF table every kept word gets the median; "a" is too short, "The" a stop word.
    rules = KeywordRules(np.zeros(2, np.uint64), np.zeros(2), 3.0, b"the", np.array([3]), np.array([32]))
    best, scores, found = kernel.keywords(["中文", " ", "a", "The", "中文", "词"], np.array([0, 6]), rules, 2)
    if found.tolist() != [1] or best[0, 0] != 0 or scores[0, 0] != 2.0 * (3.0 / 2.0):
        raise RuntimeError("the keyword kernel gives wrong results")
    return kernel


#: three 128-bit fingerprints for the kernels' checks: bit 0, bit 64, none
_TWO_WORDS = np.array([[1, 0], [0, 1], [0, 0]], dtype=np.uint64)


def _load_pairs() -> PairKernel:
    kernel = PairKernel(*_load_code("pairs"))
    # Checked as the others: runs of keys [7, 7, 7] and [9, 9]; 0b1 and 0b1110 are 4 bits apart.
    values = np.array([0b1, 0b1110, 0b0, 5, 5], dtype=np.uint64)
    left, right = kernel.pairs(values, np.array([4, 2, 0, 1, 3]), np.array([7, 7, 7, 9, 9], dtype=np.uint64), 3)
    # and two words a fingerprint: bit 0 and bit 64 are each 1 bit from none, 2 bits apart
    wide = kernel.pairs(_TWO_WORDS, np.arange(3), np.zeros(3, dtype=np.uint64), 1)
    if (left.tolist() != [4, 2, 1] or right.tolist() != [0, 0, 3]
            or [a.tolist() for a in wide] != [[0, 1], [2, 2]]):
        raise RuntimeError("the pair kernel gives wrong results")
    return kernel


def _load_cross_pairs() -> CrossKernel:
    kernel = CrossKernel(*_load_code("cross"))
    # Checked as the others: 0b1 is 1 bit from 0b0 and 3 from 0b1111; 0b111 is 1 bit from 0b1111.
    left, right = kernel.pairs(np.array([0b1, 0b111], dtype=np.uint64), np.array([0b0, 0b1111], dtype=np.uint64), 1)
    wide = kernel.pairs(_TWO_WORDS[:1], _TWO_WORDS, 1)  # bit 0 is 2 bits from bit 64, 1 from none
    if left.tolist() != [0, 1] or right.tolist() != [0, 1] or [a.tolist() for a in wide] != [[0, 0], [0, 2]]:
        raise RuntimeError("the cross-pair kernel gives wrong results")
    return kernel


def _load_canonical() -> CanonicalKernel:
    kernel = CanonicalKernel(*_load_code("canonical"))
    # Checked as the others: one level of blocks {bit 0} and {bit 1}, the table of the first,
    # one of them agreed on: rows 0b00 and 0b10 agree on block 0 only (kept), 0b00 and 0b01 on
    # block 1 only (not kept).
    left, right = kernel.keep(np.array([0b00, 0b10, 0b01], dtype=np.uint64), np.array([0, 0]), np.array([1, 2]),
                              np.array([[0b01], [0b10]]), np.array([1, 0]), np.array([2]), np.array([1]))
    if left.tolist() != [0] or right.tolist() != [1]:
        raise RuntimeError("the canonical-table filter gives wrong results")
    return kernel


def _load_packed_pairs() -> PackedKernel:
    kernel = PackedKernel(*_load_code("packed"))
    # Checked as the others: keys 3, 3, 5, 5, 5 above 3 row bits (rows 4, 1 | 0, 2, 3); with
    # crowd 2 the run of three is left; rows 4 and 1 (0b1, 0b1110) are 4 bits apart.
    packed = np.array([(3 << 3) | 4, (3 << 3) | 1, (5 << 3) | 0, (5 << 3) | 2, (5 << 3) | 3], dtype=np.uint64)
    values = np.array([0, 0b1110, 0, 0, 0b1], dtype=np.uint64)
    checks = [kernel.pairs(packed, 3, values, k, 2) for k in (4, 3)]
    checks.append(kernel.pairs(packed, 3, values, 4, 2, np.array([0b1000], dtype=np.uint64)))  # 0b1, 0b1110 differ
    checks.append(kernel.pairs(packed, 3, values, 4, 2, np.array([0b10000], dtype=np.uint64)))  # they agree: none
    # two words: of the pairs (0, 2) and (1, 2) within 1 bit, only (1, 2) differs in bit 64
    one_run = np.arange(3, dtype=np.uint64)
    checks.append(kernel.pairs(one_run, 2, _TWO_WORDS, 1, 8, np.array([[0, 1]], dtype=np.uint64)))
    if ([[a.tolist() for a in c] for c in checks]
            != [[[4], [1], [2], [3]], [[], [], [2], [3]], [[4], [1], [2], [3]], [[], [], [2], [3]],
                [[1], [2], [], []]]):
        raise RuntimeError("the packed-table kernel gives wrong results")
    return kernel


def _get(name: str, load: Callable[[], Any], fast_path: bool = True) -> Any:
    """The kernel ``name``, loaded on first use; None when it cannot be loaded or compiled, or
    is turned off (a ``fast_path`` one, which has a Python path)."""
    if fast_path and os.environ.get("SIMDEDUP_FASTPATH", "1") == "0":
        return None
    if name not in _loaded:
        try:
            _loaded[name] = load()
        except Exception:  # no numba or llvmlite, no symbol: the Python path does the work
            _loaded[name] = False
    return _loaded[name] or None


def kernel() -> Kernel | None:
    """The fingerprint kernel (see :func:`_get`)."""
    return _get("fastpath", _load)


def keyword_kernel() -> KeywordKernel | None:
    """The keyword kernel (see :func:`_get`)."""
    return _get("keywords", _load_keywords)


def pair_kernel() -> PairKernel | None:
    """The pair kernel (see :func:`_get`)."""
    return _get("pairs", _load_pairs)


def cross_pair_kernel() -> CrossKernel | None:
    """The cross-pair kernel (see :func:`_get`)."""
    return _get("cross", _load_cross_pairs)


def canonical_kernel() -> CanonicalKernel | None:
    """The canonical-table filter (see :func:`_get`)."""
    return _get("canonical", _load_canonical)


def packed_pair_kernel() -> PackedKernel | None:
    """The packed-table kernel (see :func:`_get`)."""
    return _get("packed", _load_packed_pairs)


def preload() -> None:
    """Load the kernel now and use it from the first document (before forking workers)."""
    global _bytes_seen
    if kernel() is not None:
        _bytes_seen = max(_bytes_seen, START_AFTER_BYTES)


def ready(size: int) -> Kernel | None:
    """The kernel, once this process has seen :data:`START_AFTER_BYTES` of documents; None
    before that or when there is no kernel. ``size``: bytes about to be fingerprinted."""
    global _bytes_seen
    _bytes_seen += size
    if _bytes_seen < START_AFTER_BYTES:
        return None
    return kernel()


def eligible(tokenizer: Any, bits: int, hash_name: str, encoding: str) -> bool:
    """Whether documents fingerprinted with these settings can take the fast path."""
    from codecs import lookup

    from .tokenizers import BUILTIN

    return (
        os.environ.get("SIMDEDUP_FASTPATH", "1") != "0"
        and tokenizer.name in CLASS_SHIFTS
        and BUILTIN.get(tokenizer.name) == f"{type(tokenizer).__module__}:{type(tokenizer).__qualname__}"
        and set(tokenizer.options) == {"shingle"}
        and bits in (64, 128)
        and hash_name == "xxh3"
        and (encoding == "auto" or lookup(encoding).name == "utf-8")  # auto reads valid UTF-8 as UTF-8
    )


class LinkageKernel:
    """The loaded linkage kernel (:func:`simdedup._kernels.link_complete`)."""

    def __init__(self, address: int, engine: Any):
        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, *[ctypes.c_void_p] * 5,
                                          ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                          ctypes.c_int64, *[ctypes.c_void_p] * 7, ctypes.c_int64, ctypes.c_int64,
                                          *[ctypes.c_void_p] * 8, ctypes.c_int64, *[ctypes.c_double] * 3)(address)

    def link(self, n: int, left: np.ndarray, right: np.ndarray, sketches: np.ndarray | None,
             passing: np.ndarray | None, fps: np.ndarray, k: int,
             exact: "ExactTest | None" = None) -> tuple[np.ndarray, int]:
        """The cluster of each of ``n`` units (a unit of it) from the edges ``left``-``right`` in
        the order they are taken, and how many pairs were measured exactly. The test: with
        ``exact``, its measure for two units that both have exact sets; otherwise with
        ``sketches`` (``(n, bins)`` uint8), ``passing[m]`` for two that agree in ``m`` bins;
        otherwise at most ``k`` bits between rows of ``fps``."""
        left = np.ascontiguousarray(left, dtype=np.int64)
        right = np.ascontiguousarray(right, dtype=np.int64)
        fps = np.ascontiguousarray(fps, dtype=np.uint64)
        if sketches is None:
            sketches, passing, bins = np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.uint8), 0
        else:
            sketches = np.ascontiguousarray(sketches, dtype=np.uint8)
            passing = np.ascontiguousarray(passing, dtype=np.uint8)
            bins = sketches.shape[1]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(left, minlength=n) + np.bincount(right, minlength=n), out=offsets[1:])
        adjacency = np.empty(max(2 * len(left), 1), dtype=np.int64)
        capacity = 1 << max(4, (2 * len(left)).bit_length())
        parent, size, volume, next_member = (np.empty(max(n, 1), dtype=np.int64) for _ in range(4))
        keys = np.full(capacity, np.iinfo(np.uint64).max, dtype=np.uint64)
        good = np.empty(capacity, dtype=np.int64)
        bad = np.empty(capacity, dtype=np.uint8)
        ends = (left, right) if len(left) else (np.zeros(1, dtype=np.int64),) * 2
        arrays = exact.arrays() if exact else [np.zeros(1, dtype=np.int64)] * 8  # offsets [0]: no sets
        rule = ((exact.measure, exact.min_similarity, exact.min_resemblance, exact.floor) if exact
                else (0, 0.0, 0.0, 0.0))
        merged = self._function(n, len(left), ends[0].ctypes.data, ends[1].ctypes.data, offsets.ctypes.data,
                                adjacency.ctypes.data, sketches.ctypes.data, bins, passing.ctypes.data,
                                fps.ctypes.data, fps.shape[1], k, parent.ctypes.data, size.ctypes.data,
                                volume.ctypes.data, next_member.ctypes.data, keys.ctypes.data, good.ctypes.data,
                                bad.ctypes.data, capacity, exact is not None, *(a.ctypes.data for a in arrays), *rule)
        if merged < 0:
            raise RuntimeError("the linkage kernel lost count of the edges between two clusters")
        return parent[:n], merged


#: the measures of :func:`simdedup.similarity.passes`, by number (for the linkage kernel)
MEASURE_CODES = {"combined": 0, "bag": 1, "resemblance": 2}


@dataclass
class ExactTest:
    """The exact test of :func:`simdedup._kernels.link_complete`: which units have exact sets
    (``has``), their runs of sorted hashes as :class:`simdedup.similarity.ExactIndex` keeps them
    (``bag`` and ``grams``: hashes, weights, offsets, totals), and the measure (by its number,
    :data:`MEASURE_CODES`) with its thresholds."""

    has: np.ndarray
    bag: tuple
    grams: tuple
    measure: int
    min_similarity: float
    min_resemblance: float
    floor: float

    def arrays(self) -> list[np.ndarray]:
        """The arrays the kernel reads, in its order, contiguous and none empty."""
        return [_some(self.has, np.uint8), *_exact_arrays(self.bag, self.grams)]


def _some(array: np.ndarray, dtype: Any) -> np.ndarray:
    """``array`` contiguous, as ``dtype``, with at least one element (a kernel reads none of an
    empty one, but its address must be one)."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return array if len(array) else np.zeros(1, dtype=dtype)


def _run_arrays(runs: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``(hashes, weights, offsets)`` of one kind of :class:`simdedup.similarity.ExactIndex`
    as the kernels read them."""
    return _some(runs[0], np.uint64), _some(runs[1], np.uint32), np.ascontiguousarray(runs[2], dtype=np.int64)


def _exact_arrays(bag: tuple, grams: tuple) -> list[np.ndarray]:
    """Both kinds of :class:`simdedup.similarity.ExactIndex` (hashes, weights, offsets, totals)
    as ``_kernels._exact_runs`` reads them: the bag's four, then the 3-grams' but their weights."""
    gram_hashes, _, gram_offsets = _run_arrays(grams)
    return [*_run_arrays(bag), _some(bag[3], np.int64), gram_hashes, gram_offsets, _some(grams[3], np.int64)]


def _load_linkage() -> LinkageKernel:
    kernel = LinkageKernel(*_load_code("linkage"))
    # Checked as the others: fingerprints 0, 1, 2, 3 at k = 1 join 0 with 1 and 2 with 3, and
    # refuse 0-2 and 1-3 (0 and 3 are two bits apart).
    label, _ = kernel.link(4, np.array([0, 2, 0, 1]), np.array([1, 3, 2, 3]), None, None,
                           np.arange(4, dtype=np.uint64).reshape(4, 1), 1)
    if not (label[0] == label[1] != label[2] == label[3]):
        raise RuntimeError("the linkage kernel gives wrong results")
    return kernel


#: bits of the sieve of the frequent elements' table (as ``simdedup._kernels``): bit
#: ``key >> SIEVE_SHIFT`` is set for each key
SIEVE_BITS = 1 << 17
SIEVE_SHIFT = 65 - SIEVE_BITS.bit_length()


_TWO_SIZES = ctypes.c_int64 * 2


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class ExactKernel:
    """The loaded kernels of exact similarities (:mod:`simdedup.similarity`): the exact tokens
    of a text, the distinct values of sorted hashes, pair merges and verdicts, and the upper
    bounds' elements, bitsets and bounds (``simdedup._kernels.exact_*``)."""

    def __init__(self, loaded: dict[str, tuple[int, Any]]):
        self._engines = [engine for _, engine in loaded.values()]
        p, i64 = ctypes.c_void_p, ctypes.c_int64
        arguments = {"tokens": (p, i64, p, p, p, p), "distinct": (p, i64, p, i64),
                     "shared": (p, p, p, i64, p, p, i64, i64, p), "elements": (p, p, p, i64, p, i64, i64, p, i64),
                     "bits": (p, p, p, i64, p, i64, i64, p, p, i64, p, i64, p),
                     "bounded": (p, i64, i64, p, p, p, p, i64, p, i64, p, p, i64),
                     "verdicts": (p, p, p, p, p, p, p, i64, p, p, i64, i64, *[ctypes.c_double] * 3, p, p)}
        self._functions = {name: ctypes.CFUNCTYPE(i64, *arguments[name])(address)
                           for name, (address, _) in loaded.items()}

    def sets(self, data: bytes, table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | int:
        """``(distinct word hashes, their counts (uint32), distinct 3-gram hashes)`` of a text in
        UTF-8, each sorted; or the byte where Python's decoder stops."""
        room = max(len(data), 1)
        words, counts, grams = np.empty(room, dtype=np.uint64), np.empty(room, dtype=np.uint32), np.empty(room, np.uint64)
        found = self.sets_at(data, table, words, counts, grams, 0, 0)
        if isinstance(found, int):
            return found
        n_words, n_grams, _ = found
        return words[:n_words].copy(), counts[:n_words].copy(), grams[:n_grams].copy()  # not the whole buffers

    def sets_at(self, data: bytes, table: np.ndarray, words: np.ndarray, counts: np.ndarray, grams: np.ndarray,
                at_words: int, at_grams: int, bases: tuple[int, int, int, int] | None = None
                ) -> tuple[int, int, int] | int:
        """The sets of :meth:`sets` written in place: ``n_words`` distinct word hashes and their
        counts at ``words[at_words:]`` and ``counts[at_words:]``, ``n_grams`` 3-gram hashes at
        ``grams[at_grams:]``; each array needs room for ``max(len(data), 1)`` there (the
        tokens, before they are sorted and counted). Returns ``(n_words, n_grams, word
        tokens)``, or the byte where Python's decoder stops.

        ``bases``: the addresses of ``table``, ``words``, ``counts`` and ``grams``, for a caller
        that keeps them (a text's own work is a few microseconds; looking them up again for
        every text took longer)."""
        size = len(data)
        if (words.dtype != np.uint64 or grams.dtype != np.uint64 or counts.dtype != np.uint32
                or min(len(words) - at_words, len(counts) - at_words, len(grams) - at_grams) < max(size, 1)):
            raise ValueError("sets_at needs uint64 words and grams, uint32 counts, with room for the tokens")
        table_p, words_p, counts_p, grams_p = bases or (_address(table), _address(words), _address(counts),
                                                        _address(grams))
        words_p += 8 * at_words
        grams_p += 8 * at_grams
        sizes = _TWO_SIZES()
        stop = self._functions["tokens"](data, size, table_p, words_p, grams_p, sizes)  # bytes pass as their buffer
        if stop >= 0:
            return stop
        tokens, n_grams = sizes
        words[at_words : at_words + tokens].sort()  # in place; numpy sorts several times faster than a loop
        grams[at_grams : at_grams + n_grams].sort()
        distinct, counts_p = self._functions["distinct"], counts_p + 4 * at_words
        n_words = distinct(words_p, tokens, counts_p, 1)
        n_grams = distinct(grams_p, n_grams, counts_p, 0)  # not counted: counts untouched
        return n_words, n_grams, tokens

    def verdicts(self, bag: tuple, grams: tuple, left: np.ndarray, right: np.ndarray, measure: int,
                 min_similarity: float, min_resemblance: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """``(bag similarity, passes)`` of each pair of documents that both have exact sets
        (``bag`` and ``grams``: hashes, weights, offsets, totals, as
        :class:`simdedup.similarity.ExactIndex` keeps them), with the 3-grams merged only as far
        as the verdict needs."""
        left, right = _some(left, np.int64), _some(right, np.int64)
        arrays = _exact_arrays(bag, grams)
        similarity, passing = np.empty(len(left)), np.empty(len(left), dtype=np.uint8)
        self._functions["verdicts"](*(a.ctypes.data for a in arrays), len(bag[2]) - 1, left.ctypes.data,
                                    right.ctypes.data, len(similarity), measure, min_similarity, min_resemblance,
                                    floor, similarity.ctypes.data, passing.ctypes.data)
        return similarity, passing.astype(bool)

    def shared(self, runs: tuple, left: np.ndarray, right: np.ndarray, weighted: bool) -> np.ndarray:
        """For each pair, the weight (or number, without ``weighted``) of the hashes both runs
        hold; ``runs``: hashes, weights, offsets (as :class:`simdedup.similarity.ExactIndex`)."""
        hashes, weights, offsets = _run_arrays(runs)
        left, right = _some(left, np.int64), _some(right, np.int64)
        out = np.empty(len(left), dtype=np.int64)
        self._functions["shared"](hashes.ctypes.data, weights.ctypes.data, offsets.ctypes.data, len(offsets) - 1,
                                  left.ctypes.data, right.ctypes.data, len(out), weighted, out.ctypes.data)
        return out

    def elements(self, runs: tuple, units: np.ndarray, weighted: bool, total: int) -> np.ndarray:
        """The ``total`` elements of ``units``' runs back to back: each hash as many times as its
        weight (as its copies), or once without ``weighted``."""
        hashes, weights, offsets = _run_arrays(runs)
        units = _some(units, np.int64)
        out = np.empty(max(total, 1), dtype=np.uint64)
        found = self._functions["elements"](hashes.ctypes.data, weights.ctypes.data, offsets.ctypes.data,
                                            len(offsets) - 1, units.ctypes.data, len(units), weighted, out.ctypes.data,
                                            total)
        return out[:found]

    def frequent_bits(self, runs: tuple, units: np.ndarray, weighted: bool, keys: np.ndarray, ids: np.ndarray,
                      words: int) -> np.ndarray:
        """A row per unit: the bitset of its elements found in the table ``keys`` (at bit ``ids``)."""
        hashes, weights, offsets = _run_arrays(runs)
        units = _some(units, np.int64)
        bits = np.zeros((len(units), words), dtype=np.uint64)
        top = keys[keys != 0] >> np.uint64(SIEVE_SHIFT)
        sieve = np.zeros(SIEVE_BITS // 64, dtype=np.uint64)
        np.bitwise_or.at(sieve, (top >> np.uint64(6)).astype(np.int64), np.uint64(1) << (top & np.uint64(63)))
        self._functions["bits"](hashes.ctypes.data, weights.ctypes.data, offsets.ctypes.data, len(offsets) - 1,
                                units.ctypes.data, len(units), weighted, keys.ctypes.data, ids.ctypes.data, len(keys),
                                bits.ctypes.data, words, sieve.ctypes.data)
        return bits

    def bounded(self, bits: np.ndarray, sizes: np.ndarray, free: np.ndarray, left: np.ndarray, right: np.ndarray,
                prefix: int = 0, prefix_free: np.ndarray | None = None, cuts: Any = None) -> np.ndarray:
        """An upper bound of the Jaccard of each pair of rows (see ``_kernels.exact_bounded``):
        from the first ``prefix`` words alone (``prefix_free`` elements outside them) where that
        is below the pair's cut (``cuts``: one for all pairs, or one each)."""
        bits, sizes, free = _some(bits, np.uint64), _some(sizes, np.int64), _some(free, np.int64)
        left, right = _some(left, np.int64), _some(right, np.int64)
        out = np.empty(len(left), dtype=np.float64)
        words = bits.shape[1] if bits.ndim == 2 else 1
        if cuts is None or prefix_free is None:  # no cut: the whole bound of every pair
            prefix, prefix_free, cuts = words, free, -np.inf
        cuts = _some(np.atleast_1d(np.asarray(cuts, dtype=np.float64)), np.float64)
        if len(cuts) not in (1, len(out)):
            raise ValueError("one cut, or one for each pair")
        prefix_free = _some(prefix_free, np.int64)
        self._functions["bounded"](bits.ctypes.data, len(sizes), words, sizes.ctypes.data, free.ctypes.data,
                                   left.ctypes.data, right.ctypes.data, len(out), out.ctypes.data,
                                   min(prefix, words), prefix_free.ctypes.data, cuts.ctypes.data, len(cuts))
        return out


def _load_exact() -> ExactKernel:
    kernel = ExactKernel({name: _load_code(f"exact-{name}") for name in
                          ("tokens", "distinct", "shared", "elements", "bits", "bounded", "verdicts")})
    # Checked as the others, with a table where every ASCII letter is a run of itself and the
    # space a separator: "x y x" has two words (x twice), one 3-gram; it shares all with itself.
    table = np.zeros(0x10000, dtype=np.uint32)
    table[:128] = np.arange(128, dtype=np.uint32) << 2 | 1
    table[32] = 0
    words, counts, grams = kernel.sets(b"x y x", table)  # type: ignore[misc]
    doubled = (np.concatenate((words, words)), np.concatenate((counts, counts)), np.array([0, 2, 4]), np.array([3, 3]))
    both_grams = (np.concatenate((grams, grams)), np.zeros(0), np.array([0, 1, 2]), np.array([1, 1]))
    same = kernel.verdicts(doubled, both_grams, np.array([0]), np.array([1]), MEASURE_CODES["combined"], 0.9, 0.9, 0.5)
    if (len(words) != 2 or sorted(counts.tolist()) != [1, 2] or len(grams) != 1 or kernel.sets(b"\xff", table) != 0
            or kernel.shared(doubled, np.array([0]), np.array([1]), True).tolist() != [3]
            or [a.tolist() for a in same] != [[1.0], [True]]):
        raise RuntimeError("the exact-similarity kernels give wrong results")
    return kernel


#: the fields of a record template, as simdedup._kernels numbers them
FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_BYTES, FIELD_SKETCH = range(5)


class RecordScanner:
    """The loaded record scanner (:func:`simdedup._kernels.scan_records`)."""

    def __init__(self, address: int, engine: Any):
        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 5,
                                          *[ctypes.c_void_p] * 7, ctypes.c_int64)(address)

    def scan(self, data: memoryview | bytes, pieces: tuple[bytes, ...], kinds: tuple[int, ...], hex_digits: int,
             sketch_chars: int, capacity: int
             ) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The lines of ``data``, all of the template that the literal ``pieces`` around the
        fields ``kinds`` and the widths make (see :func:`simdedup._kernels.scan_records`):
        ``(ids, id_ends, escaped, values, features, sizes, sketches)``, the ids as bytes each
        followed by a newline; None when a line does not fit or there are more than
        ``capacity``."""
        words = max(1, hex_digits // 16)
        sketch_bytes = sketch_chars * 3 // 4
        joined = np.frombuffer(b"".join(pieces) or b"\0", dtype=np.uint8)
        ends = np.cumsum([len(p) for p in pieces]).astype(np.int64)
        steps = np.array(kinds or (0,), dtype=np.int64)
        cap = max(capacity, 1)
        text = np.frombuffer(data, dtype=np.uint8)
        ids = np.empty(max(len(text), 1), dtype=np.uint8)
        id_ends = np.empty(cap, dtype=np.int64)
        escaped = np.empty(cap, dtype=np.uint8)
        values = np.empty((cap, words), dtype=np.uint64)
        features = np.empty(cap, dtype=np.int64)
        sizes = np.empty(cap, dtype=np.int64)
        sketches = np.empty((cap, sketch_bytes), dtype=np.uint8)
        records = self._function(text.ctypes.data, len(text), joined.ctypes.data, ends.ctypes.data, steps.ctypes.data,
                                 len(kinds), hex_digits, words, sketch_chars, sketch_bytes, ids.ctypes.data,
                                 id_ends.ctypes.data, escaped.ctypes.data, values.ctypes.data, features.ctypes.data,
                                 sizes.ctypes.data, sketches.ctypes.data if sketch_bytes else ids.ctypes.data,
                                 capacity)
        if records < 0:
            return None
        used = int(id_ends[records - 1]) + 1 if records else 0
        return (ids[:used].tobytes(), id_ends[:records], escaped[:records], values[:records], features[:records],
                sizes[:records], sketches[:records])


def _load_scanner() -> RecordScanner:
    kernel = RecordScanner(*_load_code("scan"))
    # Checked as the others: two lines of a template with a 16-digit value and a 4-character
    # sketch (3 bytes), the second with an escape and a CRLF, the third without its newline.
    pieces = (b'{"bytes":', b',"id":"', b'","simhash":"', b'","bits":64,"features":', b',"sketch":"', b'"}')
    kinds = (FIELD_BYTES, FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_SKETCH)
    lines = (b'{"bytes":0,"id":"a","simhash":"00000000000000fF","bits":64,"features":7,"sketch":"AP-_"}\n'
             b'{"bytes":-12,"id":"\\\\n","simhash":"8000000000000001","bits":64,"features":0,"sketch":"____"}\r\n'
             b'{"bytes":5,"id":"","simhash":"0000000000000000","bits":64,"features":10,"sketch":"AAAA"}')
    found = kernel.scan(lines, pieces, kinds, 16, 4, 3)
    if (found is None or found[0] != b'a\n\\\\n\n\n' or found[2].tolist() != [0, 1, 0]
            or found[3][:, 0].tolist() != [255, (1 << 63) + 1, 0] or found[4].tolist() != [7, 0, 10]
            or found[5].tolist() != [0, -12, 5] or found[6].tolist() != [[0, 255, 191], [255] * 3, [0] * 3]
            or kernel.scan(lines, pieces, kinds, 16, 4, 2) is not None):
        raise RuntimeError("the record scanner gives wrong results")
    return kernel


def record_scanner() -> RecordScanner | None:
    """The record scanner (see :func:`_get`)."""
    return _get("scan", _load_scanner)


def linkage_kernel() -> LinkageKernel | None:
    """The linkage kernel (see :func:`_get`)."""
    return _get("linkage", _load_linkage)


def exact_kernel() -> ExactKernel | None:
    """The exact-similarity kernels (see :func:`_get`): not a fast path but the only one, so
    ``SIMDEDUP_FASTPATH=0`` leaves them on."""
    return _get("exact", _load_exact, fast_path=False)
