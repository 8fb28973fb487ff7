#!/usr/bin/env python3
"""Off-the-shelf baselines on one labelled set, as ``../shared/eval/README.md`` describes them.

Runs in ``.venv-eval`` (datasketch 2.0.0, simhash 2.1.2, jieba 0.42.1; ``make eval`` creates
it), never in the project's environment. Writes the clusters (two or more members) as JSON
lines ``{"members": [ids]}``.

- ``minhash``: datasketch ``MinHash(num_perm=128, seed=1)`` over each document's gold shingles,
  ``MinHashLSH(threshold=0.8, num_perm=128)``, every document queried, union-find;
- ``simhash``: PyPI simhash ``Simhash(features, f=64)``; features are ``text.split()`` (weight 1
  each), or for a document with >= 20% CJK characters jieba's 20 weighted keywords
  (``extract_tags(text, topK=20, withWeight=True)``); ``SimhashIndex(k=3)``, every document
  queried with ``get_near_dups``, union-find.

    python benchmarks/baselines.py minhash|simhash SET_DIR SHINGLES OUT.jsonl
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gold import SHINGLES, cjk_share, components  # noqa: E402


def minhash_pairs(ids: list[str], texts: list[str], shingles) -> list[tuple[str, str]]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    hashes = []
    for doc, text in zip(ids, texts):
        sketch = MinHash(num_perm=128, seed=1)
        sketch.update_batch([s.encode("utf-8") for s in sorted(shingles(text))])
        lsh.insert(doc, sketch)
        hashes.append(sketch)
    return [(doc, other) for doc, sketch in zip(ids, hashes) for other in lsh.query(sketch) if other != doc]


def simhash_pairs(ids: list[str], texts: list[str], shingles) -> list[tuple[str, str]]:
    import jieba
    import jieba.analyse
    from simhash import Simhash, SimhashIndex

    jieba.setLogLevel(logging.ERROR)
    logging.getLogger().setLevel(logging.ERROR)  # SimhashIndex warns about every large bucket
    objects = []
    for doc, text in zip(ids, texts):
        features = (
            jieba.analyse.extract_tags(text, topK=20, withWeight=True) if cjk_share(text) >= 0.2 else text.split()
        )
        objects.append((doc, Simhash(features, f=64)))
    index = SimhashIndex(objects, f=64, k=3)
    return [(doc, other) for doc, value in objects for other in index.get_near_dups(value) if other != doc]


def clusters_of(ids: list[str], pairs: list[tuple[str, str]]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for doc, root in components(pairs, ids).items():
        groups.setdefault(root, []).append(doc)
    return [members for members in groups.values() if len(members) >= 2]


def main() -> int:
    method, set_dir, shingle_kind, out = sys.argv[1:]
    paths = sorted(Path(set_dir, "docs").glob("*.txt"))
    ids = [path.stem for path in paths]
    texts = [path.read_text(encoding="utf-8") for path in paths]
    find_pairs = {"minhash": minhash_pairs, "simhash": simhash_pairs}[method]
    with open(out, "w", encoding="utf-8") as handle:
        for members in clusters_of(ids, find_pairs(ids, texts, SHINGLES[shingle_kind])):
            handle.write(json.dumps({"members": members}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
