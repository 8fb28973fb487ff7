"""The units kernel (numba source: :mod:`simdedup.kernels.source.units`): paragraphs, lines or
sentences of a batch of UTF-8 documents, as :func:`simdedup.spans.units.units` cuts them,
with each long enough unit's exact key, in one call.

It reads each character's properties from a table of every code point made from this
Python's own ``str`` methods and Unicode database (:func:`unit_table`, kept in the cache), so
it cuts as the reference does on this Python; the tests compare the two on random text.
"""

from __future__ import annotations

import hashlib
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import cache
from .exact import _address, _bytes_address
from .load import Loaded, _some

#: the flags of the table (as simdedup.kernels.source.units)
SPACE, BREAK, WORD, ALNUM, ALPHA, LOWER, UPPER, EXTEND = 1, 2, 4, 8, 16, 32, 64, 128
WIDE, CJK, HANGUL, CLOSER, CJK_END, LATIN_END, OPENER, BULLET = 256, 512, 1024, 2048, 4096, 8192, 16384, 32768
GOES_ON, ROMAN, CJK_NUMERAL, DIGIT = 65536, 131072, 262144, 524288
UNIT_CODES = {"paragraph": 0, "line": 1, "sentence": 2}
DONE, NEED_UNITS, NEED_LINES, INVALID = 0, 1, 2, 3
U_FIELDS = 7  # doc, byte start, byte end, char start, char end, end of its text, half-words
L_FIELDS = 6
#: lines of a paragraph the first call has room for (a paragraph of more takes a second call)
LINE_ROOM = 1 << 14
#: the candidates' MinHash (simdedup.spans.candidates): BANDS * ROWS bins, ROWS of them to a band
BANDS, ROWS = 20, 6
CODE_POINTS = 0x110000


def _made_table() -> np.ndarray:
    import simdedup.spans.units as reference

    table = np.zeros(CODE_POINTS, dtype=np.uint32)
    sets = (
        (reference.BREAKS, BREAK),
        (reference.CLOSERS, CLOSER),
        (reference.CJK_ENDS, CJK_END),
        (reference.LATIN_ENDS, LATIN_END),
        (reference.OPENERS, OPENER),
        (reference.BULLETS, BULLET),
        (reference.GOES_ON, GOES_ON),
        (reference.ROMAN, ROMAN),
        (reference.CJK_NUMERALS, CJK_NUMERAL),
        ("0123456789", DIGIT),
    )
    for chars, flag in sets:
        for c in chars:
            table[ord(c)] |= flag
    for ranges, flag in ((reference.CJK_RANGES, CJK), ((reference.HANGUL,), HANGUL), (reference.WIDE_RANGES, WIDE)):
        for low, high in ranges:
            table[low : high + 1] |= flag
    for low, high in reference.EXTENDER_RANGES:
        table[low : high + 1] |= EXTEND
    category = unicodedata.category
    for code in range(CODE_POINTS):
        c = chr(code)
        flags = 0
        if c.isspace():
            flags |= SPACE
        if c.isalnum():
            flags |= ALNUM | WORD
        if c.isalpha():
            flags |= ALPHA
        if c.islower():
            flags |= LOWER
        if c.isupper():
            flags |= UPPER
        if category(c) in ("Mn", "Me", "Mc"):
            flags |= EXTEND
        if flags:
            table[code] |= flags
    table[ord("_")] |= WORD
    return table


@lru_cache(maxsize=1)
def unit_table() -> np.ndarray:
    """Each code point's flags (uint32), made from this Python's ``str`` methods and Unicode
    database and the reference's character sets; kept in the cache (:mod:`simdedup.cache`)
    for this module, the reference, Python and the Unicode version (made, it takes about a
    second)."""
    import simdedup.spans.units as reference

    try:
        source = Path(__file__).read_bytes() + Path(reference.__file__).read_bytes()
    except OSError:  # no source to key the file by (a frozen install): made each time
        return _made_table()
    key = hashlib.sha256(b"\0".join((source, sys.version.encode(), unicodedata.unidata_version.encode()))).hexdigest()
    name = f"unit-table-{key[:24]}.u32"
    kept = cache.read(name)
    if kept is not None and len(kept) == 4 * CODE_POINTS:
        return np.frombuffer(kept, dtype=np.uint32).copy()
    table = _made_table()
    cache.write(name, table.tobytes())
    return table


@lru_cache(maxsize=1)
def abbreviations() -> np.ndarray:
    """The reference's abbreviations, each packed as its bytes in a little-endian uint64, sorted."""
    from ..spans.units import ABBREVIATIONS

    return np.array(sorted(int.from_bytes(word.encode(), "little") for word in ABBREVIATIONS), dtype=np.uint64)


@dataclass
class CutUnits:
    """The long enough units of a batch of documents: ``units`` (n, 7): document, byte start,
    byte end (in the batch's bytes), char start, char end (in the document), where its text
    ends in ``texts`` (its text with white space runs as one space; they are back to back) and
    its length in half-words; ``hashes`` (n, 2): the XXH3-128 of each text (low, high);
    ``keys`` (n, :data:`BANDS`) uint32: its MinHash's band keys (n, 0 without them).
    ``invalid``: the documents that are not UTF-8 (none of their units is given)."""

    units: np.ndarray
    texts: bytes
    hashes: np.ndarray
    keys: np.ndarray
    invalid: list[int]


class UnitsKernel(Loaded):
    """The loaded units kernel."""

    FUNCTIONS = ("units",)

    def cut(self, data: bytes, offsets: np.ndarray, unit: str, min_words: int, keys: bool = True) -> CutUnits:
        """The units of kind ``unit`` of the documents ``data[offsets[d]:offsets[d + 1]]`` of at
        least ``min_words`` words (:func:`simdedup.spans.units.weights`), with their band keys
        when ``keys``."""
        ndocs = len(offsets) - 1
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        table, packed = unit_table(), abbreviations()
        state = np.zeros(4, dtype=np.int64)
        line_room = LINE_ROOM
        unit_room = max(64, len(data) // 64)
        found, texts, hashes, band_keys, invalid = [], [], [], [], []
        scratch = np.empty((3, BANDS * ROWS), dtype=np.uint64)
        bands = BANDS if keys else 0
        text = np.empty(max(1, len(data)), dtype=np.uint8)
        codes = np.empty(10, dtype=np.int64)
        while True:
            lines = np.empty((line_room, L_FIELDS), dtype=np.int64)
            units = np.empty((unit_room, U_FIELDS), dtype=np.int64)
            out_hashes = np.empty((unit_room, 2), dtype=np.uint64)
            out_keys = np.empty((unit_room, max(bands, 1)), dtype=np.uint32)
            status = self._functions["units"](
                _bytes_address(data) if len(data) else _address(_some(np.zeros(0, np.uint8), np.uint8)),
                _address(offsets),
                ndocs,
                UNIT_CODES[unit],
                2 * min_words,
                _address(table),
                _address(packed),
                len(packed),
                _address(lines),
                line_room,
                _address(codes),
                _address(units),
                unit_room,
                _address(text),
                len(text),
                _address(text),
                _address(out_hashes),
                _address(scratch),
                scratch.shape[1],
                _address(out_keys),
                bands,
                _address(state),
            )
            n, size = int(state[1]), int(state[2])
            found.append(units[:n].copy())
            texts.append(text[:size].tobytes())
            hashes.append(out_hashes[:n].copy())
            band_keys.append(out_keys[:n, :bands].copy())
            if status == DONE:
                break
            resume = int(state[3])
            if status == INVALID:
                invalid.append(resume)
                resume += 1
            elif status == NEED_LINES:
                line_room *= 4
            else:
                unit_room *= 4
            state[:] = (resume, 0, 0, 0)
            if resume >= ndocs:
                break
        shift = np.cumsum([0] + [len(t) for t in texts[:-1]], dtype=np.int64)
        for block, at in zip(found, shift):
            block[:, 5] += at
        return CutUnits(
            np.concatenate(found),
            b"".join(texts),
            np.concatenate(hashes),
            np.concatenate(band_keys),
            invalid,
        )

    def check(self) -> None:
        from ..spans.units import units, weights

        text = "Dr. Smith left. He came back!\n\nNAME\n   ls - list things here and there and everywhere now\n第一句话。第二句！"
        data = text.encode()
        for unit in UNIT_CODES:
            cut = self.cut(data, np.array([0, len(data)]), unit, 1)
            spans = units(text, unit)
            expected = [s for s, w in zip(spans, weights(text, spans)) if w >= 1]
            if cut.units[:, 3:5].tolist() != [list(s) for s in expected]:
                raise RuntimeError("the units kernel gives wrong results")
