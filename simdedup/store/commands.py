"""``simdedup index ...``: the persistent index on the command line (registered by
:mod:`simdedup.cli`; a thin layer over :mod:`simdedup.store.api`)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

from ..cli_options import (
    FingerprintingCommand,
    apply_options,
    decision_options,
    echo,
    feature_options_without_reading,
    given_on_command_line,
    message,
    method_from_options,
    output_file,
    output_options,
    storage_option,
)
from ..errors import SimdedupError, UsageError
from ..fingerprints import warn_repeated
from ..help import OUTPUT, READING, SectionedGroup
from ..read import named_streams

_INDEX = click.argument("directory", metavar="IDX", type=click.Path(file_okay=False))
_WAIT = click.option(
    "--no-wait",
    "no_wait",
    is_flag=True,
    help="Fail at once, naming the writer, when another process is writing the index.",
)


def apply_decision_options(names: list[str], **helps: str) -> Callable[[Any], Any]:
    """Cluster's options ``names`` (:func:`decision_options`), their help referring to cluster's."""
    return lambda func: apply_options(decision_options(names, as_in="cluster", **helps), func)


def _cluster_output(func: Any) -> Any:
    """How the clusters of the index are made and printed: as cluster's."""
    return apply_options(
        decision_options(["linkage"], as_in="cluster") + decision_options(["singletons", "format"]), func
    )


def waiting(directory: str) -> Any:
    """What a writer that waits for the index's lock says (also for fingerprint/dedup --index)."""
    return lambda holder: message(f"simdedup: {directory} is being written by {holder}; waiting")


@click.group(short_help="A persistent index: add fingerprints, query, cluster all.", cls=SectionedGroup)
def index() -> None:
    """A persistent index: add batches of fingerprints, query one document, cluster all.

    \b
    simdedup index create IDX -k 3 --from day1.jsonl
    simdedup index add IDX day2.jsonl > new-clusters.jsonl
    simdedup index query IDX page.html
    simdedup index cluster IDX > clusters.jsonl
    """


@index.command(
    short_help="Create the index IDX, its k and verification fixed.",
    cls=FingerprintingCommand,
    sections={"The index": ["k", "from_files", "blocks"]},
)
@storage_option
@_INDEX
@click.option(
    "-k",
    "--k",
    "k",
    type=click.IntRange(0, 127),
    required=True,
    help="Largest Hamming distance of a candidate pair (fixed for the index).",
)
@click.option(
    "--from",
    "from_files",
    multiple=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Fingerprint files to add at once (repeatable); their settings are the index's "
    "unless feature options are given.",
)
@click.option(
    "--blocks",
    type=click.IntRange(1, 128),
    help="Manku blocks (C(blocks, k) tables) [default: the fewest from k + 2 whose keys hold "
    "20 bits: 5 for k = 3, 9 for k = 6].",
)
@apply_decision_options(
    ["similarity", "min-similarity", "min-resemblance", "min-features"],
    similarity="As cluster's --similarity (sketches give the bag similarity).",
)
@feature_options_without_reading
def create(directory: str, from_files: tuple[str, ...], blocks: int | None, **features: Any) -> None:
    """Create the index IDX (a new directory) for fingerprints made with the feature options
    (or those of the --from files), with k and the verification options of cluster fixed.

    \b
    simdedup index create IDX -k 3 --from fingerprints.jsonl
    simdedup index create IDX -k 6 --tokenizer jieba
    """
    from ..fingerprints import load_fingerprints
    from ..options import ClusterOptions
    from . import api

    options = ClusterOptions.take(features)
    fingerprints = None
    if from_files:
        fingerprints = load_fingerprints(named_streams(from_files))
        warn_repeated(message, fingerprints.repeated)
    given = any(given_on_command_line(name) for name in features)
    if fingerprints is not None and fingerprints.settings is not None and not given:
        settings = {**fingerprints.settings, "bits": fingerprints.bits}
    else:
        settings = method_from_options(**features).settings
    try:
        result = api.create(directory, settings, options, blocks=blocks, fingerprints=fingerprints, files=from_files)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if result is not None:
        message(f"simdedup: {directory}: created with {result.added:,} documents, {result.pairs:,} verified pairs")


@index.command(
    short_help="Add fingerprints to IDX; print the clusters with new documents.",
    sections={"Adding": ["replace", "no_wait"]},
)
@storage_option
@_INDEX
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option("--replace", is_flag=True, help="Ids already in the index get their new fingerprints.")
@_WAIT
@_cluster_output
@output_options
def add(
    directory: str,
    files: tuple[str, ...],
    replace: bool,
    no_wait: bool,
    output: str | None,
    force: bool,
    **linking: Any,
) -> None:
    """Add fingerprint FILES (or stdin) to IDX; print the clusters that hold new documents,
    as cluster --against does (members say whether they are new). They are written before
    the add commits: when they cannot be, nothing is added.

    \b
    simdedup fingerprint crawl-day2/ | simdedup index add IDX > new-clusters.jsonl
    """
    from ..cluster_lines import write_clusters
    from ..fingerprints import load_fingerprints
    from ..options import ClusterOptions
    from . import api

    options = ClusterOptions.take(linking)
    out = output_file(output, force, files, not files or "-" in files)
    out.refuse_inside(directory)
    fingerprints = load_fingerprints(named_streams(files))
    warn_repeated(message, fingerprints.repeated)
    with api.Index(directory) as opened, out.open() as fd:
        names = ["<stdin>" if name == "-" else name for name in files or ("-",)]
        result = opened.add(
            fingerprints,
            replace,
            names,
            options,
            not no_wait,
            waiting(directory),
            publish=lambda added: write_clusters(fd, added.clusters, added.fingerprints, options, added.new),
        )
    replaced = f" ({result.replaced:,} replaced)" if result.replaced else ""
    message(f"simdedup: {directory}: added {result.added:,} documents{replaced}, {result.pairs:,} verified pairs")


@index.command(
    short_help="Print the near-duplicates in IDX of one document.",
    sections={OUTPUT: ["as_json"], READING: ["encoding", "html"]},
)
@storage_option
@_INDEX
@click.argument("document", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object (the document and its matches) instead of lines."
)
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of the document.")
@click.option("--html", is_flag=True, help="The document is HTML: use its visible text.")
def query(directory: str, document: str, as_json: bool, encoding: str, html: bool) -> None:
    """Print the near-duplicates in IDX of DOCUMENT (- for stdin): its fingerprint is made
    with the index's settings. A JSON line each, the most resembling first: id, cluster,
    distance, and the resemblance its sketch estimates (--json: one object).
    """
    from . import api

    with api.Index(directory) as opened:
        record = _query_record(document, api.fingerprinter_for(opened.settings, encoding, html))
        matches = opened.query_record(record)
    if as_json:
        echo(
            json.dumps(
                {"document": record.id, "matches": [m.as_dict() for m in matches]},
                ensure_ascii=False,
                separators=(",", ":"),
            )
        )
        return
    for match in matches:
        echo(json.dumps(match.as_dict(), ensure_ascii=False, separators=(",", ":")))


#: a query this small is looked at as a fingerprint record before it is read as a document
_RECORD_BYTES = 1 << 20


def _query_record(document: str, fingerprinter: Any) -> Any:
    """The record a query looks up: the document's (a file, or stdin's bytes: read, decoded and
    refused by one reader, :func:`simdedup.read.file_document`), or the fingerprint record
    the document is (a line of ``simdedup fingerprint``), said in one line.

    Raises:
        SimdedupError: the document cannot be read or decoded; it holds several records.
    """
    from ..errors import RecordError
    from ..fingerprints import FingerprintRecord
    from ..read import Source, file_document
    from ..run import fingerprint_batch

    name = "<stdin>" if document == "-" else document
    if document == "-":
        data: bytes | None = sys.stdin.buffer.read()
    else:
        try:
            with open(document, "rb") as handle:
                data = handle.read(_RECORD_BYTES + 1)
        except OSError:
            data = None  # the reader below names the problem
    if data is not None and len(data) <= _RECORD_BYTES and data.lstrip()[:1] == b"{":
        import io

        from ..fingerprints import load_fingerprints

        try:
            records = load_fingerprints([(name, io.BytesIO(data))])
        except RecordError:
            records = None  # JSON, but not a record: a document like any other
        if records is not None and len(records.ids) + len(records.repeated) > 1:
            raise SimdedupError(
                f"{name} holds {len(records.ids) + len(records.repeated)} fingerprint records; a query is "
                f"one document or one record (index add, or cluster --against, takes many)"
            )
        if records is not None and len(records.ids) == 1:
            message(f"simdedup: {name}: a fingerprint record: the index is queried with its fingerprint")
            words = records.fps[0].tolist()
            return FingerprintRecord(
                records.ids[0],
                sum(int(word) << (64 * w) for w, word in enumerate(words)),
                records.bits,
                int(records.features[0]),
                records.settings or {},
                None,
                None if records.sketches is None else records.sketches[0].tobytes(),
            )
    if document == "-":
        sources = [file_document(Source(name), fingerprinter.encoding, data)]
        (record,) = fingerprinter.fingerprint_batch(sources)
    else:
        (record,) = fingerprint_batch([Source(document)], fingerprinter).results
    if isinstance(record, Source):
        raise SimdedupError(f"{name}: {record.reason}")
    return record


@index.command(short_help="Print the clusters over every document of IDX.", name="cluster")
@storage_option
@_INDEX
@_cluster_output
@output_options
def cluster_command(directory: str, output: str | None, force: bool, **linking: Any) -> None:
    """Print the clusters over every document of IDX, as cluster -k K over all the
    fingerprints added would (from the verified pairs kept: no search)."""
    from ..cluster_lines import write_clusters
    from ..options import ClusterOptions
    from . import api

    options = ClusterOptions.take(linking)
    out = output_file(output, force)
    out.refuse_inside(directory)
    clusters, fingerprints = api.cluster(directory, options)
    with out.open() as fd:
        write_clusters(fd, clusters, fingerprints, options)


@index.command(short_help="Merge the segments of IDX into one.", sections={"Writing": ["no_wait"]})
@_INDEX
@_WAIT
def compact(directory: str, no_wait: bool) -> None:
    """Merge the segments of IDX into one, without the rows of replaced documents."""
    from . import api

    with api.Index(directory) as opened:
        merged = opened.compact(not no_wait, waiting(directory))
    message(
        f"simdedup: {directory}: {merged} segments merged"
        if merged > 1
        else f"simdedup: {directory}: nothing to compact"
    )


@index.command(
    short_help="Print what IDX holds: documents, pairs, segments, bytes.",
    sections={"Checking": ["verify"], OUTPUT: ["as_json"]},
)
@_INDEX
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
@click.option("--verify", is_flag=True, help="Check every block of every segment against its checksum.")
def stats(directory: str, as_json: bool, verify: bool) -> None:
    """Print what IDX holds: documents, pairs, segments, bytes on disk, settings."""
    from . import api

    figures = api.stats(directory, verify)
    if as_json:
        echo(json.dumps(figures, ensure_ascii=False, separators=(",", ":")))
        return
    for name, value in figures.items():
        echo(f"{name}: {value}")
