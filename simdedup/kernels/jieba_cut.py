"""jieba's segmentation, ``jieba.cut(text, HMM=True)``, of a batch of texts
(:mod:`simdedup.tokenizers.jieba_tfidf`; numba source: :mod:`simdedup.kernels.source.jieba_cut`).

The kernel knows jieba only through :class:`JiebaTables`, built by :func:`build_tables` from
jieba's prefix dictionary (``FREQ``, ``total``), its HMM (``finalseg``'s probabilities) and the
character classes of its regular expressions.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, fields
from typing import Any, Mapping

import numpy as np

from .load import Loaded

# The bits of a character's class, as the kernel reads them (kernels/source/jieba_cut.py).
BLOCK = 1  # re_han_default: runs of these are cut by the dictionary
HMM_HAN = 2  # finalseg.re_han: runs of these are cut by the HMM
ALNUM = 4  # [a-zA-Z0-9] of finalseg.re_skip
DIGIT = 8  # \d of finalseg.re_skip

#: the HMM's states in the kernel's order
STATES = "BEMS"
#: finalseg.MIN_FLOAT: the log-probability of what the HMM has no entry for
MIN_FLOAT = -3.14e100

# The entries of the prefixes, as the kernel reads them (kernels/source/jieba_cut.py).
_GOLDEN = 0x9E3779B97F4A7C15
_LOW64 = (1 << 64) - 1
_CODE_BITS = 21  # a code point, or a slot number
_BITS_SHIFT = 42
_WEIGHT_SHIFT = 47
_WEIGHT_BITS = 16
_USED = 1 << 63


@dataclass(frozen=True)
class JiebaTables:
    """jieba's dictionary and HMM as the kernel reads them (see
    :func:`simdedup.kernels.source.jieba_cut.cut_batch`): ``classes`` (uint8 per code point
    from 0), ``roots`` (uint64 per code point of ``classes``), ``trie`` (uint64, blocks of
    slots), ``weights`` (float64, NaN first), ``unknown`` (``log(1) - log(total)``), ``start``/``trans``/``emit``
    (float64) with ``emit`` over code points from ``emit_first``; ``total`` and ``entries``
    (``len(FREQ)``) tell a dictionary jieba has loaded apart from this one."""

    classes: np.ndarray
    roots: np.ndarray
    trie: np.ndarray
    weights: np.ndarray
    unknown: float
    start: np.ndarray
    trans: np.ndarray
    emit: np.ndarray
    emit_first: int
    total: int
    entries: int

    def to_bytes(self) -> bytes:
        """The tables as bytes: a line of JSON (the scalars, and each array's name, type and
        length), then the arrays back to back, each padded to 8 bytes (read back, without a
        copy, by :meth:`from_bytes`)."""
        arrays = {field.name: getattr(self, field.name) for field in fields(self)}
        scalars = {name: arrays.pop(name) for name in _SCALARS}
        layout = [[name, array.dtype.str, len(array)] for name, array in arrays.items()]
        header = json.dumps({"scalars": scalars, "arrays": layout}).encode() + b"\n"
        parts = [header + b" " * (-len(header) % 8)]
        for array in arrays.values():
            data = np.ascontiguousarray(array).tobytes()
            parts.append(data + b"\0" * (-len(data) % 8))
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> JiebaTables:
        """The tables of :meth:`to_bytes`.

        Raises:
            ValueError: ``data`` is not such tables.
        """
        try:
            line = bytes(data[:_HEADER_BYTES]).index(b"\n")
            header = json.loads(bytes(data[:line]))
            offset = -(-(line + 1) // 8) * 8
            arrays = {}
            for name, kind, length in header["arrays"]:
                arrays[name] = np.frombuffer(data, dtype=np.dtype(kind), count=length, offset=offset)
                offset += -(-arrays[name].nbytes // 8) * 8
            tables = cls(**{name: kind(header["scalars"][name]) for name, kind in _SCALARS.items()}, **arrays)
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"not jieba tables: {exc}") from None
        kinds = {"classes": np.uint8, "roots": np.uint64, "trie": np.uint64, "weights": np.float64}
        kinds |= {"start": np.float64, "trans": np.float64, "emit": np.float64}
        if (
            any(getattr(tables, name).dtype != kind for name, kind in kinds.items())
            or not 1 <= len(tables.trie) <= 1 << _CODE_BITS
            or len(tables.roots) != len(tables.classes)
            or not 1 <= len(tables.weights) <= 1 << _WEIGHT_BITS
            or len(tables.start) != 4
            or len(tables.trans) != 16
            or not len(tables.emit)
            or len(tables.emit) % 4
        ):
            raise ValueError("not jieba tables: wrong shapes")
        return tables


#: the most the line of JSON at the start of :meth:`JiebaTables.to_bytes` takes
_HEADER_BYTES = 4096
_SCALARS = {"unknown": float, "emit_first": int, "total": int, "entries": int}


def build_tables(
    freq: Mapping[str, int],
    total: int,
    classes: np.ndarray,
    hmm: tuple[Mapping[str, float], Mapping[str, Mapping[str, float]], Mapping[str, Mapping[str, float]]],
) -> JiebaTables | None:
    """The kernel's tables of a prefix dictionary (jieba's ``FREQ`` and ``total``), character
    classes and HMM (``finalseg``'s ``start_P``, ``trans_P``, ``emit_P``); None when they do
    not fit its layout (blocks of more than 2**21 slots, more than 2**16 frequencies, or a negative frequency, which jieba cannot
    take either). Weights are computed as jieba's ``calc`` computes them, with ``math.log``."""
    prefixes = {word[:end] for word in freq for end in range(1, len(word) + 1)}
    if any(value < 0 for value in freq.values()):
        return None
    log_total = math.log(total)
    # each frequency's weight once (jieba's dictionary has about 5,000), NaN (not a word) first
    frequencies = sorted({value for value in freq.values() if value})
    numbers = {value: number for number, value in enumerate(frequencies, 1)}
    children: dict[str, list[str]] = {}
    for word in prefixes:
        if len(word) > 1:
            children.setdefault(word[:-1], []).append(word)
    # each prefix's block: the smallest power of two of slots over 1.5 times its children
    blocks: dict[str, tuple[int, int]] = {}
    slots = 0
    for word in sorted(children, key=lambda word: (len(word), word)):
        bits = max(1, (len(children[word]) * 3 // 2).bit_length())
        blocks[word] = slots, bits
        slots += 1 << bits
    if slots > 1 << _CODE_BITS or len(frequencies) >= 1 << _WEIGHT_BITS:
        return None

    def entry(word: str) -> int:
        start, bits = blocks.get(word, (0, 0))
        weight = numbers.get(freq.get(word, 0), 0)
        return _USED | weight << _WEIGHT_SHIFT | bits << _BITS_SHIFT | start << _CODE_BITS | ord(word[-1])

    trie = [0] * max(slots, 1)
    for parent, words in children.items():
        start, bits = blocks[parent]
        mask = (1 << bits) - 1
        for word in words:
            home = ((ord(word[-1]) * _GOLDEN) & _LOW64) >> (64 - bits)
            while trie[start + home]:
                home = (home + 1) & mask
            trie[start + home] = entry(word)
    roots = np.zeros(len(classes), dtype=np.uint64)
    for word in prefixes:
        if len(word) == 1 and ord(word) < len(roots):  # the classes reach every character of a block
            roots[ord(word)] = entry(word)
    start_p, trans_p, emit_p = hmm
    han = np.flatnonzero(classes & HMM_HAN)
    first = int(han[0]) if len(han) else 0
    span = int(han[-1]) - first + 1 if len(han) else 1
    return JiebaTables(
        classes=np.ascontiguousarray(classes, dtype=np.uint8),
        roots=roots,
        trie=np.array(trie, dtype=np.uint64),
        weights=np.array([math.nan] + [math.log(value) - log_total for value in frequencies], dtype=np.float64),
        unknown=math.log(1) - log_total,
        start=np.array([start_p[y] for y in STATES], dtype=np.float64),
        trans=np.array([trans_p[a].get(b, MIN_FLOAT) for a in STATES for b in STATES], dtype=np.float64),
        emit=np.array(
            [emit_p[y].get(chr(first + i), MIN_FLOAT) for i in range(span) for y in STATES], dtype=np.float64
        ),
        emit_first=first,
        total=total,
        entries=len(freq),
    )


class JiebaCutKernel(Loaded):
    """The loaded segmentation kernel (:func:`simdedup.kernels.source.jieba_cut.cut_batch`),
    its scratch and its output, kept from call to call (fresh memory costs the kernel a fifth
    of its time in page faults)."""

    FUNCTIONS = ("jieba-cut",)

    def __init__(self, functions: dict[str, Any]):
        super().__init__(functions)
        #: held while :meth:`cut`'s output is in use
        self.lock = threading.RLock()
        self._words = np.zeros(1, dtype=np.int64)
        self._scratch: tuple[np.ndarray, ...] = ()

    def cut(
        self, data: bytes, chunk_ends: np.ndarray, tables: JiebaTables, recut: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(words, chunk_words)``: the words of each chunk of ``data`` (UTF-8 with
        ``surrogatepass``, chunk ``i`` ending at code point ``chunk_ends[i]``) as their lengths
        in code points, the words of chunk ``i`` being ``words[chunk_words[i]:chunk_words[i + 1]]``.
        With ``recut``, each word is cut again (``jieba.cut("|".join(jieba.cut(chunk)))``,
        without the ``"|"`` words). ``words`` is this kernel's own array, valid until its next
        call: hold :attr:`lock` while reading it."""
        chunk_ends = np.ascontiguousarray(chunk_ends, dtype=np.int64)
        lengths = np.diff(chunk_ends, prepend=0)
        if np.any(lengths < 0):
            raise ValueError("chunk ends must not fall")
        units = int(chunk_ends[-1]) if len(chunk_ends) else 0
        if len(data) < units or len(data) > 4 * units:
            raise ValueError("the data cannot hold that many code points")
        room = int(lengths.max()) + 1 if len(lengths) else 1
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        chunk_words = np.zeros(len(chunk_ends) + 1, dtype=np.int64)
        some_ends = chunk_ends if len(chunk_ends) else np.zeros(1, dtype=np.int64)
        with self.lock:
            if len(self._words) < units:
                self._words = np.zeros(units, dtype=np.int64)
            if not self._scratch or len(self._scratch[0]) < room:
                self._scratch = (
                    np.zeros(room, dtype=np.uint32),
                    np.zeros(room, dtype=np.float64),
                    np.zeros(room, dtype=np.int64),
                    np.zeros(4 * room, dtype=np.uint8),
                    np.zeros(room, dtype=np.int64),
                )
            self._functions["jieba-cut"](
                buffer.ctypes.data,
                len(data),
                some_ends.ctypes.data,
                len(chunk_ends),
                tables.classes.ctypes.data,
                len(tables.classes),
                tables.roots.ctypes.data,
                tables.trie.ctypes.data,
                len(tables.trie),
                tables.weights.ctypes.data,
                len(tables.weights),
                tables.unknown,
                tables.start.ctypes.data,
                tables.trans.ctypes.data,
                tables.emit.ctypes.data,
                len(tables.emit) // 4,
                tables.emit_first,
                int(recut),
                self._words.ctypes.data,
                len(self._words),
                chunk_words.ctypes.data,
                *(array.ctypes.data for array in self._scratch),
                len(self._scratch[0]),
            )
            return self._words[: chunk_words[-1]], chunk_words

    def check(self) -> None:
        # A dictionary of two words and an HMM that makes one of two characters it does not
        # know: "中文" by the dictionary, "abc" by finalseg's re_skip, "丁七" by the HMM,
        # "\r\n" one word.
        classes = np.zeros(0x10000, dtype=np.uint8)
        classes[0x4E00:0x9FD6] = BLOCK | HMM_HAN
        for c in b"abc":
            classes[c] = BLOCK | ALNUM
        hmm: Any = (
            {"B": -1.0, "E": MIN_FLOAT, "M": MIN_FLOAT, "S": -1.0},
            {"B": {"E": -0.5}, "E": {}, "M": {}, "S": {}},
            {"B": {"丁": -1.0}, "E": {"七": -1.0}, "M": {}, "S": {}},
        )
        tables = build_tables({"中文": 10, "文": 5}, 15, classes, hmm)
        text = "中文abc丁七。\r\n"
        words, chunk_words = self.cut(text.encode(), np.array([len(text)]), tables)  # type: ignore[arg-type]
        if words.tolist() != [2, 3, 2, 1, 2] or chunk_words.tolist() != [0, 5]:
            raise RuntimeError("the jieba segmentation kernel gives wrong results")
