"""Pairwise scores of predicted clusters against a labelled set's gold pairs.

The same measures as ``../shared/eval/score.py``, for every set, with or without that folder:
predicted pairs are all pairs inside a predicted cluster, gold pairs are the ``pairs.jsonl``
lines with ``dup`` true; precision, recall and F1 of the one against the other, and the same
against the transitive closure of the gold pairs (what a clustering can at best reproduce). The largest
false cluster is the largest predicted cluster whose members are not all in one component of
the gold pairs (a cluster that merged documents no chain of duplicates joins).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from gold import components


def gold_pairs(set_dir: Path) -> list[tuple[str, str]]:
    pairs = set()
    with open(set_dir / "pairs.jsonl", encoding="utf-8") as handle:
        for line in handle:
            pair = json.loads(line)
            if pair["dup"]:
                pairs.add(tuple(sorted((pair["a"], pair["b"]))))
    return sorted(pairs)


def _pairs_in(n: int) -> int:
    return n * (n - 1) // 2


def _prf(hits: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = hits / predicted if predicted else (1.0 if gold == 0 else 0.0)
    recall = hits / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score(set_dir: Path, clusters: list[list[str]]) -> dict:
    """Scores of clusters of document ids (a document in several clusters counts in its first)."""
    label: dict[str, int] = {}
    for number, members in enumerate(clusters):
        for doc in members:
            label.setdefault(doc, number)
    sizes = Counter(label.values())
    predicted = sum(_pairs_in(n) for n in sizes.values())
    gold = gold_pairs(set_dir)
    hits = sum(1 for a, b in gold if a in label and label[a] == label.get(b))
    precision, recall, f1 = _prf(hits, predicted, len(gold))
    component = components(gold)
    closure = sum(_pairs_in(n) for n in Counter(component.values()).values())
    closure_hits = sum(
        _pairs_in(n) for n in Counter((c, label[d]) for d, c in component.items() if d in label).values()
    )
    members: dict[int, list[str]] = {}
    for doc, number in label.items():
        members.setdefault(number, []).append(doc)
    false_sizes = [
        len(docs) for docs in members.values() if len(docs) >= 2 and len({component.get(doc, doc) for doc in docs}) > 1
    ]
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "closure_f1": _prf(closure_hits, predicted, closure)[2],
        "gold_pairs": len(gold),
        "clusters": sum(1 for n in sizes.values() if n >= 2),
        "largest_cluster": max(sizes.values(), default=0),
        "largest_false_cluster": max(false_sizes, default=0),
    }


def read_clusters(path: Path) -> list[list[str]]:
    """Clusters from JSON lines with ``members`` (ids, paths or objects with an ``id``/``path``),
    as document ids: file names without their extension."""
    clusters = []
    for line in path.read_text(encoding="utf-8").splitlines():
        members = json.loads(line)["members"]
        clusters.append([Path(m if isinstance(m, str) else m.get("id", m.get("path"))).stem for m in members])
    return clusters
