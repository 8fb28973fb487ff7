"""The second stage: which units are removed, and which copy each repeats.

Units are ordered by their document's id, then by their offset: an order that does not depend
on the order of the inputs, on ``-j`` or on the engine. Units with the same exact key (their
text, white space aside) are copies; of the distinct texts, the candidate pairs
(:mod:`.candidates`) whose shingles resemble each other at ``min_resemblance`` at least
(:class:`simdedup.similarity.ExactIndex`, the measure documents are verified with) are
near-duplicates. Then, in order, a text is kept unless a near-duplicate of it was kept before
it; a text not kept repeats the first kept one it resembles, so a removed unit always has a
kept copy that resembles it (texts do not chain: A kept, B like A removed, C like B but not
like A kept). A kept text and the texts that repeat it are a *group*; every unit of a group
but its first is removed (``keep="none"``: every unit), when the group's units are in at
least ``min_documents`` documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from ..errors import SimdedupError
from .candidates import candidate_pairs
from .collect import UnitBatch
from .options import SpanOptions


@dataclass
class Collected:
    """Everything the first stage gave: the documents read (in the order they came), their
    sizes in UTF-8 bytes and characters and the XXH3-64 of their UTF-8, and the units (their
    document is an index into ``ids``)."""

    ids: list[str]
    sizes: np.ndarray
    chars: np.ndarray
    digests: np.ndarray
    units: np.ndarray  # (n, 5): doc, byte start, byte end, char start, char end
    hashes: np.ndarray  # (n, 2) uint64
    bands: np.ndarray  # (n, bands) uint32: band keys

    @classmethod
    def of(cls, batches: Iterable[UnitBatch]) -> "Collected":
        ids: list[str] = []
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("sizes", "chars", "digests", "units", "hashes", "bands")}
        for batch in batches:
            units = batch.units.copy()
            units[:, 0] += len(ids)
            ids += batch.ids
            for name, array in (
                ("sizes", batch.sizes),
                ("chars", batch.chars),
                ("digests", batch.digests),
                ("units", units),
                ("hashes", batch.hashes),
                ("bands", batch.bands),
            ):
                parts[name].append(array)
        if not parts["units"]:
            return cls(
                ids,
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
                np.zeros(0, np.uint64),
                np.zeros((0, 5), np.int64),
                np.zeros((0, 2), np.uint64),
                np.zeros((0, 0), np.uint32),
            )
        return cls(ids, *(np.concatenate(parts[name]) for name in parts))  # type: ignore[arg-type]


@dataclass
class Removals:
    """The units removed (indices into :attr:`Collected.units`), in order (document id, then
    offset), each with the unit it repeats, their resemblance (1.0 for the same text) and the
    number of documents that hold the unit's group; ``order`` is each document's place in the
    order of ids."""

    units: np.ndarray
    repeats: np.ndarray
    similarities: np.ndarray
    documents: np.ndarray
    order: np.ndarray


#: reads the texts of units, given as rows (document, byte start, byte end): their UTF-8, or
#: None for one that cannot be read again as it was
UnitTexts = Callable[[np.ndarray], "list[bytes | None]"]


def document_ranks(ids: list[str]) -> np.ndarray:
    """Each document's place among the ids in sorted order.

    Raises:
        SimdedupError: an id given twice (the order, and which copy is kept, would depend on
            the input's order).
    """
    order = sorted(range(len(ids)), key=ids.__getitem__)
    for a, b in zip(order, order[1:]):
        if ids[a] == ids[b]:
            raise SimdedupError(f"{ids[a]}: more than one document has this id; spans needs one document per id")
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[np.array(order, dtype=np.int64)] = np.arange(len(ids))
    return ranks


def decide_removals(collected: Collected, options: SpanOptions, unit_texts: UnitTexts) -> Removals:
    """The units to remove (see the module's docstring); ``unit_texts`` reads the texts of the
    near-duplicate candidates, to verify them."""
    ranks = document_ranks(collected.ids)
    units = collected.units
    n = len(units)
    if n == 0:
        none = np.zeros(0, dtype=np.int64)
        return Removals(none, none, np.zeros(0), none, ranks)
    position_order = np.lexsort((units[:, 3], ranks[units[:, 0]]))  # units in order
    position = np.empty(n, dtype=np.int64)
    position[position_order] = np.arange(n)
    classes, firsts = _copies(collected.hashes, position)
    targets = np.arange(len(firsts), dtype=np.int64)  # the class each repeats (itself: kept)
    similarities = np.ones(len(firsts))
    if options.near and len(firsts) > 1 and collected.bands.shape[1]:
        left, right = candidate_pairs(collected.bands[firsts])
        resemblance = _resemblance(units[firsts], left, right, unit_texts)
        verified = resemblance >= options.min_resemblance
        targets, similarities = _kept_first(len(firsts), left[verified], right[verified], resemblance[verified])
    groups = targets[classes]  # each unit's group, numbered by its kept class
    holders = _documents_per_group(groups, units[:, 0], len(firsts), len(collected.ids))
    big_enough = holders[groups] >= options.min_documents
    keeper = firsts[groups]  # the group's kept copy
    if options.keep == "first":
        removed = big_enough & (keeper != np.arange(n))
        repeats = keeper
    else:
        sizes = np.bincount(groups, minlength=len(firsts))
        removed = big_enough & (sizes[groups] > 1)
        repeats = np.where(keeper != np.arange(n), keeper, _second_of_group(groups, position, len(firsts)))
    chosen = position_order[removed[position_order]]  # in order
    return Removals(
        chosen,
        repeats[chosen],
        np.where(classes[chosen] == groups[chosen], 1.0, similarities[classes[chosen]]),
        holders[groups[chosen]],
        ranks,
    )


def _copies(hashes: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's class (units with the same key), the classes numbered in the order of their
    first units, and each class's first unit."""
    n = len(hashes)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    by_key = np.lexsort((hashes[:, 1], hashes[:, 0]))
    keys = hashes[by_key]
    new = np.concatenate(([True], (keys[1:] != keys[:-1]).any(axis=1)))
    starts = np.flatnonzero(new)
    earliest = np.minimum.reduceat(position[by_key], starts)  # each class's first position
    numbers = np.empty(len(starts), dtype=np.int64)
    numbers[np.argsort(earliest)] = np.arange(len(starts))
    classes = np.empty(n, dtype=np.int64)
    classes[by_key] = numbers[np.cumsum(new) - 1]
    firsts = np.empty(len(starts), dtype=np.int64)
    order_of_position = np.empty(n, dtype=np.int64)
    order_of_position[position] = np.arange(n)
    firsts[numbers] = order_of_position[earliest]
    return classes, firsts


def _resemblance(firsts: np.ndarray, left: np.ndarray, right: np.ndarray, unit_texts: UnitTexts) -> np.ndarray:
    """The resemblance (exact Jaccard of shingles) of each candidate pair of texts, read from
    their first units (rows of :attr:`Collected.units`)."""
    from ..similarity import ExactIndex, KeptText

    if not len(left):
        return np.zeros(0)
    wanted = np.unique(np.concatenate((left, right)))
    texts = unit_texts(firsts[wanted][:, :3])
    index = ExactIndex(None if text is None else KeptText(text) for text in texts)
    at = np.searchsorted(wanted, left), np.searchsorted(wanted, right)
    return index.jaccard("grams", *at)


def _kept_first(n: int, left: np.ndarray, right: np.ndarray, similarity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ``n`` texts in order and their near-duplicate pairs ``(left < right)``: the text
    each repeats (itself when kept) and their resemblance. A text is kept unless it resembles
    a kept text before it; then it repeats the first of those."""
    targets = np.arange(n, dtype=np.int64)
    similarities = np.ones(n)
    kept = np.ones(n, dtype=bool)
    order = np.lexsort((left, right))
    for a, b, s in zip(left[order].tolist(), right[order].tolist(), similarity[order].tolist()):
        # b's pairs come in order of a; every a < b is decided by now
        if kept[b] and kept[a]:
            kept[b] = False
            targets[b], similarities[b] = a, s
    return targets, similarities


def _documents_per_group(groups: np.ndarray, documents: np.ndarray, n_groups: int, n_documents: int) -> np.ndarray:
    """How many documents hold a unit of each group."""
    held = groups * max(n_documents, 1) + documents
    held.sort()
    held = held[np.concatenate(([True], held[1:] != held[:-1]))] // max(n_documents, 1)
    return np.bincount(held, minlength=n_groups)


def _second_of_group(groups: np.ndarray, position: np.ndarray, n_groups: int) -> np.ndarray:
    """For each unit, the second unit of its group in order (itself when it is alone)."""
    order = np.lexsort((position, groups))
    ordered = groups[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    second = np.arange(len(groups), dtype=np.int64)
    has_second = np.diff(np.append(starts, len(groups))) > 1
    seconds = np.full(n_groups, -1, dtype=np.int64)
    seconds[ordered[starts[has_second]]] = order[starts[has_second] + 1]
    known = seconds[groups] >= 0
    second[known] = seconds[groups[known]]
    return second
