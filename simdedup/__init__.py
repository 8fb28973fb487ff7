"""simdedup: near-duplicate detection with simhash fingerprints.

The library behind the ``simdedup`` command, one module per stage:

    read (simdedup.read) → tokenize (simdedup.tokenizers) → fingerprint (simdedup.methods,
    simdedup.fingerprints) → index (simdedup.pairs) → verify (simdedup.verify) → group
    (simdedup.group, simdedup.linkage) → write (simdedup.cluster_lines, simdedup.unique)

with the decision rules in simdedup.options and the lowest-level output code in simdedup.write,
and one call per command (simdedup.run): :func:`fingerprint`, :func:`cluster`, :func:`dedup`.

>>> import simdedup
>>> simdedup.dedup("examples/en")[0]
['examples/en/bicycle-chain-care-reposted.txt', 'examples/en/bicycle-chain-care.txt']

Names are imported lazily so that importing the package (and ``simdedup --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "fingerprint": "simdedup.run",
    "cluster": "simdedup.run",
    "dedup": "simdedup.run",
    "Cluster": "simdedup.group",
    "ClusterOptions": "simdedup.options",
    "FingerprintRecord": "simdedup.fingerprints",
    "FingerprintSet": "simdedup.fingerprints",
    "Inputs": "simdedup.read",
    "Method": "simdedup.methods",
    "SimhashMethod": "simdedup.methods",
    "Simhasher": "simdedup.simhash",
    "SimdedupError": "simdedup.errors",
    "Tokenizer": "simdedup.tokenizers",
    "UnionFind": "simdedup.linkage",
    "cluster_fingerprints": "simdedup.group",
    "collect_records": "simdedup.fingerprints",
    "find_clusters": "simdedup.group",
    "get_tokenizer": "simdedup.tokenizers",
    "hamming": "simdedup.simhash",
    "load_fingerprints": "simdedup.fingerprints",
    "make_method": "simdedup.methods",
    "near_pairs": "simdedup.pairs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'simdedup' has no attribute {name!r}")
