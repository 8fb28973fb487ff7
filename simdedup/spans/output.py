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
from ..jsonline import parse_json_line
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


_SPAN = (
    '{"start_byte":%d,"end_byte":%d,"start_char":%d,"end_char":%d,"repeats":{"id":%s,"start_byte":%d,'
    '"end_byte":%d,"start_char":%d,"end_char":%d},"similarity":%r,"documents":%d,"group":"%016x"}'
)
_DOCUMENT = (
    '{"id":%s,"unit":"%s","bytes":%d,"chars":%d,"xxh3":"%016x","removed_chars":%d,"removed_share":%r,'
    '"left_whole":%s,"spans":[%s]}'
)


def span_lines(collected: Collected, removals: Removals, options: SpanOptions) -> Iterator[bytes]:
    """The JSON lines of the removals, in the order of document ids."""
    removed = removals.units
    if not len(removed):
        return
    own, copies = collected.units[removed], collected.units[removals.repeats]
    named = np.unique(np.concatenate((own[:, 0], copies[:, 0]))).tolist()
    quoted = dict(zip(named, (json.dumps(collected.ids[doc], ensure_ascii=False) for doc in named)))
    fields = zip(
        *own[:, 1:].T.tolist(),
        map(quoted.__getitem__, copies[:, 0].tolist()),
        *copies[:, 1:].T.tolist(),
        np.round(removals.similarities, 3).tolist(),
        removals.documents.tolist(),
        collected.hashes[removals.repeats, 0].tolist(),
    )
    spans = [_SPAN % values for values in fields]
    lengths = (own[:, 4] - own[:, 3]).tolist()
    docs = own[:, 0].tolist()
    starts = np.flatnonzero(np.concatenate(([True], own[1:, 0] != own[:-1, 0]))).tolist()
    for first, last in zip(starts, [*starts[1:], len(spans)]):
        doc = docs[first]
        chars = int(collected.chars[doc])
        removed_chars = sum(lengths[first:last])
        share = removed_chars / chars if chars else 0.0
        line = _DOCUMENT % (
            quoted[doc],
            options.unit,
            collected.sizes[doc],
            chars,
            collected.digests[doc],
            removed_chars,
            round(share, 3),
            "true" if share > options.max_removed else "false",
            ",".join(spans[first:last]),
        )
        yield json_text_bytes(line) + b"\n"


def read_spans(lines: Iterable[bytes], name: str) -> Iterator[DocumentSpans]:
    """The documents of a spans file, as :func:`span_lines` writes them.

    Raises:
        RecordError: a line that is not such a record (``NAME:LINE: reason``).
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = parse_json_line(line)
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
