"""The ``simdedup`` command line: a thin layer over the library.

Data goes to stdout as JSON lines; progress, warnings and errors go to stderr.
Exit status: 0 ok; 1 error (bad input line, incompatible fingerprints, unwritable output,
closed pipe); 2 usage error; 3 finished, but some inputs were skipped (each with a warning).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import warnings
from typing import Any

import click

from . import one_blas_thread  # noqa: F401  (first of the package's imports: before numpy's)
from .cli_options import (
    EXIT_SKIPPED,
    INPUT_OPTIONS,
    FingerprintingCommand,
    apply_options,
    cluster_options,
    decision_options,
    documents_option,
    echo,
    end_run,
    feature_options,
    feature_options_without_sketch,
    fingerprint_options,
    fingerprint_run,
    message,
    method_from_options,
    output_file,
    output_options,
    printable,
    progress,
    storage_option,  # URL inputs and outputs: simdedup.read.remote
    take_document_inputs,
    take_inputs,
    with_progress,
)
from .engines.commands import engine_options
from .errors import SimdedupError, UsageError, Warnings
from .help import FINDING, OUTPUT, READING, RUNNING, SectionedGroup
from .limits import MAX_BLOOM, MAX_BYTES, MAX_COUNT, FiniteFloatRange, limit_reached
from .optional import missing, need, optional_module
from .options import DEFAULTS
from .read import named_streams
from .select import POLICIES
from .write import stdout_target, write_all

EXIT_BUG = 70  # EX_SOFTWARE


class SimdedupGroup(SectionedGroup):
    """Turns library errors into one-line messages in one place, and ends quietly on a closed pipe."""

    #: commands imported when asked for: ``index`` brings the persistent store, which no other
    #: command needs (a seventh of the imports of a start-up)
    LAZY = {"index": ("simdedup.store.commands", "index"), "spans": ("simdedup.spans.commands", "spans")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            module, attribute = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise one_line(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with warnings.catch_warnings():  # Python's warnings (ours, a plugin's, a library's): one line each
                warnings.showwarning = _one_line_warning
                return super().invoke(ctx)
        except UsageError as exc:
            raise click.UsageError(str(exc)) from None
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise one_line(exc) from None
        except SimdedupError as exc:
            raise click.ClickException(printable(str(exc))) from None
        except BrokenPipeError:
            # The reader (``| head``) has gone: stop quietly, as Click does for EPIPE.
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError, AttributeError):
                pass
            ctx.exit(1)
        except click.ClickException as exc:
            exc.message = printable(exc.message)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # a bug, here or in a plugin: one line, unless asked for more
            if os.environ.get("SIMDEDUP_DEBUG"):
                raise
            if optional_module(exc):  # an extra's package imported past simdedup.optional.need
                raise click.ClickException(printable(str(missing(exc, ctx.invoked_subcommand or "this")))) from None
            # Numbers that size memory are checked before they are used (simdedup.limits); this is
            # for what no number foretold, such as a corpus larger than the machine.
            reason = limit_reached(exc)
            if reason is not None:
                message(f"simdedup: error: {printable(reason)}")
                ctx.exit(1)
            message(
                f"simdedup: error: unexpected {type(exc).__name__}: {exc} (a bug: please report it; "
                f"SIMDEDUP_DEBUG=1 shows the traceback)"
            )
            ctx.exit(EXIT_BUG)


def _one_line_warning(text: Warning | str, category: type[Warning], *where: Any, **file: Any) -> None:
    """A Python warning as simdedup says its own: one line, without the source line it came from."""
    message(f"simdedup: warning: {' '.join(str(text).split())}")


def one_line(exc: click.UsageError) -> click.UsageError:
    """A usage error as one line, the command's help named at its end (Click prints the usage
    and a hint on lines of their own)."""
    text = " ".join(exc.format_message().split())
    if exc.ctx is not None:
        text += f" (see {exc.ctx.command_path} --help)"
    return click.UsageError(text)


@click.group(cls=SimdedupGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="simdedup")
def cli() -> None:
    """Find near-duplicate documents with simhash fingerprints.

    \b
    simdedup fingerprint corpus/ > fingerprints.jsonl
    simdedup cluster fingerprints.jsonl > clusters.jsonl
    simdedup dedup corpus/            # both in one process
    simdedup explain a.txt b.txt      # why (not) duplicates
    """


def _write_unique(unique: Any, clustered: Any, run: Any, inputs: Any, read: list[str]) -> None:
    """Write --unique-out: ``read`` are the files the run read and its other outputs."""
    from .unique import KeptLines, kept_ids

    ids = clustered.fingerprints.ids
    # lines are checked when they are read again (KeptLines.write), files here
    chosen = kept_ids(clustered.clusters, ids, files=not isinstance(unique, KeptLines))
    for doc_id, why in chosen.changed:
        message(f"simdedup: warning: {doc_id}: not copied: {why}")
    if chosen.lost:
        raise SimdedupError(
            f"cannot read {chosen.lost[0]} again, nor any document of its cluster: {unique.name} not written"
        )
    drop = {ids[m] for c in clustered.clusters for m in c.members} - set(chosen.kept)
    if isinstance(unique, KeptLines):
        count = unique.write(ids, drop, run.tables, inputs.text_field, inputs.id_field, inputs.max_line_bytes)
    else:
        count = unique.write(ids, drop, run.tables, read)
    message(f"simdedup: wrote {count} documents without their {len(drop)} duplicates to {unique.name}")


# --- commands -------------------------------------------------------------------------------


_INDEX_OPTION = click.option(
    "--index",
    "index_directory",
    type=click.Path(file_okay=False),
    metavar="IDX",
    help="Also add the records to the index IDX.",
)


_RECORD_FORMAT = click.option(
    "--format",
    "record_format",
    type=click.Choice(["jsonl", "binary"]),
    default="jsonl",
    show_default=True,
    help="JSON lines, or the compact binary form (about half the size, read several times faster by "
    "cluster; one writer per file or pipe).",
)


@cli.command(
    short_help="Write a fingerprint record for each document.",
    cls=FingerprintingCommand,
    sections={OUTPUT: ["output", "force", "record_format", "index_directory"]},
)
@storage_option
@engine_options("fingerprint")
@fingerprint_options
@output_options
@_RECORD_FORMAT
@_INDEX_OPTION
def fingerprint(
    paths: tuple[str, ...],
    jobs: int | None,
    silent: bool,
    verbose: bool,
    output: str | None,
    force: bool,
    record_format: str,
    index_directory: str | None,
    **features: Any,
) -> None:
    """Write one JSON line with the simhash fingerprint of each document.

    PATHS are files, directories (walked recursively, in sorted order) or - to read
    a list of paths from stdin (one per line, or NUL-separated with -0). Files
    ending in .gz, .bz2, .xz or .zst are decompressed; .jsonl and .ndjson files
    hold one document per line (--text-field, --id-field).

    \b
    simdedup fingerprint corpus/ > fingerprints.jsonl
    find corpus -name '*.txt' -print0 | simdedup fingerprint -0 - > fp.jsonl
    simdedup fingerprint --tokenizer jieba --topk 20 news-zh/ > zh.jsonl
    simdedup fingerprint --format binary -o fingerprints.sdfp corpus/
    """
    from .fingerprints import collect_records, json_lines
    from .write import overwritten_files, own_file

    inputs = take_inputs(features)
    method = method_from_options(inputs.given_features, **features)
    binary = record_format == "binary"
    out = output_file(output, force, paths, "-" in paths, binary)
    adding = _adding_to(index_directory, method, [out])
    kept: list[Any] = []  # the records for --index
    done = 0
    with out.open() as fd:
        run = fingerprint_run(
            paths,
            method,
            inputs,
            jobs,
            silent,
            verbose,
            render=not binary and adding is None,
            exclude=own_file(fd),
            overwritten=overwritten_files([out]),
        )
        writer = _record_writer(fd, binary)
        for batch in with_progress(run, silent):
            if binary:
                writer.write_records(batch.records)
            elif adding is not None:
                writer.write_lines(json_lines(batch.records))
            else:
                writer.write_lines(batch.lines)
            if adding is not None:
                kept += batch.records
            done += batch.count
        writer.flush()
        if adding is not None:  # inside the output's block: a refused add leaves no output either
            _add_to_index(adding, collect_records(kept))
    end_run(run, done)


def _adding_to(directory: str | None, method: Any, outputs: list[Any]) -> Any:
    """The index ``--index`` names, checked against the method's settings and against the
    run's ``outputs``, none of which may be inside it (None without it)."""
    if directory is None:
        return None
    from .store.api import AddingTo

    for output in outputs:
        output.refuse_inside(directory)
    return AddingTo(directory, method.settings)


def _add_to_index(adding: Any, fingerprints: Any) -> None:
    from .store.commands import waiting

    result = adding.add(fingerprints, waiting(adding.directory))
    message(f"simdedup: {adding.directory}: added {result.added:,} documents, {result.pairs:,} verified pairs")


def _record_writer(fd: Any, binary: bool) -> Any:
    if binary:
        from .fingerprints.binary import BinaryWriter

        return BinaryWriter(fd)
    from .write import LineWriter

    return LineWriter(fd)


@cli.command(
    short_help="Rewrite fingerprint records as JSON lines or in binary.",
    sections={OUTPUT: ["output", "force", "record_format"]},
)
@storage_option
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@output_options
@click.option(
    "--to",
    "record_format",
    type=click.Choice(["jsonl", "binary"]),
    required=True,
    help="The form to write: JSON lines or the compact binary form.",
)
def convert(files: tuple[str, ...], output: str | None, force: bool, record_format: str) -> None:
    """Rewrite fingerprint records (FILES or stdin, of either form) as JSON lines or in
    the compact binary form. Records keep their order; the settings must agree.

    \b
    simdedup convert --to binary -o fingerprints.sdfp fingerprints.jsonl
    simdedup convert --to jsonl fingerprints.sdfp | head
    """
    from .fingerprints import json_lines, read_fingerprint_files

    binary = record_format == "binary"
    out = output_file(output, force, files, not files or "-" in files, binary)
    columns = read_fingerprint_files(named_streams(files))
    with out.open() as fd:
        writer = _record_writer(fd, binary)
        if binary:
            from .fingerprints.binary import write_columns

            write_columns(writer, columns)
        else:
            for records in columns.records():
                writer.write_lines(json_lines(records))
        writer.flush()


@cli.command(
    short_help="Group near-duplicates from their fingerprint records.",
    sections={FINDING: ["k", "against"], RUNNING: ["verbose"]},
)
@storage_option
@engine_options("cluster")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@cluster_options
@output_options
@click.option(
    "--against",
    type=click.Path(dir_okay=False, readable=False),
    metavar="OLD.jsonl|URL",
    help="Incremental run: report only new documents (FILES or stdin) that duplicate a document "
    "of OLD.jsonl or each other; OLD is not re-clustered.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Say where the time goes (reading, pair search, verification, linkage, write), with the "
    "pair counts, on standard error (--engine dask and stages always do).",
)
def cluster(
    files: tuple[str, ...], output: str | None, force: bool, against: str | None, verbose: bool, **decision: Any
) -> None:
    """Group near-duplicate documents from their fingerprint records.

    Reads fingerprint lines from FILES (or stdin) and writes one JSON line per
    cluster of near-duplicates. Candidates are every pair within K bits (and,
    without -k, every pair whose sketches share a band); a candidate is a
    duplicate when the resemblance its records' sketches estimate is at least
    --min-resemblance, as dedup decides on the texts.

    \b
    simdedup cluster fingerprints.jsonl > clusters.jsonl
    simdedup fingerprint corpus/ | simdedup cluster
    simdedup cluster --k 3 --linkage single plain-simhash.jsonl
    """
    from .cluster_lines import write_clusters
    from .group import StageTimes
    from .options import ClusterOptions
    from .run import cluster_files

    options = ClusterOptions.take(decision)
    inputs = ((against,) + (files or ("-",))) if against else files
    out = output_file(output, force, inputs, not files or "-" in files)
    times = StageTimes()
    clustered = cluster_files(named_streams(inputs), options, against, message, times, release_sketches=True)
    times.start("write")
    with out.open() as fd:
        write_clusters(fd, clustered.clusters, clustered.fingerprints, options, clustered.new)
    if verbose:
        message(f"simdedup: time: {times.line()}")


@cli.command(
    short_help="Fingerprint documents and cluster them in one process.",
    cls=FingerprintingCommand,
    sections={FINDING: ["k", "verify", "exact_first"], OUTPUT: ["unique_out", "index_directory", "report_path"]},
)
@storage_option
@engine_options("dedup")
@fingerprint_options
@cluster_options
@click.option(
    "--verify",
    type=click.Choice(["exact", "sketch"]),
    default="exact",
    show_default=True,
    help="exact: measure the texts; sketch: estimate, as cluster.",
)
@click.option(
    "--exact-first",
    is_flag=True,
    help="Fingerprint one of each identical text.",
)
@click.option(
    "--unique-out",
    type=click.Path(),
    metavar="DIR|FILE",
    help="Also write the corpus without its duplicates.",
)
@output_options
@_INDEX_OPTION
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    metavar="FILE.html",
    help="Also write the review page (report).",
)
def dedup(
    paths: tuple[str, ...],
    jobs: int | None,
    silent: bool,
    verbose: bool,
    output: str | None,
    force: bool,
    verify: str,
    exact_first: bool,
    unique_out: str | None,
    index_directory: str | None,
    report_path: str | None,
    **features: Any,
) -> None:
    """Fingerprint documents and cluster them in one process.

    Takes the options of both `fingerprint` and `cluster`; writes clusters.

    \b
    simdedup dedup corpus/ > clusters.jsonl
    """
    from .cli_options import build_method, feature_options_of
    from .cluster_lines import write_clusters
    from .group import StageTimes
    from .options import ClusterOptions
    from .run import dedup_run, prepare_dedup
    from .unique import KeptLines, unique_output
    from .write import overwritten_files, own_file

    options = ClusterOptions.take(features)
    inputs = take_inputs(features)
    method = build_method(feature_options_of(features, inputs.given_features).for_measure(options))
    prepare_dedup(method, options, verify, message)
    # Every output is checked before the run: a run of hours must not end in "cannot write".
    out = output_file(output, force, paths, "-" in paths)
    unique = unique_output(unique_out, force) if unique_out is not None else None
    outputs = [out]
    if isinstance(unique, KeptLines):
        if out.same_file(unique.output):
            raise UsageError("-o and --unique-out name one file")
        unique.output.refuse_inputs(paths, "-" in paths)
        outputs.append(unique.output)
    report_out = _report_output(report_path, force, paths, outputs)
    adding = _adding_to(index_directory, method, outputs)
    run = fingerprint_run(
        paths,
        method,
        inputs,
        jobs,
        silent,
        verbose,
        exact_first=exact_first,
        exclude=() if output else own_file(stdout_target()),
        overwritten=overwritten_files(outputs),
        tee=unique.tee if isinstance(unique, KeptLines) else None,
        hold_texts=True,
    )
    times = StageTimes()
    clustered = dedup_run(run, options, with_progress(run, silent), times)
    times.start("write")
    with out.open() as fd:
        write_clusters(fd, clustered.clusters, clustered.fingerprints, options, clustered.new)
        if unique is not None:
            _write_unique(
                unique,
                clustered,
                run,
                inputs,
                [*clustered.fingerprints.ids, *run.skipped, *([out.path] if out.path else [])],
            )
        if adding is not None:
            _add_to_index(adding, clustered.fingerprints)
    missing = {}
    if report_out is not None:
        from .report import dedup_report

        missing = _warn_missing(dedup_report(report_out, clustered, run, method, options, verify, paths, inputs))
    if verbose:
        message(f"simdedup: time: {times.line()}")
    end_run(run, len(clustered.fingerprints.ids))
    if missing:
        sys.exit(EXIT_SKIPPED)


@cli.command(
    short_help="Show why two documents are or are not near-duplicates.",
    cls=FingerprintingCommand,
    sections={"What is shown": ["top", "cluster_files", "as_json"], FINDING: ["k"], READING: ["document_paths"]},
)
@storage_option
@click.argument("document_a", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@click.argument("document_b", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@documents_option(
    "A, B and the members of --clusters are ids of the documents these files and "
    "directories hold, read as fingerprint reads them (rows of JSON lines too); ids are data, "
    "so nothing else is opened (repeatable) [default: A and B are files, and no member is read]."
)
@feature_options
@lambda func: apply_options(
    [
        click.option("-k", "--k", "k", type=click.IntRange(0, 63), help="As cluster's -k."),
        *decision_options(["similarity", "min-similarity", "min-resemblance", "min-features"], as_in="cluster"),
    ],
    func,
)
@click.option(
    "--top", type=click.IntRange(1, MAX_COUNT), default=10, show_default=True, help="Features listed per side."
)
@click.option(
    "--clusters",
    "cluster_files",
    multiple=True,
    metavar="FILE",
    help="Cluster lines (of cluster or dedup) to place A and B in: when they are near-duplicates in two "
    "clusters, the member that kept them apart is named (repeatable; members are read only among "
    "the documents given).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def explain(
    document_a: str,
    document_b: str,
    document_paths: tuple[str, ...],
    top: int,
    cluster_files: tuple[str, ...],
    as_json: bool,
    **features: Any,
) -> None:
    """Show why two documents are or are not near-duplicates.

    Prints their fingerprints' distance and whether they are a candidate pair, the
    resemblance of their texts exactly (what dedup decides by) and as their sketches
    estimate it (what cluster decides by), the verdict of each, and the features that
    pull their fingerprints together or push them apart. With --clusters, where those put
    them, and which member kept two near-duplicates in different clusters.

    \b
    simdedup explain corpus/a.txt corpus/b.txt
    simdedup explain docs/a.txt docs/b.txt --clusters c.jsonl --documents docs
    simdedup explain dump.jsonl:12 dump.jsonl:40 --documents dump.jsonl
    """
    from .explain import TextsOf
    from .explain import explain as explain_documents
    from .options import ClusterOptions

    inputs = take_document_inputs(document_paths, features)
    if inputs.given_features:
        raise click.UsageError("explain measures texts; --features-field gives none")
    options = ClusterOptions.take(features)
    if features["method"] not in ("simhash", "nilsimsa"):
        raise click.UsageError(
            "explain compares simhash features or nilsimsa digests; use --method simhash or nilsimsa"
        )
    method = method_from_options(**features)
    if features["method"] == "nilsimsa":
        if cluster_files:
            raise click.UsageError("--clusters places simhash explanations; nilsimsa digests have no texts kept")
        _explain_nilsimsa(method, document_a, document_b, as_json)
        return
    clusters, estimated = None, False
    if cluster_files:
        from .cluster_lines import made_from_estimates
        from .jsonline import text_lines
        from .select import read_clusters

        lines = [
            members
            for name, stream in named_streams(cluster_files)
            for members, _ in read_clusters(text_lines(stream, name), name)
        ]
        clusters = [[member["id"] for member in members] for members in lines]
        estimated = made_from_estimates(lines)
    texts = TextsOf(method, document_paths, inputs, given=(document_a, document_b))
    try:
        result = explain_documents(method, document_a, document_b, options, top, clusters, estimated, texts)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        echo(json.dumps(result.as_dict(), ensure_ascii=False))
        return
    echo("\n".join(explanation_lines(result)))


def explanation_lines(result: Any) -> list[str]:
    """``explain``'s text: each line one fact, the verdicts in words."""

    def verdict(near: bool) -> str:
        return "near-duplicates" if near else "not near-duplicates"

    within = result.distance <= result.k
    candidate = f"within k = {result.k}" if within else f"beyond k = {result.k}"
    if result.bands:
        candidate += f"; their sketches share {result.bands} band{'s' if result.bands > 1 else ''}"
    lines = [
        f"A: {result.a} ({result.features[0]} features)",
        f"B: {result.b} ({result.features[1]} features)",
        f"Hamming distance: {result.distance} of {result.bits} bits ({candidate}): "
        + ("a candidate pair" if result.candidate else "not a candidate pair"),
    ]
    what = f"the {result.shingles}" if result.shingles else "the texts"
    name = (
        f"resemblance: Jaccard of {what}"
        if result.measure == "resemblance"
        else "bag: weighted Jaccard of the features"
    )
    if result.measured is not None:
        lines.append(f"{name}, exactly (dedup): {result.measured:.3f}")
    else:
        lines.append(f"{result.measure}: the texts are too long to measure; dedup takes the sketches' estimate")
    if result.estimated is not None:
        lines.append(
            f"{result.estimate_measure} as the records' sketches estimate it (cluster): {result.estimated:.3f}"
        )
    flag = "--min-similarity" if result.measure == "bag" else "--min-resemblance"
    if result.rule == "combined":
        lines.append(
            f"the rule (dedup): resemblance at least {result.threshold}, or the bag at least "
            f"{result.bag_threshold} with enough of the order kept (--similarity combined)"
        )
    else:
        lines.append(f"the rule (dedup): {result.measure} at least {result.threshold} ({flag})")
    if result.estimate_measure is not None and result.estimate_measure != result.measure:
        lines.append(
            f"the rule (cluster): {result.estimate_measure} at least {result.estimate_threshold}: these records "
            "carry sketches of their features (fingerprint --sketch-of features)"
        )
    if result.raised is not None:
        lines.append(
            f"a pair of {result.fewer_shingles} shingles gives less evidence: the threshold is raised to {result.raised}"
        )
    if result.near is None:
        lines.append("verdict (dedup): none: dedup refuses --sketch 0, without which no pair is measured")
    else:
        lines.append(f"verdict (dedup): {verdict(result.near)}")
    if result.near_estimated is not None and result.estimated is None:
        lines.append(
            f"verdict (cluster, from the records): {verdict(result.near_estimated)} (no sketch: the distance "
            f"alone decides, within k = {result.k})"
        )
    elif result.near_estimated is not None:
        lines.append(f"verdict (cluster, from the records): {verdict(result.near_estimated)}")
    elif result.cluster_refuses is not None:
        lines.append(
            f"verdict (cluster, from the records): none: cluster refuses these options ({result.cluster_refuses})"
        )
    if result.measure != "bag":
        lines.append(f"bag: exact weighted Jaccard of the features (not what decides): {result.bag:.3f}")
    if result.placement is not None:
        lines += placement_lines(result)
    lines.append("pulling the fingerprints together (shared, weight in A / B):")
    lines += [f"  {f!r} {wa:g} / {wb:g}" for f, wa, wb in result.together] or ["  (none)"]
    lines.append("pushing apart, more in A:")
    lines += [f"  {f!r} +{w:g}" for f, w in result.apart_a] or ["  (none)"]
    lines.append("pushing apart, more in B:")
    lines += [f"  {f!r} +{w:g}" for f, w in result.apart_b] or ["  (none)"]
    return lines


def placement_lines(result: Any) -> list[str]:
    """Where the clusters put A and B, and who kept them apart."""
    place = result.placement

    def where(number: int | None, size: int) -> str:
        if number is None:
            return "in none of them (alone)"
        return f"in cluster {number} ({size} member{'s' if size != 1 else ''})"

    lines = [f"clusters: A {where(place.cluster_a, place.sizes[0])}, B {where(place.cluster_b, place.sizes[1])}"]
    if place.failing_a is not None:

        def named(member: str, side: str) -> str:
            return side if member == (result.a if side == "A" else result.b) else f"{member} (with {side})"

        how = "as the sketches estimate it (as cluster decided)" if place.estimated else "measured"
        lines.append(
            f"kept apart: {named(place.failing_a, 'A')} and {named(place.failing_b, 'B')} have "
            f"{result.measure} {place.failing_score:.3f} {how}, below {result.threshold}; complete linkage (the "
            "default) joins two clusters only when every pair across them passes"
        )
    elif place.kept_apart:
        lines.append(
            "kept apart, though every pair across their clusters passes: the clusters were made with other "
            "options (another --linkage or threshold) or of other texts"
        )
    if place.unread:
        lines.append(
            f"members not read, so not measured: {len(place.unread)}, such as {place.unread[0]} "
            "(members are read only inside A, B and --documents)"
        )
    return lines


def _explain_nilsimsa(method: Any, document_a: str, document_b: str, as_json: bool) -> None:
    from .explain import compare_nilsimsa
    from .method_registry import NILSIMSA_MIN_SCORE

    result = compare_nilsimsa(method, document_a, document_b)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
        return
    threshold = NILSIMSA_MIN_SCORE
    click.echo(
        "\n".join(
            [
                f"A: {result.a} ({result.sizes[0]} bytes) nilsimsa {result.digests[0]}",
                f"B: {result.b} ({result.sizes[1]} bytes) nilsimsa {result.digests[1]}",
                f"nilsimsa score: {result.score} on the -128..128 scale ({result.differing_bits} of 256 bits differ; "
                f"independent texts rarely score above 24)",
                f"verdict with default settings: {'near-duplicates' if result.score >= threshold else 'not near-duplicates'} "
                f"(the default --min-score is {threshold})",
            ]
        )
    )


@cli.command(
    short_help="Nearest-neighbour distances, cluster sizes, a suggested k.",
    sections={FINDING: ["max_k"], OUTPUT: ["plot", "force", "as_json"]},
)
@storage_option
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option(
    "--max-k",
    type=click.IntRange(1, 31),
    default=12,
    show_default=True,
    help="Largest nearest-neighbour distance searched exactly.",
)
@lambda func: apply_options(
    decision_options(["similarity", "min-similarity", "min-resemblance"], as_in="cluster"), func
)
@click.option("--plot", type=click.Path(dir_okay=False), help="Also draw the histograms to this PNG file.")
@click.option("--force", is_flag=True, help="Replace the --plot file if it exists.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def stats(files: tuple[str, ...], max_k: int, plot: str | None, force: bool, as_json: bool, **decision: Any) -> None:
    """Distribution of nearest-neighbour distances and cluster sizes, and a suggested k.

    \b
    simdedup stats fingerprints.jsonl
    simdedup stats --plot distances.png fingerprints.jsonl
    """
    from .fingerprints import load_fingerprints
    from .options import ClusterOptions
    from .stats import fingerprint_stats, histogram

    if plot:
        need("matplotlib", "--plot")
    drawing = output_file(plot, force, files, not files or "-" in files) if plot else None
    fingerprints = load_fingerprints(named_streams(files))
    try:
        options = ClusterOptions.take(decision).for_fingerprints(fingerprints)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    result = fingerprint_stats(fingerprints, max_k, options)
    if drawing is not None:
        from .plot import plot_stats
        from .write import output_call

        with drawing.open() as fd:
            output_call(plot_stats, result, fd)
    if as_json:
        echo(json.dumps(result.as_dict()))
        return
    rows = [(str(d), c) for d, c in enumerate(result.nearest)] + [(f">{result.max_k}", result.beyond)]
    lines = [f"{result.documents} documents; nearest-neighbour Hamming distance:"] + histogram(rows)
    if result.verified_distances is not None:
        lines += ["distance of sketch-verified pairs:"]
        lines += histogram([(str(d), c) for d, c in enumerate(result.verified_distances)])
    lines += ["cluster sizes (default settings):"] + histogram(result.cluster_sizes)
    lines.append(f"suggested k: {result.suggested_k} ({result.reason})")
    echo("\n".join(lines))


@cli.command(
    short_help="Score clusters against labelled pairs: precision, recall, F1.",
    name="eval",
    sections={"Scoring": ["gold", "match"]},
)
@storage_option
@click.option(
    "--gold",
    type=click.Path(dir_okay=False),
    required=True,
    help="Labelled duplicate pairs: JSON lines with a and b (dup: false lines are skipped), or two ids per line.",
)
@click.option(
    "--match",
    type=click.Choice(["id", "basename", "stem"]),
    default="id",
    show_default=True,
    help="Compare ids as they are, by file name, or by file name without extension.",
)
@click.argument("clusters", type=click.Path(dir_okay=False, allow_dash=True), default="-")
def evaluate(gold: str, match: str, clusters: str) -> None:
    """Pairwise precision, recall and F1 of CLUSTERS against your own labels.

    \b
    simdedup cluster fp.jsonl > clusters.jsonl
    simdedup eval --gold pairs.tsv clusters.jsonl
    """
    from .eval import read_cluster_members, read_gold_pairs, score_pairs
    from .jsonline import text_lines

    pairs = set().union(
        *(read_gold_pairs(text_lines(handle, name), name, match) for name, handle in named_streams([gold]))
    )
    members = [  # opened where every record and cluster file is (a missing one is one line, exit 1)
        member
        for name, handle in named_streams([clusters])
        for member in read_cluster_members(text_lines(handle, name), name, match)
    ]
    echo(json.dumps(score_pairs(members, pairs).as_dict()))


@cli.command(
    short_help="List documents whose text appeared earlier (exact copies).",
    sections={"Finding repeats": ["bloom_capacity", "error_rate"], READING: ["encoding"], RUNNING: ["silent"]},
)
@storage_option
@lambda func: apply_options(INPUT_OPTIONS, func)
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of the documents.")
@click.option(
    "--bloom",
    "bloom_capacity",
    type=click.IntRange(1, MAX_BLOOM),
    metavar="N",
    help="Use a bloom filter sized for N documents instead of remembering every hash.",
)
@click.option(
    "--error-rate",
    type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
    default=1e-6,
    show_default=True,
    help="Bloom filter: chance that a new document is reported as seen.",
)
@click.option("--silent", is_flag=True, help="No progress bar.")
@output_options
def exact(
    paths: tuple[str, ...],
    encoding: str,
    bloom_capacity: int | None,
    error_rate: float,
    silent: bool,
    output: str | None,
    force: bool,
    **inputs: Any,
) -> None:
    """List documents whose text (whitespace aside) appeared earlier in the input.

    One JSON line per repeated document: its id and the id it repeats (null with
    --bloom, which cannot name it). Text-identical documents are found without any
    fingerprint; a bloom filter keeps memory fixed for streams too large for a set.

    \b
    simdedup exact corpus/ > repeats.jsonl
    find crawl -type f -print0 | simdedup exact -0 --bloom 100000000 - > repeats.jsonl
    """
    from .exact import BloomFilter, SeenDigests, repeats
    from .read import DocumentReader, read_sources
    from .write import LineWriter, overwritten_files, own_file

    try:
        DocumentReader("", encoding)
        seen: Any = BloomFilter(bloom_capacity, error_rate) if bloom_capacity else SeenDigests()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    out = output_file(output, force, paths, "-" in paths)
    plan = read_sources(
        paths,
        take_inputs({**inputs, "features_field": None}),
        True,
        exclude=() if output else own_file(stdout_target()),
        overwritten=overwritten_files([out]),
        note=message,
    )
    sources, total = plan.sources, plan.count
    warnings = Warnings(message)
    done = 0
    with out.open() as fd:
        writer = LineWriter(fd)
        for document, earlier, reason in repeats(
            progress(sources, silent, total=total, unit="doc", desc="exact"), encoding, seen
        ):
            if reason is not None:
                warnings.warn(document.where, reason, document.origin)
                continue
            done += 1
            if earlier is not None:
                writer.write_line(
                    json.dumps(
                        {"id": document.path, "duplicate_of": earlier or None},
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                )
        writer.flush()
    warnings.close()
    if warnings.count:
        message(f"simdedup: read {done} documents, skipped {warnings.count} (see warnings above)")
        sys.exit(EXIT_SKIPPED)


@cli.command(
    short_help="Print the members to drop from each cluster (all but one).",
    sections={"Choosing the survivors": ["policy", "kept", "null"]},
)
@storage_option
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option(
    "--keep",
    "policy",
    type=click.Choice(["representative", "first", "longest", "shortest", "newest", "oldest"]),
    default="representative",
    show_default=True,
    help="Which member of each cluster survives.",
)
@click.option("--kept", is_flag=True, help="Print the survivors instead of the members to drop.")
@click.option("-0", "--null", is_flag=True, help="End each id with NUL instead of a newline (for xargs -0).")
def select(files: tuple[str, ...], policy: str, kept: bool, null: bool) -> None:
    """Print, for every cluster, the members to drop (all but one).

    Reads clusters (files or stdin). Nothing is deleted: pipe the list to
    what you choose. Ties go to the smallest id. The disk is checked as the
    list is made: a cluster keeps a member that is a readable file now, and
    drops only other files (a member gone since clustering: exit 3).

    \b
    simdedup cluster fp.jsonl | simdedup select --keep longest -0 | xargs -0 rm --
    simdedup select --kept clusters.jsonl > survivors.txt
    """
    from .read import named_streams
    from .select import id_list, select_files

    chosen = select_files(named_streams(files), policy)
    for doc_id, why in chosen.held + chosen.changed:
        message(f"simdedup: warning: {doc_id}: not listed: {why}")
    write_all(stdout_target(), id_list(chosen.kept if kept else chosen.dropped, null))
    if chosen.changed:
        message(
            f"simdedup: members not listed as the disk changed since clustering: {len(chosen.changed)} "
            f"(see warnings above)"
        )
        sys.exit(EXIT_SKIPPED)


def _report_output(path: str | None, force: bool, inputs: tuple[str, ...], outputs: list[Any]) -> Any:
    """The --report output of dedup, checked against the inputs and the other ``outputs``
    (and added to them), or None."""
    if path is None:
        return None
    from .write import OutputFile

    report_out = OutputFile(path, force, option="--report")
    report_out.refuse_inputs(inputs, "-" in inputs)
    if any(report_out.same_file(other) for other in outputs):
        raise UsageError("--report names the file of another output")
    outputs.append(report_out)
    return report_out


def _warn_missing(missing: dict[str, str]) -> dict[str, str]:
    for doc_id, why in sorted(missing.items()):
        message(f"simdedup: warning: {doc_id}: no text in the report: {why}")
    return missing


@cli.command(
    short_help="Write an HTML page to review clusters before acting on them.",
    cls=FingerprintingCommand,
    sections={"The page": ["output", "force", "policy", "threshold", "max_bytes"], READING: ["document_paths"]},
)
@storage_option
@click.argument("clusters", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE.html",
    help="The HTML file to write.",
)
@click.option("--force", is_flag=True, help="Replace the -o file if it exists.")
@documents_option(
    "Read the members' texts from these files and directories, as fingerprint reads "
    "them (repeatable); nothing else is opened, whatever an id names [default: no texts]."
)
@feature_options_without_sketch
@click.option(
    "--keep",
    "policy",
    type=click.Choice(POLICIES),
    default="representative",
    show_default=True,
    help="The keep policy of select whose decisions the page shows.",
)
@click.option(
    "--threshold",
    type=FiniteFloatRange(0, 1),
    help='The threshold marked on the histogram and that "near the threshold" means '
    f"[default: that of the clusters' measure: {DEFAULTS.min_resemblance} for the resemblance, "
    f"{DEFAULTS.min_similarity} for the bag].",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(1, MAX_BYTES),
    default=64 << 20,
    show_default=True,
    help="Largest size of the page; the documents' texts are cut shorter to fit.",
)
def report(
    clusters: tuple[str, ...],
    output: str,
    force: bool,
    document_paths: tuple[str, ...],
    policy: str,
    threshold: float | None,
    max_bytes: int,
    **features: Any,
) -> None:
    """Write a self-contained HTML page for reviewing CLUSTERS before acting on them.

    The page shows every cluster's members side by side with the differing passages marked,
    the keep/drop decision of `select`, the least resemblant pair and what pulls its
    fingerprints together (as `explain` says it); decisions can be changed there and the
    drop list downloaded.

    \b
    simdedup report clusters.jsonl -o report.html
    simdedup report c.jsonl --documents docs.jsonl --id-field url -o report.html
    """
    from .report import ReportOptions, fingerprints_in_words, report_to
    from .similarity import DEFAULT_FOLDING

    if "-" in document_paths and (not clusters or "-" in clusters):
        raise click.UsageError("standard input can give the clusters or the document paths, not both")
    inputs = take_document_inputs(document_paths, features)
    method = method_from_options(inputs.given_features, **features)
    out = output_file(output, force, clusters + document_paths, not clusters or "-" in clusters)
    options = ReportOptions(
        policy,
        threshold,
        max_bytes,
        [("features for the pulls (explain)", fingerprints_in_words(method.settings))],
        folding=getattr(method, "folding", DEFAULT_FOLDING),
    )
    missing = report_to(out, named_streams(clusters), method, options, document_paths, inputs)
    if not document_paths:  # ids are data: none is opened unless the documents are given
        message("simdedup: the page shows no texts: give the documents with --documents PATH")
    elif _warn_missing(missing):
        sys.exit(EXIT_SKIPPED)


@cli.command(short_help="List the available tokenizers (built-in and plugins).")
def tokenizers() -> None:
    """List the available tokenizers as JSON lines (built-in and plugins)."""
    from .tokenizers import available_tokenizers
    from .write import LineWriter

    with output_file(None, False).open() as fd:
        writer = LineWriter(fd)
        for info in available_tokenizers():
            writer.write_line(json.dumps(info, ensure_ascii=False, separators=(",", ":")))
        writer.flush()


def main() -> None:
    from . import stops
    from .write import reserve_standard_descriptors

    _in_utf8_mode()
    reserve_standard_descriptors()
    stops.main(lambda: cli(prog_name="simdedup"))


def _in_utf8_mode() -> None:
    """Run in Python's UTF-8 mode (the default from Python 3.15 on, PEP 686). File names and
    arguments are then read as UTF-8 whatever the locale, a byte that is not UTF-8 as an escape,
    so the same files give the same ids, and clusters, under any locale, and a name goes back to
    its own bytes on any machine. Under a locale of another encoding (zh_CN.GB18030, ISO-8859-1)
    the command starts again in that mode, before it reads anything; a PYTHONUTF8 the user set
    stays theirs."""
    import codecs

    if sys.flags.utf8_mode or "PYTHONUTF8" in os.environ or not sys.executable:
        return
    if codecs.lookup(sys.getfilesystemencoding()).name == "utf-8":
        return
    try:  # the arguments' own bytes: some encodings (GBK) do not give back what they decoded
        with open("/proc/self/cmdline", "rb") as handle:
            argv: list[str] | list[bytes] = handle.read().split(b"\0")[:-1]
    except OSError:
        argv = sys.orig_argv
    try:
        os.execve(sys.executable, argv, {**os.environ, "PYTHONUTF8": "1"})
    except (OSError, UnicodeError):  # it cannot start again: names as the locale reads them
        return
