"""Near-duplicate paragraphs, lines and sentences: the units of text that repeat across
documents (boilerplate, licence headers, quoted passages), found, reported as spans, and cut.

Three stages, each a module, data flowing one way:

1. :mod:`.collect`: each document read and cut into units (:mod:`.units`: paragraphs, lines
   or sentences whose boundaries know Chinese and Japanese punctuation); each unit long
   enough to be removed gets its offsets, an exact key and a sketch (on worker processes).
2. :mod:`.decide`: in the order of document ids, then offsets, which units repeat a kept
   earlier one, exactly or nearly (near-duplicate candidates from :mod:`.candidates`,
   verified by the resemblance of their shingles); :mod:`.output` writes them as JSON lines.
3. :mod:`.strip`: the documents without their removed spans, joined so that no sentence is
   cut; :mod:`.report` shows each document with its spans marked and where they repeat.

:func:`find` runs the first two in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ..read import Inputs
from .collect import UnitRun, read_unit_texts
from .decide import Collected, Removals, decide_removals
from .options import SpanOptions
from .output import span_lines

__all__ = ["Found", "SpanOptions", "find"]


@dataclass
class Found:
    """What :func:`find` found: the units (:class:`~.decide.Collected`), the removed ones
    (:class:`~.decide.Removals`), the documents skipped, and the options."""

    collected: Collected
    removals: Removals
    skipped: list[str]
    options: SpanOptions

    def lines(self) -> Iterator[bytes]:
        """The spans as JSON lines (:mod:`.output`), in the order of document ids."""
        return span_lines(self.collected, self.removals, self.options)


def find(
    paths: tuple[str, ...] | list[str] | str,
    options: SpanOptions | None = None,
    inputs: Inputs | None = None,
    jobs: int = 1,
    note: Callable[[str], None] | None = None,
    verbose: bool = False,
    progress: Callable[[int], None] | None = None,
    **run: object,
) -> Found:
    """The removed spans of the documents ``paths`` name (files, directories, JSON lines; see
    :func:`simdedup.read.read_sources`), decided by ``options``; ``progress`` is told the bytes
    of each batch read, ``run`` goes to :class:`~.collect.UnitRun`.

    >>> found = find("examples/en", SpanOptions(unit="paragraph"))
    >>> found.removals.units.size >= 0
    True
    """
    paths = (paths,) if isinstance(paths, str) else tuple(paths)
    options = options or SpanOptions()
    inputs = inputs or Inputs()
    unit_run = UnitRun(paths, options, inputs, jobs, note or (lambda _: None), verbose, **run)  # type: ignore[arg-type]

    def batches() -> Iterator:
        for batch in unit_run:
            if progress is not None:
                progress(batch.size)
            yield batch

    collected = Collected.of(batches())

    def texts(rows):  # type: ignore[no-untyped-def]
        return read_unit_texts(paths, inputs, collected.ids, collected.digests, rows, jobs)

    return Found(collected, decide_removals(collected, options, texts), unit_run.skipped, options)
