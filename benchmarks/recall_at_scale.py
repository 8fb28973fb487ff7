#!/usr/bin/env python3
"""Recall at scale (``make bench``): each dev set alone, and the same set among N generated
distractor documents, clustered with the default settings.

The default k falls as a corpus grows (10, then 8 above 200,000 documents, 6 above 2,000,000),
so a set's near-duplicates found among a few thousand documents could be missed among
millions; the second candidate source (sketch bands) is what should keep them. Both runs here
use ``simdedup cluster`` on the fingerprint records (defaults: sketch verification, k and bands
by corpus size), so the only difference is the crowd. Distractors are documents of 30 to 120
words drawn from a Zipf vocabulary (English-like, and Chinese-like from jieba's dictionary for
one in ten), fingerprinted once and kept under ``benchmarks/.corpus``. Scores count every
predicted pair, so a distractor clustered with a dev document is a false positive.

    python benchmarks/recall_at_scale.py                 # 10^7 distractors
    python benchmarks/recall_at_scale.py --count 1000000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import available_sets, simdedup_command  # noqa: E402
from scoring import read_clusters, score  # noqa: E402
from speed import CORPUS, _chinese_vocabulary, _english_vocabulary  # noqa: E402

CHUNK = 100_000


def distractor_fingerprints(count: int) -> Path:
    """Binary fingerprint records of ``count`` generated documents (made once)."""
    records = CORPUS / f"distractors-{count}.sdfp"
    if records.exists():
        return records
    import random

    CORPUS.mkdir(parents=True, exist_ok=True)
    text = CORPUS / f"distractors-{count}.jsonl"
    rng = np.random.default_rng(count)
    vocabularies = []
    for words, weights in (_english_vocabulary(random.Random(count)), _chinese_vocabulary()):
        cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
        vocabularies.append((np.array(words, dtype=object), cumulative / cumulative[-1]))
    with open(text, "w", encoding="utf-8") as out:
        for start in range(0, count, CHUNK):
            lines = []
            for i in range(start, min(start + CHUNK, count)):
                zh = rng.random() < 0.1
                words, cumulative = vocabularies[zh]
                drawn = words[np.searchsorted(cumulative, rng.random(int(rng.integers(30, 121))))]
                lines.append(
                    json.dumps({"id": f"x{i:09d}", "text": ("" if zh else " ").join(drawn)}, ensure_ascii=False)
                )
            out.write("\n".join(lines) + "\n")
    subprocess.run(
        simdedup_command()
        + [
            "fingerprint",
            "--silent",
            "-j",
            "2",
            "--format",
            "binary",
            "--id-field",
            "id",
            "-o",
            str(records),
            str(text),
        ],
        check=True,
    )
    text.unlink()
    return records


def cluster(files: list[Path], out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(simdedup_command() + ["cluster", "-o", str(out), "--force", *map(str, files)], check=True)
    return time.perf_counter() - start


def clusters_seen_by(clusters: list[list[str]], members: list[list[str]], folder: Path) -> list[list[str]]:
    """The clusters one set's run would give: the members of the set and the distractors (ids
    that are not paths); members of the other sets are left out (the synthetic sets are edits
    of the others' documents, so they cluster with them)."""
    ours = str(folder) + "/"
    kept = []
    for ids, paths in zip(clusters, members):
        mine = [doc for doc, path in zip(ids, paths) if path.startswith(ours) or not path.startswith("/")]
        if len(mine) >= 2:
            kept.append(mine)
    return kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10**7, help="distractor documents")
    args = parser.parse_args()
    sets, notes = available_sets()
    for note in notes:
        print(f"note: {note}")
    start = time.perf_counter()
    distractors = distractor_fingerprints(args.count)
    print(f"{args.count:,} distractors fingerprinted ({time.perf_counter() - start:.0f} s, or cached)")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        records, alone, seconds = {}, {}, {}
        for name, (folder, _) in sets.items():  # ids are absolute paths: apart from the distractors'
            records[name] = tmp / f"{name}.sdfp"
            subprocess.run(
                simdedup_command()
                + [
                    "fingerprint",
                    "--silent",
                    "--format",
                    "binary",
                    "-o",
                    str(records[name]),
                    str(folder.resolve() / "docs"),
                ],
                check=True,
            )
            seconds[name] = cluster([records[name]], tmp / f"{name}.jsonl")
            alone[name] = score(folder, read_clusters(tmp / f"{name}.jsonl"))
        among_seconds = cluster([*records.values(), distractors], tmp / "among.jsonl")
        lines = (tmp / "among.jsonl").read_text(encoding="utf-8").splitlines()
        members = [[m["id"] for m in json.loads(line)["members"]] for line in lines]
        clusters = read_clusters(tmp / "among.jsonl")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child: that run
    print(
        f"all sets together among the distractors: one `cluster` run of {among_seconds:.0f} s, "
        f"peak RSS {peak:,.0f} MB\n"
    )
    print(
        "| set | documents | F1 alone | F1 among distractors | difference | P / R alone | P / R among | "
        "cluster s alone |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for name, (folder, _) in sets.items():
        among = score(folder, clusters_seen_by(clusters, members, folder.resolve() / "docs"))
        docs = sum(1 for _ in (folder / "docs").iterdir())
        worst = max(worst, alone[name]["f1"] - among["f1"])
        print(
            f"| {name} | {docs:,} | {alone[name]['f1']:.3f} | {among['f1']:.3f} | {among['f1'] - alone[name]['f1']:+.3f} | "
            f"{alone[name]['precision']:.3f} / {alone[name]['recall']:.3f} | "
            f"{among['precision']:.3f} / {among['recall']:.3f} | {seconds[name]:.1f} |"
        )
    print(f"\nlargest F1 loss among {args.count:,} distractors: {worst:.3f} (target: at most 0.01)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
