#!/usr/bin/env python3
"""Peak memory and throughput on the two large inputs of the input-formats work.

    python benchmarks/large_inputs.py        # 10^5 small files and one 2 GB JSON-lines file

Both inputs are generated under ``benchmarks/.corpus`` (about 2.4 GB of disk); each run is a
separate process measured by :func:`speed.measure` (wall seconds, peak RSS).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import CORPUS, SIMDEDUP, compile_bytecode, measure  # noqa: E402


def small_files(count: int = 100_000) -> Path:
    folder = CORPUS / f"small-{count}"
    marker = CORPUS / f"small-{count}.complete"
    if not marker.exists():
        rng = np.random.default_rng(9)
        words = np.array([f"w{i}" for i in range(5000)])
        for n in range(count):
            path = folder / str(n // 1000) / f"{n % 1000}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(" ".join(words[rng.integers(0, 5000, rng.integers(20, 200))]))
        marker.touch()
    return folder


def big_jsonl(size: int = 2_000_000_000) -> Path:
    path = CORPUS / "big.jsonl"
    marker = CORPUS / "big.jsonl.complete"
    if not marker.exists():
        rng = np.random.default_rng(5)
        letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
        words = np.array(["".join(rng.choice(letters, rng.integers(1, 10))) for _ in range(30000)])
        weights = 1 / np.arange(1, 30001)
        weights /= weights.sum()
        written, number = 0, 0
        with open(path, "w") as out:
            while written < size:
                lines = []
                for row in words[rng.choice(30000, size=(1000, 800), p=weights)]:
                    lines.append('{"id":"doc%d","text":"%s"}\n' % (number, " ".join(row)))
                    number += 1
                block = "".join(lines)
                out.write(block)
                written += len(block)
        marker.touch()
    return path


def main() -> int:
    compile_bytecode()
    CORPUS.mkdir(parents=True, exist_ok=True)
    out = str(CORPUS / "out.jsonl")
    print("| input | command | s | MB/s | peak RSS MB |")
    print("| --- | --- | --- | --- | --- |")
    for label, path in (("10^5 small files", small_files()), ("2 GB JSON lines", big_jsonl())):
        files = [f for f in path.rglob("*") if f.is_file()] if path.is_dir() else [path]
        size = sum(f.stat().st_size for f in files)
        for command in (
            ["fingerprint", "--silent", "-j", "1", "-o", out, "--force"],
            ["fingerprint", "--silent", "-j", "2", "-o", out, "--force"],
            ["dedup", "--silent", "-o", out, "--force"],
        ):
            figures = measure(SIMDEDUP + command + [str(path)])  # (which reads the input first)
            name = command[0] + (f" -j {command[3]}" if "-j" in command else " (all cores)")
            print(
                f"| {label} | {name} | {figures['seconds']:.1f} | "
                f"{size / figures['seconds'] / 1e6:.1f} | {figures['rss_mb']:.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
