#!/usr/bin/env python3
"""Every method side by side on the team's development sets: pairwise F1 and throughput.

    python benchmarks/compare.py            # make compare

Needs ``../shared/eval`` (skipped cleanly without it). Each method runs as a user would run it
(``simdedup dedup`` with the method's options, or ``simdedup exact``); F1 comes from the sets'
``score.py``; MB/s is the set's size over the command's wall time (one process, ``-j 1``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import EVAL, SETS, simdedup_command  # noqa: E402

METHODS = {
    "simhash, defaults (words, sketch, k 10, complete)": ["dedup"],
    "simhash, plain (whitespace, k 3, single linkage)": [
        "dedup",
        "--tokenizer",
        "whitespace",
        "--sketch",
        "0",
        "-k",
        "3",
        "--linkage",
        "single",
    ],
    "nilsimsa, min score 90": ["dedup", "--method", "nilsimsa", "--min-score", "90"],
    "nilsimsa, min score 75": ["dedup", "--method", "nilsimsa", "--min-score", "75"],
    "longest 3 sentences": ["dedup", "--method", "sentences"],
    "exact text (content hash)": ["exact"],
}


def clusters_from_exact(path: Path) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        groups.setdefault(record["duplicate_of"], [record["duplicate_of"]]).append(record["id"])
    return list(groups.values())


def main() -> int:
    if not (EVAL / "score.py").exists():
        print(f"no evaluation sets at {EVAL}; skipping")
        return 0
    sys.path.insert(0, str(EVAL))
    import score

    header = "| method | " + " | ".join(f"{name} F1 | MB/s" for name in SETS) + " |"
    print(header)
    print("| --- |" + " --- | --- |" * len(SETS))
    for label, args in METHODS.items():
        cells = []
        for name in SETS:
            docs = EVAL / name / "docs"
            size = sum(p.stat().st_size for p in docs.iterdir())
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "out.jsonl"
                extra = ["-j", "1"] if args[0] == "dedup" else []
                start = time.perf_counter()
                subprocess.run(
                    simdedup_command() + [args[0], "--silent", "-o", str(out), *extra, *args[1:], str(docs)], check=True
                )
                seconds = time.perf_counter() - start
                ids = score.load_ids(str(EVAL / name))
                if args[0] == "exact":
                    raw = clusters_from_exact(out)
                    clusters = [[score.resolve(m, ids) for m in group] for group in raw]
                else:
                    clusters, _ = score.load_pred(str(out), ids)
                result = score.score(str(EVAL / name), clusters, None, ids)
            cells.append(f"{result['f1']:.3f} | {size / seconds / 1e6:.1f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
