"""simdedup: near-duplicate detection with simhash fingerprints.

The library behind the ``simdedup`` command. Names are imported lazily so that importing the
package (and ``simdedup --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Cluster": "simdedup.cluster",
    "DocumentFingerprinter": "simdedup.pipeline",
    "FingerprintRecord": "simdedup.records",
    "Fingerprinter": "simdedup.fingerprint",
    "SimdedupError": "simdedup.errors",
    "Tokenizer": "simdedup.tokenizers",
    "UnionFind": "simdedup.cluster",
    "find_clusters": "simdedup.cluster",
    "fingerprint_sources": "simdedup.pipeline",
    "get_tokenizer": "simdedup.tokenizers",
    "hamming": "simdedup.fingerprint",
    "iter_sources": "simdedup.corpus",
    "load_fingerprints": "simdedup.pipeline",
    "near_pairs": "simdedup.index",
    "simhash": "simdedup.fingerprint",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'simdedup' has no attribute {name!r}")
