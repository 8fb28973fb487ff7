"""Library tests for simdedup.read: finding documents and reading them in chunks."""

from __future__ import annotations

import io
import os

import pytest

import simdedup.read.document as document
import simdedup.read.tables as tables
from simdedup.read import DocumentReader, Source, iter_sources, read_path_list
from simdedup.errors import SkipDocument


def _write(path, data: bytes | str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return str(path)


def _read_all(path: str, **kwargs) -> tuple[list[str], DocumentReader]:
    reader = DocumentReader(path, **kwargs)
    return list(reader), reader


# --- iter_sources ---------------------------------------------------------------------------


def test_iter_sources_walks_recursively_in_sorted_order_per_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Created out of order; names chosen so that sorting per directory (by entry name) differs
    # from sorting whole path strings ("a-1.txt" < "a.txt" < "a/..." as strings).
    for name in ["corpus/b.txt", "corpus/a.txt", "corpus/a/z.txt", "corpus/a-1.txt",
                 "corpus/a/sub/y.txt", "corpus/A.txt"]:
        _write(tmp_path / name, "x\n")
    got = list(iter_sources(["corpus"]))
    assert got == [
        Source("corpus/A.txt"),
        Source("corpus/a/sub/y.txt"),
        Source("corpus/a/z.txt"),
        Source("corpus/a-1.txt"),
        Source("corpus/a.txt"),
        Source("corpus/b.txt"),
    ]


def test_iter_sources_keeps_explicit_paths_as_given_and_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "d" / "b.txt", "x")
    _write(tmp_path / "d" / "a.txt", "x")
    got = list(iter_sources(["d/b.txt", "./d/a.txt", "missing.txt"]))
    assert got[0] == Source("d/b.txt")
    assert got[1] == Source("./d/a.txt")
    assert got[2].path == "missing.txt"
    assert "no such file" in got[2].reason


def test_iter_sources_reports_problem_entries_during_walk(tmp_path):
    top = tmp_path / "c"
    good = _write(top / "good.txt", "x")
    os.mkfifo(top / "pipe")
    os.symlink(top, top / "loop")  # a directory symlink loop
    os.symlink(top / "nowhere", top / "broken")
    got = {s.path: s.reason for s in iter_sources([str(top)])}
    assert got[good] is None
    assert "broken symbolic link" in got[str(top / "broken")]
    assert "FIFO" in got[str(top / "pipe")]
    assert str(top / "loop") not in got  # a link back into the tree is not followed
    assert len(got) == 3


def test_walk_follows_links_leading_out_of_the_tree_once(tmp_path):
    outside = _write(tmp_path / "outside" / "o.txt", "x")
    top = tmp_path / "c"
    _write(top / "a.txt", "x")
    os.symlink(tmp_path / "outside", top / "l1")
    os.symlink(tmp_path / "outside", top / "l2")
    got = [s.path for s in iter_sources([str(top)])]
    assert got == [str(top / "a.txt"), str(top / "l1" / "o.txt")]
    assert os.path.realpath(got[1]) == os.path.realpath(outside)


def test_iter_sources_explicit_fifo_is_a_readable_source(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # Must not open (and so block on) the FIFO: only stat it.
    assert list(iter_sources([str(fifo)])) == [Source(str(fifo))]


def test_iter_sources_is_lazy(tmp_path):
    _write(tmp_path / "a.txt", "x")

    def names():
        yield str(tmp_path / "a.txt")
        raise AssertionError("read too far")

    it = iter_sources(names())
    assert next(it) == Source(str(tmp_path / "a.txt"))


# --- read_path_list -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, null, expected",
    [
        (b"a.txt\nb c.txt\n", False, ["a.txt", "b c.txt"]),
        (b"a.txt\nb.txt", False, ["a.txt", "b.txt"]),  # no final newline
        (b"a.txt\r\nb.txt\r\n", False, ["a.txt", "b.txt"]),  # CRLF
        (b"\n\na.txt\n\n\nb.txt\n\n", False, ["a.txt", "b.txt"]),  # empty lines ignored
        (b"\r\n", False, []),
        (b"", False, []),
        (b"a.txt\0b\nc.txt\0", True, ["a.txt", "b\nc.txt"]),  # newline inside a NUL-separated name
        (b"a\r\0b.txt", True, ["a\r", "b.txt"]),  # NUL mode keeps a trailing CR
        (b"\0\0a.txt\0\0", True, ["a.txt"]),
        (b"a.txt\0b.txt", True, ["a.txt", "b.txt"]),
        (b"one two.txt\n", True, ["one two.txt\n"]),  # NUL mode does not split on newline
    ],
)
def test_read_path_list(data, null, expected):
    assert list(read_path_list(io.BytesIO(data), null)) == expected


def test_read_path_list_entry_spanning_read_blocks():
    names = [f"dir/{i:06d}-{'x' * 50}.txt" for i in range(3000)]  # > 64 KiB in total
    data = "\n".join(names).encode()
    assert len(data) > 3 * (1 << 16)
    assert list(read_path_list(io.BytesIO(data))) == names
    assert list(read_path_list(io.BytesIO(data.replace(b"\n", b"\0")), True)) == names


def test_read_path_list_undecodable_bytes_round_trip():
    raw = b"caf\xe9.txt"  # Latin-1 name, not UTF-8
    (name,) = read_path_list(io.BytesIO(raw + b"\n"))
    assert os.fsencode(name) == raw


# --- DocumentReader -------------------------------------------------------------------------

MULTILINE = (
    "Größe und Maß — ein Überblick\n"
    "naïve café résumé, 中文文本 测试 日本語のテキスト\n"
    "\n"
    "emoji 😀😀 and a verylongwordwithoutanyspacesthatexceedsthechunksize here\n"
    "\tindented line with tabs\tand  double  spaces  \n"
    "last line without newline ünïcödé"
)


def test_chunks_end_at_whitespace_and_join_to_the_text(tmp_path):
    path = _write(tmp_path / "doc.txt", MULTILINE)
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
    path = _write(tmp_path / "doc.txt", MULTILINE)
    chunks, reader = _read_all(path, chunk_bytes=chunk_bytes)
    assert "".join(chunks) == MULTILINE
    assert [t for c in chunks for t in c.split()] == MULTILINE.split()
    assert reader.bytes_read == os.path.getsize(path)


def test_utf8_bom_is_dropped_and_counted_in_bytes(tmp_path):
    path = _write(tmp_path / "bom.txt", b"\xef\xbb\xbf" + MULTILINE.encode())
    chunks, reader = _read_all(path, chunk_bytes=16)
    assert "".join(chunks) == MULTILINE
    assert reader.bytes_read == os.path.getsize(path)


def test_long_run_without_whitespace_is_read_fully(tmp_path, monkeypatch):
    monkeypatch.setattr(document, "MAX_CARRY", 40)
    text = "start " + "x" * 500 + "ü" * 100 + " tail words\n"
    path = _write(tmp_path / "run.txt", text)
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
        ("trailing cut ".encode() + "中".encode()[:2], "--encoding"),  # truncated at end of file
    ],
)
def test_skip_document(tmp_path, data, reason):
    path = _write(tmp_path / "bad", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path))
    assert reason in info.value.reason
    assert info.value.path == path
    assert path in str(info.value)


def test_skip_document_after_some_chunks(tmp_path):
    # The bad byte is far from the start: chunks come out first, then the error.
    path = _write(tmp_path / "late.txt", b"good words here " * 10 + b"\xff end")
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
    path = _write(tmp_path / "wide.txt", text.encode(encoding))
    assert b"\0" in open(path, "rb").read()
    chunks, reader = _read_all(path, encoding=encoding, chunk_bytes=16)
    assert "".join(chunks).lstrip("\ufeff") == text
    assert reader.bytes_read == os.path.getsize(path)
    # Read as UTF-8 the same bytes look binary.
    with pytest.raises(SkipDocument, match="binary"):
        list(DocumentReader(path))


def test_other_byte_encoding(tmp_path):
    text = "简体中文 文本 测试\n"
    path = _write(tmp_path / "gb.txt", text.encode("gb18030"))
    chunks, _ = _read_all(path, encoding="gb18030")
    assert "".join(chunks) == text


# --- bugs -----------------------------------------------------------------------------------


def test_decode_error_offset_with_bom(tmp_path):
    data = b"\xef\xbb\xbfab\xffcd"  # the bad byte is byte 5 of the file
    path = _write(tmp_path / "bom-bad.txt", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path))
    bad = data.index(b"\xff")
    assert f"at byte {bad};" in info.value.reason


def test_decode_error_offset_after_split_character(tmp_path):
    data = "aé".encode() + b"\xff"  # é is split between the first and second 2-byte block
    path = _write(tmp_path / "split-bad.txt", data)
    with pytest.raises(SkipDocument) as info:
        list(DocumentReader(path, chunk_bytes=2))
    bad = data.index(b"\xff")
    assert f"at byte {bad};" in info.value.reason


def test_binary_sniff_covers_first_8k_with_small_chunks(tmp_path):
    path = _write(tmp_path / "late-nul.txt", b"hello world " * 10 + b"\0 more")
    with pytest.raises(SkipDocument, match="binary"):
        list(DocumentReader(path, chunk_bytes=16))


def test_utf16_without_bom_is_skipped_not_crashing(tmp_path):
    path = _write(tmp_path / "nobom.txt", "no byte order mark\n".encode("utf-16-le"))
    try:
        chunks = list(DocumentReader(path, encoding="utf-16"))
    except SkipDocument:
        return
    assert "".join(chunks) == "no byte order mark\n"
