"""The compiled record scanner: fingerprint lines of simdedup's own spelling read in one pass.
It must read what the line-by-line reference reads, and take no line that the regular
expression path would not: on any other line the block goes to that path, which says what is
wrong where."""

import io
import json
import re
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fingerprint_files import SETTINGS, by_lines, columns_as_records, corpora, spelled

from simdedup.errors import SimdedupError
from simdedup.fingerprints import FingerprintRecord, columns, read_fingerprint_files
from simdedup.kernels.scan import RecordScanner

scanner = RecordScanner.loaded()
needs_scanner = pytest.mark.skipif(scanner is None, reason="no compiled kernels (numba) here")


@contextmanager
def scanning(on: bool):
    """Blocks of every size go to the scanner (on), or none do."""
    before = columns.SCAN_AFTER_BYTES
    columns.SCAN_AFTER_BYTES = 0 if on else 1 << 62
    try:
        yield
    finally:
        columns.SCAN_AFTER_BYTES = before


def read(data: bytes, on: bool, block_bytes: int = columns.BLOCK_BYTES):
    """``(records, lines)`` read from ``data``, or the error's text."""
    with scanning(on):
        try:
            got = read_fingerprint_files([("f", io.BytesIO(data))], block_bytes)
        except SimdedupError as exc:
            return f"{type(exc).__name__}: {exc}"
    return columns_as_records(got), got.lines.tolist(), got.bits


def respelled(line: str, style: str) -> str:
    return spelled(SimpleNamespace(to_json=lambda: line), style)


def template_of(line: str):
    return columns.Template.of(line.encode(), json.loads(line), "simhash")


@needs_scanner
@settings(max_examples=150, deadline=None)
@given(corpora())
def test_the_scanner_reads_canonical_lines_as_json_does(rows):
    lines = [r.to_json() for r in rows]
    template = template_of(lines[0])
    data = "".join(line + "\n" for line in lines[1:]).encode()
    found = template.scan(scanner, data, len(lines))
    if len({r.bytes is None for r in rows}) == 2:  # another spelling: the fields differ
        assert found is None
        return
    assert found is not None
    id_bytes, _, escaped, values, features, sizes, sketches = found
    ids = [json.loads(f'"{i}"') for i in id_bytes.decode().split("\n")[:-1]]
    expected = by_lines(data)
    assert ids == [r.id for r in expected]
    assert escaped.tolist() == [int("\\" in line.split('","')[0]) for line in lines[1:]]
    assert [sum(int(w) << (64 * j) for j, w in enumerate(v)) for v in values] == [r.simhash for r in expected]
    assert features.tolist() == [r.features for r in expected]
    assert sizes.tolist() == [-1 if r.bytes is None else r.bytes for r in expected]
    assert [s.tobytes() for s in sketches] == [r.sketch or b"" for r in expected]


@needs_scanner
@settings(max_examples=120, deadline=None)
@given(corpora(), st.sampled_from([1 << 25, 64, 300]))
def test_files_read_with_the_scanner_as_line_by_line(rows, block_bytes):
    data = "".join(r.to_json() + "\n" for r in rows).encode()
    records, lines, bits = read(data, True, block_bytes)
    assert records == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(data)]
    assert lines == list(range(1, len(rows) + 1)) and bits == rows[0].bits


def _block(n: int = 8, every_size: bool = False) -> list[str]:
    settings_ = {**SETTINGS, "sketch": 16}
    rows = [
        FingerprintRecord(
            f"d{i}\u00e9",
            (i * 0x9E3779B97F4A7C15) % 2**64,
            64,
            i * 13,
            settings_,
            None if i % 3 == 0 and not every_size else i * 1000 - 5000,
            bytes((i * 7 + j) % 256 for j in range(16)),
        )
        for i in range(n)
    ]
    return [r.to_json() for r in rows]


_FIELDS = {
    "id": r'"id": ?"([^"]*)"',
    "simhash": r'"simhash": ?"(\w+)"',
    "features": r'"features": ?(\d+)',
    "bytes": r'"bytes": ?(-?\d+)',
    "sketch": r'"sketch": ?"([\w-]+)"',
    "end": r"(\})$",
    "settings": r'"options": ?(\{[^}]*\})',
}


@needs_scanner
@settings(max_examples=600, deadline=None)
@given(st.data())
def test_a_changed_byte_reads_as_without_the_scanner(data):
    """A byte replaced, inserted or deleted in a field of a line after the first, or anywhere,
    in simdedup's spelling or another: the scanner takes the block only where the other readers
    give the same records, and errors stay theirs."""
    style = data.draw(st.sampled_from(["canonical", "jq", "pandas", "reversed"]))
    lines = [line if style == "canonical" else respelled(line, style) for line in _block()]
    number = data.draw(st.integers(1, len(lines) - 1))
    line = lines[number]
    field = data.draw(st.sampled_from([*_FIELDS, "anywhere"]))
    found = re.search(_FIELDS[field], line) if field != "anywhere" else None
    start, end = found.span(1) if found else (0, len(line))
    at = data.draw(st.integers(start, end))
    byte = data.draw(st.sampled_from(b'"\\{}:,-_ 0123456789aAfFgG\r\n\t x\x00\x1f\x7f\xc3\xa9\xff'))
    change = data.draw(st.sampled_from(["replace", "insert", "delete"]))
    encoded = line.encode()
    at = min(at, len(encoded) - (change != "insert"))
    changed = encoded[:at] + (b"" if change == "delete" else bytes([byte])) + encoded[at + (change != "insert") :]
    text = b"".join((changed if i == number else lines[i].encode()) + b"\n" for i in range(len(lines)))
    assert read(text, True) == read(text, False)


@needs_scanner
@settings(max_examples=100, deadline=None)
@given(corpora(), st.sampled_from(["jq", "pandas", "reversed"]), st.sampled_from([1 << 25, 300]))
def test_other_spellings_read_with_the_scanner_as_line_by_line(rows, style, block_bytes):
    text = "".join(spelled(r, style) + "\n" for r in rows).encode()
    records, lines, _ = read(text, True, block_bytes)
    assert records == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)]
    assert lines == list(range(1, len(rows) + 1))


@needs_scanner
def test_a_file_in_jq_spelling_is_read_by_the_scanner():
    """The scanner takes a whole jq-spelled block (it does not decline and leave it all to the
    other readers): its template is learnt from the block before."""
    lines = [respelled(line, "jq") for line in _block(400, every_size=True)]
    text = "".join(line + "\n" for line in lines).encode()
    reader = columns._ColumnReader(block_bytes=len(text) // 2)
    with scanning(True):
        reader.add_file("f", io.BytesIO(text))
    assert reader.template.scan(scanner, text, len(lines)) is not None  # it fits every line
    assert columns_as_records(reader.finish()) == [
        (r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)
    ]


@needs_scanner
@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"id":"\\q","simhash":"0000000000000001","bits":64,"features":1}', "f:3: not a JSON object"),
        ('{"id":"\\u00e9","simhash":"0000000000000001","bits":64,"features":1}', None),
        ('{"id":"x","simhash":"0000000000000001","bits":64,"features":1234567890123456789}', None),
        ('{"id":"x","simhash":"0000000000000001","bits":64,"features":12345678901234567890}', "f:3: field 'features'"),
        ('{"id":"\xff","simhash":"0000000000000001","bits":64,"features":1}', "f:3: not UTF-8 text"),
    ],
)
def test_lines_the_scanner_leaves_to_the_other_readers(line, expected):
    """An escape JSON does not have, 19 digits, bytes that are not UTF-8: with the scanner or
    without, the same records or the same one-line error naming the line."""
    lines = [f'{{"id":"a{i}","simhash":"000000000000000{i}","bits":64,"features":1}}' for i in range(4)]
    lines[2] = line
    data = "\n".join(lines).encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff") + b"\n"
    scanned = read(data, True)
    assert scanned == read(data, False)
    if expected is None:
        assert isinstance(scanned, tuple) and len(scanned[0]) == 4
    else:
        assert isinstance(scanned, str) and expected in scanned


@pytest.mark.parametrize("on", [True, False])
def test_the_buffer_grows_while_the_file_fills_it(on):
    """Reading starts with a small buffer that doubles up to the block size: lines cut at every
    size read as line by line, with the scanner or without."""
    lines = [respelled(line, "jq") if i % 300 > 150 else line for i, line in enumerate(_block(900, every_size=True))]
    text = "".join(line + "\n" for line in lines).encode()
    before = columns.FIRST_BLOCK_BYTES
    columns.FIRST_BLOCK_BYTES = 100
    try:
        records, numbers, _ = read(text, on, block_bytes=len(text) // 3)
    finally:
        columns.FIRST_BLOCK_BYTES = before
    assert records == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)]
    assert numbers == list(range(1, len(lines) + 1))
