"""Hostile inputs to the document readers: damaged compressed files, huge CSV fields and JSON
lines, HTTP responses that lie, compression bombs. Each must give a warning and a skip (exit 3)
with the good inputs still read, never a traceback or exit 70, in bounded memory."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.errors import WARNINGS_PER_FILE

CODECS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "lzma": lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE),
    "zst": lambda data: __import__("zstandard").ZstdCompressor().compress(data),
}


def text(seed: int, n: int = 300) -> str:
    r = random.Random(seed)
    return " ".join(f"w{r.randrange(5000)}" for _ in range(n))


def simdedup(*args, input=None):
    result = CliRunner().invoke(cli, [str(a) for a in args], input=input)
    return result.exit_code, result.stdout, result.stderr


def ids(stdout: str) -> list[str]:
    return [json.loads(line)["id"] for line in stdout.splitlines()]


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("simdedup: warning: ")]


def warned_lines(stderr: str, path) -> list[int]:
    """The line (or row) numbers of the warnings about ``path``, in order."""
    prefix = f"simdedup: warning: {path}:"
    numbers = [w[len(prefix) :].split(":")[0] for w in warnings(stderr) if w.startswith(prefix)]
    return [int(n) for n in numbers if n.isdigit()]  # not the count of those not shown


def gzip_bomb(piece: bytes, copies: int, wbits: int = 31) -> bytes:
    """The gzip stream (or raw deflate, ``wbits`` -15) of ``piece`` repeated ``copies`` times,
    made in the time of compressing it twice: after a full flush the compressor's output for the
    same input is the same."""
    import struct
    import zlib

    compressor = zlib.compressobj(1, zlib.DEFLATED, wbits)
    first = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    if wbits < 0:
        return first + again * (copies - 1) + compressor.flush()
    crc = 0
    for _ in range(copies):
        crc = zlib.crc32(piece, crc)
    trailer = struct.pack("<II", crc, len(piece) * copies & 0xFFFFFFFF)
    return first + again * (copies - 1) + compressor.flush()[:-8] + trailer


def damaged(data: bytes, how: str) -> bytes:
    """``data`` cut short (at two thirds, or by its last byte), or with bytes in its middle
    overwritten."""
    if how == "truncated":
        return data[: len(data) * 2 // 3]
    if how == "last byte cut":
        return data[:-1]
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 16]) + data[middle + 16 :]


# --- compressed files -----------------------------------------------------------------------


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_a_single_compressed_document_is_read(tmp_path, codec):
    body = text(1, 3000).encode()
    (tmp_path / f"doc.txt.{codec}").write_bytes(CODECS[codec](body))
    (tmp_path / "doc.txt").write_bytes(body)
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / f"doc.txt.{codec}", tmp_path / "doc.txt")
    assert code == 0, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["simhash"] == second["simhash"] and first["sketch"] == second["sketch"]
    assert first["bytes"] == len(body)


@pytest.mark.parametrize("how", ["truncated", "last byte cut", "corrupt"])
@pytest.mark.parametrize("codec", sorted(CODECS))
def test_a_damaged_compressed_document_is_skipped_beside_good_files(tmp_path, codec, how):
    body = text(2, 20000).encode()
    bad = tmp_path / f"bad.txt.{codec}"
    bad.write_bytes(damaged(CODECS[codec](body), how))
    (tmp_path / "good.txt").write_text(text(3))
    (tmp_path / f"good2.txt.{codec}").write_bytes(CODECS[codec](text(4).encode()))
    for jobs in ("1", "2"):
        code, out, err = simdedup(
            "fingerprint", "-j", jobs, bad, tmp_path / "good.txt", tmp_path / f"good2.txt.{codec}"
        )
        assert code == 3, err
        assert ids(out) == [str(tmp_path / "good.txt"), str(tmp_path / f"good2.txt.{codec}")]
        (warning,) = warnings(err)
        assert warning.startswith(f"simdedup: warning: {bad}: ")


@pytest.mark.parametrize("how", ["truncated", "last byte cut", "corrupt"])
@pytest.mark.parametrize("codec", sorted(CODECS))
def test_damaged_compressed_json_lines_are_reported_with_their_line(tmp_path, codec, how):
    lines = "".join(json.dumps({"text": text(seed)}) + "\n" for seed in range(400)).encode()
    bad = tmp_path / f"docs.jsonl.{codec}"
    bad.write_bytes(damaged(CODECS[codec](lines), how))
    (tmp_path / "good.jsonl").write_text(json.dumps({"text": text(1000)}) + "\n")
    code, out, err = simdedup("fingerprint", "-j", "1", bad, tmp_path / "good.jsonl")
    assert code == 3, err
    read = ids(out)
    assert read[-1] == f"{tmp_path / 'good.jsonl'}:1"
    assert len(read) < 401
    if how != "corrupt":  # the lines before the cut, then one warning at the cut
        assert read[:-1] == [f"{bad}:{n}" for n in range(1, len(read))]
        assert warnings(err) == [warnings(err)[0]] and warnings(err)[0].startswith(
            f"simdedup: warning: {bad}:{len(read)}: "
        )
    else:  # garbled lines may come out of the decompressor before it sees the damage: each is skipped
        assert warnings(err) and all(w.startswith(f"simdedup: warning: {bad}:") for w in warnings(err))


def test_zstd_frames_back_to_back_are_one_stream(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    parts = [text(seed).encode() + b"\n" for seed in range(3)]
    (tmp_path / "doc.txt.zst").write_bytes(b"".join(zstandard.ZstdCompressor().compress(p) for p in parts))
    (tmp_path / "doc.txt").write_bytes(b"".join(parts))
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / "doc.txt.zst", tmp_path / "doc.txt")
    assert code == 0, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["simhash"] == second["simhash"] and first["bytes"] == second["bytes"]


# --- JSON lines of documents ----------------------------------------------------------------


HOSTILE_LINES = {
    "deep nesting": '{"text": ' + "[" * 100_000,
    "deep nesting, closed": '{"text": "a b c", "x": ' + "[" * 5000 + "]" * 5000 + "}",
    "a 5,000-digit number": '{"text": "a b c", "n": ' + "9" * 5000 + "}",
    "a 5,000-digit id": '{"text": "a b c", "id": ' + "7" * 5000 + "}",
    "a huge exponent": '{"text": "a b c", "n": 1e999999999}',
    "not UTF-8": b'{"text": "caf\xe9 au lait"}',
    "a lone surrogate in the text": '{"text": "a \\ud800 b"}',
    "NUL bytes": '{"text": "a\x00b"}',
    "an array": "[1, 2, 3]",
    "a string": '"text"',
    "text not a string": '{"text": {"a": 1}}',
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_hostile_json_lines_are_skipped_with_file_and_line(tmp_path, jobs):
    good = [json.dumps({"text": text(seed), "id": f"good-{seed}"}) for seed in range(3)]
    lines: list[bytes] = [good[0].encode()]
    for hostile in HOSTILE_LINES.values():
        lines.append(hostile if isinstance(hostile, bytes) else hostile.encode())
    lines += [good[1].encode(), good[2].encode()]
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out, err = simdedup("fingerprint", "-j", jobs, "--id-field", "id", path)
    assert code in (0, 3), err
    assert "unexpected" not in err and "Traceback" not in err
    read = ids(out)
    assert read[0] == "good-0" and read[-2:] == ["good-1", "good-2"]
    skipped = len(lines) - len(read)
    assert f"skipped {skipped} " in err
    # The first few problems of the file said with their line, the rest counted in one line.
    assert warned_lines(err, path) == list(range(2, 2 + WARNINGS_PER_FILE))
    assert (
        warnings(err)[-1]
        == f"simdedup: warning: {path}: ... and {skipped - WARNINGS_PER_FILE} more problems (-v shows them all)"
    )
    for what, hostile in HOSTILE_LINES.items():  # each alone: skipped with its line
        path.write_bytes(b"\n".join([lines[0], hostile if isinstance(hostile, bytes) else hostile.encode()]) + b"\n")
        code, out, err = simdedup("fingerprint", "-j", jobs, "--id-field", "id", path)
        if what in (
            "deep nesting",
            "deep nesting, closed",
            "a 5,000-digit number",
            "not UTF-8",
            "NUL bytes",
            "an array",
            "a string",
            "text not a string",
        ):
            assert code == 3 and warned_lines(err, path) == [2], what


# --- fingerprint records --------------------------------------------------------------------


def fingerprint_record(tmp_path: Path, seed: int = 1) -> dict:
    (tmp_path / f"r{seed}.txt").write_text(text(seed))
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / f"r{seed}.txt")
    assert code == 0, err
    return json.loads(out)


def sketch_text(size: int) -> str:
    import base64

    return base64.urlsafe_b64encode(bytes(range(size % 256)) * (size // 256) + bytes(size % 256)).decode().rstrip("=")


def malformed_records(good: dict) -> dict[str, str]:
    """One malformed line for each way a record can be wrong."""

    def spelled(**changes) -> str:
        record = {**good, **changes}
        return json.dumps({k: v for k, v in record.items() if v is not None})

    lines = {
        f"a {size}-byte sketch": spelled(sketch=sketch_text(size)) for size in (1, 2, 4, 7, 10, 12, 100, 129, 8192)
    }
    lines.update(
        {
            "a sketch one character short": spelled(sketch="A" * 170),
            "a sketch one character long": spelled(sketch="A" * 172),
            "a sketch with padding": spelled(sketch=good["sketch"] + "="),
            "a sketch with +/": spelled(sketch="+/" + good["sketch"][2:]),
            "a sketch that is a number": spelled(sketch=12),
            "an id that is a number": spelled(id=12),
            "an id that is a list": spelled(id=["a"]),
            "a simhash that is a number": spelled(simhash=12),
            "bits as a string": spelled(bits="64"),
            "bits as a float": spelled(bits=64.0),
            "features as a float": spelled(features=1.5),
            "features huge": spelled(features=2**80),
            "features negative": spelled(features=-1),
            "bytes huge": spelled(bytes=2**70),
            "bytes a bool": spelled(bytes=True),
            "a tokenizer that is a number": spelled(tokenizer=5),
            "options that are a list": spelled(options=[1]),
            "options nested deeply": spelled(options={"shingle": [[[[1]]]]}),
            "a method that is unknown": spelled(method="md5sum"),
            "a 5,000-digit number": json.dumps(good)[:-1] + ', "n": ' + "9" * 5000 + "}",
            "a 5,000-digit count": json.dumps(good).replace('"features": ', '"features": ' + "1" * 5000 + ', "x": '),
            "deep nesting": '{"id": ' + "[" * 100_000,
            "deep nesting, closed": '{"id": "x", "o": ' + "[" * 3000 + "]" * 3000 + "}",
            "not UTF-8": '{"id": "caf\udce9"}',
            "an array": "[1, 2]",
        }
    )
    return lines


@pytest.mark.parametrize(
    "command", [["cluster"], ["stats"], ["convert", "--to", "jsonl"], ["convert", "--to", "binary", "-o", "out.sdfp"]]
)
def test_malformed_fingerprint_records_are_file_line_errors(tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    good = fingerprint_record(tmp_path)
    other = fingerprint_record(tmp_path, 2)
    for what, line in malformed_records(good).items():
        for before in ([], [json.dumps(other)]):  # first record, and after a good one
            path = tmp_path / "fp.jsonl"
            path.write_bytes("\n".join([*before, line, json.dumps(good)]).encode("utf-8", "surrogateescape") + b"\n")
            code, out, err = simdedup(*command, path)
            assert code == 1, (what, err)
            assert err.startswith(f"Error: {path}:{len(before) + 1}: ") and err.count("\n") == 1, (what, err)
            assert not (tmp_path / "out.sdfp").exists()


def test_damaged_binary_fingerprints_are_one_error_line(tmp_path, monkeypatch):
    """Every byte of a small binary fingerprint file overwritten in turn: the file reads (a
    changed value), or is refused with one line naming it; never a crash."""
    from simdedup.errors import RecordError
    from simdedup.fingerprints import read_fingerprint_files

    monkeypatch.chdir(tmp_path)
    for seed in range(3):
        (tmp_path / f"d{seed}.txt").write_text("é " + text(seed))
    code, _, err = simdedup(
        "fingerprint", "-j", "1", "--format", "binary", "-o", "fp.sdfp", "d0.txt", "d1.txt", "d2.txt"
    )
    assert code == 0, err
    data = (tmp_path / "fp.sdfp").read_bytes()
    refused = 0
    for position in range(len(data)):
        for value in (0x00, 0x80, 0xFF, data[position] ^ 0x01):
            damaged_data = data[:position] + bytes([value]) + data[position + 1 :]
            try:
                read_fingerprint_files([("fp.sdfp", __import__("io").BytesIO(damaged_data))])
            except RecordError as exc:
                # a damaged first line makes it a JSON-lines file, whose line 1 is not JSON
                assert str(exc).startswith(("fp.sdfp: binary block ", "fp.sdfp:1: ")) and "\n" not in str(exc)
                refused += 1
    assert refused > len(data)
    for crafted in (b"\xff" * 8, (1 << 63).to_bytes(8, "little")):  # counts past the end, and past int64
        start = data.index(b"}\n") + 2
        (tmp_path / "crafted.sdfp").write_bytes(data[:start] + crafted + data[start + 8 :])
        code, out, err = simdedup("cluster", "crafted.sdfp")
        assert code == 1 and err.startswith("Error: crafted.sdfp: binary block 1") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "line",
    [
        '{"members": [{"id": "a"}], "x": ' + "[" * 100_000,
        '{"members": [{"id": "a"}], "x": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"members": [{"id": "a"}], "x": ' + "9" * 5000 + "}",
    ],
)
def test_cluster_lines_nested_deeply_or_with_huge_numbers_are_file_line_errors(tmp_path, line):
    (tmp_path / "clusters.jsonl").write_text(line + "\n")
    (tmp_path / "gold.txt").write_text("a b\n")
    for command in (["select"], ["eval", "--gold", tmp_path / "gold.txt"]):
        code, out, err = simdedup(*command, tmp_path / "clusters.jsonl")
        assert code == 1 and err.startswith(f"Error: {tmp_path / 'clusters.jsonl'}:1: ") and err.count("\n") == 1, err


# --- encodings that are not text encodings --------------------------------------------------

NOT_TEXT_ENCODINGS = ["base64", "base_64", "hex", "zlib", "bz2", "rot13", "rot_13", "uu", "quopri", "quoted-printable"]


@pytest.mark.parametrize("charset", NOT_TEXT_ENCODINGS + ["no-such-charset", ""])
def test_an_http_charset_that_is_not_a_text_encoding_falls_back(tmp_path, charset):
    body = text(5, 500)
    (tmp_path / "page.http").write_bytes(
        f"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset={charset}\r\n\r\n{body}".encode()
    )
    (tmp_path / "page.txt").write_text(body)
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / "page.http", tmp_path / "page.txt")
    assert code == 0, err
    from_http, from_text = (json.loads(line) for line in out.splitlines())
    assert from_http["simhash"] == from_text["simhash"] and from_http["sketch"] == from_text["sketch"]


@pytest.mark.parametrize("encoding", NOT_TEXT_ENCODINGS)
def test_encoding_option_refuses_codecs_that_are_not_text_encodings(tmp_path, encoding):
    (tmp_path / "a.txt").write_text(text(6))
    (tmp_path / "b.txt").write_text(text(7))
    for command in (
        ["fingerprint"],
        ["dedup"],
        ["exact"],
        ["explain", tmp_path / "b.txt"],
        ["fingerprint", "--method", "nilsimsa"],
        ["fingerprint", "--method", "sentences"],
    ):
        code, out, err = simdedup(*command, "--encoding", encoding, tmp_path / "a.txt")
        assert code == 2 and out == "", (command, err)
        assert "not a text encoding" in err and "unexpected" not in err, (command, err)


def test_a_warc_charset_that_is_not_a_text_encoding_falls_back(tmp_path):
    pytest.importorskip("warcio")
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    body = text(8, 400)
    with open(tmp_path / "crawl.warc", "wb") as handle:
        writer = WARCWriter(handle, gzip=False)
        for charset in ("base64", "utf-8"):
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", f"text/plain; charset={charset}")], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(
                    f"http://example.test/{charset}", "response", payload=BytesIO(body.encode()), http_headers=headers
                )
            )
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / "crawl.warc")
    assert code == 0, err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["simhash"] == second["simhash"]


# --- CSV, Parquet and WARC: one bad row never costs the others --------------------------------


def test_a_csv_field_of_any_size_is_read_and_rows_after_it_too(tmp_path):
    import csv

    big = text(9, 60_000)  # about 400 KB in one field, beyond the csv module's 128 KiB default
    rows = [("a", text(10)), ("big", big), ("multi", "line one\nline two " + text(11)), ("c", text(12))]
    with open(tmp_path / "d.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([("id", "text"), *rows])
    (tmp_path / "big.txt").write_text(big)
    code, out, err = simdedup("fingerprint", "-j", "1", "--id-field", "id", tmp_path / "d.csv", tmp_path / "big.txt")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == ["a", "big", "multi", "c", str(tmp_path / "big.txt")]
    assert records[1]["simhash"] == records[-1]["simhash"]


@pytest.mark.parametrize("compressed", [False, True])
def test_a_csv_row_that_cannot_be_read_is_skipped_alone(tmp_path, compressed):
    lines = [
        b"text,id",
        text(10).encode() + b",a",
        b"caf\xe9 " + text(13).encode() + b",bad",
        b"x " * (1 << 20) + b",long",
        b"no id",
        text(12).encode() + b",c",
    ]
    data = b"\r\n".join(lines) + b"\r\n"
    path = tmp_path / ("d.csv.gz" if compressed else "d.csv")
    path.write_bytes(gzip.compress(data) if compressed else data)
    code, out, err = simdedup("fingerprint", "-j", "1", "--max-line-bytes", 1 << 20, "--id-field", "id", path)
    assert code == 3, err
    assert ids(out) == ["a", "c"]
    assert warned_lines(err, path) == [2, 3, 4] and len(warnings(err)) == 3  # FILE:ROW
    assert "skipped 3" in err


def test_json_lines_over_the_limit_are_skipped_alone(tmp_path):
    limit = 1 << 20
    lines = [
        json.dumps({"text": text(1)}),
        json.dumps({"text": "y " * limit}),
        json.dumps({"text": text(2)}),
        json.dumps({"text": "z" * (limit - 20)}),
        json.dumps({"text": "w " * (3 * limit)}),
        json.dumps({"text": text(3)}),
    ]
    data = ("\n".join(lines) + "\n").encode()
    for name, content in (("d.jsonl", data), ("d.jsonl.gz", gzip.compress(data))):
        (tmp_path / name).write_bytes(content)
        for jobs in ("1", "2"):
            code, out, err = simdedup("fingerprint", "-j", jobs, "--max-line-bytes", limit, tmp_path / name)
            assert code == 3, err
            assert ids(out) == [f"{tmp_path / name}:{n}" for n in (1, 3, 4, 6)]
            assert warned_lines(err, tmp_path / name) == [2, 5] and len(warnings(err)) == 2
    code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / "d.jsonl")  # the default limit reads them all
    assert code == 0 and len(ids(out)) == 6


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(lambda t: json.dumps({"text": t}), st.text("ab \n", max_size=40)),
            st.sampled_from(["", " ", "not json", "x" * 25]),
        ),
        max_size=12,
    ),
    st.sampled_from([1, 3, 16, 1 << 18]),
    st.sampled_from([4, 10, 20, 64]),
    st.booleans(),
)
def test_stretches_skip_the_lines_that_streaming_skips(tmp_path_factory, lines, span, limit, final_newline):
    """Handing out a plain JSON-lines file in stretches (for -j N) and streaming it line by line
    (compressed files, pipes) skip the same long lines and read the same documents."""
    import simdedup.read.tables as tables

    path = tmp_path_factory.mktemp("jsonl") / "d.jsonl"
    path.write_bytes(("\n".join(lines) + ("\n" if final_newline else "")).encode())
    stretches = list(tables.iter_jsonl_unparsed(str(path), max_line=limit, span_bytes=span))
    got = [(d.path, d.reason, d.text) for s in stretches for d in tables.documents(s)]
    want = [(d.path, d.reason, d.text) for d, _ in tables.iter_jsonl_lines(str(path), max_line=limit)]
    assert got == want
    numbered = ("\n".join(lines)).split("\n")
    too_long = [f"{path}:{n}" for n, line in enumerate(numbered, 1) if len(line.encode()) > limit]
    assert [p for p, reason, _ in want if reason and "longer than" in reason] == too_long


def write_warc(
    path: Path, bodies: list[bytes], gzipped: bool, headers: list[tuple[str, str]] | None = None
) -> list[int]:
    """A WARC file of one response record per body; returns the offset of each record."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    offsets = []
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=gzipped)
        for n, body in enumerate(bodies):
            offsets.append(handle.tell())
            http = StatusAndHeaders(
                "200 OK", headers or [("Content-Type", "text/plain; charset=utf-8")], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(
                    f"http://example.test/{n}", "response", payload=BytesIO(body), http_headers=http
                )
            )
    return offsets


def warc_ids(stdout: str) -> list[str]:
    return [i.split()[0] for i in ids(stdout)]


@pytest.mark.parametrize("damage", ["compressed bytes", "version line", "record type"])
def test_a_damaged_warc_record_costs_no_other_record(tmp_path, damage):
    pytest.importorskip("warcio")
    gzipped = damage == "compressed bytes"
    path = tmp_path / ("crawl.warc.gz" if gzipped else "crawl.warc")
    offsets = write_warc(path, [text(seed).encode() for seed in range(5)], gzipped)
    data = path.read_bytes()
    if gzipped:  # the compressed bytes of record 2 garbled
        middle = (offsets[2] + offsets[3]) // 2
        data = data[:middle] + bytes(b ^ 0x5A for b in data[middle : middle + 20]) + data[middle + 20 :]
    else:  # a line of the WARC header of record 2 garbled
        start = data.index(b"WARC/1" if damage == "version line" else b"WARC-Type", offsets[2])
        data = data[:start] + b"\x00garbage\x00" + data[start + 9 :]
    path.write_bytes(data)
    code, out, err = simdedup("fingerprint", "-j", "1", path)
    assert code == 3, err
    assert warc_ids(out) == [f"http://example.test/{n}" for n in (0, 1, 3, 4)]
    (warning,) = warnings(err)
    assert warning.startswith(f"simdedup: warning: {path}: byte ")


@pytest.mark.parametrize("gzipped", [True, False])
def test_a_truncated_warc_says_so(tmp_path, gzipped):
    pytest.importorskip("warcio")
    path = tmp_path / ("crawl.warc.gz" if gzipped else "crawl.warc")
    offsets = write_warc(path, [text(seed).encode() for seed in range(3)], gzipped)
    path.write_bytes(path.read_bytes()[: (offsets[2] + path.stat().st_size) // 2])
    code, out, err = simdedup("fingerprint", "-j", "1", path)
    assert code == 3, err
    assert warc_ids(out) == ["http://example.test/0", "http://example.test/1"]
    (warning,) = warnings(err)
    assert (
        warning.startswith(f"simdedup: warning: {path}: byte ")
        and ": http://example.test/2 <urn:uuid:" in warning
        and "cut short" in warning
    )


def test_a_warc_body_over_the_limit_is_skipped_alone(tmp_path):
    pytest.importorskip("warcio")
    bomb = gzip.compress(b"word " * (3 << 20))  # 15 MB of text in about 15 KB
    path = tmp_path / "crawl.warc.gz"
    write_warc(
        path,
        [gzip.compress(text(1).encode()), bomb, gzip.compress(text(2).encode())],
        True,
        [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
    )
    code, out, err = simdedup("fingerprint", "-j", "1", "--max-line-bytes", 1 << 20, path)
    assert code == 3, err
    assert warc_ids(out) == ["http://example.test/0", "http://example.test/2"]
    (warning,) = warnings(err)
    assert (
        warning.startswith(f"simdedup: warning: {path}: byte ")
        and ": http://example.test/1 " in warning
        and "longer than 1048576 bytes" in warning
    )


def test_a_file_that_is_no_warc_is_one_warning(tmp_path):
    pytest.importorskip("warcio")
    (tmp_path / "x.warc").write_bytes(bytes(random.Random(1).randrange(256) for _ in range(100_000)))
    (tmp_path / "y.warc.gz").write_bytes(gzip.compress(b"hello\n" * 1000) + b"\x1f\x8b\x08junk")
    for name in ("x.warc", "y.warc.gz"):
        code, out, err = simdedup("fingerprint", "-j", "1", tmp_path / name)
        assert code == 3 and out == "", err
        assert warnings(err) and all(
            w.startswith(f"simdedup: warning: {tmp_path / name}: byte ") for w in warnings(err)
        )


def test_a_damaged_parquet_row_group_costs_no_other_row_group(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": [text(seed) for seed in range(40)]}), path, row_group_size=10)
    column = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    start = column.dictionary_page_offset or column.data_page_offset
    data[start : start + 8] = b"\xff" * 8  # the first page header of row group 2
    path.write_bytes(bytes(data))
    code, out, err = simdedup("fingerprint", "-j", "1", path)
    assert code == 3, err
    assert ids(out) == [f"{path}:{n}" for n in (*range(1, 11), *range(21, 41))]
    (warning,) = warnings(err)
    assert warning.startswith(f"simdedup: warning: {path}:11: cannot read rows 11 to 20")


# --- memory that does not grow with how often a word occurs ------------------------------------

_MASK = (1 << 64) - 1
CHUNK = 1 << 20  # simdedup.read.CHUNK_BYTES, the size of the chunks a document is read in


def reference_sketch(hashes: list[int], counts: list[int], bins: int) -> bytes:
    """The sketch spelled out element by element, in plain integers (see simdedup.sketch)."""

    def mix(x: int) -> int:
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & _MASK
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & _MASK
        return x ^ (x >> 31)

    golden, shift, empty = 0x9E3779B97F4A7C15, 64 - (bins.bit_length() - 1), 1 << 40
    minima = [empty] * bins
    for h, count in zip(hashes, counts):
        for rank in range(count):
            x = mix(h ^ ((rank * golden) & _MASK))
            minima[x >> shift] = min(minima[x >> shift], x & 0xFFFFFFFF)
    filled = [b for b in range(bins) if minima[b] != empty]
    if not filled:
        return bytes(bins)
    out = bytearray()
    for position in range(bins):
        hop = next(h for h in range(bins) if minima[(position + h) % bins] != empty)
        low = minima[(position + hop) % bins]
        out.append((low if hop == 0 else mix((low + hop * golden) & _MASK)) & 0xFF)
    return bytes(out)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, _MASK), st.integers(0, 300)), min_size=1, max_size=12),
    st.sampled_from([1, 7, 64, 1 << 20]),
    st.sampled_from([8, 64, 128]),
)
def test_sketches_of_large_counts_expand_in_pieces_and_equal_the_definition(pairs, batch, bins):
    """However the elements of a multiset are cut into batches (inside a feature's copies too),
    the sketch is the one of its definition."""
    import numpy as np

    import simdedup.sketch as sketch

    hashes = [h for h, _ in pairs]
    counts = [c for _, c in pairs]
    got = sketch.make_sketch(
        np.array(hashes, dtype=np.uint64), np.array(counts, dtype=np.int64), bins, expand_batch=batch
    )
    assert got == reference_sketch(hashes, counts, bins)


def run_limited(args: list, address_space: int) -> subprocess.CompletedProcess:
    """The real CLI in a process whose address space is capped: going over the cap is a
    MemoryError (a failed run), not a slow machine."""
    import resource
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        [sys.executable, "-m", "simdedup", *map(str, args)], capture_output=True, preexec_fn=cap, timeout=600
    )


@pytest.mark.parametrize("codec", ["gz", "zst"])
def test_a_compression_bomb_of_one_word_is_read_in_bounded_memory(tmp_path, codec):
    """64 MiB of one word in a few KB: its sketch has 13 million elements (a count of the word's
    copies), which once took memory in proportion; now the run fits in 400 MB of address space."""
    if codec == "zst":
        zstandard = pytest.importorskip("zstandard")
        writer = zstandard.ZstdCompressor().stream_writer(open(tmp_path / "bomb.txt.zst", "wb"))
    else:
        writer = gzip.open(tmp_path / "bomb.txt.gz", "wb")
    copies = 13 << 20
    with writer:
        for _ in range(13):
            writer.write(b"word " * (1 << 20))
    result = run_limited(["fingerprint", "-j", "1", tmp_path / f"bomb.txt.{codec}"], 400 << 20)
    assert result.returncode == 0, result.stderr.decode()
    record = json.loads(result.stdout)
    from simdedup.shingle_sketch import sketch_texts
    from simdedup.simhash import Simhasher
    from simdedup.sketch import encode

    expected = Simhasher(64, sketch_bins=0, weighting="binary")({"word": copies})
    shingles, _ = sketch_texts([b"word word word"])  # the same one 3-gram, however many copies
    assert (record["features"], record["bytes"]) == (1, 5 * copies)
    assert record["simhash"] == format(expected.simhash, "016x") and record["sketch"] == encode(shingles[0].tobytes())


@pytest.mark.parametrize(
    "accent, method",
    [
        ("", []),
        ("", ["--html"]),
        ("é", []),
        ("é", ["--method", "sentences"]),
        ("é", ["--method", "nilsimsa"]),
        ("é", ["--tokenizer", "whitespace", "--shingle", "2"]),
    ],
)
def test_a_json_line_of_megabytes_fingerprints_as_the_same_text_in_a_file(tmp_path, method, accent):
    """A text held in memory is tokenized in chunks cut at whitespace, as a file is read (and
    ASCII texts of any length go to the compiled kernel): same record either way."""
    r = random.Random(3)
    body = " ".join(f"{accent}w{r.randrange(20000)}" + (". " if r.random() < 0.05 else "") for _ in range(500_000))
    (tmp_path / "d.jsonl").write_text(json.dumps({"text": body, "id": "doc"}, ensure_ascii=False) + "\n")
    (tmp_path / "doc").write_text(body)
    code, out, err = simdedup("fingerprint", "-j", "1", *method, "--id-field", "id", tmp_path / "d.jsonl")
    assert code == 0, err
    from_line = json.loads(out)
    assert len(body.encode()) > 3 * CHUNK and from_line["bytes"] == len(body.encode())
    code, out, err = simdedup("fingerprint", "-j", "1", *method, tmp_path / "doc")
    from_file = json.loads(out)
    assert {**from_line, "id": None} == {**from_file, "id": None}


def http_response(body: bytes, headers: str) -> bytes:
    return f"HTTP/1.1 200 OK\r\n{headers}\r\n\r\n".encode() + body


def test_an_http_body_that_expands_to_half_a_gigabyte_is_read_in_bounded_memory(tmp_path):
    """The body is decompressed as it is read: 512 MiB of NUL bytes is found to be binary in its
    first megabyte, where it was once decompressed whole before a byte was looked at."""
    bomb = gzip_bomb(bytes(1 << 24), 32)
    chunked = (
        b"".join(b"%x\r\n%s\r\n" % (len(bomb[i : i + 4096]), bomb[i : i + 4096]) for i in range(0, len(bomb), 4096))
        + b"0\r\n\r\n"
    )
    (tmp_path / "a.http").write_bytes(http_response(bomb, "Content-Encoding: gzip"))
    (tmp_path / "b.http").write_bytes(http_response(chunked, "Content-Encoding: gzip\r\nTransfer-Encoding: chunked"))
    (tmp_path / "c.http").write_bytes(http_response(gzip_bomb(bytes(1 << 24), 32, -15), "Content-Encoding: deflate"))
    (tmp_path / "good.http").write_bytes(http_response(gzip_bomb(b"word " * (1 << 10), 3), "Content-Encoding: gzip"))
    result = run_limited(
        ["fingerprint", "-j", "1", *(tmp_path / n for n in ("a.http", "b.http", "c.http", "good.http"))], 400 << 20
    )
    assert result.returncode == 3, result.stderr.decode()
    assert [json.loads(line)["features"] for line in result.stdout.splitlines()] == [1]
    assert result.stderr.decode().count("binary file") == 3


@pytest.mark.parametrize("coding", ["gzip", "deflate", "zlib-deflate"])
def test_http_bodies_decode_as_they_stream_and_a_truncated_one_is_skipped(tmp_path, coding):
    import zlib

    body = text(4, 3000).encode()
    wbits = {"gzip": 31, "deflate": -15, "zlib-deflate": 15}[coding]
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    packed = packer.compress(body) + packer.flush()
    header = f"Content-Type: text/plain\r\nContent-Encoding: {coding.split('-')[-1]}"
    (tmp_path / "whole.http").write_bytes(http_response(packed, header))
    (tmp_path / "cut.http").write_bytes(http_response(packed[: len(packed) // 2], header))
    (tmp_path / "plain.txt").write_bytes(body)
    code, out, err = simdedup(
        "fingerprint", "-j", "1", tmp_path / "whole.http", tmp_path / "cut.http", tmp_path / "plain.txt"
    )
    assert code == 3, err
    whole, plain = (json.loads(line) for line in out.splitlines())
    assert {**whole, "id": None} == {**plain, "id": None}
    (warning,) = warnings(err)
    assert warning.startswith(f"simdedup: warning: {tmp_path / 'cut.http'}: ") and "cut short" in warning


@settings(max_examples=600, deadline=None)
@given(
    st.text(st.sampled_from("ab .;!\n。？ \t\u3000\xa0"), max_size=80),
    st.lists(st.integers(0, 80), max_size=6),
    st.sampled_from([3, 7, 1 << 22]),
)
def test_longest_sentences_of_chunks_are_those_of_the_whole_text(text_, cuts, cap):
    """However a text is cut into chunks, the sentences are those of the whole text (split at
    . ! ? ; and 。！？； and blank lines, whitespace collapsed), each cut into pieces of the cap
    (only sentences longer than that, from their first character that is not whitespace: 4 Mi
    characters by default)."""
    import heapq
    import re

    import simdedup.methods.sentences as sentences

    boundary = re.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n\s*\n")

    def reference(n: int) -> tuple[int, list[str]]:
        sentences_ = [s.lstrip() for s in boundary.split(text_)]
        pieces = [re.sub(r"\s+", " ", s[i : i + cap]).strip() for s in sentences_ for i in range(0, len(s), cap)]
        pieces = [p for p in pieces if p]
        return len(pieces), sorted(p for _, p in heapq.nlargest(n, [(len(p), p) for p in pieces]))

    bounds = sorted({min(c, len(text_)) for c in cuts} | {0, len(text_)})
    chunks = [text_[a:b] for a, b in zip(bounds, bounds[1:])]
    assert sentences.longest_sentences(chunks, 3, max_sentence=cap) == reference(3)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a b ", "c ", "a b c ", "dd  e\n", "é f "])
        | st.integers(0, 20).map(lambda i: f"t{i} " * (i % 3 + 1)),
        max_size=80,
    ),
    st.sampled_from(["words", "whitespace"]),
)
def test_repeated_chunks_are_counted_as_often_as_they_occur(chunks, name):
    """Chunks that repeat (as a compression bomb's do) are tokenized once and counted each time."""
    from collections import Counter

    from simdedup.tokenizers import get_tokenizer

    tokenizer = get_tokenizer(name)
    assert tokenizer.features(chunks) == dict(Counter(tokenizer.tokens("".join(chunks))))


def test_a_quoted_csv_field_over_the_limit_costs_only_its_row(tmp_path):
    """A quoted field of many short lines, longer than the limit in all: its row is skipped, read
    past to its closing quote, and the next row is read as a row (not the field's lines)."""
    field = '"' + 'word ""quoted""\n' * 100_000 + 'end"'  # about 1.6 MB over 100,001 lines
    (tmp_path / "d.csv").write_text(f"id,text\na,{text(1)}\nbig,{field}\nc,{text(2)}\n")
    code, out, err = simdedup(
        "fingerprint", "-j", "1", "--max-line-bytes", 1 << 20, "--id-field", "id", tmp_path / "d.csv"
    )
    assert code == 3, err
    assert ids(out) == ["a", "c"]
    assert warned_lines(err, tmp_path / "d.csv") == [2] and len(warnings(err)) == 1
