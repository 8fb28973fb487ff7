"""jieba's segmentation, ``jieba.cut(text, HMM=True)``, of a batch of texts
(:mod:`simdedup.tokenizers.jieba_tfidf`; numba source: :mod:`simdedup.kernels.source.jieba_cut`).

The kernel knows jieba only through :class:`JiebaTables`, built by :func:`build_tables` from
jieba's prefix dictionary (``FREQ``, ``total``), its HMM (``finalseg``'s probabilities) and the
character classes of its regular expressions.
"""

from __future__ import annotations

import json
import math
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

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: node numbers and code points are 21 bits in a trie slot
_CODE_BITS = 21


@dataclass(frozen=True)
class JiebaTables:
    """jieba's dictionary and HMM as the kernel reads them (see
    :func:`simdedup.kernels.source.jieba_cut.cut_batch`): ``classes`` (uint8 per code point
    from 0), ``trie`` (uint64, a power of two of slots), ``weights`` (float64 per node),
    ``unknown`` (``log(1) - log(total)``), ``start``/``trans``/``emit`` (float64) with ``emit``
    over code points from ``emit_first``; ``total`` and ``entries`` (``len(FREQ)``) tell a
    dictionary jieba has loaded apart from this one."""

    classes: np.ndarray
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
    def from_bytes(cls, data: bytes) -> JiebaTables:
        """The tables of :meth:`to_bytes`.

        Raises:
            ValueError: ``data`` is not such tables.
        """
        try:
            header = json.loads(data[: data.index(b"\n")])
            offset = -(-(data.index(b"\n") + 1) // 8) * 8
            arrays = {}
            for name, kind, length in header["arrays"]:
                arrays[name] = np.frombuffer(data, dtype=np.dtype(kind), count=length, offset=offset)
                offset += -(-arrays[name].nbytes // 8) * 8
            tables = cls(**{name: kind(header["scalars"][name]) for name, kind in _SCALARS.items()}, **arrays)
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"not jieba tables: {exc}") from None
        kinds = {"classes": np.uint8, "trie": np.uint64, "weights": np.float64, "start": np.float64}
        kinds |= {"trans": np.float64, "emit": np.float64}
        slots = len(tables.trie)
        if (
            any(getattr(tables, name).dtype != kind for name, kind in kinds.items())
            or slots < 2
            or slots & (slots - 1)
            or len(tables.start) != 4
            or len(tables.trans) != 16
            or not len(tables.emit)
            or len(tables.emit) % 4
            or not len(tables.weights)
        ):
            raise ValueError("not jieba tables: wrong shapes")
        return tables


_SCALARS = {"unknown": float, "emit_first": int, "total": int, "entries": int}


def build_tables(
    freq: Mapping[str, int],
    total: int,
    classes: np.ndarray,
    hmm: tuple[Mapping[str, float], Mapping[str, Mapping[str, float]], Mapping[str, Mapping[str, float]]],
) -> JiebaTables | None:
    """The kernel's tables of a prefix dictionary (jieba's ``FREQ`` and ``total``), character
    classes and HMM (``finalseg``'s ``start_P``, ``trans_P``, ``emit_P``); None when they do
    not fit its layout (more than 2**21 prefixes, or a negative frequency, which jieba cannot
    take either). Weights are computed as jieba's ``calc`` computes them, with ``math.log``."""
    prefixes = {word[:end] for word in freq for end in range(1, len(word) + 1)}
    if len(prefixes) >= 1 << _CODE_BITS or any(value < 0 for value in freq.values()):
        return None
    order = sorted(prefixes, key=lambda word: (len(word), word))
    ids = {"": 0, **{word: number for number, word in enumerate(order, 1)}}
    log_total = math.log(total)
    weights = np.array(
        [math.nan] + [math.log(freq[word]) - log_total if freq.get(word) else math.nan for word in order],
        dtype=np.float64,
    )
    parents = np.array([ids[word[:-1]] for word in order], dtype=np.uint64)
    chars = np.array([ord(word[-1]) for word in order], dtype=np.uint64)
    keys = (np.uint64(1 << 2 * _CODE_BITS) | (parents << np.uint64(_CODE_BITS)) | chars).tolist()
    bits = max(1, (2 * len(order) - 1).bit_length())
    homes = ((np.array(keys, dtype=np.uint64) * _GOLDEN) >> np.uint64(64 - bits)).tolist()
    mask = (1 << bits) - 1
    trie = [0] * (1 << bits)
    for child, (key, slot) in enumerate(zip(keys, homes), 1):
        while trie[slot]:
            slot = (slot + 1) & mask
        trie[slot] = key << _CODE_BITS | child
    start_p, trans_p, emit_p = hmm
    han = np.flatnonzero(classes & HMM_HAN)
    first = int(han[0]) if len(han) else 0
    span = int(han[-1]) - first + 1 if len(han) else 1
    return JiebaTables(
        classes=np.ascontiguousarray(classes, dtype=np.uint8),
        trie=np.array(trie, dtype=np.uint64),
        weights=weights,
        unknown=math.log(1) - log_total,
        start=np.array([start_p[y] for y in STATES], dtype=np.float64),
        trans=np.array([trans_p[a].get(b, MIN_FLOAT) for a in STATES for b in STATES], dtype=np.float64),
        emit=np.array(
            [emit_p[y].get(chr(first + i), MIN_FLOAT) for y in STATES for i in range(span)], dtype=np.float64
        ),
        emit_first=first,
        total=total,
        entries=len(freq),
    )


class JiebaCutKernel(Loaded):
    """The loaded segmentation kernel (:func:`simdedup.kernels.source.jieba_cut.cut_batch`)."""

    FUNCTIONS = ("jieba-cut",)

    def cut(
        self, units: np.ndarray, chunk_ends: np.ndarray, tables: JiebaTables, recut: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(words, chunk_words)``: the words of each chunk of ``units`` (code points, uint32,
        chunk ``i`` ending at ``chunk_ends[i]``) as their lengths in code points, the words of
        chunk ``i`` being ``words[chunk_words[i]:chunk_words[i + 1]]``. With ``recut``, each word
        is cut again (``jieba.cut("|".join(jieba.cut(chunk)))``, without the ``"|"`` words)."""
        units = np.ascontiguousarray(units, dtype=np.uint32)
        chunk_ends = np.ascontiguousarray(chunk_ends, dtype=np.int64)
        if len(chunk_ends) and (chunk_ends[-1] != len(units) or np.any(np.diff(chunk_ends, prepend=0) < 0)):
            raise ValueError("chunk ends must rise to the number of code points")
        room = int(np.diff(chunk_ends, prepend=0).max()) + 1 if len(chunk_ends) else 1
        words = np.empty(max(len(units), 1), dtype=np.int64)
        chunk_words = np.zeros(len(chunk_ends) + 1, dtype=np.int64)
        scratch = (
            np.empty(room, dtype=np.float64),
            np.empty(room, dtype=np.int64),
            np.empty(4 * room, dtype=np.uint8),
            np.empty(room, dtype=np.int64),
        )
        some_units = units if len(units) else np.zeros(1, dtype=np.uint32)
        some_ends = chunk_ends if len(chunk_ends) else np.zeros(1, dtype=np.int64)
        self._functions["jieba-cut"](
            some_units.ctypes.data,
            len(units),
            some_ends.ctypes.data,
            len(chunk_ends),
            tables.classes.ctypes.data,
            len(tables.classes),
            tables.trie.ctypes.data,
            len(tables.trie).bit_length() - 1,
            tables.weights.ctypes.data,
            len(tables.weights),
            tables.unknown,
            tables.start.ctypes.data,
            tables.trans.ctypes.data,
            tables.emit.ctypes.data,
            len(tables.emit) // 4,
            tables.emit_first,
            int(recut),
            words.ctypes.data,
            chunk_words.ctypes.data,
            *(array.ctypes.data for array in scratch),
            room,
        )
        return words[: chunk_words[-1]], chunk_words

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
        units = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        words, chunk_words = self.cut(units, np.array([len(text)]), tables)  # type: ignore[arg-type]
        if words.tolist() != [2, 3, 2, 1, 2] or chunk_words.tolist() != [0, 5]:
            raise RuntimeError("the jieba segmentation kernel gives wrong results")
