"""Exact similarities of documents whose text was read in this run (``dedup``, ``explain``).

Two measures, both set Jaccard similarities of 64-bit hashes:

- **resemblance** (Broder 1997; the default measure, ``--similarity resemblance``): the
  Jaccard of the documents' shingles, as the labelled sets' golds define a near-duplicate
  (text-dedup's and datatrove's too). Characters count as their NFKC form, lower-cased. A text
  is read as words or as characters by its script: one whose characters (white space apart)
  are at least :data:`CJK_SHARE` Han or kana, written without spaces between words, is read as
  characters, and its shingles are its 5-character substrings, white space deleted
  (punctuation counts: it is part of such text); any other is read as words (maximal runs of
  ``\\w``: a run of another script inside it, a Japanese heading in an English section, is one
  unit), and its shingles are runs of 3 words (punctuation is typography there and does not
  count). Two texts of characters are compared on their 5-character shingles, any other pair
  on its word 3-grams. Order counts: the same words in another order (a table drawn another
  way, a template filled again) are not a duplicate.
- **bag**: the weighted Jaccard of the documents' word counts (the ``words`` tokens:
  ``sum(min) / sum(max)`` over counts), as the set Jaccard of the elements
  ``(token, 0) .. (token, count - 1)``, the multiset the sketch samples (:mod:`simdedup.sketch`).
  Order and punctuation do not count. It is what verification falls back on for a document
  without exact sets, and the ``similarity`` of each member in the output.

``combined`` (not the default) also passes a pair whose bag similarity is at least
``min_similarity`` (0.88) and whose resemblance is near what edits scattered over its words
would leave: for machine-edited copies (``dev-synthetic``'s edit budget), not for a shingle
definition of near-duplicates, where it accepts pairs below the threshold by construction.

Tokens and shingles are cut by per-code-point tables (the tokenizer's ``\\w``, CJK ranges,
NFKC and lower-casing for the Basic Multilingual Plane; a code point beyond it is a token of its
own) and hashed by a compiled kernel (``simdedup.kernels.source.exact.exact_tokens``) that reads the UTF-8 itself, in one pass: no
Python work per token or per pair, no decoded copy of the text. The kernels are loaded as
:mod:`simdedup.kernels` loads its own (without importing numba); there is no Python path, so
``SIMDEDUP_FASTPATH=0`` does not turn them off.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .errors import MissingPackage, SimdedupError

MEASURES = ("combined", "bag", "resemblance")
DEFAULT_MEASURE = "resemblance"
DEFAULT_MIN_RESEMBLANCE = 0.8
#: a text whose characters (white space apart) are at least this share CJK (Han, kana) is read
#: as characters (5-character shingles), any other as words (3-word shingles): a mostly English
#: page with Japanese headings is one of characters too, where an English paragraph weighs by
#: its length, as it does to a reader (docs/quality.md)
CJK_SHARE = 0.01
#: combined: a pair that passes on its words needs a resemblance at most this far below the one
#: that edits scattered over its words would leave (:func:`scattered_resemblance`)
BAG_MARGIN = 0.15
#: evidence by size: a pair whose smaller document has n shingles needs a resemblance of
#: ``1 - (1 - t) * n / (n + EVIDENCE_GRAMS)`` for a threshold t (:func:`needed`; at 8, 0.857
#: at 20 shingles for 0.8). Chosen by the minimum over the dev sets: 0, the measure is exact
#: and a raised threshold only loses pairs of the golds (dev-short-pkg 0.993 at 0, 0.945 at 8;
#: docs/quality.md)
EVIDENCE_GRAMS = 0.0
#: texts kept for at most this many bytes of memory in all (1 to 4 per character);
#: documents read after that, and documents of more than MAX_DOCUMENT_CHARS characters, are
#: verified with their sketches. The exact sets (12 bytes per distinct word, 8 per distinct
#: shingle) are made for the documents of candidate pairs only.
BUDGET_BYTES = 2 << 30
MAX_DOCUMENT_CHARS = 4 << 20

# kinds of code points (as simdedup.kernels.source.exact): a separator, part of a run of letters and
# digits, a token of its own that is a word (a CJK character) or punctuation (a token for
# resemblance only)
_SPACE, _RUN, _ONE_WORD, _ONE_PUNCT = 0, 1, 2, 3
_BMP = 0x10000
# the characters of scripts written without spaces between words: kana and Han ideographs (after
# NFKC, which maps the compatibility ideographs onto the unified ones); beyond the BMP, the kernel
# counts the ideographs of planes 2 and 3
_CJK_CHARACTERS = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
_CJK = (*_CJK_CHARACTERS, (0xAC00, 0xD7AF))  # and Hangul: a word token each
# flags of a code point in the shingles' half of the tables (as simdedup.kernels.source.exact)
_S_SPACE, _S_WORD, _S_CJK = 1, 2, 4


#: how texts are folded before their words and shingles are cut (flags): to lower case (always:
#: the measure is the same whatever the tokenizer folds), and Chinese as readers see it (opt-in,
#: ``--fold chinese``: traditional characters as simplified ones, by OpenCC's tables, and
#: CJK punctuation as ASCII)
FOLD_CASE, FOLD_CHINESE = 1, 2
DEFAULT_FOLDING = FOLD_CASE
FOLDS = ("chinese",)


def folding_of(fold: str | None = None) -> int:
    """The folding flags of the measure with ``--fold``."""
    return FOLD_CASE | (FOLD_CHINESE if fold == "chinese" else 0)


@lru_cache(maxsize=4)
def _table_address(folding: int) -> int:
    return _tables(folding).__array_interface__["data"][0]


@lru_cache(maxsize=4)
def _tables(folding: int) -> np.ndarray:
    """The kernel's entries of each BMP code point (uint32), words' then shingles': the code
    point it counts as in words (folded by ``folding``: its lower case, when that is one code
    point) << 2 | its kind, and in shingles (its NFKC form, then folded, each when one code
    point) << 3 | its flags (white space, word character, CJK). Kept in the cache
    (:mod:`simdedup.cache`) for this module, Python and Unicode version (and OpenCC's, folding
    Chinese): made, it takes about 50 ms, a tenth of a small run."""
    import hashlib
    import unicodedata

    from . import cache

    folding = int(folding)
    try:
        source = Path(__file__).read_bytes()
    except OSError:  # no source to key the file by (a frozen install): made each time
        return _made_tables(folding)
    versions = [sys.version, unicodedata.unidata_version]
    if folding & FOLD_CHINESE:
        versions.append(_opencc_version())
    key = hashlib.sha256(b"\0".join((source, *(v.encode() for v in versions)))).hexdigest()
    name = f"exact-table-{folding}-{key[:24]}.u32"
    kept = cache.read(name)
    if kept is not None and len(kept) == 8 * _BMP:
        return np.frombuffer(kept, dtype=np.uint32).copy()
    table = _made_tables(folding)
    cache.write(name, table.tobytes())
    return table


#: CJK punctuation as ASCII, with --fold chinese (full-width forms are NFKC's already)
CHINESE_PUNCTUATION = {
    "。": ".", "．": ".", "、": ",", "，": ",", "；": ";", "：": ":", "？": "?", "！": "!",
    "「": '"', "」": '"', "『": '"', "』": '"', "“": '"', "”": '"', "‘": "'", "’": "'",
    "《": "<", "》": ">", "〈": "<", "〉": ">", "【": "[", "】": "]", "〔": "[", "〕": "]",
    "（": "(", "）": ")", "—": "-", "－": "-", "～": "~", "…": ".", "·": ".", "・": ".",
}  # fmt: skip


def _opencc_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from .optional import install_hint

    try:
        return version("opencc")
    except PackageNotFoundError:
        raise MissingPackage(f"--fold chinese needs OpenCC's tables: {install_hint('opencc')}") from None


def check_fold(fold: str) -> None:
    """Raises ValueError for an unknown fold, SimdedupError when what it needs is missing."""
    if fold not in FOLDS:
        raise ValueError(f"--fold must be {' or '.join(FOLDS)}, not {fold!r}")
    _opencc_version()


def chinese_folds() -> dict[str, str]:
    """Each BMP character that folding Chinese changes, and what it becomes: a traditional (or
    Taiwan or Hong Kong variant) character as its simplified one, character by character, by
    OpenCC's ``t2s``, ``tw2s`` and ``hk2s`` tables; CJK punctuation as ASCII."""
    _opencc_version()
    import opencc

    converters = [opencc.OpenCC(name) for name in ("t2s", "tw2s", "hk2s")]
    folds = {}
    for low, high in _CJK_CHARACTERS:
        for code in range(low, high + 1):
            c = chr(code)
            for converter in converters:
                simple = converter.convert(c)
                if simple != c and len(simple) == 1:
                    folds[c] = simple
                    break
    # Folded once, a text must read as its folded copy does: a fold's target that folds again
    # (麼 as 么, 么 as 幺 by the Hong Kong table) is followed to its end.
    for c, folded in folds.items():
        seen = {c}
        while folded in folds and folded not in seen:
            seen.add(folded)
            folded = folds[folded]
        folds[c] = folded
    return {**folds, **CHINESE_PUNCTUATION}


def _made_tables(folding: int) -> np.ndarray:
    """:func:`_tables` made from this Python's own ``str`` methods and Unicode database: the word
    entries of the BMP's code points, then their shingle entries."""
    import unicodedata

    lowercase = bool(folding & FOLD_CASE)
    folds = chinese_folds() if folding & FOLD_CHINESE else {}
    chars = [chr(c) for c in range(_BMP)]
    word = np.array([c.isalnum() or c == "_" for c in chars])
    space = np.array([c.isspace() for c in chars])
    kind = np.where(word, _RUN, np.where(space, _SPACE, _ONE_PUNCT))
    for low, high in _CJK:  # each its own token; a word unless punctuation
        kind[low : high + 1] = np.where(kind[low : high + 1] == _ONE_PUNCT, _ONE_PUNCT, _ONE_WORD)
    codes = np.arange(_BMP)
    if lowercase:
        codes = np.array([ord(low) if len(low := c.lower()) == 1 else ord(c) for c in chars])
    for c, folded in folds.items():  # a word's characters fold as the shingles' do
        codes[ord(c)] = ord(folded)
    shingle_chars = []
    for c in chars:
        try:
            normal = unicodedata.normalize("NFKC", c)
        except ValueError:  # not a character (lone surrogates): itself
            normal = c
        normal = normal if len(normal) == 1 else c  # an expansion (a ligature, "..."): the code point itself
        normal = folds.get(normal, normal)
        low = normal.lower() if lowercase else normal
        shingle_chars.append(low if len(low) == 1 else normal)
    flags = np.array(
        [
            (_S_SPACE if c.isspace() else 0)
            | (_S_WORD if c.isalnum() or c == "_" else 0)
            | (_S_CJK if any(low <= ord(c) <= high for low, high in _CJK_CHARACTERS) else 0)
            for c in shingle_chars
        ]
    )
    shingle_codes = np.array([ord(c) for c in shingle_chars])
    return np.concatenate(((codes << 2 | kind), (shingle_codes << 3 | flags))).astype(np.uint32)


@dataclass
class ExactSets:
    """One document's distinct word hashes (sorted) with their counts, its distinct word 3-gram
    hashes (sorted) and, for a text of characters, its distinct 5-character shingle hashes
    (sorted; empty for a text of words)."""

    words: np.ndarray  # uint64
    counts: np.ndarray  # uint32
    grams: np.ndarray  # uint64
    chars: np.ndarray  # uint64

    @property
    def nbytes(self) -> int:
        return self.words.nbytes + self.counts.nbytes + self.grams.nbytes + self.chars.nbytes


@dataclass
class KeptText:
    """A document's text kept for exact verification: its sets are made only if it is in a
    candidate pair (:meth:`sets`)."""

    text: str | bytes  # bytes: UTF-8 as the kernel read it (lone surrogates as ``surrogatepass`` writes them)
    folding: int = DEFAULT_FOLDING  # FOLD_CASE, FOLD_CHINESE

    @property
    def nbytes(self) -> int:
        """Memory the text takes (1 to 4 bytes per character for a str)."""
        return len(self.text) if isinstance(self.text, bytes) else sys.getsizeof(self.text)

    def utf8(self) -> bytes:
        return self.text if isinstance(self.text, bytes) else self.text.encode("utf-8", "surrogatepass")

    def digest(self) -> int:
        """A 64-bit hash of the text (documents with equal texts have equal sets)."""
        import xxhash

        return xxhash.xxh3_64_intdigest(self.utf8()) or 1

    def sets(self) -> ExactSets | None:
        return exact_sets(self.text, self.folding)


@dataclass
class HeldText:
    """A document's text kept by the worker process that read it (``dedup -j N``): which one
    (``holder``, its process id) under which ``key`` (-1: not kept, over the memory budget),
    its :meth:`KeptText.digest` and :attr:`KeptText.nbytes`. Its sets are made there
    (:class:`simdedup.run.TextsInWorkers`): the text never travels."""

    holder: int
    key: int
    text_digest: int
    nbytes: int

    def __reduce__(self) -> tuple:
        # the fields as a tuple: one made in a worker per record unpickles in the parent about
        # 2 us sooner than as pickle's default, the state as a dict
        return HeldText, (self.holder, self.key, self.text_digest, self.nbytes)

    def digest(self) -> int:
        return self.text_digest


@dataclass
class SetsBlock:
    """The exact sets of several documents as an :class:`ExactIndex` keeps them: hashes back
    to back, each document's numbers of distinct words, of shingles (word 3-grams, 5-character
    shingles) and of word tokens (0 for a document without sets, whose ``has`` is False)."""

    words: np.ndarray  # uint64
    counts: np.ndarray  # uint32
    grams: np.ndarray  # uint64
    has: np.ndarray  # bool
    word_sizes: np.ndarray  # int64
    gram_sizes: np.ndarray  # (n, 2) int64
    totals: np.ndarray  # int64

    def numbers(self) -> "SetsBlock":
        """The block without its hashes: what the index that takes them is laid out by."""
        empty = np.empty(0, dtype=np.uint64)
        return SetsBlock(empty, empty.astype(np.uint32), empty, self.has, self.word_sizes, self.gram_sizes, self.totals)


class IndexLayout:
    """Where each document's sets go in an :class:`ExactIndex` whose sets were made elsewhere
    (by the worker processes that read the texts, :class:`simdedup.run.TextsInWorkers`):
    document ``d``'s are row ``rows[d][1]`` of block ``rows[d][0]`` (None: no sets), of which
    ``blocks`` are the numbers (:meth:`SetsBlock.numbers`). :attr:`runs` says, for each block,
    which runs of its rows go where (:func:`place_runs`); :attr:`words` and :attr:`grams` are
    the arrays' lengths."""

    def __init__(self, blocks: list["SetsBlock"], rows: list[tuple[int, int] | None]):
        n = len(rows)
        block_of = np.array([-1 if r is None else r[0] for r in rows], dtype=np.int64)
        row_of = np.array([-1 if r is None else r[1] for r in rows], dtype=np.int64)
        self.has = np.zeros(n, dtype=bool)
        self.word_sizes, self.totals = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self.gram_sizes = np.zeros((n, 2), dtype=np.int64)
        for b, block in enumerate(blocks):
            mine = np.flatnonzero(block_of == b)
            self.has[mine], self.word_sizes[mine] = block.has[row_of[mine]], block.word_sizes[row_of[mine]]
            self.gram_sizes[mine], self.totals[mine] = block.gram_sizes[row_of[mine]], block.totals[row_of[mine]]
        word_at, gram_at = _offsets(self.word_sizes), _offsets(self.gram_sizes.sum(axis=1))
        self.words, self.grams = int(word_at[-1]), int(gram_at[-1])
        # runs: documents in a row from one block, its rows in a row
        starts = np.flatnonzero(
            np.concatenate(([True], (block_of[1:] != block_of[:-1]) | (row_of[1:] != row_of[:-1] + 1)))
        ).tolist()
        self.runs: list[list[tuple[int, int, int, int]]] = [[] for _ in blocks]
        for start, end in zip(starts, [*starts[1:], n]):
            b = int(block_of[start])
            if b >= 0 and word_at[end] > word_at[start]:
                self.runs[b].append(
                    (int(row_of[start]), int(row_of[end - 1]) + 1, int(word_at[start]), int(gram_at[start]))
                )

    def index(self, words: np.ndarray, counts: np.ndarray, grams: np.ndarray) -> "ExactIndex":
        """The index, its hashes in these arrays (every run placed)."""
        return ExactIndex.of(SetsBlock(words, counts, grams, self.has, self.word_sizes, self.gram_sizes, self.totals))


def place_runs(
    block: "SetsBlock", runs: list[tuple[int, int, int, int]], words: np.ndarray, counts: np.ndarray, grams: np.ndarray
) -> None:
    """Copy the hashes of rows ``first`` to ``last`` of ``block`` to ``words`` and ``counts``
    from ``word_at`` and to ``grams`` from ``gram_at``, for each run ``(first, last, word_at,
    gram_at)`` (:attr:`IndexLayout.runs`)."""
    word_at, gram_at = _offsets(block.word_sizes).tolist(), _offsets(block.gram_sizes.sum(axis=1)).tolist()
    for first, last, to_words, to_grams in runs:
        w0, w1, g0, g1 = word_at[first], word_at[last], gram_at[first], gram_at[last]
        words[to_words : to_words + w1 - w0] = block.words[w0:w1]
        counts[to_words : to_words + w1 - w0] = block.counts[w0:w1]
        grams[to_grams : to_grams + g1 - g0] = block.grams[g0:g1]


def exact_sets(text: str | bytes, folding: int = DEFAULT_FOLDING) -> ExactSets | None:
    """The exact sets of a text (bytes: UTF-8, lone surrogates as ``surrogatepass`` writes them),
    or None when it has no word token. Bytes that are not such UTF-8 raise the
    UnicodeDecodeError that decoding them raises."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    found = exact_kernel().sets(data, _tables(folding), CJK_SHARE)
    if isinstance(found, int):
        data.decode("utf-8", "surrogatepass")  # raises the decoder's error at that byte
    words, counts, grams, chars = found  # type: ignore[misc]
    return ExactSets(words, counts, grams, chars) if len(words) else None


def exact_kernel() -> Any:
    """The compiled kernels (:class:`simdedup.kernels.exact.ExactKernel`).

    Raises:
        ExactUnavailable: they cannot be loaded here (numba or llvmlite cannot make them).
    """
    from .kernels.exact import ExactKernel

    kernel = ExactKernel.loaded()
    if kernel is None:
        raise ExactUnavailable(
            "exact similarities need compiled kernels, which numba or llvmlite cannot make here (short of memory?)"
        )
    return kernel


class ExactUnavailable(SimdedupError, RuntimeError):
    """The exact-similarity kernels cannot be loaded: before a run, the sketches verify instead;
    in a worker of a run under way (one that the machine's limits keep from loading them), the
    run ends in one line."""


#: Upper bounds (:meth:`ExactIndex.upper_bounds`) are made when a call asks for at least this
#: many pairs and twice as many as there are documents with sets: a merge per pair then costs
#: more than a pass over every document.
BOUND_AFTER_PAIRS = 4096
#: buckets of the upper bounds (2 bytes each per document and kind): on real-en 256 leave
#: 20,455 of the 1,701,388 candidate pairs to merge (64 left 184k and 512 17k of the bag's and
#: the shingles' before); fewer where the documents' counts of one kind would take more than
#: BOUND_BYTES
BOUND_BUCKETS = 256
BOUND_BYTES = 128 << 20


#: texts whose sets are made together (:meth:`_IndexArrays.flush`): about this many bytes of them
TEXTS_BYTES = 1 << 20


#: the room an index's arrays start with, in address space (glibc maps blocks of 32 MiB or
#: more apart from its heap, whatever it has freed before)
START_BYTES = 64 << 20


class _Growing:
    """An array appended to in place: it grows by half again as it fills (``realloc``, which
    moves large blocks by remapping their pages, not by copying them), so the arrays an index
    is made of are never held twice. It starts as a large block, beyond what the allocator
    keeps in its heap: only the pages written take memory, and a block in the heap would
    leave a free copy there at each step of its growth."""

    def __init__(self, dtype: Any):
        self.array = np.empty(START_BYTES // np.dtype(dtype).itemsize, dtype=dtype)
        self.address = self.array.__array_interface__["data"][0]  # where it is, until it grows
        self.size = 0

    def room(self, extra: int) -> np.ndarray:
        """The array, with room for ``extra`` more values after :attr:`size` (no view of it may
        outlive the next call)."""
        end = self.size + extra
        if end > len(self.array):
            self.array.resize(max(end, len(self.array) * 3 // 2), refcheck=False)
            self.address = self.array.__array_interface__["data"][0]
        return self.array

    def put(self, values: np.ndarray) -> None:
        """``values`` written after :attr:`size` (which the caller then moves on)."""
        self.room(len(values))[self.size : self.size + len(values)] = values

    def done(self) -> np.ndarray:
        self.array.resize(self.size, refcheck=False)
        return self.array


class _IndexArrays:
    """The arrays of an :class:`ExactIndex` as they fill, a document at a time."""

    def __init__(self) -> None:
        self.words, self.counts, self.grams = _Growing(np.uint64), _Growing(np.uint32), _Growing(np.uint64)
        self.has: list[bool] = []
        self.word_sizes: list[int] = []
        self.gram_sizes: list[tuple[int, int]] = []  # word 3-grams, 5-character shingles
        self.totals: list[int] = []
        self._kernel: Any = None
        self._pending: list[bytes | None] = []  # texts whose sets are still to make, and documents without
        self._pending_bytes = 0
        self._folding = DEFAULT_FOLDING

    def add(self, document: ExactSets | KeptText | None) -> None:
        if isinstance(document, KeptText):
            self._add_text(document)
            return
        if document is None and self._pending:  # in its place among the texts
            self._pending.append(None)
            return
        self.flush()
        self.has.append(document is not None)
        if document is not None:
            self.words.put(document.words)
            self.counts.put(document.counts)
            self.grams.put(np.concatenate((document.grams, document.chars)))
            self._added(
                len(document.words), len(document.grams), len(document.chars), int(document.counts.sum(dtype=np.int64))
            )

    def _add_text(self, kept: KeptText) -> None:
        """A text whose sets are made with the next :data:`TEXTS_BYTES` of texts (:meth:`flush`)."""
        if self._pending and kept.folding != self._folding:
            self.flush()
        self._folding = kept.folding
        data = kept.utf8()
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= TEXTS_BYTES:
            self.flush()

    def flush(self) -> None:
        """The sets of the texts added since the last call, made in one go where they go (at
        the end of the index's arrays: no copy of them, no memory per document)."""
        if not self._pending:
            return
        if self._kernel is None:
            self._kernel = exact_kernel()
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        texts = [text for text in pending if text is not None]
        data = texts[0] if len(texts) == 1 else b"".join(texts)
        offsets = _offsets(np.array([len(t) for t in texts], dtype=np.int64))
        room = len(data) + len(texts)
        words, counts, grams = self.words.room(room), self.counts.room(room), self.grams.room(2 * room)
        table = _tables(self._folding)
        found, tokens = self._kernel.sets_many(
            data,
            offsets,
            table,
            CJK_SHARE,
            words,
            counts,
            grams,
            self.words.size,
            self.grams.size,
            (_table_address(self._folding), self.words.address, self.counts.address, self.grams.address),
        )
        if isinstance(found, int):
            texts[found].decode("utf-8", "surrogatepass")  # raises the decoder's error at that byte
        made = zip(found.tolist(), tokens.tolist())  # type: ignore[union-attr]
        for text in pending:
            if text is None:
                self.has.append(False)
                continue
            (n_words, n_grams, n_chars), total = next(made)
            self.has.append(n_words > 0)  # no word: no sets, as exact_sets
            if n_words:
                self._added(n_words, n_grams, n_chars, total)  # a word's count is its tokens: they total the tokens

    def block(self) -> "SetsBlock":
        """The sets added, as one block with each document's numbers (0 for one without sets):
        the arrays are handed over, nothing is added after."""
        self.flush()
        has = np.array(self.has, dtype=bool)
        word_sizes, gram_sizes, totals = (
            np.zeros(len(has), dtype=np.int64),
            np.zeros((len(has), 2), dtype=np.int64),
            np.zeros(len(has), dtype=np.int64),
        )
        word_sizes[has] = self.word_sizes
        gram_sizes[has] = np.array(self.gram_sizes, dtype=np.int64).reshape(-1, 2)
        totals[has] = self.totals
        return SetsBlock(self.words.done(), self.counts.done(), self.grams.done(), has, word_sizes, gram_sizes, totals)

    def _added(self, n_words: int, n_grams: int, n_chars: int, total: int) -> None:
        self.words.size += n_words
        self.counts.size += n_words
        self.grams.size += n_grams + n_chars
        self.word_sizes.append(n_words)
        self.gram_sizes.append((n_grams, n_chars))
        self.totals.append(total)


def sets_block(sets: Iterable[ExactSets | KeptText | None]) -> "SetsBlock":
    """The sets of each document (as :class:`ExactIndex` takes them, one at a time) in one block."""
    arrays = _IndexArrays()
    for document in sets:
        arrays.add(document)
    return arrays.block()


def _offsets(sizes: np.ndarray) -> np.ndarray:
    """Where each document's run starts, and the end."""
    return np.concatenate(([0], np.cumsum(sizes)))


class ExactIndex:
    """The exact sets of many documents, to compute both measures for many pairs at once: each
    kind is one array of the documents' sorted hashes back to back, with a weight per hash
    (word counts; 1 for 3-grams), and a pair's shared weight is a merge of its two runs
    (compiled): the weighted Jaccard ``sum(min) / (total a + total b - sum(min))``.

    Template families (man pages, versions of one module) give hundreds of thousands of
    candidate pairs that share most of their words yet fail the test. :meth:`upper_bounds`
    settles most of them without a merge.
    """

    def __init__(self, sets: Iterable[ExactSets | KeptText | None]):
        """``sets``: each document's exact sets, or its kept text to make them from (straight
        into the index's arrays), or None; taken one at a time, so that an iterator that makes
        or lets go of them as it goes never has them all held twice."""
        self._take(sets_block(sets))

    @classmethod
    def of(cls, block: "SetsBlock") -> "ExactIndex":
        """The index of the documents of ``block``, its arrays taken as they are."""
        index = cls.__new__(cls)
        index._take(block)
        return index

    def _take(self, block: "SetsBlock") -> None:
        self.n = len(block.has)
        self.has = block.has
        gram_sizes = block.gram_sizes  # two runs a document: words', characters'
        self.kinds = {
            "bag": (block.words, block.counts, _offsets(block.word_sizes), block.totals),
            "grams": (block.grams, np.empty(0, dtype=np.uint32), _offsets(gram_sizes.ravel()), gram_sizes.ravel()),
        }
        self.texts_of_characters = gram_sizes[:, 1] > 0  # compared on 5-character shingles with another
        self._buckets: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.merged = 0  # pairs merged so far (kinds apart)

    def jaccard(self, kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Exact (weighted) Jaccard of documents ``a[i]`` and ``b[i]`` (NaN where one has no sets)."""
        return self.measures(a, b, (kind,))[0]

    def measures(self, a: np.ndarray, b: np.ndarray, kinds: tuple[str, ...] = ("bag", "grams")) -> list[np.ndarray]:
        """:meth:`jaccard` of each kind, in one pass over the pairs."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        pairs = len(a)
        known = np.flatnonzero(self.has[a] & self.has[b])
        a, b = a[known], b[known]
        self.merged += len(known)
        found = []
        for kind in kinds:
            hashes, weights, offsets, totals = self.kinds[kind]
            x, y = self.shingle_runs(a, b) if kind == "grams" else (a, b)
            shared = exact_kernel().shared((hashes, weights, offsets), x, y, kind == "bag")[: len(x)]
            union = totals[x] + totals[y] - shared
            out = np.full(pairs, np.nan)
            out[known] = np.divide(shared, union, out=np.zeros(len(shared)), where=union > 0)
            found.append(out)
        return found

    def shingle_runs(
        self, a: np.ndarray, b: np.ndarray, runs: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The runs of shingles (of ``kinds["grams"]``, two a document) each pair is compared on:
        both documents' 5-character shingles when both are texts of characters, else their word
        3-grams (``simdedup.kernels.source.exact._shingle_runs``); ``runs``: what to give for
        each document's word run and character run instead of their numbers."""
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        words, characters = (2 * np.arange(self.n), 2 * np.arange(self.n) + 1) if runs is None else runs
        x, y = words[a], words[b]  # word 3-grams, the common case
        if self.texts_of_characters.any():
            both = np.flatnonzero(self.texts_of_characters[a])
            both = both[self.texts_of_characters[b[both]]]
            x[both], y[both] = characters[a[both]], characters[b[both]]
        return x, y

    def shingles(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The number of shingles of the smaller document of each pair, as it is compared."""
        x, y = self.shingle_runs(a, b)
        sizes = self.kinds["grams"][3]
        return np.minimum(sizes[x], sizes[y])

    def verdicts(
        self, a: np.ndarray, b: np.ndarray, measure: str, min_similarity: float, min_resemblance: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(known, passes)`` of each pair under :func:`passes`, exactly: whether both have sets
        (else it does not pass here), and whether it passes, the shingles merged only as far as
        each verdict needs (:meth:`jaccard` gives the exact values)."""
        from .kernels.exact import MEASURE_CODES

        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        both = self.has[a] & self.has[b]
        known = np.flatnonzero(both)
        self.merged += len(known)
        ok = np.zeros(len(a), dtype=bool)
        _, ok[known] = exact_kernel().verdicts(
            self.kinds["bag"],
            self.kinds["grams"],
            a[known],
            b[known],
            MEASURE_CODES[measure],
            min_similarity,
            min_resemblance,
            BAG_MARGIN,
            EVIDENCE_GRAMS,
        )
        return both, ok

    def bounds_pay(self, pairs: int) -> bool:
        """Whether :meth:`upper_bounds` are made, or worth making for a call with this many pairs."""
        if pairs < 64:  # a few merges cost less than the calls
            return False
        return bool(self._buckets) or (pairs >= BOUND_AFTER_PAIRS and pairs >= 2 * int(self.has.sum()))

    def upper_bounds(self, kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """An upper bound of ``jaccard(kind, a, b)`` for each pair (NaN where one has no sets),
        exact and cheap: each document's elements (a word counted c times is c elements)
        counted in :data:`BOUND_BUCKETS` buckets by their hashes' top bits (fewer when the
        documents' counts would take more than :data:`BOUND_BYTES`). An element two documents
        hold is in the same bucket of both, so they share at most the smaller count of each
        bucket. Template families share many words; what fails their pairs is what they do
        not share, and that shows here."""
        if kind not in self._buckets:
            hashes, weights, offsets, totals = self.kinds[kind]
            units = np.flatnonzero(self.has)
            if kind == "grams":  # the runs of both kinds of shingles, as documents of their own
                units = np.stack((2 * units, 2 * units + 1), axis=1).ravel()
            row = np.full(len(totals), -1, dtype=np.int64)
            row[units] = np.arange(len(units))
            runs = (hashes, weights, offsets)
            fit = max(2, min(BOUND_BUCKETS, BOUND_BYTES // (2 * max(1, len(units)))))
            buckets = 1 << (fit.bit_length() - 1)  # a power of two
            counts = exact_kernel().bucket_counts(runs, units, kind == "bag", totals, buckets)
            self._buckets[kind] = (row, counts, totals[units].astype(np.int64))
        row, counts, sizes = self._buckets[kind]
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        out = np.full(len(a), np.nan)
        known = np.flatnonzero(self.has[a] & self.has[b])
        if len(known) < len(a):
            a, b = a[known], b[known]
        if kind == "grams":  # each document's two rows, contiguous (a gather per pair from each)
            x, y = self.shingle_runs(a, b, runs=(np.ascontiguousarray(row[0::2]), np.ascontiguousarray(row[1::2])))
        else:
            x, y = row[a], row[b]
        out[known] = exact_kernel().bucket_bounded(counts, sizes, x, y)
        return out


def needed(threshold: float, grams: np.ndarray | float) -> np.ndarray | float:
    """The resemblance a pair needs for ``threshold`` when its smaller document has ``grams``
    shingles: the threshold itself for a long document, more for a short one when
    :data:`EVIDENCE_GRAMS` asks evidence of it."""
    with np.errstate(divide="ignore"):  # no shingle at all: the threshold is 1
        return 1.0 - (1.0 - threshold) / (1.0 + EVIDENCE_GRAMS / np.asarray(grams, dtype=np.float64))


def scattered_resemblance(bag: np.ndarray | float) -> np.ndarray | float:
    """The resemblance of two texts whose words differ by scattered substitutions, at this bag
    similarity: a share ``e = (1 - bag) / (1 + bag)`` of words substituted leaves ``(1 - e)^3``
    of the 3-grams. Reflowed, re-punctuated or lightly edited copies are near it; the same
    words in another order (a table drawn another way, a template filled again, a module's
    functions reordered) are far below it."""
    kept = (2.0 * np.asarray(bag, dtype=np.float64) / (1.0 + bag)) ** 3
    return kept / (2.0 - kept)


def passes(
    measure: str,
    bag: np.ndarray,
    grams: np.ndarray,
    min_similarity: float,
    min_resemblance: float,
    fewer_grams: np.ndarray | float = np.inf,
) -> np.ndarray:
    """Whether pairs with these similarities are duplicates under ``measure``; a pair without a
    resemblance (NaN: no exact sets) is judged on ``bag`` alone. ``fewer_grams``: the number of
    3-grams of each pair's smaller document (:func:`needed`; by default, long documents: the
    thresholds as given, which no shorter pair passes more easily).

    ``combined``: the resemblance passes, or the bag passes and the resemblance is at most
    :data:`BAG_MARGIN` below :func:`scattered_resemblance` of the bag (a lower bound for that
    is ``min_similarity``'s, which the upper bounds of :mod:`simdedup.group` use)."""
    no_order = np.isnan(grams)
    if measure == "bag":
        return bag >= min_similarity
    resembles = grams >= needed(min_resemblance, fewer_grams)
    if measure == "resemblance":
        return np.where(no_order, bag >= min_similarity, resembles)
    ordered_enough = grams >= needed(scattered_resemblance(bag) - BAG_MARGIN, fewer_grams)
    combined = resembles | ((bag >= min_similarity) & ordered_enough)
    return np.where(no_order, bag >= min_similarity, combined)


def lowest_needed(measure: str, min_similarity: float, min_resemblance: float) -> float:
    """The lowest resemblance :func:`passes` accepts for a pair whose bag passes: what upper
    bounds of the 3-grams are compared with."""
    if measure != "combined":
        return min_resemblance
    return float(min(min_resemblance, scattered_resemblance(min_similarity) - BAG_MARGIN))


def may_pass(
    measure: str, most_bag: np.ndarray, most_grams: np.ndarray, min_similarity: float, min_resemblance: float
) -> np.ndarray:
    """Whether pairs whose similarities are at most these may pass :func:`passes`: the bag
    path's threshold rises with the bag, so an upper bound is compared with its lowest."""
    lowest = np.where(
        most_bag >= min_similarity, lowest_needed(measure, min_similarity, min_resemblance), min_resemblance
    )
    if measure == "bag":
        return most_bag >= min_similarity
    return np.where(np.isnan(most_grams), most_bag >= min_similarity, most_grams >= lowest)
