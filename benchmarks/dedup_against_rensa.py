#!/usr/bin/env python3
"""`dedup` of real-en from one or more source trees against rensa (MinHash-LSH), side by side in
each round: the ratio of rensa's time to each tree's, the median over the rounds, peak memory.

    python benchmarks/dedup_against_rensa.py . --jobs 1
    python benchmarks/dedup_against_rensa.py /path/to/old/checkout . --jobs 2 --rounds 3

Each tree runs as ``PYTHONPATH=TREE python -m simdedup dedup --silent -j N -o /dev/null -``
from a neutral directory, fed real-en's UTF-8 file list (``speed.utf8_file_list``); rensa runs as
``speed.anchor`` runs it (``make bench`` sets up its virtualenv). After the rounds, one more
run of each tree, not timed, samples the peak memory of all its processes (``speed.tree_peak_mb``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", help="source trees (folders holding simdedup/)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = [str(Path(t).resolve()) for t in args.trees]
    listing = speed.utf8_file_list(speed.CORPUS / "real-en")
    rensa_python = str(speed.VENV_A / "bin" / "python")
    rounds = []
    for _ in range(args.rounds):
        rensa = speed.anchor(rensa_python, "rensa", listing)
        row = {"rensa": (round(rensa["seconds"], 2), rensa.get("rss_mb"))}
        for tree in trees:
            command = (
                f"cd / && PYTHONPATH={shlex.quote(tree)} {shlex.quote(sys.executable)} -m simdedup "
                f'dedup --silent -j {args.jobs} -o /dev/null - < "$1"'
            )
            found = speed.measure(["sh", "-c", command, "sh", str(listing)])
            row[tree] = (round(found["seconds"], 2), found.get("rss_mb"), round(rensa["seconds"] / found["seconds"], 2))
        rounds.append(row)
        print(json.dumps(row), flush=True)
    for tree in trees:
        ratios = sorted(r[tree][2] for r in rounds)
        command = (
            f"cd / && PYTHONPATH={shlex.quote(tree)} {shlex.quote(sys.executable)} -m simdedup "
            f'dedup --silent -j {args.jobs} -o /dev/null - < "$1"'
        )
        memory = speed.tree_peak_mb(["sh", "-c", command, "sh", str(listing)])
        print(
            f"{tree}: median {ratios[len(ratios) // 2]}x rensa at -j {args.jobs}; "
            f"peak memory of all its processes {memory:.0f} MB (a run apart)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
