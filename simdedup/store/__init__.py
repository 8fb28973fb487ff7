"""A persistent index: add batches of fingerprints, query one document, cluster everything
(see :mod:`simdedup.store.api`)."""

from .api import AddResult, Index, Match, add, cluster, compact, create, query, stats
from .catalog import IndexUseError
from .segments import DamagedIndexError

__all__ = [
    "AddResult",
    "Index",
    "Match",
    "add",
    "cluster",
    "compact",
    "create",
    "query",
    "stats",
    "IndexUseError",
    "DamagedIndexError",
]
