#!/usr/bin/env python3
"""Detection quality on the team's labelled development sets (``make eval``).

Runs ``simdedup dedup`` with its default settings (plus any extra options given on the command
line) on every set in ``../shared/eval`` and scores the clusters with that folder's ``score.py``.
Prints a Markdown table beside the MinHash-LSH and plain-simhash baselines of the shared README.
Exits 0 with a note when the sets are not there (a user's clone has no ``../shared``).

    python benchmarks/quality.py                      # defaults
    python benchmarks/quality.py --linkage single     # any dedup options
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("SIMDEDUP_EVAL", ROOT.parent / "shared" / "eval"))
SETS = ("dev-en", "dev-zh", "dev-synthetic")
# Pairwise F1 of the baselines, from ../shared/eval/README.md (same machine class, one run).
BASELINES = {
    "dev-en": {"minhash-lsh t=0.8": 0.947, "simhash k=3": 0.279},
    "dev-zh": {"minhash-lsh t=0.8": 0.967, "simhash k=3": 0.748},
    "dev-synthetic": {"minhash-lsh t=0.8": 0.793, "simhash k=3": 0.735},
}


def simdedup_command() -> list[str]:
    script = Path(sys.executable).parent / "simdedup"
    return [str(script)] if script.exists() else [sys.executable, "-m", "simdedup"]


def run_set(name: str, extra: list[str], score) -> dict:
    docs = EVAL / name / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "clusters.jsonl"
        start = time.perf_counter()
        subprocess.run(simdedup_command() + ["dedup", "--silent", "-o", str(out), *extra, str(docs)], check=True)
        seconds = time.perf_counter() - start
        ids = score.load_ids(str(EVAL / name))
        clusters, _ = score.load_pred(str(out), ids)
        result = score.score(str(EVAL / name), clusters, None, ids)
        spreads = [json.loads(line)["max_distance"] for line in out.read_text(encoding="utf-8").splitlines()]
    result["seconds"] = seconds
    result["max_spread"] = max(spreads, default=0)
    return result


def main() -> int:
    extra = sys.argv[1:]
    if not (EVAL / "score.py").exists():
        print(f"no evaluation sets at {EVAL}; skipping (they live in the team's shared folder)")
        return 0
    sys.path.insert(0, str(EVAL))
    import score  # the team's scorer, stdlib only

    print(f"simdedup dedup {' '.join(extra) or '(defaults)'}\n")
    print("| set | P | R | F1 | closure F1 | clusters (largest) | max spread (bits) | s | MinHash-LSH F1 | simhash k=3 F1 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = 1.0
    for name in SETS:
        if not (EVAL / name).is_dir():
            continue
        r = run_set(name, extra, score)
        base = BASELINES[name]
        worst = min(worst, r["f1"] - base["minhash-lsh t=0.8"])
        print(f"| {name} | {r['precision']:.3f} | {r['recall']:.3f} | **{r['f1']:.3f}** | {r['closure_f1']:.3f} | "
              f"{r['clusters_2plus']} ({r['largest_cluster']}) | {r['max_spread']} | {r['seconds']:.1f} | "
              f"{base['minhash-lsh t=0.8']:.3f} | {base['simhash k=3']:.3f} |")
    print(f"\nsmallest margin over MinHash-LSH: {worst:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
