"""Hostile inputs to the document readers: damaged compressed files, huge CSV fields and JSON
lines, HTTP responses that lie, compression bombs. Each must give a warning and a skip (exit 3)
with the good inputs still read, never a traceback or exit 70, in bounded memory."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

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
        code, out, err = simdedup("fingerprint", "-j", jobs, bad, tmp_path / "good.txt", tmp_path / f"good2.txt.{codec}")
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
        assert warnings(err) == [warnings(err)[0]] and warnings(err)[0].startswith(f"simdedup: warning: {bad}:{len(read)}: ")
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
