"""The third stage: the documents without their removed spans, written to a new directory or a
JSON-lines file; the inputs are never modified.

A span is whole units (:mod:`.units`), so cutting it cuts no sentence; the text is cut between
characters, so no byte sequence is broken. What joins the rest (:func:`stripped`): removed
units next to each other go together with the white space between them; then

- text goes on after them on the same line: they go with the white space after them
  (``A. B. C.`` without ``B.`` is ``A. C.``);
- else text comes before them on their line: with the white space before them;
- else they are whole lines: those lines go, and the blank lines after them when blank lines
  came before them too, so that paragraphs stay apart by one gap and are never joined.

A document whose spans are marked ``left_whole`` is written whole; one left with nothing but
white space is not written (:attr:`Stripped.emptied`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

from ..errors import OutputError, SimdedupError, SkipDocument, UsageError, Warnings
from ..read import Document, Inputs, open_documents, read_sources
from ..read.tables import is_jsonl
from ..write import LineWriter, OutputFile, current_umask, json_text_bytes
from .collect import WHOLE_BYTES, utf8_of
from .output import DocumentSpans
from .units import BREAKS

_BREAK = re.compile(r"\r\n|[" + BREAKS + "]")


def stripped(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the units ``spans`` (sorted ``(start, end)`` character offsets), joined
    as the module's docstring says."""
    if not spans:
        return text
    runs = _runs(text, spans)
    cuts = [_cut(text, start, end) for start, end in runs]
    pieces, position = [], 0
    for start, end in cuts:
        pieces.append(text[position:start])
        position = max(position, end)
    pieces.append(text[position:])
    return "".join(pieces)


def _runs(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans next to each other (white space between them) as one."""
    runs = [list(spans[0])]
    for start, end in spans[1:]:
        if text[runs[-1][1] : start].isspace() or start == runs[-1][1]:
            runs[-1][1] = end
        else:
            runs.append([start, end])
    return [(a, b) for a, b in runs]


def _cut(text: str, start: int, end: int) -> tuple[int, int]:
    """What goes with the run ``text[start:end]``: ``(from, to)``."""
    before = start
    while before > 0 and text[before - 1].isspace():
        before -= 1
    after = end
    while after < len(text) and text[after].isspace():
        after += 1
    gap_before, gap_after = list(_BREAK.finditer(text, before, start)), list(_BREAK.finditer(text, end, after))
    if after < len(text) and not gap_after:
        return start, after  # text goes on on the same line
    if before > 0 and not gap_before:
        return before, end  # text comes before on the same line
    line_start = gap_before[-1].end() if gap_before else before
    if after == len(text):  # nothing after: to the end, keeping the line break after what comes before
        return (gap_before[0].end() if gap_before else 0), len(text)
    if len(gap_after) > 1 and len(gap_before) < 2:  # a paragraph goes on after a blank line: keep it
        return line_start, gap_after[0].end()
    return line_start, gap_after[-1].end()


@dataclass
class Stripped:
    """What a strip wrote: documents written (cut, or whole), those left whole as marked, the
    ones emptied (not written), those whose text changed since the spans were found (written
    whole), and spans of documents that were not among the inputs."""

    written: int = 0
    cut: int = 0
    left_whole: list[str] = field(default_factory=list)
    emptied: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def strip(
    spans: dict[str, DocumentSpans],
    paths: tuple[str, ...],
    output: str,
    force: bool = False,
    inputs: Inputs | None = None,
    note: Callable[[str], None] | None = None,
    verbose: bool = False,
) -> Stripped:
    """Write the documents ``paths`` name without the removed ``spans`` (by document id) to
    ``output``: a new directory (each file under its id, as ``dedup --unique-out`` names them),
    or a JSON-lines file (``.jsonl``; a JSON line keeps its other fields, a file becomes
    ``{"id", "text"}``). Every document is written, cut or whole.

    Raises:
        UsageError: the output exists (a file without ``force``; a directory that is not
            empty), would replace an input, or a directory for JSON-lines input; CSV, Parquet
            or WARC input.
        OutputError: it cannot be written.
        SimdedupError: two documents with one id.
    """
    inputs = inputs or Inputs()
    target: _Target = _Lines(output, force, paths) if is_jsonl(output) else _Files(output)
    done = Stripped()
    warnings = Warnings(note or (lambda _: None), verbose, " (-v shows them all)")
    seen: set[str] = set()
    with target:
        for doc_id, data, record, origin in _documents(paths, inputs, note, verbose):
            if data is None:  # skipped: record is the reason
                done.skipped.append(doc_id)
                warnings.warn(doc_id, record, origin)
                continue
            if doc_id in seen:
                raise SimdedupError(f"{doc_id}: more than one document has this id; name each document once")
            seen.add(doc_id)
            text: str | None = data.decode("utf-8", "surrogatepass")
            found = spans.get(doc_id)
            if found is not None:
                text = _apply(found, data, text, done)  # type: ignore[arg-type]
            if text is not None:
                target.write(doc_id, text, record, inputs.text_field)
                done.written += 1
        warnings.close()
    done.missing = sorted(spans.keys() - seen)
    return done


def _documents(
    paths: tuple[str, ...], inputs: Inputs, note: Callable[[str], None] | None, verbose: bool
) -> Iterator[tuple[str, bytes | None, Any, str | None]]:
    """Each document as ``(id, UTF-8 text, its JSON object or None, the file it is a line of)``,
    read as ``spans find`` reads it; a skipped one as ``(id, None, reason, file)``."""
    from ..jsonline import parse_json_line
    from ..read.tables import iter_jsonl_lines, table_kind

    files = replace(inputs, jsonl=False)  # each path a file; JSON-lines files are read here
    for source in read_sources(paths, files, note=note, verbose=verbose).sources:
        kind = "jsonl" if inputs.jsonl else table_kind(source.path) if inputs.jsonl is None else None
        if kind is not None and kind != "jsonl":
            raise UsageError(f"{source.path}: strip reads files and JSON lines, not {kind.upper()}")
        if kind is None or source.reason is not None:
            for document in open_documents([source], inputs.encoding, WHOLE_BYTES):
                try:
                    yield document.id, utf8_of(document), None, None
                except SkipDocument as exc:
                    yield document.id, None, exc.reason, None
            continue
        for row, raw in iter_jsonl_lines(source.path, inputs.text_field, inputs.id_field, inputs.max_line_bytes):
            if row.reason is not None:
                yield row.path, None, row.reason, source.path
                continue
            try:
                yield (
                    row.path,
                    utf8_of(Document(row.path, text=row.text)),
                    parse_json_line(raw, checked_numbers=False),
                    source.path,
                )
            except SkipDocument as exc:
                yield row.path, None, exc.reason, source.path


def _apply(found: DocumentSpans, data: bytes, text: str, done: Stripped) -> str | None:
    """The text without its spans (None: nothing left), or whole when marked so or changed."""
    import xxhash

    if xxhash.xxh3_64_intdigest(data) != found.digest or len(text) != found.chars:
        done.changed.append(found.id)
        return text
    if found.left_whole:
        done.left_whole.append(found.id)
        return text
    cut = stripped(text, found.spans)
    if not cut.strip():
        done.emptied.append(found.id)
        return None
    done.cut += 1
    return cut


class _Target:
    def __enter__(self) -> "_Target":
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        raise NotImplementedError

    def write(self, doc_id: str, text: str, record: dict | None, text_field: str) -> None:
        raise NotImplementedError


class _Lines(_Target):
    """A JSON-lines file, written whole or not at all (:class:`simdedup.write.OutputFile`)."""

    def __init__(self, path: str, force: bool, paths: tuple[str, ...]):
        self.output = OutputFile(path, force, option="-o")
        self.output.refuse_inputs(paths, "-" in paths)
        self._opened: Any = None

    def __enter__(self) -> "_Lines":
        self._opened = self.output.open()
        self.writer = LineWriter(self._opened.__enter__())
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            self.writer.flush()
        self._opened.__exit__(kind, *rest)

    def write(self, doc_id: str, text: str, record: dict | None, text_field: str) -> None:
        if record is None:
            record = {"id": doc_id, "text": text}
        else:
            _set_field(record, text_field, text)
        self.writer.write_line(json_text_bytes(json.dumps(record, ensure_ascii=False, separators=(",", ":"))).decode())


def _set_field(record: dict, dotted: str, text: str) -> None:
    """Set the (dotted) field of ``record`` to ``text``."""
    names = dotted.split(".")
    for name in names[:-1]:
        record = record[name]
    record[names[-1]] = text


class _Files(_Target):
    """A new directory: written under a temporary name beside it, renamed into place at the
    end, so that it is whole or absent."""

    def __init__(self, directory: str):
        self.directory = directory
        if os.path.lexists(directory):
            if not os.path.isdir(directory) or os.path.islink(directory):
                raise UsageError(f"-o {directory} exists and is not a directory (name a .jsonl file for JSON lines)")
            if os.listdir(directory):
                raise UsageError(f"-o {directory} is a directory that is not empty; name a new one")
        parent = os.path.dirname(os.path.abspath(directory))
        if not os.path.isdir(parent):
            raise UsageError(f"-o {directory}: no directory {parent}")
        self.names: dict[str, str] = {}

    def __enter__(self) -> "_Files":
        parent = os.path.dirname(os.path.abspath(self.directory))
        try:
            self.temporary = tempfile.mkdtemp(prefix=".simdedup-", dir=parent)
            os.chmod(self.temporary, 0o777 & ~current_umask())  # as a directory made by mkdir would be
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc), self.directory) from None
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)
            return
        try:
            if os.path.isdir(self.directory):
                os.rmdir(self.directory)  # empty, checked before
            os.rename(self.temporary, self.directory)
        except OSError as exc:
            shutil.rmtree(self.temporary, ignore_errors=True)
            raise OutputError(exc.strerror or str(exc), self.directory) from None

    def write(self, doc_id: str, text: str, record: dict | None, text_field: str) -> None:
        from ..unique import target_name

        if record is not None:
            raise UsageError("JSON-lines input goes to JSON lines: name a .jsonl output")
        name = target_name(doc_id)
        if name in self.names:
            raise SimdedupError(f"{self.names[name]} and {doc_id} would both be written to {name}")
        self.names[name] = doc_id
        path = os.path.join(self.temporary, name)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(text.encode("utf-8", "surrogatepass"))
        except OSError as exc:
            raise OutputError(exc.strerror or str(exc), self.directory) from None
