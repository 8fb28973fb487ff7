"""The fast path for the common case: UTF-8 text, ``words`` or ``whitespace`` tokens, with or
without shingles (numba source: :mod:`simdedup.kernels.source.fastpath`).

The Python path reads, decodes, tokenizes into strings, counts them in a Counter and hashes
each distinct one: about 10 MB/s. Here one call takes a whole batch of documents, decodes the
UTF-8 (strictly, as Python does: a document that is not UTF-8 goes to the Python path, which
says why it skips it), lower-cases and classes each character with tables made from this
Python's own ``str.lower``, ``words`` pattern and ``str.isspace`` (:class:`UnicodeTables`; the
final sigma is decided from its neighbours as ``str.lower`` does), hashes each token or shingle
with the very same XXH3-64, or XXH3-128 for 128-bit fingerprints (the C functions exported by
the ``xxhash`` package's extension, linked by symbol name), counts them, and adds up the simhash
bit votes and the sketch's bin minima. Results are identical to the Python path (the tests
compare them on random Unicode): the tokens are the same strings, so the same hashes, and the
sums are exact integers. It is used only where it gives the same answer: 64- or 128-bit
fingerprints, the ``xxh3`` hash, the built-in ``words`` or ``whitespace`` tokenizer, UTF-8 input
(or ``auto``, which reads valid UTF-8 as UTF-8), documents at most :data:`MAX_BYTES` long that
the reader would cut only at whitespace; anything else takes the Python path.

Loading the kernel costs what the Python path takes for about 0.4 MB of text, so it pays from
half a megabyte (:data:`START_AFTER_BYTES`); ``--help`` and small runs never load it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import cache
from .load import Loaded

MAX_BYTES = 64 << 20
# Loading costs what the Python path takes for about 0.4 MB of text; a batch that brings this
# process past this many bytes is the first to take the kernel.
START_AFTER_BYTES = 1 << 19
BATCH_BYTES = 4 << 20  # documents handed to the kernel at once
TABLE_SLOTS = 1 << 16  # largest table of a batch call; a document with more distinct tokens is retried alone
TOKEN_ROOM = 1 << 20  # bytes for the tokens kept in a batch call; a document that needs more is retried alone
PLANES = 48  # as simdedup.kernels.source.fastpath (which cannot be imported without numba)
MAX_BINS = 4096
SCRATCH_WORDS = 2 * PLANES + MAX_BINS + 64  # and the hashes of a block's tokens
# As simdedup.kernels.source.fastpath: the layout of an entry of the Unicode tables, a document's flag, the
# features of a document to retry alone or to leave to the Python path.
CODE, WORDS_SHIFT, WHITESPACE_SHIFT = 0x1FFFFF, 21, 23
MULTI, IGNORABLE, CASED, SIGMA = 1 << 25, 1 << 26, 1 << 27, 1 << 28
SURROGATES = 1
RETRY, INVALID = -1, -2
CLASS_SHIFTS = {"words": WORDS_SHIFT, "whitespace": WHITESPACE_SHIFT}
CAPITAL_SIGMA = 0x3A3


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
    from ..tokenizers.words import TOKEN

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

    sources = [
        (Path(__file__).parent.parent / name).read_bytes() for name in ("kernels/fastpath.py", "tokenizers/words.py")
    ]
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


class Kernel(Loaded):
    """The loaded batch kernel, the Unicode tables and its scratch buffers (one per process;
    calls from several threads take turns, as ctypes lets them run at once and the scratch is
    shared)."""

    FUNCTIONS = ("fastpath",)

    def __init__(self, functions: dict[str, Any]):
        import threading

        super().__init__(functions)
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._scratch = np.zeros(SCRATCH_WORDS, dtype=np.uint64)
        self._tokens = np.zeros(TOKEN_ROOM, dtype=np.uint8)
        self.unicode = unicode_tables()

    def _table(self, slots: int, words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Hash table (key and count side by side) and list of used slots, all zero, and the
        high halves of the keys of 128-bit hashes (``words`` 2; else one word, unused)."""

        def made() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return (
                np.zeros(2 * slots, np.uint64),
                np.zeros(slots, np.int64),
                np.zeros(slots if words == 2 else 1, np.uint64),
            )

        if slots > TABLE_SLOTS:  # a one-off for a huge document: not kept
            return made()
        if (slots, words) not in self._tables:
            self._tables[slots, words] = made()
        return self._tables[slots, words]

    def fingerprint(
        self,
        documents: list[bytes],
        token_class: str,
        bins: int,
        binary: bool,
        shingle: int = 1,
        flags: list[int] | None = None,
        bits: int = 64,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(simhash values (n, bits // 64), distinct feature counts, sketches (n, bins))`` of
        UTF-8 documents (``flags``: :data:`SURROGATES` for a document that may hold lone
        surrogates, encoded with ``surrogatepass``); a value is one uint64 word, or two (low
        first) at 128 bits (:func:`simdedup.simhash.as_integers`); a count is :data:`INVALID` for a document
        that is not UTF-8."""
        n = len(documents)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in documents], out=offsets[1:])
        flag_array = np.zeros(max(n, 1), dtype=np.uint8)
        if flags is not None:
            flag_array[:n] = flags
        return self.fingerprint_joined(
            b"".join(documents), offsets, token_class, bins, binary, shingle, flag_array, bits
        )

    def fingerprint_joined(
        self,
        data: bytes | bytearray | memoryview,
        offsets: np.ndarray,
        token_class: str,
        bins: int,
        binary: bool,
        shingle: int = 1,
        flags: np.ndarray | None = None,
        bits: int = 64,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`fingerprint` of documents held back to back: document ``i`` is
        ``data[offsets[i]:offsets[i + 1]]`` (``offsets``: int64, one more than the documents;
        ``flags``: uint8, one per document, or None for none)."""
        if bins & (bins - 1) or not 0 <= bins <= MAX_BINS:
            raise ValueError(f"sketch bins must be 0 or a power of two up to {MAX_BINS}")
        if bits not in (64, 128):
            raise ValueError(f"bits must be 64 or 128, not {bits}")
        n = len(offsets) - 1
        flag_array = flags if flags is not None and len(flags) else np.zeros(max(n, 1), dtype=np.uint8)
        values = np.zeros((n, bits // 64), dtype=np.uint64)
        features = np.zeros(n, dtype=np.int64)
        sketches = np.zeros((n, bins), dtype=np.uint8)
        settings = (CLASS_SHIFTS[token_class], shingle, bins, binary, bits // 64)
        self._run(data, offsets, flag_array, settings, values, features, sketches, TABLE_SLOTS, self._tokens)
        for d in np.flatnonzero(features == RETRY):  # more distinct features or longer tokens than a batch holds
            start, size = int(offsets[d]), int(offsets[d + 1] - offsets[d])
            # Alone, in a table 16 times larger each time, up to one that holds every token distinct:
            # a table sized for that at once (and first filled to a quarter of the bytes) would take
            # about 5 bytes per byte of a large document, whatever its vocabulary.
            most, slots = 1 << max(10, (size + 2).bit_length()), TABLE_SLOTS
            single = np.array([0, size], dtype=np.int64)
            room = np.zeros(3 * size + 64, dtype=np.uint8)  # lower case at most doubles a token, plus spaces
            while features[d] == RETRY and slots < most:
                slots = min(slots << 4, most)
                self._run(
                    memoryview(data)[start : start + size],
                    single,
                    flag_array[d:],
                    settings,
                    values[d:],
                    features[d:],
                    sketches[d:],
                    slots,
                    room,
                )
        return values, features, sketches

    def _run(
        self,
        data: bytes | bytearray | memoryview,
        offsets: np.ndarray,
        flags: np.ndarray,
        settings: tuple[int, int, int, bool, int],
        values: np.ndarray,
        features: np.ndarray,
        sketches: np.ndarray,
        slots: int,
        tokens: np.ndarray,
    ) -> None:
        class_shift, shingle, bins, binary, words = settings
        buffer = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(1, dtype=np.uint8)
        shift = 64 - bins.bit_length() + 1 if bins else 0
        starts = np.zeros(shingle, dtype=np.int64)
        unicode = self.unicode
        with self._lock:
            table, used, highs = self._table(slots, words)
            self._functions["fastpath"](
                buffer.ctypes.data,
                offsets.ctypes.data,
                len(offsets) - 1,
                flags.ctypes.data,
                unicode.blocks.ctypes.data,
                unicode.entries.ctypes.data,
                len(unicode.entries),
                unicode.extra.ctypes.data,
                len(unicode.extra),
                class_shift,
                shingle,
                starts.ctypes.data,
                tokens.ctypes.data,
                tokens.ctypes.data,
                len(tokens),
                bins,
                shift,
                int(binary),
                words,
                values.ctypes.data,
                features.ctypes.data,
                sketches.ctypes.data,
                table.ctypes.data,
                highs.ctypes.data,
                used.ctypes.data,
                slots,
                self._scratch.ctypes.data,
            )

    def check(self) -> None:
        from ..simhash import as_integers, simhash

        document, features = ["Ab ab c \u00c9\u00e9".encode()], {"ab": 1, "c": 1, "\u00e9\u00e9": 1}
        for bits in (64, 128):
            values, counts, _ = self.fingerprint(document, "whitespace", 8, True, bits=bits)
            if counts.tolist() != [3] or as_integers(values) != [simhash(features, bits)]:
                raise RuntimeError("the fast-path kernel gives wrong results")


_bytes_seen = 0


def preload() -> None:
    """Load the kernel now and use it from the first document (before forking workers)."""
    global _bytes_seen
    if Kernel.loaded() is not None:
        _bytes_seen = max(_bytes_seen, START_AFTER_BYTES)


def ready(size: int) -> Kernel | None:
    """The kernel, once this process has seen :data:`START_AFTER_BYTES` of documents; None
    before that or when there is no kernel. ``size``: bytes about to be fingerprinted."""
    global _bytes_seen
    _bytes_seen += size
    if _bytes_seen < START_AFTER_BYTES:
        return None
    return Kernel.loaded()


def eligible(tokenizer: Any, bits: int, hash_name: str, encoding: str) -> bool:
    """Whether documents fingerprinted with these settings can take the fast path."""
    from codecs import lookup

    from ..tokenizers import BUILTIN

    return (
        os.environ.get("SIMDEDUP_FASTPATH", "1") != "0"
        and tokenizer.name in CLASS_SHIFTS
        and BUILTIN.get(tokenizer.name) == f"{type(tokenizer).__module__}:{type(tokenizer).__qualname__}"
        and set(tokenizer.options) == {"shingle"}
        and bits in (64, 128)
        and hash_name == "xxh3"
        and (encoding == "auto" or lookup(encoding).name == "utf-8")  # auto reads valid UTF-8 as UTF-8
    )
