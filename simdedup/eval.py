"""Pairwise precision, recall and F1 of clusters against labelled duplicate pairs.

Predicted pairs are all pairs of documents inside each cluster; gold pairs are the labelled
duplicate pairs. precision = |predicted & gold| / |predicted|, recall = |predicted & gold| /
|gold|. A document in several clusters counts in its first one.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Iterable, Iterator

from .errors import RecordError
from .jsonline import parse_json_line


def normalise(doc_id: str, match: str) -> str:
    """The form of an id used for matching: as is, its file name, or its file name without extension."""
    if match == "id":
        return doc_id
    base = os.path.basename(doc_id.rstrip("/"))
    return os.path.splitext(base)[0] if match == "stem" else base


def read_gold_pairs(lines: Iterable[str], name: str, match: str = "id") -> set[tuple[str, str]]:
    """Duplicate pairs from JSON lines (``{"a": .., "b": ..}``, skipped when ``"dup": false``)
    or from lines of two whitespace- or tab-separated ids.

    Raises:
        RecordError: a line that is neither (``FILE:LINE: reason``).
    """
    pairs = set()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("{"):
            try:
                obj = parse_json_line(text)
            except ValueError as exc:
                raise RecordError(f"{name}:{number}: {exc}") from None
            try:
                a, b = str(obj["a"]), str(obj["b"])
            except (KeyError, TypeError):
                raise RecordError(f"{name}:{number}: expected a JSON object with 'a' and 'b'") from None
            if obj.get("dup", True) is False:
                continue
        else:
            parts = text.split("\t") if "\t" in text else text.split()
            if len(parts) != 2:
                raise RecordError(f"{name}:{number}: expected two ids")
            a, b = parts
        a, b = normalise(a, match), normalise(b, match)
        if a != b:
            pairs.add((a, b) if a < b else (b, a))
    return pairs


def read_cluster_members(lines: Iterable[str], name: str, match: str = "id") -> Iterator[list[str]]:
    """Member ids of each cluster line (simdedup's output, or a bare JSON list of ids)."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = parse_json_line(line)
        except ValueError as exc:
            raise RecordError(f"{name}:{number}: {exc}") from None
        try:
            members = obj["members"] if isinstance(obj, dict) else obj
            ids = [m["id"] if isinstance(m, dict) else m for m in members]
        except (KeyError, TypeError):
            raise RecordError(f"{name}:{number}: not a cluster line") from None
        yield [normalise(str(i), match) for i in ids]


@dataclass
class PairScores:
    precision: float
    recall: float
    f1: float
    true_pairs: int
    predicted_pairs: int
    gold_pairs: int

    def as_dict(self) -> dict:
        return asdict(self)


def score_pairs(clusters: Iterable[list[str]], gold: set[tuple[str, str]]) -> PairScores:
    """Pairwise scores of ``clusters`` against ``gold`` (see the module docstring)."""
    label: dict[str, int] = {}
    sizes: dict[int, int] = {}
    for number, members in enumerate(clusters):
        for doc in dict.fromkeys(members):
            if doc not in label:
                label[doc] = number
                sizes[number] = sizes.get(number, 0) + 1
    predicted = sum(n * (n - 1) // 2 for n in sizes.values())
    true = sum(1 for a, b in gold if a in label and label[a] == label.get(b))
    precision = true / predicted if predicted else (1.0 if not gold else 0.0)
    recall = true / len(gold) if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PairScores(round(precision, 4), round(recall, 4), round(f1, 4), true, predicted, len(gold))
