"""The shingle sketches of texts (:mod:`simdedup.shingle_sketch`; numba source:
:mod:`simdedup.kernels.source.shingles`). There is no Python path, as for the exact kernels
(``SIMDEDUP_FASTPATH=0`` leaves them on)."""

from __future__ import annotations

import numpy as np

from .exact import _address, _bytes_address
from .load import Loaded

#: the state's size (``source.shingles.STATE_SIZE``)
STATE_SIZE = 16


class ShingleKernel(Loaded):
    """The loaded shingle-sketch kernels: whole texts in a batch, or one text as a stream."""

    FUNCTIONS = ("shingles-start", "shingles-update", "shingles-finish", "shingles-texts")
    FAST_PATH = False

    def texts(
        self,
        data: bytes | bytearray | memoryview,
        offsets: np.ndarray,
        table: np.ndarray,
        cjk_share: float,
        bins: int,
        a_bins: int,
        value_bits: int,
        capacity: int,
    ) -> tuple[np.ndarray, np.ndarray] | int:
        """``(sketches, kinds)`` of the texts held back to back in ``data`` (text ``t`` at
        ``offsets[t]:offsets[t + 1]``): an ``(n, bins * value_bits / 8)`` uint8 array and each
        text's kind (1: characters, 0: words, -1: no word, no sketch); or the first text that is
        not UTF-8."""
        n = len(offsets) - 1
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        per_text = bins * value_bits // 8
        out = np.zeros((max(n, 1), per_text), dtype=np.uint8)
        kinds = np.empty(max(n, 1), dtype=np.int64)
        state, keys, winners, elements = _scratch(bins, a_bins, capacity)
        bad = self._functions["shingles-texts"](
            _bytes_address(data),
            offsets.ctypes.data,
            n,
            _address(table),
            bins,
            a_bins,
            capacity,
            cjk_share,
            value_bits,
            state.ctypes.data,
            keys.ctypes.data,
            winners.ctypes.data,
            elements.ctypes.data,
            out.ctypes.data,
            kinds.ctypes.data,
        )
        if bad >= 0:
            return int(bad)
        return out[:n], kinds[:n]

    def stream(
        self, table: np.ndarray, cjk_share: float, bins: int, a_bins: int, value_bits: int, capacity: int
    ) -> ShingleStream:
        """The sketch of one text given a chunk at a time (:class:`ShingleStream`)."""
        return ShingleStream(self, table, cjk_share, bins, a_bins, value_bits, capacity)

    def check(self) -> None:
        # A text's sketch is the same whole and as a stream of two chunks, its own sketch is
        # the same each time, and a text of characters is one of characters.
        from ..similarity import CJK_SHARE, DEFAULT_FOLDING, _tables

        table = _tables(DEFAULT_FOLDING)
        texts = [b"one two three four five six", "\u4e00\u4e8c\u4e09\u56db\u4e94\u516d".encode(), b" \n "]
        data = b"".join(texts)
        offsets = np.cumsum([0, *map(len, texts)])
        found = self.texts(data, offsets, table, CJK_SHARE, 16, 8, 4, 64)
        stream = self.stream(table, CJK_SHARE, 16, 8, 4, 64)
        stream.update(texts[0][:7])
        stream.update(texts[0][7:])
        if (
            isinstance(found, int)
            or found[1].tolist() != [0, 1, -1]
            or stream.finish() != found[0][0].tobytes()
            or self.texts(b"\xff", np.array([0, 1]), table, CJK_SHARE, 16, 8, 4, 64) != 0
        ):
            raise RuntimeError("the shingle-sketch kernels give wrong results")


def _scratch(bins: int, a_bins: int, capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """State, keys and winners (the three sketches' bins: ``source.shingles``) and kept shingles."""
    total = 2 * bins - a_bins - 2
    return (
        np.zeros(STATE_SIZE, dtype=np.int64),
        np.empty(total, dtype=np.uint64),
        np.empty(total, dtype=np.uint64),
        np.empty(2 * capacity, dtype=np.uint64),
    )


class ShingleStream:
    """The sketch of one text read a chunk at a time, in memory bounded by ``capacity``."""

    def __init__(
        self,
        kernel: ShingleKernel,
        table: np.ndarray,
        cjk_share: float,
        bins: int,
        a_bins: int,
        value_bits: int,
        capacity: int,
    ):
        self._kernel, self._table, self._cjk_share = kernel, table, cjk_share
        self._bins, self._a_bins, self._value_bits, self._capacity = bins, a_bins, value_bits, capacity
        self._state, self._keys, self._winners, self._elements = _scratch(bins, a_bins, capacity)
        kernel._functions["shingles-start"](
            self._state.ctypes.data, self._keys.ctypes.data, self._winners.ctypes.data, bins, a_bins
        )

    def update(self, chunk: bytes) -> None:
        """Feed a chunk of UTF-8 that ends with a whole character.

        Raises:
            UnicodeDecodeError: it is not UTF-8 (with ``surrogatepass``).
        """
        bad = self._kernel._functions["shingles-update"](
            _bytes_address(chunk),
            len(chunk),
            _address(self._table),
            self._state.ctypes.data,
            self._keys.ctypes.data,
            self._winners.ctypes.data,
            self._elements.ctypes.data,
            self._bins,
            self._a_bins,
            self._capacity,
        )
        if bad >= 0:
            chunk.decode("utf-8", "surrogatepass")  # raises the decoder's error at that byte

    def finish(self) -> bytes | None:
        """The sketch, or None for a text without a character but white space."""
        out = np.zeros(self._bins * self._value_bits // 8, dtype=np.uint8)
        kind = self._kernel._functions["shingles-finish"](
            self._state.ctypes.data,
            self._keys.ctypes.data,
            self._winners.ctypes.data,
            self._elements.ctypes.data,
            self._bins,
            self._a_bins,
            self._capacity,
            self._cjk_share,
            self._value_bits,
            out.ctypes.data,
        )
        return None if kind < 0 else out.tobytes()
