"""``simdedup spans find|strip|report``: repeated paragraphs, lines and sentences on the command
line (registered by :mod:`simdedup.cli`; a thin layer over :mod:`simdedup.spans`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..cli_options import (
    EXIT_SKIPPED,
    INPUT_OPTIONS,
    apply_options,
    decision_options,
    message,
    output_options,
    progress_bar,
    storage_option,
    take_inputs,
)
from ..errors import UsageError
from ..help import OUTPUT, READING, RUNNING, SectionedGroup
from ..limits import MAX_BYTES, MAX_JOBS, FiniteFloatRange
from .options import DEFAULT_MAX_REMOVED, KEEP, SpanOptions
from .units import DEFAULT_MIN_WORDS, DEFAULT_UNIT, UNITS

_SPANS = click.option(
    "--spans",
    "spans_files",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The spans file(s) that `spans find` wrote (repeatable).",
)


def _input_options(func: Any) -> Any:
    encoding = click.option(
        "--encoding",
        default="utf-8",
        show_default=True,
        help="Encoding of the files; auto: a byte-order mark, else UTF-8 if it fits, else detected. "
        "Offsets count the text's UTF-8 bytes and its characters, whatever the file's encoding.",
    )
    return apply_options([*INPUT_OPTIONS, encoding], func)


def _inputs(kwargs: dict[str, Any]) -> Any:
    """The input options (:func:`take_inputs`), the encoding of files among them."""
    inputs = take_inputs(kwargs)
    inputs.encoding = kwargs.pop("encoding")
    _check_encoding(inputs.encoding)
    return inputs


def _check_encoding(encoding: str) -> None:
    import codecs

    if encoding != "auto":
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise click.BadParameter(f"unknown encoding {encoding!r}", param_hint="--encoding") from None


def _min_resemblance(func: Any) -> Any:
    return apply_options(
        decision_options(
            ["min-resemblance"],
            min_resemblance="Smallest resemblance (Jaccard of shingles: word 3-grams; 5-character shingles for "
            "Chinese and Japanese) of a near-duplicate unit.",
        ),
        func,
    )


@click.group(short_help="Repeated paragraphs, lines and sentences: find, cut, review.", cls=SectionedGroup)
def spans() -> None:
    """Repeated paragraphs, lines and sentences: find them, cut them, review them.

    \b
    simdedup spans find corpus/ --unit paragraph > spans.jsonl
    simdedup spans strip --spans spans.jsonl corpus/ -o corpus-clean/
    simdedup spans report --spans spans.jsonl corpus/ -o review.html
    """


@spans.command(
    short_help="Find repeated units; write the spans to remove.",
    sections={
        "Finding repeated spans": [
            "unit",
            "min_words",
            "exact_only",
            "min_resemblance",
            "min_documents",
            "keep",
            "max_removed",
        ],
        READING: ["encoding"],
        RUNNING: ["jobs", "silent", "verbose"],
    },
)
@storage_option
@_input_options
@click.option(
    "--unit",
    type=click.Choice(UNITS),
    default=DEFAULT_UNIT,
    show_default=True,
    help="paragraph: text between blank lines; line: a line as it reads (a wrapped line goes on in "
    "the next); sentence: sentences, ended by . ! ? and 。！？ (not inside abbreviations, numbers, "
    "URLs or code).",
)
@click.option(
    "--min-words",
    type=click.IntRange(0, 1 << 20),
    default=DEFAULT_MIN_WORDS,
    show_default=True,
    help="Shorter units are never removed (headings, bullets, short lines); a Chinese or Japanese "
    "character counts as half a word.",
)
@click.option(
    "--exact-only",
    is_flag=True,
    help="Only units whose text (white space aside) repeats; by default near-duplicates too.",
)
@_min_resemblance
@click.option(
    "--min-documents",
    type=click.IntRange(1, 1 << 40),
    default=1,
    show_default=True,
    help="Remove only units that this many documents hold (boilerplate); 1: every repeat, within a document too.",
)
@click.option(
    "--keep",
    type=click.Choice(KEEP),
    default="first",
    show_default=True,
    help="first: keep the first copy (in the order of document ids, then offsets); none: remove "
    "every copy of a unit held by --min-documents documents.",
)
@click.option(
    "--max-removed",
    type=FiniteFloatRange(0, 1),
    default=DEFAULT_MAX_REMOVED,
    show_default=True,
    help="A document that would lose more than this share of its characters is left whole "
    "(reported, its spans marked left_whole); 1 lets a document lose everything.",
)
@click.option("-j", "--jobs", type=click.IntRange(1, MAX_JOBS), help="Processes to use [default: all cores].")
@click.option("--silent", is_flag=True, help="No progress bar.")
@click.option("-v", "--verbose", is_flag=True, help="Every warning (not the first few of each file).")
@output_options
def find(
    unit: str,
    min_words: int,
    exact_only: bool,
    min_resemblance: float,
    min_documents: int,
    keep: str,
    max_removed: float,
    jobs: int | None,
    silent: bool,
    verbose: bool,
    output: str | None,
    force: bool,
    **kwargs: Any,
) -> None:
    """Write the removed spans of each document of PATHS as JSON lines: each unit (paragraph,
    line or sentence) that repeats, exactly or nearly (the resemblance of its shingles, as
    documents are measured), a unit kept earlier in the order of document ids and offsets.

    One line per document with removed spans, in the order of ids; each span with its byte
    and character offsets, the copy it repeats (id and offsets), their similarity and how
    many documents hold it. Nothing is changed: `spans strip` cuts them.

    \b
    simdedup spans find corpus/ > spans.jsonl
    simdedup spans find --unit sentence --text-field text dump.jsonl -o spans.jsonl
    simdedup spans find --unit line --min-documents 10 --keep none crawl/ > boilerplate.jsonl
    """
    from ..read.walk import read_path_list
    from ..run import default_jobs
    from ..write import LineWriter, overwritten_files, own_file
    from . import find as find_spans

    paths = kwargs.pop("paths")
    inputs = _inputs(kwargs)
    if "-" in paths:  # read twice (to verify near-duplicates): the list is kept
        listed = list(read_path_list(sys.stdin.buffer, inputs.null))
        paths = tuple(p for path in paths for p in (listed if path == "-" else [path]))
    options = _options(
        unit=unit,
        min_words=min_words,
        near=not exact_only,
        min_resemblance=min_resemblance,
        min_documents=min_documents,
        keep=keep,
        max_removed=max_removed,
    )
    out = _output(output, force, paths)
    with out.open() as fd, progress_bar(silent, None, "B") as bar:
        found = find_spans(
            paths,
            options,
            inputs,
            jobs or default_jobs(),
            message,
            verbose,
            progress=None if bar is None else bar.update,
            exclude=own_file(fd),
            overwritten=overwritten_files([out]),
        )
        writer = LineWriter(fd)
        for line in found.lines():
            writer.write_lines(line)
        writer.flush()
    removed = len(found.removals.units)
    message(
        f"simdedup: {removed:,} spans removed in {_documents_with_spans(found):,} of {len(found.collected.ids):,} documents"
    )
    if found.skipped:
        message(
            f"simdedup: read {len(found.collected.ids)} documents, skipped {len(found.skipped)} (see warnings above)"
        )
        sys.exit(EXIT_SKIPPED)


def _documents_with_spans(found: Any) -> int:
    import numpy as np

    return int(len(np.unique(found.collected.units[found.removals.units, 0])))


def _options(**values: Any) -> SpanOptions:
    try:
        return SpanOptions(**values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _output(output: str | None, force: bool, paths: tuple[str, ...]) -> Any:
    from ..cli_options import output_file

    return output_file(output, force, paths, False)


@spans.command(
    short_help="Write the documents without the spans `spans find` removed.",
    sections={"Spans": ["spans_files"], OUTPUT: ["output", "force"], READING: ["encoding"], RUNNING: ["verbose"]},
)
@storage_option
@_SPANS
@_input_options
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(allow_dash=False),
    help="A new directory (each file under its id), or FILE.jsonl (a JSON line keeps its other "
    "fields; a file becomes {id, text}).",
)
@click.option("--force", is_flag=True, help="Replace the -o file if it exists (a directory must be new or empty).")
@click.option("-v", "--verbose", is_flag=True, help="Every warning (not the first few of each file).")
def strip(spans_files: tuple[str, ...], output: str, force: bool, verbose: bool, **kwargs: Any) -> None:
    """Write the documents of PATHS without the spans `spans find` removed, to a new
    directory or a JSON-lines file (whole, or not at all; the inputs are never changed).

    What remains is joined so that no sentence is cut: text after a span on its line closes
    up; a whole line or paragraph goes with its line break, and paragraphs stay apart.
    Documents marked left_whole are written whole; one left with nothing is not written.

    \b
    simdedup spans strip --spans spans.jsonl corpus/ -o corpus-clean/
    simdedup spans strip --spans spans.jsonl --text-field text dump.jsonl -o clean.jsonl
    """
    from ..read import named_streams
    from .output import spans_by_id
    from .strip import strip as strip_documents

    paths = kwargs.pop("paths")
    inputs = _inputs(kwargs)
    if "-" in spans_files and "-" in paths:
        raise click.UsageError("standard input can give the spans or the document paths, not both")
    found = spans_by_id(named_streams(spans_files))
    done = strip_documents(found, paths, output, force, inputs, message, verbose)
    message(
        f"simdedup: wrote {done.written:,} documents to {output} ({done.cut:,} cut, "
        f"{len(done.left_whole):,} left whole as marked, {len(done.emptied):,} emptied and left out)"
    )
    problems = False
    for what, ids in (
        ("changed since the spans were found: written whole", done.changed),
        ("in the spans file but not among the inputs", done.missing),
    ):
        if ids:
            problems = True
            message(f"simdedup: warning: {len(ids):,} documents {what} (the first: {ids[0]})")
    if done.skipped or problems:
        sys.exit(EXIT_SKIPPED)


@spans.command(
    short_help="Write an HTML page to review the spans.",
    sections={"Spans": ["spans_files"], OUTPUT: ["output", "force", "max_bytes"], READING: ["encoding"]},
)
@storage_option
@_SPANS
@_input_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The page to write (FILE.html).")
@click.option("--force", is_flag=True, help="Replace the -o file if it exists.")
@click.option(
    "--max-bytes",
    type=click.IntRange(1 << 16, MAX_BYTES),
    default=64 << 20,
    show_default=True,
    help="Bound of the page's size: documents (in the order of ids) are left out past it.",
)
def report(spans_files: tuple[str, ...], output: str, force: bool, max_bytes: int, **kwargs: Any) -> None:
    """Write a self-contained HTML page to review the spans: each document of PATHS with its
    removed spans marked, and beside each span the copy it repeats, their similarity and how
    many documents hold it (no server, nothing loaded from elsewhere).

    \b
    simdedup spans report --spans spans.jsonl corpus/ -o review.html
    """
    from ..read import named_streams
    from ..write import write_all
    from .output import spans_by_id
    from .report import spans_page

    paths = kwargs.pop("paths")
    inputs = _inputs(kwargs)
    out = _output(output, force, paths + spans_files)
    found = spans_by_id(named_streams(spans_files))
    page, shown = spans_page(found, paths, inputs, max_bytes, message)
    with out.open() as fd:
        write_all(fd, page)
    if shown < len(found):
        message(f"simdedup: {shown:,} of {len(found):,} documents shown (--max-bytes {max_bytes:,})")
