"""Exact similarities (:mod:`simdedup.similarity`; numba source: :mod:`simdedup.kernels.source.exact`
and :mod:`simdedup.kernels.source.bounds`). These have no Python path (``SIMDEDUP_FASTPATH=0``
leaves them on); where they cannot load, ``dedup`` verifies with sketches and says so."""

from __future__ import annotations

import ctypes

import numpy as np

from .load import Loaded, _some

#: the measures of :func:`simdedup.similarity.passes`, by number (for the linkage kernel)
MEASURE_CODES = {"combined": 0, "bag": 1, "resemblance": 2}


def _run_arrays(runs: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``(hashes, weights, offsets)`` of one kind of :class:`simdedup.similarity.ExactIndex`
    as the kernels read them."""
    return _some(runs[0], np.uint64), _some(runs[1], np.uint32), np.ascontiguousarray(runs[2], dtype=np.int64)


def _exact_arrays(bag: tuple, grams: tuple) -> list[np.ndarray]:
    """Both kinds of :class:`simdedup.similarity.ExactIndex` (hashes, weights, offsets, totals)
    as ``source.exact._exact_runs`` reads them: the bag's four, then the 3-grams' but their weights."""
    gram_hashes, _, gram_offsets = _run_arrays(grams)
    return [*_run_arrays(bag), _some(bag[3], np.int64), gram_hashes, gram_offsets, _some(grams[3], np.int64)]


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _bytes_address(data: bytes | bytearray | memoryview) -> int:
    """Where the buffer of ``data`` starts (the caller keeps ``data`` alive across the call)."""
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
    return int(np.frombuffer(data, dtype=np.uint8).ctypes.data) if len(data) else 0


class ExactKernel(Loaded):
    """The loaded kernels of exact similarities (:mod:`simdedup.similarity`): the exact tokens
    of a text, the distinct values of sorted hashes, pair merges and verdicts, and the upper
    bounds' bucket counts and bounds (``simdedup.kernels.source.exact`` and ``.bounds``)."""

    FUNCTIONS = (
        "exact-tokens",
        "exact-distinct",
        "exact-shared",
        "exact-buckets",
        "exact-bucket-bounded",
        "exact-verdicts",
    )
    FAST_PATH = False  # not a fast path but the only one: SIMDEDUP_FASTPATH=0 leaves it on

    def sets(self, data: bytes, table: np.ndarray, cjk_share: float) -> tuple[np.ndarray, ...] | int:
        """``(distinct word hashes, their counts (uint32), distinct word 3-gram hashes, distinct
        5-character shingle hashes)`` of a text in UTF-8, each sorted (the last empty for a text
        of words; ``cjk_share``: :data:`simdedup.similarity.CJK_SHARE`); or the byte where Python's
        decoder stops."""
        room = len(data) + 1
        words, counts, grams = (
            np.empty(room, dtype=np.uint64),
            np.empty(room, dtype=np.uint32),
            np.empty(2 * room, np.uint64),
        )
        found, tokens_or_stop = self.sets_many(
            data, np.array([0, len(data)]), table, cjk_share, words, counts, grams, 0, 0
        )
        if isinstance(found, int):
            return tokens_or_stop  # type: ignore[return-value]
        n_words, n_grams, n_chars = found[0].tolist()
        return (  # copies, not views of the whole buffers
            words[:n_words].copy(),
            counts[:n_words].copy(),
            grams[:n_grams].copy(),
            grams[n_grams : n_grams + n_chars].copy(),
        )

    def sets_many(
        self,
        data: bytes | bytearray | memoryview,
        offsets: np.ndarray,
        table: np.ndarray,
        cjk_share: float,
        words: np.ndarray,
        counts: np.ndarray,
        grams: np.ndarray,
        at_words: int,
        at_grams: int,
        bases: tuple[int, int, int, int] | None = None,
    ) -> tuple[np.ndarray, np.ndarray] | tuple[int, int]:
        """The sets of :meth:`sets` of texts held back to back in ``data`` (text ``t`` at
        ``offsets[t]:offsets[t + 1]``), written in place a text after the other: the distinct
        word hashes and their counts from ``words[at_words]`` and ``counts[at_words]``, the
        distinct word 3-gram hashes from ``grams[at_grams]``, each text's 5-character shingles
        after its 3-grams. ``words`` and ``counts`` need room there for ``len(data)`` and one
        per text, ``grams`` twice that (the tokens, before they are sorted and counted).

        Returns ``(numbers, tokens)``: an ``(n, 3)`` array of each text's numbers of distinct
        words, 3-grams and 5-character shingles (all 0 for a text without a word, which has no
        sets) and each text's number of word tokens; or ``(t, byte)`` for the first text that is
        not UTF-8 and the byte where Python's decoder stops in it.

        One kernel call cuts every text, numpy sorts each text's runs (several times faster than
        a compiled loop), and one call counts them; ``bases``: the addresses of ``table``,
        ``words``, ``counts`` and ``grams``, for a caller that keeps them."""
        n = len(offsets) - 1
        room = int(offsets[-1]) + n
        if (
            words.dtype != np.uint64
            or grams.dtype != np.uint64
            or counts.dtype != np.uint32
            or min(len(words) - at_words, len(counts) - at_words, (len(grams) - at_grams) // 2) < room
        ):
            raise ValueError("sets_many needs uint64 words and grams, uint32 counts, with room for the tokens")
        offsets = _some(offsets, np.int64)
        table_p, words_p, counts_p, grams_p = bases or (
            _address(table),
            _address(words),
            _address(counts),
            _address(grams),
        )
        words_p, counts_p, grams_p = words_p + 8 * at_words, counts_p + 4 * at_words, grams_p + 8 * at_grams
        sizes = np.empty(max(3 * n, 1), dtype=np.int64)
        bad = self._functions["exact-tokens"](
            _bytes_address(data), offsets.ctypes.data, n, table_p, cjk_share, words_p, grams_p, sizes.ctypes.data
        )
        if bad >= 0:
            return bad, int(sizes[3 * bad])
        raw = sizes[: 3 * n].reshape(n, 3)
        for start, (tokens, n_grams, n_chars) in zip((offsets[:-1] + np.arange(n)).tolist(), raw.tolist()):
            if tokens:  # in place; numpy sorts several times faster than a compiled loop
                words[at_words + start : at_words + start + tokens].sort()
                first = at_grams + 2 * start
                grams[first : first + n_grams].sort()
                if n_chars:
                    grams[first + n_grams : first + n_grams + n_chars].sort()
        numbers = np.empty(max(3 * n, 1), dtype=np.int64)
        self._functions["exact-distinct"](
            words_p, counts_p, grams_p, offsets.ctypes.data, n, sizes.ctypes.data, numbers.ctypes.data
        )
        return numbers[: 3 * n].reshape(n, 3), raw[:, 0].copy()

    def verdicts(
        self,
        bag: tuple,
        grams: tuple,
        left: np.ndarray,
        right: np.ndarray,
        measure: int,
        min_similarity: float,
        min_resemblance: float,
        floor: float,
        evidence: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(bag similarity, passes)`` of each pair of documents that both have exact sets
        (``bag`` and ``grams``: hashes, weights, offsets, totals, as
        :class:`simdedup.similarity.ExactIndex` keeps them), with the 3-grams merged only as far
        as the verdict needs."""
        left, right = _some(left, np.int64), _some(right, np.int64)
        arrays = _exact_arrays(bag, grams)
        similarity, passing = np.empty(len(left)), np.empty(len(left), dtype=np.uint8)
        self._functions["exact-verdicts"](
            *(a.ctypes.data for a in arrays),
            len(bag[2]) - 1,
            left.ctypes.data,
            right.ctypes.data,
            len(similarity),
            measure,
            min_similarity,
            min_resemblance,
            floor,
            evidence,
            similarity.ctypes.data,
            passing.ctypes.data,
        )
        return similarity, passing.astype(bool)

    def shared(self, runs: tuple, left: np.ndarray, right: np.ndarray, weighted: bool) -> np.ndarray:
        """For each pair, the weight (or number, without ``weighted``) of the hashes both runs
        hold; ``runs``: hashes, weights, offsets (as :class:`simdedup.similarity.ExactIndex`)."""
        hashes, weights, offsets = _run_arrays(runs)
        left, right = _some(left, np.int64), _some(right, np.int64)
        out = np.empty(len(left), dtype=np.int64)
        self._functions["exact-shared"](
            hashes.ctypes.data,
            weights.ctypes.data,
            offsets.ctypes.data,
            len(offsets) - 1,
            left.ctypes.data,
            right.ctypes.data,
            len(out),
            weighted,
            out.ctypes.data,
        )
        return out

    def bucket_counts(
        self, runs: tuple, units: np.ndarray, weighted: bool, totals: np.ndarray, buckets: int, limit: int = 0xFFFF
    ) -> np.ndarray:
        """A row per unit: the weight (or number) of its hashes in each of ``buckets`` buckets
        (a power of two) by their top bits, uint16; zero for a unit of ``limit`` or more
        elements in all (see ``source.bounds.exact_bucket_counts``)."""
        if buckets < 2 or buckets & (buckets - 1) or not 0 < limit <= 0xFFFF:
            raise ValueError("buckets must be a power of two from 2, limit from 1 to 65535")
        hashes, weights, offsets = _run_arrays(runs)
        units = _some(units, np.int64)
        counts = np.empty((max(len(units), 1), buckets), dtype=np.uint16)
        self._functions["exact-buckets"](
            hashes.ctypes.data,
            weights.ctypes.data,
            offsets.ctypes.data,
            len(offsets) - 1,
            units.ctypes.data,
            len(units),
            weighted,
            _some(totals, np.int64).ctypes.data,
            65 - buckets.bit_length(),
            buckets,
            limit,
            counts.ctypes.data,
        )
        return counts[: len(units)]

    def bucket_bounded(
        self,
        counts: np.ndarray,
        sizes: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        limit: int = 0xFFFF,
    ) -> np.ndarray:
        """An upper bound of the Jaccard of each pair of rows of ``counts`` (:meth:`bucket_counts`
        with this ``limit``; ``sizes``: each row's elements), from the smaller count of each
        bucket."""
        counts, sizes = _some(counts, np.uint16), _some(sizes, np.int64)
        left, right = _some(left, np.int64), _some(right, np.int64)
        out = np.empty(len(left), dtype=np.float64)
        self._functions["exact-bucket-bounded"](
            counts.ctypes.data,
            len(sizes),
            counts.shape[1],
            sizes.ctypes.data,
            limit,
            left.ctypes.data,
            right.ctypes.data,
            len(out),
            out.ctypes.data,
        )
        return out

    def check(self) -> None:
        # Checked as the others, with a table where every ASCII letter is a run of itself and a
        # word character, and the space a separator: "x y x" has two words (x twice), one
        # 3-gram; it shares all with itself.
        table = np.zeros(0x20000, dtype=np.uint32)
        table[:128] = np.arange(128, dtype=np.uint32) << 2 | 1
        table[0x10000 : 0x10000 + 128] = np.arange(128, dtype=np.uint32) << 3 | 2
        table[32], table[0x10000 + 32] = 0, 32 << 3 | 1
        words, counts, grams, chars = self.sets(b"x y x", table, 0.01)  # type: ignore[misc]
        doubled = (
            np.concatenate((words, words)),
            np.concatenate((counts, counts)),
            np.array([0, 2, 4]),
            np.array([3, 3]),
        )
        both_grams = (np.concatenate((grams, grams)), np.zeros(0), np.array([0, 1, 1, 2, 2]), np.array([1, 0, 1, 0]))
        same = self.verdicts(
            doubled, both_grams, np.array([0]), np.array([1]), MEASURE_CODES["combined"], 0.9, 0.9, 0.5, 0.0
        )
        buckets = self.bucket_counts(doubled, np.array([0, 1]), True, doubled[3], 4)
        if buckets.sum(axis=1).tolist() != [3, 3] or self.bucket_bounded(
            buckets, doubled[3], np.array([0]), np.array([1])
        ).tolist() != [1.0]:
            raise RuntimeError("the exact-similarity kernels give wrong results")
        if (
            len(words) != 2
            or sorted(counts.tolist()) != [1, 2]
            or len(grams) != 1
            or self.sets(b"\xff", table, 0.01) != 0
            or self.shared(doubled, np.array([0]), np.array([1]), True).tolist() != [3]
            or [a.tolist() for a in same] != [[1.0], [True]]
        ):
            raise RuntimeError("the exact-similarity kernels give wrong results")
