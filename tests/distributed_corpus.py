"""A generated corpus with near-duplicate families, exact copies and one crowded template
family, for the distributed engine's tests and benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def write_corpus(path: Path, documents: int, seed: int = 0, files: int = 1, template_share: float = 0.02) -> list[Path]:
    """``documents`` JSON lines over ``files`` files: a third unique texts, the rest edited or
    exact copies of earlier ones, and a share ``template_share`` from one template that differs in a
    word or two (many fingerprints within a few bits: a crowded key, and one large group)."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"w{i}{chr(97 + i % 26)}" for i in range(20_000)])
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    pool = iter(rng.choice(vocabulary, size=200 * documents + 1000, p=weights).tolist())
    template = [next(pool) for _ in range(120)]
    texts: list[str] = []
    for i in range(documents):
        roll = rng.random()
        if roll < template_share:
            words = list(template)
            for _ in range(rng.integers(1, 3)):
                words[rng.integers(0, len(words))] = str(vocabulary[rng.integers(0, len(vocabulary))])
        elif texts and roll < template_share + 0.43:
            words = texts[rng.integers(max(0, len(texts) - 500), len(texts))].split()
            for _ in range(rng.integers(0, 4)):
                words[rng.integers(0, len(words))] = next(pool)
        else:
            words = [next(pool) for _ in range(int(rng.integers(60, 160)))]
        texts.append(" ".join(words))
    path.mkdir(parents=True, exist_ok=True)
    out = []
    per_file = -(-documents // files)
    for f in range(files):
        name = path / f"corpus-{f:03d}.jsonl"
        with open(name, "w", encoding="utf-8") as handle:
            for i in range(f * per_file, min(documents, (f + 1) * per_file)):
                handle.write(json.dumps({"id": f"doc-{i:07d}", "text": texts[i]}) + "\n")
        out.append(name)
    return out
