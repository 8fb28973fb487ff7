#!/usr/bin/env python3
"""Peak memory and time on hostile inputs: compression bombs and huge one-line JSON documents,
English and Chinese (the jieba tokenizer).

    python benchmarks/hostile_memory.py      # (make large runs it after large_inputs.py)

The targets (issue 18): at most 300 MB of peak RSS for any single compressed document, whatever
it expands to; at most 1 GB and 15 s for a 100 MB one-line JSON document. Inputs are made under
``benchmarks/.corpus/hostile`` (about 350 MB of disk). A bomb is one compressed piece written
many times over: gzip members, bzip2 and xz streams and zstd frames may follow each other in
one file, and each is read as the continuation of the one before. Each job is a separate
process measured by :func:`speed.measure` (wall seconds, peak RSS of the child).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import struct
import sys
import zlib
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import CORPUS, SIMDEDUP, compile_bytecode, measure  # noqa: E402

FOLDER = CORPUS / "hostile"
GIB = 1 << 30
PIECE = 1 << 24  # 16 MiB, compressed once and written GIB / PIECE times
ONE_WORD = b"word " * (PIECE // 5) + b"w" * (PIECE % 5)


def random_words(size: int, seed: int, vocabulary: int = 100_000, prefix: str = "w") -> str:
    """Words drawn from a vocabulary, ``size`` characters or a little more."""
    rng = random.Random(seed)
    words = [f"{prefix}{rng.randrange(vocabulary)}" for _ in range(200_000)]
    parts, length = [], 0
    while length < size:
        part = " ".join(rng.choice(words) for _ in range(100_000))
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts)


# A 16 KiB period of random words: gzip's 32 KiB window sees it repeat, so even the stream of
# random words compresses about a thousand times.
RANDOM_WORDS = random_words(1 << 14, 1, 5000).encode()[: 1 << 14] * (PIECE >> 14)


def chinese(size: int, seed: int) -> bytes:
    """``size`` bytes of Chinese words of jieba's dictionary (and a few it does not know, and
    punctuation) back to back, without white space."""
    rng = random.Random(seed)
    words = ["中文", "分词", "数据", "我们", "测试", "鸡尾酒会", "的", "是", "，", "。", "丁七", "夬"]
    return "".join(rng.choice(words) for _ in range(size // 5)).encode()[: size // 3 * 3]


CHINESE = chinese(PIECE, 5)

COMPRESSORS = {
    "gz": lambda data: gzip.compress(data, 9),
    "bz2": lambda data: bz2.compress(data, 9),
    "xz": lambda data: lzma.compress(data, preset=6),
    "zst": lambda data: __import__("zstandard").ZstdCompressor(level=19).compress(data),
}


def bomb(name: str, piece: bytes, compress, size: int = GIB) -> Path:
    path = FOLDER / name
    if not path.exists():
        packed = compress(piece)
        with open(path.with_suffix(".part"), "wb") as out:
            for _ in range(size // len(piece)):
                out.write(packed)
        path.with_suffix(".part").rename(path)
    return path


def single_gzip_member(piece: bytes, copies: int) -> bytes:
    """One gzip member holding ``piece`` ``copies`` times (an HTTP body is one member), made in the
    time of compressing the piece twice: after a full flush the compressor's output for the same
    input is the same."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(copies):
        crc = zlib.crc32(piece, crc)
    trailer = struct.pack("<II", crc, len(piece) * copies & 0xFFFFFFFF)
    return first + again * (copies - 1) + compressor.flush()[:-8] + trailer


def http_bomb() -> Path:
    path = FOLDER / "one-word.http"
    if not path.exists():
        body = single_gzip_member(ONE_WORD, GIB // PIECE)
        path.write_bytes(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n\r\n" + body)
    return path


def json_line(name: str, text: Callable[[], str]) -> Path:
    path = FOLDER / name
    if not path.exists():
        path.write_text(json.dumps({"id": name, "text": text()}, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def long_line_bomb(name: str, head: bytes, before: bytes, after: bytes) -> Path:
    """A gzip file of ``head``, a line of 1 GiB (between ``before`` and ``after``) and ``head``
    again: the long line is skipped unread, in bounded memory."""
    path = FOLDER / name
    if not path.exists():
        with open(path, "wb") as out:
            out.write(gzip.compress(head + before))
            packed = gzip.compress(ONE_WORD, 9)
            for _ in range(GIB // PIECE):
                out.write(packed)
            out.write(gzip.compress(after + head))
    return path


def main() -> int:
    compile_bytecode()
    FOLDER.mkdir(parents=True, exist_ok=True)
    fingerprint = ["fingerprint", "--silent", "-j", "1"]
    row = random_words(5000, 2).encode() + b"\n"
    line = json.dumps({"text": row.decode().strip()}).encode() + b"\n"
    jobs = [
        (f"1 GiB of one word, .{codec}", bomb(f"one-word.txt.{codec}", ONE_WORD, compress), fingerprint)
        for codec, compress in COMPRESSORS.items()
    ]
    jobs += [
        ("1 GiB of random words, .gz", bomb("random-words.txt.gz", RANDOM_WORDS, COMPRESSORS["gz"]), fingerprint),
        (
            "1 GiB of one word, .gz",
            bomb("one-word.txt.gz", ONE_WORD, COMPRESSORS["gz"]),
            ["fingerprint", "--silent", "-j", "1", "--method", "sentences"],
        ),
        ("1 GiB of NUL bytes, .zst", bomb("nul.txt.zst", bytes(PIECE), COMPRESSORS["zst"]), fingerprint),
        ("HTTP response, 1 GiB gzip body", http_bomb(), fingerprint),
        (
            ".jsonl.gz with a 1 GiB line",
            long_line_bomb("long-line.jsonl.gz", line, b'{"text": "', b'"}\n'),
            fingerprint,
        ),
        (".csv.gz with a 1 GiB row", long_line_bomb("long-row.csv.gz", b"text\n" + row, b"", b"\n"), fingerprint),
    ]
    # Chinese without white space: each chunk as long as the reader makes them (4 MiB of text),
    # cut by the jieba tokenizer's kernel; a chunk's words are counted a few thousand at a time
    jieba = ["fingerprint", "--silent", "-j", "1", "--tokenizer", "jieba"]
    jobs += [
        (
            "256 MiB of Chinese, no white space, .gz",
            bomb("chinese.txt.gz", CHINESE, COMPRESSORS["gz"], GIB // 4),
            jieba,
        ),
        (
            "100 MB one-line JSON, Chinese",
            json_line("one-line-chinese.jsonl", lambda: chinese(100_000_000, 6).decode()),
            jieba,
        ),
    ]
    ascii_line = json_line("one-line-ascii.jsonl", lambda: random_words(100_000_000, 3))
    accents_line = json_line("one-line-accents.jsonl", lambda: random_words(88_000_000, 4, prefix="é"))  # 100 MB
    jobs += [
        ("100 MB one-line JSON, ASCII", ascii_line, fingerprint),
        ("100 MB one-line JSON, ASCII", ascii_line, ["fingerprint", "--silent"]),
        ("100 MB one-line JSON, not ASCII", accents_line, fingerprint),
    ]
    print("| input | on disk MB | command | s | peak RSS MB | exit |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, path, command in jobs:
        figures = measure(SIMDEDUP + command + [str(path)])
        shown = " ".join(command[:1] + [c for c in command[1:] if c != "--silent"])
        print(
            f"| {label} | {path.stat().st_size / 1e6:.1f} | {shown} | {figures['seconds']:.1f} | "
            f"{figures['rss_mb']:.0f} | {figures['status']} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
