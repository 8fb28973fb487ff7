#!/usr/bin/env python3
"""Linkage on a dense family of near-copies (``make bench``): what templated pages look like.

N documents, every pair within k = 10 bits (each fingerprint is one base value with five of its
bits flipped) and about a quarter of the pairs verified (each sketch is one base sketch with 8
to 10 of its 128 bins changed; two sketches pass 0.87 when they differ in at most 16 bins).
Each linkage clusters the same fingerprint lines through the CLI, in a fresh process (wall
time includes start-up; a job under 20 s counts as the median of three runs). Candidate and
verified pairs are counted with the library.

    python benchmarks/linkage.py                  # 200, 2,000 and 4,000 near-copies
    python benchmarks/linkage.py --sizes 200,2000
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from speed import CORPUS, SIMDEDUP, measure

K = 10
SETTINGS = {"method": "simhash", "tokenizer": "words", "options": {"shingle": 1}, "hash": "xxh3", "weighting": "binary"}


def make_family(count: int) -> tuple[str, int, int]:
    """The fingerprint lines of ``count`` near-copies: ``(path, candidate pairs, verified pairs)``."""
    from simdedup.pairs import near_pairs
    from simdedup.sketch import encode, pair_similarity

    rng = np.random.default_rng(count)
    base = int(rng.integers(0, 1 << 63))
    values = np.array(
        [base ^ sum(1 << int(b) for b in rng.choice(64, 5, replace=False)) for _ in range(count)], dtype=np.uint64
    )
    sketches = np.tile(rng.integers(0, 256, 128, dtype=np.uint8), (count, 1))
    for row in sketches:
        changed = rng.choice(128, rng.choice([8, 9, 9, 10]), replace=False)
        row[changed] = rng.integers(0, 256, len(changed))
    left, right, _ = near_pairs(values.reshape(-1, 1), K)
    verified = int((pair_similarity(sketches, left, right) >= 0.87).sum())
    path = CORPUS / f"family-{count}.jsonl"
    CORPUS.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as out:
        for i, (value, sketch) in enumerate(zip(values.tolist(), sketches)):
            record = {
                "id": f"page-{i:05d}",
                "simhash": f"{value:016x}",
                "bits": 64,
                "features": 200,
                "bytes": 2000,
                **SETTINGS,
                "sketch": encode(sketch.tobytes()),
            }
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
    return str(path), len(left), verified


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,2000,4000", help="family sizes")
    args = parser.parse_args()
    print("| near-copies | candidate pairs | verified pairs | linkage | s | peak RSS MB | clusters |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for count in map(int, args.sizes.split(",")):
        path, candidates, verified = make_family(count)
        for linkage in ("complete", "star", "single"):
            out = str(CORPUS / f"family-{count}-{linkage}.out")
            figures = measure(
                SIMDEDUP + ["cluster", "-k", str(K), "--linkage", linkage, "--singletons", path], output=out
            )
            with open(out) as handle:
                clusters = sum(1 for _ in handle)
            print(
                f"| {count:,} | {candidates:,} | {verified:,} | {linkage} | {figures['seconds']:.2f} | "
                f"{figures['rss_mb']:.0f} | {clusters:,} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
