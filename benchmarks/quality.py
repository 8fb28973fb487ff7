#!/usr/bin/env python3
"""Detection quality on every labelled dev set (``make eval``).

The sets: the team's ``../shared/eval`` (dev-en, dev-zh, dev-synthetic; skipped when that
folder is absent) and the package-sourced sets that ``make eval-data`` builds in
``benchmarks/.eval`` (skipped until built). On each set, in this one run:

- ``simdedup dedup`` with its default settings (plus any options given on the command line),
  and ``simdedup fingerprint | simdedup cluster`` with theirs (the pipeline, which decides by
  the records' sketches where dedup measures the texts), each scored pairwise against the set's gold (``scoring.py``): P / R / F1, F1 against the gold's
  transitive closure, clusters (largest), the largest false cluster (members not all in one
  component of the gold pairs), the pairs inside clusters that only the word-count (bag) path
  accepts (resemblance below its threshold), the largest spread of a cluster in bits, seconds;
- the baselines of ``../shared/eval/README.md`` (MinHash-LSH t=0.8 over the gold's shingles,
  PyPI simhash k=3), run by ``baselines.py`` in their own virtualenv (``--baselines PYTHON``);
- candidate recall: of the gold pairs, the share whose ``simdedup fingerprint`` fingerprints
  (defaults) are within the default k bits, the share whose sketches share a band (the second
  candidate source), and the gold pairs that are neither: never candidates, so never found.

The figure that counts is the minimum F1 over all sets.

    python benchmarks/quality.py --baselines .venv-eval/bin/python
    python benchmarks/quality.py --linkage single     # any dedup options, no baselines
    python benchmarks/quality.py --bag-only           # and list the bag-only pairs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_data import OUT  # noqa: E402
from eval_data import SETS as BUILT_SETS
from scoring import gold_pairs, read_clusters, score  # noqa: E402

from simdedup.fingerprints.record import sketch_kind  # noqa: E402
from simdedup.options import ClusterOptions  # noqa: E402
from simdedup.sketch import decode  # noqa: E402
from simdedup.verify import share_a_band  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("SIMDEDUP_EVAL", ROOT.parent / "shared" / "eval"))
SETS = ("dev-en", "dev-zh", "dev-synthetic")  # in EVAL
SHARED_SHINGLES = {"dev-en": "word3", "dev-zh": "char5", "dev-synthetic": "by-language"}
#: sets whose gold is not a shingle Jaccard: dev-synthetic's is an edit budget (same source,
#: edit(a) + edit(b) <= 0.10), which no measure of the two texts alone gives (docs/quality.md)
EDIT_GOLDS = ("dev-synthetic",)
BASELINES = {"minhash": "MinHash-LSH t=0.8", "simhash": "simhash k=3"}


def simdedup_command() -> list[str]:
    script = Path(sys.executable).parent / "simdedup"
    return [str(script)] if script.exists() else [sys.executable, "-m", "simdedup"]


def available_sets() -> tuple[dict[str, tuple[Path, str]], list[str]]:
    """``{name: (folder, gold shingles)}`` of the sets present, and notes on those missing."""
    sets, notes = {}, []
    if all((EVAL / name / "pairs.jsonl").exists() for name in SETS):
        sets.update({name: (EVAL / name, SHARED_SHINGLES[name]) for name in SETS})
    else:
        notes.append(f"no team dev sets at {EVAL}: dev-en, dev-zh, dev-synthetic skipped")
    missing = [name for name in BUILT_SETS if not (OUT / name / "pairs.jsonl").exists()]
    sets.update({name: (OUT / name, BUILT_SETS[name][0]) for name in BUILT_SETS if name not in missing})
    if missing:
        notes.append(f"{', '.join(missing)} not built: run `make eval-data` first")
    return sets, notes


def run_simdedup(folder: Path, extra: list[str], tmp: Path) -> dict:
    out = tmp / "clusters.jsonl"
    start = time.perf_counter()
    subprocess.run(simdedup_command() + ["dedup", "--silent", "-o", str(out), *extra, str(folder / "docs")], check=True)
    seconds = time.perf_counter() - start
    return scored_run(folder, out, seconds)


def run_pipeline(folder: Path, tmp: Path) -> dict:
    """``fingerprint | cluster`` with their defaults: the records' sketches decide."""
    fingerprints, out = tmp / "pipeline-fingerprints.jsonl", tmp / "pipeline-clusters.jsonl"
    start = time.perf_counter()
    subprocess.run(
        simdedup_command() + ["fingerprint", "--silent", "-o", str(fingerprints), str(folder / "docs")], check=True
    )
    subprocess.run(simdedup_command() + ["cluster", "-o", str(out), str(fingerprints)], check=True)
    return scored_run(folder, out, time.perf_counter() - start)


def scored_run(folder: Path, out: Path, seconds: float) -> dict:
    clusters = read_clusters(out)
    result = score(folder, clusters)
    spreads = [json.loads(line)["max_distance"] for line in out.read_text(encoding="utf-8").splitlines()]
    return {
        **result,
        "seconds": seconds,
        "max_spread": max(spreads, default=0),
        "bag_only": bag_only_pairs(folder, clusters),
    }


def bag_only_pairs(folder: Path, clusters: list[list[str]]) -> list[tuple[str, str, float, float]]:
    """Pairs inside the predicted clusters whose resemblance is below what the default
    threshold needs of them (:func:`simdedup.similarity.needed`): pairs that only the
    word-count (bag) path can have accepted, as ``(a, b, resemblance, needed)``. Measured
    exactly, with the default thresholds."""
    import numpy as np

    from simdedup import similarity

    needed = getattr(similarity, "needed", lambda threshold, grams: threshold)
    min_resemblance = ClusterOptions().min_resemblance
    found = []
    for members in clusters:
        if len(members) < 2:
            continue
        index = similarity.ExactIndex(
            similarity.KeptText((folder / "docs" / f"{doc}.txt").read_text(encoding="utf-8")) for doc in members
        )
        left, right = np.triu_indices(len(members), 1)
        grams = index.measures(left, right, ("grams",))[0]
        wanted = needed(min_resemblance, index.shingles(left, right))
        found += [
            (members[i], members[j], float(r), float(w))
            for i, j, r, w in zip(left.tolist(), right.tolist(), grams.tolist(), np.broadcast_to(wanted, grams.shape))
            if r < w
        ]
    return found


def run_baseline(python: str, method: str, folder: Path, shingles: str, tmp: Path) -> dict:
    out = tmp / f"{method}.jsonl"
    start = time.perf_counter()
    subprocess.run(
        [python, str(ROOT / "benchmarks" / "baselines.py"), method, str(folder), shingles, str(out)], check=True
    )
    return {**score(folder, read_clusters(out)), "seconds": time.perf_counter() - start}


def candidate_recall(folder: Path, tmp: Path) -> dict:
    """Of the gold pairs: within the default k of each other, sharing a sketch band, and
    neither (never candidates)."""
    out = tmp / "fingerprints.jsonl"
    subprocess.run(simdedup_command() + ["fingerprint", "--silent", "-o", str(out), str(folder / "docs")], check=True)
    records = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[Path(record["id"]).stem] = record
    first = next(iter(records.values()))
    kind = sketch_kind(first)
    k = ClusterOptions().resolve(first["bits"], kind, first.get("method", "simhash"), len(records)).k
    gold = [(a, b) for a, b in gold_pairs(folder) if a in records and b in records]
    resemblance = exact_resemblance(folder, gold)
    near = banded = never = at_threshold = found_at_threshold = 0
    for (a, b), value in zip(gold, resemblance):
        ra, rb = records[a], records[b]
        within = (int(ra["simhash"], 16) ^ int(rb["simhash"], 16)).bit_count() <= k
        band = kind is not None and share_a_band(decode(ra["sketch"]), decode(rb["sketch"]), kind)
        near, banded, never = near + within, banded + band, never + (not within and not band)
        if value >= ClusterOptions().min_resemblance:
            at_threshold += 1
            found_at_threshold += within or band
    total = max(len(gold), 1)
    return {
        "k": k,
        "gold": len(gold),
        "within_k": near / total,
        "band": banded / total,
        "never": never,
        "at_threshold": at_threshold,
        "recall_at_threshold": found_at_threshold / max(at_threshold, 1),
    }


def exact_resemblance(folder: Path, pairs: list[tuple[str, str]]) -> list[float]:
    """The resemblance of each pair, measured exactly on the documents' texts as dedup does."""
    import numpy as np

    from simdedup.similarity import ExactIndex, KeptText

    ids = sorted({doc for pair in pairs for doc in pair})
    row = {doc: i for i, doc in enumerate(ids)}
    index = ExactIndex(KeptText((folder / "docs" / f"{doc}.txt").read_text(encoding="utf-8")) for doc in ids)
    left = np.array([row[a] for a, _ in pairs], dtype=np.int64)
    right = np.array([row[b] for _, b in pairs], dtype=np.int64)
    return index.jaccard("grams", left, right).tolist() if pairs else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--baselines",
        metavar="PYTHON",
        help="interpreter of the baselines' virtualenv (make eval: .venv-eval/bin/python)",
    )
    parser.add_argument(
        "--bag-only",
        action="store_true",
        help="also list the bag-only pairs of each set (in the gold or not, resemblance, needed)",
    )
    args, extra = parser.parse_known_args()
    sets, notes = available_sets()
    for note in notes:
        print(f"note: {note}")
    if not sets:
        print("no dev set to measure; skipping")
        return 0
    results, pipeline, baselines, recall = {}, {}, {}, {}
    for name, (folder, shingles) in sets.items():
        with tempfile.TemporaryDirectory() as tmp:
            results[name] = run_simdedup(folder, extra, Path(tmp))
            pipeline[name] = run_pipeline(folder, Path(tmp))
            recall[name] = candidate_recall(folder, Path(tmp))
            if args.baselines:
                baselines[name] = {
                    method: run_baseline(args.baselines, method, folder, shingles, Path(tmp)) for method in BASELINES
                }
        print(f"measured {name}", file=sys.stderr)

    print(f"\nsimdedup dedup {' '.join(extra) or '(defaults)'}\n")
    header = (
        "| set | gold pairs | P | R | F1 | closure F1 | clusters (largest) | largest false cluster | bag-only pairs |"
        " max spread (bits) | s | fingerprint \\| cluster F1 |"
    )
    if baselines:
        header += "".join(f" {label} F1 |" for label in BASELINES.values())
    print(header)
    print("|" + " --- |" * (header.count("|") - 1))
    for name, r in results.items():
        line = (
            f"| {name} | {r['gold_pairs']} | {r['precision']:.3f} | {r['recall']:.3f} | **{r['f1']:.3f}** | "
            f"{r['closure_f1']:.3f} | {r['clusters']} ({r['largest_cluster']}) | {r['largest_false_cluster']} | "
            f"{len(r['bag_only'])} | {r['max_spread']} | "
            f"{r['seconds']:.1f} | {pipeline[name]['f1']:.3f} |"
        )
        if baselines:
            line += "".join(f" {baselines[name][method]['f1']:.3f} |" for method in BASELINES)
        print(line)
    worst = min(results, key=lambda name: results[name]["f1"])
    print(f"\nminimum F1 over {len(results)} sets: **{results[worst]['f1']:.3f}** ({worst})")
    low = min(pipeline, key=lambda name: pipeline[name]["f1"])
    print(f"minimum F1 of fingerprint | cluster: **{pipeline[low]['f1']:.3f}** ({low})")
    if baselines:
        for label, measured in (("dedup", results), ("fingerprint | cluster", pipeline)):
            margins = {name: measured[name]["f1"] - baselines[name]["minhash"]["f1"] for name in measured}
            low = min(margins, key=margins.get)
            print(f"smallest margin of {label} over MinHash-LSH: {margins[low]:+.3f} ({low})")
        print("\nbaselines, same run\n")
        print("| set | method | P | R | F1 | closure F1 | clusters (largest) | s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for name, by_method in baselines.items():
            for method, r in by_method.items():
                print(
                    f"| {name} | {BASELINES[method]} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | "
                    f"{r['closure_f1']:.3f} | {r['clusters']} ({r['largest_cluster']}) | {r['seconds']:.1f} |"
                )
    else:
        print("baselines not run (give --baselines PYTHON; make eval does)")
    if args.bag_only:
        print("\nbag-only pairs: set, a, b, in the gold, resemblance, resemblance the default threshold needs\n")
        for name, r in results.items():
            gold = {frozenset(pair) for pair in gold_pairs(sets[name][0])}
            for a, b, resemblance, wanted in r["bag_only"]:
                print(f"{name}\t{a}\t{b}\t{frozenset((a, b)) in gold}\t{resemblance:.3f}\t{wanted:.3f}")
    print(
        "\ncandidate recall: share of the gold pairs that `simdedup fingerprint` (defaults) puts within k bits,"
        " and whose sketches share a band; gold pairs that are neither are never candidates\n"
    )
    print(
        "| set | gold pairs | k | within k | share a sketch band | never candidates |"
        " gold pairs at resemblance >= 0.8 | of those, candidates |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, c in recall.items():
        print(
            f"| {name} | {c['gold']} | {c['k']} | {c['within_k']:.3f} | {c['band']:.3f} | {c['never']} | "
            f"{c['at_threshold']} | {c['recall_at_threshold']:.4f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
