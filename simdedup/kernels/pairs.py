"""The pair kernels of the pair search (:mod:`simdedup.pairs`, :mod:`simdedup.engines.pairs`;
numba source: :mod:`simdedup.kernels.source.pairs`).

- :class:`PairKernel`: the candidate pairs of a crowded block table.
- :class:`CrossKernel`: the pairs between two chunks of a crowd.
- :class:`CanonicalKernel`: which of those pairs every table that found the crowd is the
  canonical table of (:func:`simdedup.pairs.chunk_pairs`).
- :class:`PackedKernel`: the pairs of a block table sorted packed with its row numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .load import Loaded, _some


def _rows(values: np.ndarray) -> np.ndarray:
    """Fingerprints as the kernels take them: ``(n, words)`` uint64, C order (a 1-d array is
    one word each)."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    return values.reshape(len(values), -1) if values.ndim == 1 else values


class PairKernel(Loaded):
    """The loaded pair kernel (:func:`simdedup.kernels.source.pairs.table_pairs`)."""

    FUNCTIONS = ("pairs",)

    def pairs(
        self, values: np.ndarray, order: np.ndarray, keys: np.ndarray, k: int, expected: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``(left, right)`` of the pairs within ``k`` among sorted positions with equal
        ``keys``; ``values`` (``(n,)`` or ``(n, words)``) and ``order`` are the fingerprints and
        rows in sorted order. Room is made for ``expected`` pairs at first (more pairs cost a
        second pass)."""
        values = _rows(values)
        order = np.ascontiguousarray(order, dtype=np.int64)
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        return _growing(
            lambda left, right, capacity: self._functions["pairs"](
                values.ctypes.data,
                order.ctypes.data,
                keys.ctypes.data,
                len(values),
                values.shape[1],
                k,
                left.ctypes.data,
                right.ctypes.data,
                capacity,
            ),
            expected,
        )

    def check(self) -> None:
        # Checked as the others: runs of keys [7, 7, 7] and [9, 9]; 0b1 and 0b1110 are 4 bits apart.
        values = np.array([0b1, 0b1110, 0b0, 5, 5], dtype=np.uint64)
        left, right = self.pairs(values, np.array([4, 2, 0, 1, 3]), np.array([7, 7, 7, 9, 9], dtype=np.uint64), 3)
        # and two words a fingerprint: bit 0 and bit 64 are each 1 bit from none, 2 bits apart
        wide = self.pairs(_TWO_WORDS, np.arange(3), np.zeros(3, dtype=np.uint64), 1)
        if left.tolist() != [4, 2, 1] or right.tolist() != [0, 0, 3] or [a.tolist() for a in wide] != [[0, 1], [2, 2]]:
            raise RuntimeError("the pair kernel gives wrong results")


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


class CrossKernel(Loaded):
    """The loaded cross-pair kernel (:func:`simdedup.kernels.source.pairs.cross_pairs`)."""

    FUNCTIONS = ("cross",)

    def pairs(self, first: np.ndarray, second: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions ``(i, j)`` of the pairs within ``k`` of ``first[i]`` and ``second[j]``
        (``(n,)`` or ``(n, words)`` fingerprints, both of one width)."""
        first, second = _rows(first), _rows(second)
        if first.shape[1] != second.shape[1]:
            raise ValueError("fingerprints of two widths")
        return _growing(
            lambda left, right, capacity: self._functions["cross"](
                first.ctypes.data,
                len(first),
                second.ctypes.data,
                len(second),
                first.shape[1],
                k,
                left.ctypes.data,
                right.ctypes.data,
                capacity,
            )
        )

    def check(self) -> None:
        # Checked as the others: 0b1 is 1 bit from 0b0 and 3 from 0b1111; 0b111 is 1 bit from 0b1111.
        left, right = self.pairs(np.array([0b1, 0b111], dtype=np.uint64), np.array([0b0, 0b1111], dtype=np.uint64), 1)
        wide = self.pairs(_TWO_WORDS[:1], _TWO_WORDS, 1)  # bit 0 is 2 bits from bit 64, 1 from none
        if left.tolist() != [0, 1] or right.tolist() != [0, 1] or [a.tolist() for a in wide] != [[0, 0], [0, 2]]:
            raise RuntimeError("the cross-pair kernel gives wrong results")


class CanonicalKernel(Loaded):
    """The loaded canonical-table filter (:func:`simdedup.kernels.source.pairs.canonical_pairs`)."""

    FUNCTIONS = ("canonical",)

    def keep(
        self,
        values: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        masks: np.ndarray,
        chosen: np.ndarray,
        level_ends: np.ndarray,
        limits: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of rows of ``values`` (``(n, words)``) canonical at every level (see the
        kernel; ``masks``: ``(blocks, words)``), in their order."""
        values = _rows(values)
        npairs, nlevels = len(left), len(level_ends)
        left, right = _some(np.array(left, dtype=np.int64), np.int64), _some(np.array(right, dtype=np.int64), np.int64)
        arrays = [
            _some(masks, np.uint64),
            _some(chosen, np.uint8),
            _some(level_ends, np.int64),
            _some(limits, np.int64),
        ]
        kept = self._functions["canonical"](  # kept in place: left and right are copies
            values.ctypes.data,
            len(values),
            values.shape[1],
            left.ctypes.data,
            right.ctypes.data,
            npairs,
            arrays[0].ctypes.data,
            arrays[1].ctypes.data,
            arrays[2].ctypes.data,
            nlevels,
            arrays[3].ctypes.data,
        )
        return left[:kept], right[:kept]

    def check(self) -> None:
        # Checked as the others: one level of blocks {bit 0} and {bit 1}, the table of the first,
        # one of them agreed on: rows 0b00 and 0b10 agree on block 0 only (kept), 0b00 and 0b01 on
        # block 1 only (not kept).
        left, right = self.keep(
            np.array([0b00, 0b10, 0b01], dtype=np.uint64),
            np.array([0, 0]),
            np.array([1, 2]),
            np.array([[0b01], [0b10]]),
            np.array([1, 0]),
            np.array([2]),
            np.array([1]),
        )
        if left.tolist() != [0] or right.tolist() != [1]:
            raise RuntimeError("the canonical-table filter gives wrong results")


class PackedKernel(Loaded):
    """The loaded packed-table kernel (:func:`simdedup.kernels.source.pairs.packed_pairs`)."""

    FUNCTIONS = ("packed",)

    def pairs(
        self,
        packed: np.ndarray,
        index_bits: int,
        values: np.ndarray,
        k: int,
        crowd: int,
        masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
        left, right = _growing(
            lambda left, right, capacity: self._functions["packed"](
                packed.ctypes.data,
                len(packed),
                index_bits,
                values.ctypes.data,
                words,
                k,
                crowd,
                left.ctypes.data,
                right.ctypes.data,
                capacity,
                runs.ctypes.data,
                counts.ctypes.data,
                held.ctypes.data,
                len(masks),
            )
        )
        crowded = runs[: 2 * int(counts[0])]  # as the last, complete call left them
        return left, right, crowded[0::2], crowded[1::2]

    def check(self) -> None:
        # Checked as the others: keys 3, 3, 5, 5, 5 above 3 row bits (rows 4, 1 | 0, 2, 3); with
        # crowd 2 the run of three is left; rows 4 and 1 (0b1, 0b1110) are 4 bits apart.
        packed = np.array([(3 << 3) | 4, (3 << 3) | 1, (5 << 3) | 0, (5 << 3) | 2, (5 << 3) | 3], dtype=np.uint64)
        values = np.array([0, 0b1110, 0, 0, 0b1], dtype=np.uint64)
        checks = [self.pairs(packed, 3, values, k, 2) for k in (4, 3)]
        checks.append(self.pairs(packed, 3, values, 4, 2, np.array([0b1000], dtype=np.uint64)))  # 0b1, 0b1110 differ
        checks.append(self.pairs(packed, 3, values, 4, 2, np.array([0b10000], dtype=np.uint64)))  # they agree: none
        # two words: of the pairs (0, 2) and (1, 2) within 1 bit, only (1, 2) differs in bit 64
        one_run = np.arange(3, dtype=np.uint64)
        checks.append(self.pairs(one_run, 2, _TWO_WORDS, 1, 8, np.array([[0, 1]], dtype=np.uint64)))
        if [[a.tolist() for a in c] for c in checks] != [
            [[4], [1], [2], [3]],
            [[], [], [2], [3]],
            [[4], [1], [2], [3]],
            [[], [], [2], [3]],
            [[1], [2], [], []],
        ]:
            raise RuntimeError("the packed-table kernel gives wrong results")


#: three 128-bit fingerprints for the kernels' checks: bit 0, bit 64, none
_TWO_WORDS = np.array([[1, 0], [0, 1], [0, 0]], dtype=np.uint64)
