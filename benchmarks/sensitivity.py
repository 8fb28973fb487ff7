#!/usr/bin/env python3
"""The verification rule's constants chosen by the minimum F1 over every dev set, and how that
minimum moves around each chosen value (the table of ``docs/quality.md``).

Each set is fingerprinted once (``dedup``'s defaults, texts kept for exact verification); every
setting is then a clustering of those fingerprints, scored as ``make eval`` scores (``scoring.py``).
A setting is a value of one constant with the others at their defaults: ``min_similarity``,
``min_resemblance``, ``min_features`` (options of ``dedup``) and ``EVIDENCE_GRAMS``,
``CJK_SHARE`` (:mod:`simdedup.similarity`; ``BAG_MARGIN`` too, for ``--similarity combined``).
The minimum is printed over all sets and over those whose gold is a shingle Jaccard.

    python benchmarks/sensitivity.py                      # the table, for docs/quality.md
    python benchmarks/sensitivity.py --set evidence=0,8,16  # other values of one constant
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import EDIT_GOLDS, available_sets  # noqa: E402
from scoring import score  # noqa: E402

from simdedup import similarity  # noqa: E402
from simdedup.group import ClusterOptions, cluster_fingerprints  # noqa: E402
from simdedup.methods import make_method  # noqa: E402
from simdedup.read import Inputs  # noqa: E402
from simdedup.run import FingerprintRun, collect_records, prepare_dedup  # noqa: E402

#: constant -> values tried around the default (the default among them)
GRID = {
    "min_resemblance": (0.76, 0.78, 0.8, 0.82, 0.84),
    "evidence": (0.0, 2.0, 8.0),
    "cjk_share": (0.003, 0.01, 0.03, 0.1),
    "min_similarity": (0.84, 0.88, 0.92),
    "min_features": (0, 10, 20),
}


def defaults() -> dict[str, float]:
    options = ClusterOptions()
    return {
        "min_similarity": options.min_similarity,
        "min_resemblance": options.min_resemblance,
        "margin": similarity.BAG_MARGIN,
        "evidence": similarity.EVIDENCE_GRAMS,
        "cjk_share": similarity.CJK_SHARE,
        "min_features": options.min_features,
    }


def fingerprinted(folder: Path):
    method = make_method("simhash")
    options = ClusterOptions()
    prepare_dedup(method, options)
    run = FingerprintRun((str(folder / "docs"),), method, Inputs(), 1)
    return collect_records(run.records())


def f1_of(fingerprints, folder: Path, setting: dict[str, float]) -> dict:
    similarity.BAG_MARGIN = setting["margin"]
    similarity.EVIDENCE_GRAMS = setting["evidence"]
    similarity.CJK_SHARE = setting["cjk_share"]
    options = replace(
        ClusterOptions(),
        min_similarity=setting["min_similarity"],
        min_resemblance=setting["min_resemblance"],
        min_features=int(setting["min_features"]),
    )
    clusters = cluster_fingerprints(fingerprints, options.for_fingerprints(fingerprints))
    ids = fingerprints.ids
    return score(folder, [[Path(ids[m]).stem for m in c.members] for c in clusters])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V,V,..", help="values of a constant")
    args = parser.parse_args()
    grid = dict(GRID)
    for item in args.set:
        name, values = item.split("=")
        grid = {name: tuple(float(v) for v in values.split(","))}
    sets, notes = available_sets()
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    prints = {name: fingerprinted(folder) for name, (folder, _) in sets.items()}
    base = defaults()
    print("| constant | value | " + " | ".join(sets) + " | minimum | minimum, shingle golds |")
    print("|" + " --- |" * (len(sets) + 4))
    for constant, values in grid.items():
        for value in values:
            setting = {**base, constant: value}
            f1s = {name: f1_of(prints[name], folder, setting)["f1"] for name, (folder, _) in sets.items()}
            shingle_golds = [f for name, f in f1s.items() if name not in EDIT_GOLDS]
            mark = " (chosen)" if value == base[constant] else ""
            print(
                f"| {constant} | {value:g}{mark} | "
                + " | ".join(f"{f:.3f}" for f in f1s.values())
                + f" | **{min(f1s.values()):.3f}** | **{min(shingle_golds, default=float('nan')):.3f}** |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
