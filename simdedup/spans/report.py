"""The review page of the spans (``simdedup spans report``): each document with its removed
spans marked, and for each span the copy it repeats (document, offset, text), the similarity
and how many documents hold it. One self-contained HTML page, as ``simdedup report``'s: the
data in one JSON block, rendered by its own script with ``textContent`` only, under a policy
that loads nothing (:func:`simdedup.report._page`)."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import SimdedupError, SkipDocument
from ..read import Inputs, open_documents, read_sources
from ..report import _page, _utf16_offsets
from .collect import WHOLE_BYTES, text_of
from .output import DocumentSpans

#: characters of a repeated copy shown beside its span
COPY_CHARS = 600
DEFAULT_MAX_BYTES = 64 << 20


def spans_page(
    spans: dict[str, DocumentSpans],
    paths: tuple[str, ...],
    inputs: Inputs | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    note: Callable[[str], None] | None = None,
) -> tuple[bytes, int]:
    """The page for ``spans`` (by document id), the texts read from the documents ``paths``
    name as ``spans find`` read them; documents in the order of ids, as many as fit in
    ``max_bytes``. Returns the page and the number of documents shown.

    Raises:
        SimdedupError: not even one document fits.
    """
    wanted = set(spans)
    for document in spans.values():
        wanted.update(span["repeats"]["id"] for span in document.record["spans"])
    texts: dict[str, str] = {}
    inputs = inputs or Inputs()
    for document in open_documents(read_sources(paths, inputs, note=note).sources, inputs.encoding, WHOLE_BYTES):
        if document.id in wanted and document.id not in texts:
            try:
                texts[document.id] = text_of(document)
            except SkipDocument:
                continue
    documents: list[dict[str, Any]] = []
    size = 0
    for doc_id in sorted(spans):
        shown = _document(spans[doc_id], texts)
        size += len(shown["text"] or "") * 3 + 200 * len(shown["spans"])
        if size > max_bytes and documents:
            break
        documents.append(shown)
    page = _page(
        {"documents": documents, "total": len(spans), "missing": sorted(set(spans) - texts.keys())},
        "spans_report.html",
        "spans_report.js",
    )
    if len(page) > max_bytes and len(documents) <= 1:
        raise SimdedupError(f"the page needs {len(page):,} bytes for one document; raise --max-bytes")
    return page, len(documents)


def _document(found: DocumentSpans, texts: dict[str, str]) -> dict[str, Any]:
    """One document as the page shows it: its text (None when it cannot be read as it was),
    its spans as UTF-16 offsets (the script's), each with its copy's id, offset and text."""
    record = found.record
    text = texts.get(found.id)
    if text is not None and len(text) != found.chars:
        text = None  # changed since: offsets would mark the wrong text
    spans = []
    for span in record["spans"]:
        copy = span["repeats"]
        copy_text = texts.get(copy["id"])
        excerpt = None if copy_text is None else copy_text[copy["start_char"] : copy["end_char"]][:COPY_CHARS]
        start, end = span["start_char"], span["end_char"]
        if text is not None:
            start, end = _utf16_offsets(text, [start, end])
        spans.append(
            {
                "start": start,
                "end": end,
                "copy": copy["id"],
                "copy_start": copy["start_char"],
                "copy_text": excerpt,
                "similarity": span["similarity"],
                "documents": span["documents"],
            }
        )
    return {
        "id": found.id,
        "text": text,
        "unit": record.get("unit"),
        "share": record.get("removed_share"),
        "left_whole": found.left_whole,
        "spans": spans,
    }
