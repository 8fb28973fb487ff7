"""simdedup.read.document: decoding (encodings, byte-order marks), chunks, documents skipped with a reason."""

from __future__ import annotations

import json
import os

import pytest
from helpers import invoke, write, write_file

import simdedup.read.document as document
from simdedup.errors import SkipDocument
from simdedup.read import DocumentReader


def test_fingerprint_encoding_option(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "简体中文 文本 测试 这是 一个 例子 简体中文\n"
    write(tmp_path / "gb.txt", text.encode("gb18030"))
    write(tmp_path / "utf8.txt", text)
    refused = run(["fingerprint", "gb.txt"])
    assert refused.exit_code == 3
    assert "--encoding" in refused.stderr
    result = run(["fingerprint", "--encoding", "gb18030", "gb.txt"])
    assert result.exit_code == 0, result.stderr
    (gb,) = result.records
    (utf8,) = run(["fingerprint", "utf8.txt"]).records
    assert gb["simhash"] == utf8["simhash"]
    assert gb["features"] == utf8["features"] == 13  # distinct characters
    assert gb["bytes"] == os.path.getsize("gb.txt")


def test_fingerprint_unknown_encoding_is_a_usage_error(run, good_pair):
    result = run(["fingerprint", "--encoding", "no-such-codec", "corpus"])
    assert result.exit_code == 2
    assert "no-such-codec" in result.stderr
    assert result.stdout == ""


def test_fingerprint_utf16(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "wide text in utf sixteen\n"
    write(tmp_path / "u16.txt", text.encode("utf-16"))
    write(tmp_path / "u8.txt", text)
    result = run(["fingerprint", "--encoding", "utf-16", "u16.txt"])
    assert result.exit_code == 0, result.stderr
    (rec,) = result.records
    assert rec["simhash"] == run(["fingerprint", "u8.txt"]).records[0]["simhash"]
    assert rec["bytes"] == os.path.getsize("u16.txt")


def test_fingerprint_utf16_without_bom_does_not_crash(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "wide text in utf sixteen\n"
    write(tmp_path / "a-bom.txt", text.encode("utf-16"))
    write(tmp_path / "b-nobom.txt", text.encode("utf-16-le"))
    result = run(["fingerprint", "--encoding", "utf-16", "a-bom.txt", "b-nobom.txt"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 3)
    assert result.records[0]["id"] == "a-bom.txt"
    assert "b-nobom.txt" in result.stdout + result.stderr


def test_fingerprint_utf8_bom_is_ignored(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "byte order marks should not matter at all\n"
    write(tmp_path / "bom.txt", b"\xef\xbb\xbf" + text.encode())
    write(tmp_path / "plain.txt", text)
    result = run(["fingerprint", "bom.txt", "plain.txt"])
    assert result.exit_code == 0, result.stderr
    bom, plain = result.records
    assert bom["simhash"] == plain["simhash"]
    assert bom["features"] == plain["features"]


ENCODINGS = os.path.join(os.path.dirname(__file__), "fixtures", "encodings")


@pytest.mark.parametrize(
    "name, explicit",
    [("gb18030.txt", "gb18030"), ("big5.txt", "big5"), ("shift_jis.txt", "shift_jis"), ("utf-16.txt", "utf-16")],
)
def test_legacy_encodings(tmp_path, name, explicit):
    path = os.path.join(ENCODINGS, name)
    utf8 = tmp_path / "utf8.txt"
    with open(path + ".expected", encoding="utf-8") as handle:
        utf8.write_text(handle.read(), encoding="utf-8")
    reference = json.loads(invoke("fingerprint", "--silent", utf8).stdout)
    auto = invoke("fingerprint", "--silent", "-v", "--encoding", "auto", path)
    assert auto.exit_code == 0, auto.stderr
    assert json.loads(auto.stdout)["simhash"] == reference["simhash"]
    assert "read as" in auto.stderr  # -v names the chosen encoding
    given = invoke("fingerprint", "--silent", "--encoding", explicit, path)
    assert json.loads(given.stdout)["simhash"] == reference["simhash"]
    plain = invoke("fingerprint", "--silent", path)
    if explicit == "utf-16":  # its byte-order mark says so, whatever --encoding
        assert json.loads(plain.stdout)["simhash"] == reference["simhash"]
    else:  # UTF-8 by default: skipped with a hint
        assert plain.exit_code == 3 and plain.stdout == ""
        assert "--encoding" in plain.stderr


def _read_all(path: str, **kwargs) -> tuple[list[str], DocumentReader]:
    reader = DocumentReader(path, **kwargs)
    return list(reader), reader


MULTILINE = (
    "Größe und Maß — ein Überblick\n"
    "naïve café résumé, 中文文本 测试 日本語のテキスト\n"
    "\n"
    "emoji 😀😀 and a verylongwordwithoutanyspacesthatexceedsthechunksize here\n"
    "\tindented line with tabs\tand  double  spaces  \n"
    "last line without newline ünïcödé"
)


def test_chunks_end_at_whitespace_and_join_to_the_text(tmp_path):
    path = write_file(tmp_path / "doc.txt", MULTILINE)
    chunks, reader = _read_all(path, chunk_bytes=16)
    assert len(chunks) > 5
    assert "".join(chunks) == MULTILINE
    for chunk in chunks[:-1]:
        assert chunk and chunk[-1].isspace(), repr(chunk)
    # No token is cut between chunks.
    assert [t for c in chunks for t in c.split()] == MULTILINE.split()
    assert reader.bytes_read == os.path.getsize(path)


@pytest.mark.parametrize("chunk_bytes", [1, 3, 7, 64, 1 << 20])
def test_text_is_the_same_for_any_chunk_size(tmp_path, chunk_bytes):
    path = write_file(tmp_path / "doc.txt", MULTILINE)
    chunks, reader = _read_all(path, chunk_bytes=chunk_bytes)
    assert "".join(chunks) == MULTILINE
    assert [t for c in chunks for t in c.split()] == MULTILINE.split()
    assert reader.bytes_read == os.path.getsize(path)


def test_utf8_bom_is_dropped_and_counted_in_bytes(tmp_path):
    path = write_file(tmp_path / "bom.txt", b"\xef\xbb\xbf" + MULTILINE.encode())
    chunks, reader = _read_all(path, chunk_bytes=16)
    assert "".join(chunks) == MULTILINE
    assert reader.bytes_read == os.path.getsize(path)


def test_long_run_without_whitespace_is_read_fully(tmp_path, monkeypatch):
    monkeypatch.setattr(document, "MAX_CARRY", 40)
    text = "start " + "x" * 500 + "ü" * 100 + " tail words\n"
    path = write_file(tmp_path / "run.txt", text)
    chunks, reader = _read_all(path, chunk_bytes=8)
    assert "".join(chunks) == text
    assert reader.bytes_read == os.path.getsize(path)
    # The carry is bounded: no chunk grows far beyond the cap.
    assert max(len(c) for c in chunks) <= 40 + 8
    assert len(chunks) > 10


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "empty file"),
        (b"text\0more text", "binary"),
        (b"\x00\x01\x02\x03", "binary"),
        (b"caf\xe9 au lait\n", "--encoding"),
        (b"trailing cut " + "中".encode()[:2], "--encoding"),  # truncated at end of file
    ],
)
def test_skip_document(tmp_path, data, reason):
    path = write_file(tmp_path / "bad", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path))
    assert reason in info.value.reason
    assert info.value.path == path
    assert path in str(info.value)


def test_skip_document_after_some_chunks(tmp_path):
    # The bad byte is far from the start: chunks come out first, then the error.
    path = write_file(tmp_path / "late.txt", b"good words here " * 10 + b"\xff end")
    reader = iter(DocumentReader(path, chunk_bytes=16))
    assert next(reader).startswith("good")
    with pytest.raises(SkipDocument, match="not valid utf-8 at byte 160"):
        list(reader)


def test_missing_file_is_skipped_not_raised_as_oserror(tmp_path):
    with pytest.raises(SkipDocument, match="cannot read"):
        list(DocumentReader(str(tmp_path / "nope.txt")))


def test_unknown_encoding_is_a_value_error():
    with pytest.raises(ValueError, match="unknown encoding"):
        DocumentReader("x", encoding="no-such-codec")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "UTF16", "utf-32"])
def test_wide_encoding_is_not_flagged_binary(tmp_path, encoding):
    text = "hello wide world\nsecond line ünï 中文\n"
    path = write_file(tmp_path / "wide.txt", text.encode(encoding))
    assert b"\0" in open(path, "rb").read()
    chunks, reader = _read_all(path, encoding=encoding, chunk_bytes=16)
    assert "".join(chunks).lstrip("\ufeff") == text
    assert reader.bytes_read == os.path.getsize(path)
    if encoding == "utf-16-le":  # no byte-order mark: read as UTF-8 the same bytes look binary
        with pytest.raises(SkipDocument, match="binary"):
            list(DocumentReader(path))
    else:  # the byte-order mark says how to read them, whatever encoding is asked for
        assert "".join(DocumentReader(path)) == text


def test_other_byte_encoding(tmp_path):
    text = "简体中文 文本 测试\n"
    path = write_file(tmp_path / "gb.txt", text.encode("gb18030"))
    chunks, _ = _read_all(path, encoding="gb18030")
    assert "".join(chunks) == text


def test_decode_error_offset_with_bom(tmp_path):
    data = b"\xef\xbb\xbfab\xffcd"  # the bad byte is byte 5 of the file
    path = write_file(tmp_path / "bom-bad.txt", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path))
    bad = data.index(b"\xff")
    assert f"at byte {bad};" in info.value.reason


def test_decode_error_offset_after_split_character(tmp_path):
    data = "aé".encode() + b"\xff"  # é is split between the first and second 2-byte block
    path = write_file(tmp_path / "split-bad.txt", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path, chunk_bytes=2))
    bad = data.index(b"\xff")
    assert f"at byte {bad};" in info.value.reason


def test_binary_sniff_covers_first_8k_with_small_chunks(tmp_path):
    path = write_file(tmp_path / "late-nul.txt", b"hello world " * 10 + b"\0 more")
    with pytest.raises(SkipDocument, match="binary"):
        list(DocumentReader(path, chunk_bytes=16))


def test_utf16_without_bom_is_skipped_not_crashing(tmp_path):
    path = write_file(tmp_path / "nobom.txt", "no byte order mark\n".encode("utf-16-le"))
    try:
        chunks = list(DocumentReader(path, encoding="utf-16"))
    except SkipDocument:
        return
    assert "".join(chunks) == "no byte order mark\n"


@pytest.mark.parametrize("reader", ["whole", "buffer"])
def test_a_file_that_grows_past_the_limit_while_read_is_left_to_the_streaming_path(tmp_path, monkeypatch, reader):
    """A file still being written is longer than its fstat said: reading it whole stops once it
    passes the limit (memory stays bounded) and hands it on, as a file over the limit."""
    from simdedup.read import Source

    path = tmp_path / "growing.txt"
    path.write_bytes(b"word " * (3 << 20))  # 15 MB on disk
    real_fstat = os.fstat

    def stale_fstat(fd):  # the size when the walk saw it
        status = real_fstat(fd)
        return os.stat_result((status.st_mode, *status[1:6], 1000, *status[7:]))

    monkeypatch.setattr(document.os, "fstat", stale_fstat)
    limit = 2 << 20
    if reader == "whole":
        assert document.read_regular_file(str(path), limit) is None
    else:
        buffer = document.FileBuffer(limit)
        assert buffer.read(Source(str(path))) == -1
        assert buffer.end == 0 and len(buffer.buffer) <= 2 * (limit + (1 << 20))
    monkeypatch.setattr(document.os, "fstat", real_fstat)
    assert document.read_regular_file(str(path), 16 << 20) == path.read_bytes()  # whole when it fits
