"""What decides which spans are removed: every option of ``simdedup spans`` and its default,
in one place (the CLI, the library and every stage take these)."""

from __future__ import annotations

from dataclasses import dataclass

from ..similarity import DEFAULT_MIN_RESEMBLANCE
from .units import DEFAULT_MIN_WORDS, DEFAULT_UNIT, UNITS

KEEP = ("first", "none")
#: a document that would lose more than this share of its characters is left whole
DEFAULT_MAX_REMOVED = 0.5


@dataclass(frozen=True)
class SpanOptions:
    """How units are cut and which are removed.

    - ``unit``: ``paragraph``, ``line`` or ``sentence`` (:mod:`simdedup.spans.units`);
    - ``min_words``: shorter units are never removed (a Chinese or Japanese character is half a word);
    - ``near``: near-duplicates too (resemblance of shingles at least ``min_resemblance``, as
      documents are measured), not only repeats whose text (white space aside) is the same;
    - ``min_documents``: remove only units that this many documents hold (1: every repeat,
      within a document too);
    - ``keep``: ``first`` keeps the first copy, in the order of document ids and then offsets;
      ``none`` removes every copy of a unit held by ``min_documents`` documents (boilerplate);
    - ``max_removed``: a document that would lose more than this share of its characters is
      left whole (its spans are reported, marked).
    """

    unit: str = DEFAULT_UNIT
    min_words: int = DEFAULT_MIN_WORDS
    near: bool = True
    min_resemblance: float = DEFAULT_MIN_RESEMBLANCE
    min_documents: int = 1
    keep: str = "first"
    max_removed: float = DEFAULT_MAX_REMOVED

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {self.unit!r}")
        if self.keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(KEEP)}, not {self.keep!r}")
        if self.min_words < 0 or self.min_documents < 1:
            raise ValueError("min_words must be at least 0 and min_documents at least 1")
        if not (0 <= self.min_resemblance <= 1 and 0 <= self.max_removed <= 1):
            raise ValueError("min_resemblance and max_removed must be between 0 and 1")
