"""The spans as JSON lines: one line per document that has a removed span, in the order of
document ids, and the same lines read back (``strip``, ``report``).

.. code-block:: json

    {"id":"b.txt","unit":"paragraph","bytes":2301,"chars":2298,"xxh3":"5f1c...","removed_chars":811,
     "removed_share":0.353,"left_whole":false,"spans":[{"start_byte":0,"end_byte":402,"start_char":0,
     "end_char":401,"repeats":{"id":"a.txt","start_byte":96,"end_byte":498,"start_char":96,"end_char":497},
     "similarity":1.0,"documents":3,"group":"9c3e5d0b1a7f4e22"}]}

Offsets: ``*_char`` count code points of the text as Python reads it; ``*_byte`` count bytes of
its UTF-8 (a UTF-8 file's own bytes, after a byte-order mark). ``xxh3`` is the XXH3-64 of the
document's UTF-8, so that ``strip`` cuts only the text the spans were found in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO, Iterable, Iterator

import numpy as np

from ..errors import RecordError
from ..write import json_text_bytes
from .decide import Collected, Removals
from .options import SpanOptions


@dataclass
class DocumentSpans:
    """One document's line: its removed spans as character offsets ``(start, end)`` (sorted),
    whether it is left whole, and the line as read."""

    id: str
    spans: list[tuple[int, int]]
    chars: int
    digest: int
    left_whole: bool
    record: dict


def span_lines(collected: Collected, removals: Removals, options: SpanOptions) -> Iterator[bytes]:
    """The JSON lines of the removals, in the order of document ids."""
    units = collected.units
    removed = removals.units
    if not len(removed):
        return
    documents = units[removed, 0]
    starts = np.flatnonzero(np.concatenate(([True], documents[1:] != documents[:-1])))
    ends = np.append(starts[1:], len(removed))
    for first, last in zip(starts.tolist(), ends.tolist()):
        doc = int(documents[first])
        rows = removed[first:last]
        spans = []
        for k, row in enumerate(rows.tolist()):
            copy = int(removals.repeats[first + k])
            spans.append(
                {
                    **_offsets(units[row]),
                    "repeats": {"id": collected.ids[units[copy, 0]], **_offsets(units[copy])},
                    "similarity": round(float(removals.similarities[first + k]), 3),
                    "documents": int(removals.documents[first + k]),
                    "group": f"{int(collected.hashes[copy, 0]):016x}",
                }
            )
        chars = int(collected.chars[doc])
        removed_chars = int((units[rows, 4] - units[rows, 3]).sum())
        share = removed_chars / chars if chars else 0.0
        record = {
            "id": collected.ids[doc],
            "unit": options.unit,
            "bytes": int(collected.sizes[doc]),
            "chars": chars,
            "xxh3": f"{int(collected.digests[doc]):016x}",
            "removed_chars": removed_chars,
            "removed_share": round(share, 3),
            "left_whole": share > options.max_removed,
            "spans": spans,
        }
        yield json_text_bytes(json.dumps(record, ensure_ascii=False, separators=(",", ":"))) + b"\n"


def _offsets(row: np.ndarray) -> dict[str, int]:
    doc, start_byte, end_byte, start_char, end_char = row.tolist()
    return {"start_byte": start_byte, "end_byte": end_byte, "start_char": start_char, "end_char": end_char}


def read_spans(lines: Iterable[bytes], name: str) -> Iterator[DocumentSpans]:
    """The documents of a spans file, as :func:`span_lines` writes them.

    Raises:
        RecordError: a line that is not such a record (``NAME:LINE: reason``).
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            spans = sorted((int(s["start_char"]), int(s["end_char"])) for s in record["spans"])
            doc_id, chars, digest = record["id"], int(record["chars"]), int(record["xxh3"], 16)
            left_whole = bool(record.get("left_whole", False))
            if not isinstance(doc_id, str) or any(not 0 <= a < b <= chars for a, b in spans):
                raise ValueError("offsets out of the document")
            if any(b > c for (_, b), (c, _) in zip(spans, spans[1:])):
                raise ValueError("spans overlap")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RecordError(f"{name}:{number}: not a spans record ({exc})") from None
        yield DocumentSpans(doc_id, spans, chars, digest, left_whole, record)


def spans_by_id(streams: Iterable[tuple[str, IO[bytes]]]) -> dict[str, DocumentSpans]:
    """Every document of the spans files, by id.

    Raises:
        RecordError: a bad line, or an id twice.
    """
    found: dict[str, DocumentSpans] = {}
    for name, stream in streams:
        for document in read_spans(stream, name):
            if document.id in found:
                raise RecordError(f"{name}: {document.id} has two lines")
            found[document.id] = document
    return found
