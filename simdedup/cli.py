"""The ``simdedup`` command line: a thin layer over the library.

Data goes to stdout as JSON lines; progress, warnings and errors go to stderr.
Exit status: 0 ok; 1 error (bad input line, incompatible fingerprints, unwritable output,
closed pipe); 2 usage error; 3 finished, but some inputs were skipped (each with a warning).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import stat
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import click

from .compat import PRESETS
from .distributed.commands import engine_options
from .errors import RecordError, SimdedupError, UsageError
from .hashing import HASHES
from .output import stdout_target, write_all

EXIT_SKIPPED = 3
EXIT_BUG = 70  # EX_SOFTWARE


class SimdedupGroup(click.Group):
    """Turns library errors into one-line messages in one place, and ends quietly on a closed pipe."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise click.UsageError(str(exc)) from None
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
            message(f"simdedup: error: unexpected {type(exc).__name__}: {exc} (a bug: please report it; "
                    f"SIMDEDUP_DEBUG=1 shows the traceback)")
            ctx.exit(EXIT_BUG)


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


# --- shared helpers -------------------------------------------------------------------------


def message(text: str) -> None:
    """A line on stderr that does not break a progress bar (dropped when stderr cannot take it).
    Names in it come from files and their contents, so control characters are shown escaped: an
    id can neither drive the terminal nor start a line of its own."""
    text = printable(text)
    try:
        if "tqdm" in sys.modules:
            from tqdm import tqdm

            tqdm.write(text, file=sys.stderr)
        else:
            click.echo(text, err=True)
    except OSError:
        pass


def echo(text: str) -> None:
    """``text`` and a newline on stdout (an error when it cannot be written)."""
    from .output import write_all

    with output_file(None, False).open() as fd:
        write_all(fd, (text + "\n").encode("utf-8", "surrogateescape"))


def printable(text: str) -> str:
    """``text`` with every character that is not printable (controls such as ESC and newline,
    format characters such as bidirectional overrides, lone surrogates) as a Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


def progress(iterable: Any, silent: bool, **kwargs: Any) -> Any:
    """``iterable`` wrapped in a tqdm bar on stderr, when stderr is a terminal and not silent."""
    if silent or not sys.stderr.isatty():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


def output_file(path: str | None, force: bool, inputs: tuple[str, ...] = (), stdin: bool = False,
                binary: bool = False) -> Any:
    """The output ``-o`` names (:class:`simdedup.output.OutputFile`), refused when it would
    replace one of the named ``inputs`` or, with ``stdin``, the file on stdin."""
    from .output import OutputFile

    output = OutputFile(path, force, binary)
    output.refuse_inputs(inputs, stdin)
    return output


def _apply(options: list[Callable], func: Callable) -> Callable:
    for option in reversed(options):
        func = option(func)
    return func


# How features and fingerprints are made: shared by fingerprint, dedup and explain.
_FEATURE_OPTIONS = [
    click.option("--method", type=click.Choice(["simhash", "nilsimsa", "sentences"]), default="simhash",
                 show_default=True, help="Fingerprint kind: simhash of features; nilsimsa digest of the raw "
                                         "bytes; signature of the longest sentences."),
    click.option("--sentences", "sentence_count", type=click.IntRange(min=1), default=3, show_default=True,
                 help="--method sentences: how many of the longest sentences to sign."),
    click.option("--hash", "hash_name", type=click.Choice(HASHES), default="xxh3", show_default=True,
                 help="Feature hash; md5, python-hashes and jenkins (64 bits) reproduce other tools' fingerprints."),
    click.option("--tokenizer", "tokenizer_name", default="words", show_default=True,
                 help="Tokenizer name (see `simdedup tokenizers`)."),
    click.option("--shingle", type=click.IntRange(min=1), help="Use N-grams of N tokens as features."),
    click.option("--topk", type=click.IntRange(min=1), help="Keywords kept by the jieba tokenizer (default 20)."),
    click.option("-O", "--tokenizer-option", "tokenizer_options", multiple=True, metavar="KEY=VALUE",
                 help="Any tokenizer option (repeatable)."),
    click.option("--bits", type=click.Choice(["64", "128"]), default="64", show_default=True,
                 help="Fingerprint width."),
    click.option("--weighting", type=click.Choice(["binary", "feature"]),
                 help="Simhash votes: once per distinct feature, or by the tokenizer's weights "
                      "[default: binary for words, feature for the others]."),
    click.option("--ties", type=click.Choice(["zero", "one"]),
                 help="What a bit whose votes tie becomes (one: as python-hashes) [default: zero]."),
    click.option("--compat", type=click.Choice(list(PRESETS)),
                 help="Reproduce another tool's fingerprints: sets the options listed in the README "
                      "(Other methods); options given beside it must agree."),
    click.option("--sketch", "sketch_bins", type=int, default=128, show_default=True,
                 help="Bytes of feature sketch per record, used to verify candidates (0: none)."),
    click.option("--encoding", default="utf-8", show_default=True,
                 help="Encoding of the documents; auto: a byte-order mark, else UTF-8 if it fits, else detected."),
    click.option("--html", is_flag=True, help="Documents are HTML: use their visible text (HTTP responses "
                                              "that say text/html are handled so anyway)."),
]


def _feature_options(func: Callable) -> Callable:
    return _apply(_FEATURE_OPTIONS, func)


_INPUT_OPTIONS = [
    click.argument("paths", nargs=-1, type=click.Path(dir_okay=True, allow_dash=True, readable=False)),
    click.option("-0", "--null", is_flag=True, help="Paths read from stdin (-) are NUL-separated."),
    click.option("--jsonl/--no-jsonl", default=None,
                 help="Read files as JSON lines, one document per line [default: files named "
                      ".jsonl or .ndjson, compressed or not]."),
    click.option("--text-field", default="text", show_default=True, help="JSON lines: field with the text (a.b for nested)."),
    click.option("--id-field", help="JSON lines: field with the document id [default: FILE:LINE]."),
    click.option("--glob", "globs", multiple=True, metavar="PATTERN",
                 help="Directory walks take only files whose name or relative path matches (repeatable)."),
    click.option("--exclude", "excludes", multiple=True, metavar="PATTERN",
                 help="Directory walks leave out files and directories that match (repeatable)."),
    click.option("--min-bytes", type=click.IntRange(min=0), default=0, help="Directory walks leave out smaller files."),
    click.option("--max-line-bytes", type=click.IntRange(min=1 << 20),
                 help="Skip longer JSON lines, CSV rows, Parquet texts and WARC record bodies, which are "
                      "read into memory whole [default: 128 MiB]."),
]


def _inputs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the input options out of a command's keyword arguments; with ``--features-field``,
    the field read is that one, as a :class:`simdedup.corpus.FeaturesField`."""
    inputs = {name: kwargs.pop(name) for name in ("null", "jsonl", "text_field", "id_field", "globs", "excludes",
                                                   "min_bytes", "max_line_bytes")}
    features_field = kwargs.pop("features_field")
    if features_field is not None:
        from .corpus import FeaturesField

        if _given_on_command_line("text_field"):
            raise click.UsageError("give --text-field or --features-field, not both")

        inputs["text_field"] = FeaturesField(features_field)
    return inputs


def _given_features(inputs: dict[str, Any]) -> bool:
    from .corpus import FeaturesField

    return isinstance(inputs["text_field"], FeaturesField)


def _fingerprint_options(func: Callable) -> Callable:
    return _apply([
        *_INPUT_OPTIONS,
        click.option("--features-field", metavar="FIELD",
                     help="JSON lines: the field holds the document's features instead of its text: a list "
                          "of tokens, of [token, weight] pairs, or an object token -> weight (dotted for nested)."),
        *_FEATURE_OPTIONS,
        click.option("-j", "--jobs", type=click.IntRange(min=1), help="Processes to use [default: all cores]."),
        click.option("--silent", is_flag=True, help="No progress bar."),
        click.option("-v", "--verbose", is_flag=True, help="Say which encoding --encoding auto chose for each file."),
    ], func)


def _output_options(func: Callable) -> Callable:
    func = click.option("--force", is_flag=True, help="Replace the -o file if it exists.")(func)
    return click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
                        help="Write to this file instead of stdout.")(func)


def _cluster_options(func: Callable) -> Callable:
    return _apply([
        click.option("-k", "--k", "k", type=click.IntRange(0, 63),
                     help="Largest Hamming distance of a candidate pair "
                          "[default: 10 with sketches, 3 without; doubled for 128 bits]."),
        click.option("--similarity", type=click.Choice(["combined", "bag", "resemblance"]), default="combined",
                     show_default=True,
                     help="bag: weighted Jaccard of word counts (order and punctuation do not count); "
                          "resemblance: Jaccard of token 3-grams, punctuation kept (order counts); combined: "
                          "resemblance at least --min-resemblance, or bag at least --min-similarity with half "
                          "the 3-grams shared. Exact in dedup and explain; cluster (no texts) uses the sketches' bag."),
        click.option("--min-similarity", type=click.FloatRange(0, 1), default=0.88, show_default=True,
                     help="Smallest bag similarity (weighted Jaccard of word counts) of a duplicate."),
        click.option("--min-resemblance", type=click.FloatRange(0, 1), default=0.8, show_default=True,
                     help="Smallest resemblance (Jaccard of token 3-grams) of a duplicate."),
        click.option("--linkage", type=click.Choice(["complete", "star", "single"]), default="complete",
                     show_default=True, help="complete: every pair in a cluster is verified; star: every "
                                             "member against the centre; single: plain union-find."),
        click.option("--min-features", type=click.IntRange(min=0), default=10, show_default=True,
                     help="Documents with fewer features only group with exact copies."),
        click.option("--min-score", type=click.IntRange(-128, 128),
                     help="nilsimsa fingerprints: smallest nilsimsa score of a duplicate [default: 90]."),
        click.option("--singletons", is_flag=True, help="Also print documents with no duplicate."),
        click.option("--format", "output_format", type=click.Choice(["clusters", "members"]), default="clusters",
                     show_default=True, help="One line per cluster, or one per document (id, cluster, kept, "
                                             "distance) for joining back."),
    ], func)


def _cluster_settings(k: int | None, min_similarity: float, linkage: str, min_features: int,
                      singletons: bool, min_score: int | None, similarity: str = "combined",
                      min_resemblance: float = 0.8) -> Any:
    from .pipeline import ClusterOptions

    return ClusterOptions(k, min_similarity, linkage, min_features, singletons, min_score, similarity, min_resemblance)


def _make_fingerprinter(given: bool = False, **options: Any) -> Any:
    """The fingerprinting method the feature options describe, with ``--compat``'s filled in
    (usage errors for bad values); ``given``: the input gives the features (``--features-field``)."""
    compat = options.pop("compat")
    if compat is not None:
        options = _preset_options(compat, options, given)
    elif given:
        _refuse_tokenizer_options(options)
    return _fingerprinter(given=given, **options)


def _given_on_command_line(name: str) -> bool:
    from click.core import ParameterSource

    source = click.get_current_context().get_parameter_source(name)
    return source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _flag(name: str) -> str:
    """The command-line flag of the parameter called ``name``."""
    (param,) = [p for p in click.get_current_context().command.params if p.name == name]
    return max(param.opts, key=len)


def _refuse_tokenizer_options(options: dict[str, Any]) -> None:
    from .compat import TOKENIZER_SETTINGS

    for name in (*TOKENIZER_SETTINGS, "html"):
        if _given_on_command_line(name):
            raise click.UsageError(f"--features-field gives the features: {_flag(name)} does not apply")


def _preset_options(compat: str, options: dict[str, Any], given: bool) -> dict[str, Any]:
    """``options`` with those of the ``--compat`` preset; an option given on the command line
    that says otherwise is a usage error."""
    from .compat import ADJUSTABLE, PRESETS, TOKENIZER_SETTINGS

    if options["method"] != "simhash":
        raise click.UsageError(f"--compat {compat} makes simhash fingerprints; it takes no --method {options['method']}")
    if given:
        _refuse_tokenizer_options(options)
    merged = dict(options)
    for name, value in PRESETS[compat].items():
        if given and name in TOKENIZER_SETTINGS:
            continue
        if name == "tokenizer_options":
            preset = dict(item.split("=", 1) for item in value)
            for item in options[name]:
                key, _, own = (part.strip() for part in item.partition("="))
                if preset.get(key, own.lower()) != own.lower():
                    raise click.UsageError(f"--compat {compat} sets -O {key}={preset[key]}; "
                                           f"it cannot be used with -O {item}")
            merged[name] = (*value, *options[name])
        elif not _given_on_command_line(name):
            merged[name] = value
        elif options[name] != value and name not in ADJUSTABLE:
            raise click.UsageError(f"--compat {compat} sets {_flag(name)} {value}; "
                                   f"it cannot be used with {_flag(name)} {options[name]}")
    return merged


def _fingerprinter(method: str, sentence_count: int, hash_name: str, tokenizer_name: str, shingle: int | None,
                   topk: int | None, tokenizer_options: tuple[str, ...], bits: str, weighting: str | None,
                   ties: str | None, sketch_bins: int, encoding: str, html: bool = False, given: bool = False) -> Any:
    """The fingerprinting method the (final) feature options name."""
    from .pipeline import DocumentFingerprinter, GivenFeaturesFingerprinter, NilsimsaFingerprinter, SentencesFingerprinter
    from .tokenizers import get_tokenizer

    if method != "simhash":
        if shingle is not None or topk is not None or tokenizer_options or weighting or html or ties or given:
            raise click.UsageError(f"--method {method} takes no tokenizer options")
        try:
            if method == "nilsimsa":
                return NilsimsaFingerprinter(encoding)
            return SentencesFingerprinter(sentence_count, encoding)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None

    options: dict[str, Any] = {}
    for item in tokenizer_options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--tokenizer-option")
        options[key.strip()] = value
    if shingle is not None:
        options["shingle"] = shingle
    if topk is not None:
        options["topk"] = topk
    try:
        if given:
            from .features import GivenFeatures

            return GivenFeaturesFingerprinter(GivenFeatures(), int(bits), hash_name, encoding=encoding,
                                              sketch_bins=sketch_bins, weighting=weighting, ties=ties or "zero")
        tokenizer = get_tokenizer(tokenizer_name, **options)
        return DocumentFingerprinter(tokenizer, int(bits), hash_name, encoding=encoding, sketch_bins=sketch_bins,
                                     weighting=weighting, html=html, ties=ties or "zero")
    except (SimdedupError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def _sources(paths: tuple[str, ...], null: bool, jsonl: bool | None = False, text_field: str = "text",
             id_field: str | None = None, globs: tuple[str, ...] = (), excludes: tuple[str, ...] = (),
             min_bytes: int = 0, jsonl_files: list[str] | None = None, max_line_bytes: int | None = None,
             count: bool = True,
             verbose: bool = False, exclude: tuple[tuple[int, int], ...] = (),
             overwritten: dict[tuple[int, int], str] | None = None) -> tuple[Any, int | None, int | None]:
    """Sources named on the command line, their number when it is known up front, and, for files
    holding many documents (counted only as they are read), the files' total size in bytes.

    Without ``count`` (no progress bar to show), directories are walked as the sources are
    consumed, so that the walk overlaps with fingerprinting instead of coming before it.
    Names that lead to a file read under another name (links) are left out and reported;
    ``exclude`` names files (st_dev, st_ino) never to read: the run's own output.
    ``overwritten``: the files outputs write over (identity: name); meeting one is a usage error."""
    from .corpus import WalkFilter, expand_jsonl, iter_sources, read_path_list, table_kind
    from .output import refuse_overwritten_inputs

    walk_filter = WalkFilter(globs, excludes, min_bytes)

    def found(names: Any) -> Any:
        return refuse_overwritten_inputs(_without_links(iter_sources(names, walk_filter, exclude), verbose),
                                         overwritten or {})

    if not paths:
        raise click.UsageError("give at least one PATH, or - to read paths from stdin")
    if "-" in paths:
        def named() -> Iterator[str]:
            for path in paths:
                if path == "-":
                    yield from read_path_list(sys.stdin.buffer, null)
                else:
                    yield path

        return expand_jsonl(found(named()), jsonl, text_field, id_field, jsonl_files, max_line_bytes), None, None
    if not count:
        return expand_jsonl(found(paths), jsonl, text_field, id_field, jsonl_files, max_line_bytes), None, None
    sources = list(found(paths))
    if jsonl or (jsonl is None and any(table_kind(s.path) for s in sources)):
        total_bytes = sum(os.path.getsize(s.path) for s in sources if s.reason is None and os.path.isfile(s.path))
        return expand_jsonl(sources, jsonl, text_field, id_field, jsonl_files, max_line_bytes), None, total_bytes
    return sources, len(sources), None


def _without_links(sources: Iterator[Any], verbose: bool) -> Iterator[Any]:
    """``sources`` without the further names of files read once; each is listed with ``-v``,
    and a count is given at the end."""
    links = 0
    for source in sources:
        if not source.same_file:
            yield source
            continue
        links += 1
        if verbose:
            message(f"simdedup: {source.path}: {source.reason}")
    if links:
        names = "1 name leads" if links == 1 else f"{links} names lead"
        message(f"simdedup: {names} to a file read under another name (links); each file was read "
                f"once{'' if verbose else ' (-v lists them)'}")


def _own_file(target: Any) -> tuple[tuple[int, int], ...]:
    """(st_dev, st_ino) of the regular file an output descriptor writes into (a temporary
    ``-o`` file, or the file stdout is redirected to): the walk never reads it."""
    if not isinstance(target, int):
        return ()
    try:
        st = os.fstat(target)
    except OSError:
        return ()
    return ((st.st_dev, st.st_ino),) if stat.S_ISREG(st.st_mode) else ()


def _fingerprint_batches(fingerprinter: Any, paths: tuple[str, ...], inputs: dict[str, Any], jobs: int | None,
                         silent: bool, skipped: list[str], duplicates: dict[str, str] | None = None,
                         verbose: bool = False, render: bool = False,
                         exclude: tuple[tuple[int, int], ...] = (),
                         tee: Callable[[Iterator[Any]], Iterator[Any]] | None = None) -> Iterator[Any]:
    """Batches of records (:class:`simdedup.pipeline.Batch`) of the named documents; a skipped
    one is warned about and listed in ``skipped``. With ``render``, records come as JSON lines.

    With ``duplicates`` (a dict), documents whose text was seen before are not fingerprinted
    but listed there (the exact pre-pass). ``tee`` sees every source first.
    """
    from .pipeline import default_jobs, exact_duplicates, fingerprint_batches

    sources, total, total_bytes = _sources(paths, **inputs, count=not silent and sys.stderr.isatty(),
                                           verbose=verbose, exclude=exclude)
    if tee is not None:
        sources = tee(sources)
    if duplicates is not None:
        from .exact import SeenDigests

        sources = exact_duplicates(sources, fingerprinter.encoding, SeenDigests(), duplicates)
    jobs = jobs or default_jobs()
    if jobs > 1:  # a pool is not worth it for a handful of documents
        sources = iter(sources)  # a list (counted for the progress bar) would give its head twice
        head = list(itertools.islice(sources, 4 * jobs))
        jobs = max(1, min(jobs, len(head) // 4))
        sources = itertools.chain(head, sources)
    with _progress_bar(silent, total_bytes or total, "B" if total_bytes else "doc") as bar:
        for batch in fingerprint_batches(sources, fingerprinter, jobs, render):
            for source in batch.skipped:
                skipped.append(source.path)
                message(f"simdedup: warning: {source.path}: {source.reason}")
            if verbose:
                for note in batch.notes:
                    message(f"simdedup: {note}")
            if bar is not None:
                bar.update(batch.size if total_bytes else batch.count + len(batch.skipped))
            yield batch


def _fingerprint_records(*args: Any, **kwargs: Any) -> Iterator[Any]:
    """The records of :func:`_fingerprint_batches`, one by one."""
    for batch in _fingerprint_batches(*args, **kwargs):
        yield from batch.records


@contextmanager
def _progress_bar(silent: bool, total: int | None, unit: str) -> Iterator[Any]:
    """A tqdm bar on stderr (in bytes or documents), or None when silent or not on a terminal."""
    if silent or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit=unit, unit_scale=unit == "B", file=sys.stderr, dynamic_ncols=True,
              desc="fingerprint") as bar:
        yield bar


def _report_skipped(skipped: list[str], done: int, verb: str = "fingerprinted") -> None:
    if skipped:
        message(f"simdedup: {verb} {done} documents, skipped {len(skipped)} (see warnings above)")


def _write_unique(unique: Any, clusters: list[Any], ids: list[str], jsonl_files: list[str], inputs: dict[str, Any],
                  read: list[str]) -> None:
    """Write --unique-out: ``read`` are the files the run read and its other outputs."""
    from .unique import KeptLines, dropped_ids

    drop = dropped_ids(clusters, ids)
    if isinstance(unique, KeptLines):
        count = unique.write(ids, drop, jsonl_files, inputs["text_field"], inputs["id_field"],
                             inputs["max_line_bytes"])
    else:
        count = unique.write(ids, drop, jsonl_files, read)
    message(f"simdedup: wrote {count} documents without their {len(drop)} duplicates to {unique.name}")


def _clusters(fingerprints: Any, options: Any, new: Any = None) -> list[Any]:
    from .pipeline import cluster_fingerprints

    try:
        resolved = options.resolve(fingerprints.bits, fingerprints.sketches is not None, fingerprints.method,
                                   len(fingerprints.ids))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if fingerprints.exact_dropped:
        message(f"simdedup: note: {fingerprints.exact_dropped:,} documents beyond the memory budget of exact "
                f"verification are verified with their sketches")
    if options.similarity == "resemblance" and fingerprints.exact is None and fingerprints.sketches is not None:
        message("simdedup: note: these fingerprints carry no text to measure resemblance with: "
                "pairs are verified with the sketches' bag similarity")
    if options.k is None and fingerprints.sketches is not None and resolved.k < options.DEFAULT_K_VERIFIED:
        message(f"simdedup: {len(fingerprints.ids):,} documents: k = {resolved.k} by default at this size "
                f"(the pair search for k = 10 would take long); give -k to choose")
    return cluster_fingerprints(fingerprints, options, new)


def _write_clusters(fd: Any, clusters: list[Any], fingerprints: Any, form: str = "clusters", new: Any = None) -> None:
    from .cluster import cluster_record, member_records
    from .output import LineWriter

    writer = LineWriter(fd)
    ids = fingerprints.ids
    for cluster in clusters:
        records = ([cluster_record(cluster, ids, fingerprints.sizes, new)] if form == "clusters"
                   else member_records(cluster, ids))
        for record in records:
            writer.write_line(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    writer.flush()


# --- commands -------------------------------------------------------------------------------


_RECORD_FORMAT = click.option(
    "--format", "record_format", type=click.Choice(["jsonl", "binary"]), default="jsonl", show_default=True,
    help="JSON lines, or the compact binary form (about half the size, read several times faster by "
         "cluster; one writer per file or pipe).")


@cli.command()
@engine_options("fingerprint")
@_fingerprint_options
@_output_options
@_RECORD_FORMAT
def fingerprint(paths: tuple[str, ...], jobs: int | None, silent: bool, verbose: bool, output: str | None,
                force: bool, record_format: str, **features: Any) -> None:
    """Write one JSON line with the simhash fingerprint of each document.

    PATHS are files, directories (walked recursively, in sorted order) or - to read
    a list of paths from stdin (one per line, or NUL-separated with -0). Files
    ending in .gz, .bz2, .xz or .zst are decompressed; .jsonl and .ndjson files
    hold one document per line (--text-field, --id-field).

    \b
    simdedup fingerprint corpus/ > fingerprints.jsonl
    find corpus -name '*.txt' -print0 | simdedup fingerprint -0 - > fingerprints.jsonl
    simdedup fingerprint --tokenizer jieba --topk 20 news-zh/ > zh.jsonl
    simdedup fingerprint --format binary -o fingerprints.sdfp corpus/
    """
    from .output import overwritten_files

    inputs = _inputs(features)
    fingerprinter = _make_fingerprinter(_given_features(inputs), **features)
    skipped: list[str] = []
    done = 0
    binary = record_format == "binary"
    out = output_file(output, force, paths, "-" in paths, binary)
    inputs["overwritten"] = overwritten_files([out])
    with out.open() as fd:
        writer = _record_writer(fd, binary)
        for batch in _fingerprint_batches(fingerprinter, paths, inputs, jobs, silent, skipped, verbose=verbose,
                                          render=not binary, exclude=_own_file(fd)):
            if binary:
                writer.write_records(batch.records)
            else:
                writer.write_lines(batch.lines)
            done += batch.count
        writer.flush()
    _report_skipped(skipped, done)
    if skipped:
        sys.exit(EXIT_SKIPPED)


def _record_writer(fd: Any, binary: bool) -> Any:
    if binary:
        from .binary import BinaryWriter

        return BinaryWriter(fd)
    from .output import LineWriter

    return LineWriter(fd)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@_output_options
@click.option("--to", "record_format", type=click.Choice(["jsonl", "binary"]), required=True,
              help="The form to write: JSON lines or the compact binary form.")
def convert(files: tuple[str, ...], output: str | None, force: bool, record_format: str) -> None:
    """Rewrite fingerprint records (FILES or stdin, of either form) as JSON lines or in
    the compact binary form. Records keep their order; the settings must agree.

    \b
    simdedup convert --to binary -o fingerprints.sdfp fingerprints.jsonl
    simdedup convert --to jsonl fingerprints.sdfp | head
    """
    from .records import json_lines, read_fingerprint_files, records_of

    binary = record_format == "binary"
    out = output_file(output, force, files, not files or "-" in files, binary)
    columns = read_fingerprint_files(_open_inputs(files))
    with out.open() as fd:
        writer = _record_writer(fd, binary)
        if binary:
            from .binary import write_columns

            write_columns(writer, columns)
        else:
            for records in records_of(columns):
                writer.write_lines(json_lines(records))
        writer.flush()


@cli.command()
@engine_options("cluster")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@_cluster_options
@_output_options
@click.option("--against", type=click.Path(dir_okay=False, exists=True, readable=False), metavar="OLD.jsonl",
              help="Incremental run: report only new documents (FILES or stdin) that duplicate a document "
                   "of OLD.jsonl or each other; OLD is not re-clustered.")
def cluster(files: tuple[str, ...], output: str | None, force: bool, output_format: str, against: str | None,
            **decision: Any) -> None:
    """Group documents whose fingerprints differ in at most K bits.

    Reads fingerprint lines from FILES (or stdin) and writes one JSON line per
    cluster of near-duplicates. Every pair within K bits is found; with sketches
    it becomes a duplicate when its estimated similarity is at least
    --min-similarity.

    \b
    simdedup cluster fingerprints.jsonl > clusters.jsonl
    simdedup fingerprint corpus/ | simdedup cluster
    simdedup cluster --k 3 --linkage single plain-simhash.jsonl
    """
    from .pipeline import load_fingerprints

    inputs = ((against,) + (files or ("-",))) if against else files
    out = output_file(output, force, inputs, not files or "-" in files)
    fingerprints = load_fingerprints(_open_inputs(inputs))
    for repeated in fingerprints.repeated:
        message(f"simdedup: warning: {repeated}: id seen before; this record is ignored")
    new = None
    if against:
        import numpy as np

        from_new_files = np.array([name != against for name in fingerprints.files or []], dtype=bool)
        new = from_new_files[fingerprints.sources] if fingerprints.sources is not None else None
    clusters = _clusters(fingerprints, _cluster_settings(**decision), new)
    with out.open() as fd:
        _write_clusters(fd, clusters, fingerprints, output_format, new)


def _open_inputs(files: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    for name in files or ("-",):
        if name == "-":
            yield "<stdin>", sys.stdin.buffer
            continue
        try:
            handle = open(name, "rb")
        except OSError as exc:
            raise click.ClickException(f"cannot read {name}: {exc.strerror or exc}") from None
        with handle:
            yield name, handle


@cli.command()
@engine_options("dedup")
@_fingerprint_options
@_cluster_options
@click.option("--verify", type=click.Choice(["exact", "sketch"]), default="exact", show_default=True,
              help="exact: keep the texts and measure candidate pairs exactly (README, \"How it decides\"); "
                   "sketch: verify with the sketches' bag estimate, as cluster does (faster, less memory).")
@click.option("--exact-first", is_flag=True,
              help="Group text-identical documents by a content hash first and fingerprint one of each.")
@click.option("--unique-out", type=click.Path(), metavar="DIR|FILE.jsonl",
              help="Also write the corpus without its duplicates: files copied into DIR, or the kept "
                   "JSON lines into FILE.jsonl. The inputs are never changed.")
@_output_options
def dedup(paths: tuple[str, ...], jobs: int | None, silent: bool, verbose: bool, output: str | None,
          force: bool, k: int | None, similarity: str, min_similarity: float, min_resemblance: float, linkage: str,
          min_features: int, min_score: int | None, singletons: bool, output_format: str, verify: str,
          exact_first: bool, unique_out: str | None, **features: Any) -> None:
    """Fingerprint documents and cluster them in one process.

    Takes the options of both `fingerprint` and `cluster`; writes clusters.

    \b
    simdedup dedup corpus/ > clusters.jsonl
    """
    from .output import overwritten_files
    from .pipeline import add_exact_duplicates, collect_records
    from .unique import KeptLines, unique_output

    inputs = _inputs(features)
    jsonl_files: list[str] = []
    inputs["jsonl_files"] = jsonl_files
    fingerprinter = _make_fingerprinter(_given_features(inputs), **features)
    options = _cluster_settings(k, min_similarity, linkage, min_features, singletons, min_score, similarity,
                                min_resemblance)
    if verify == "exact" and hasattr(fingerprinter, "verify_exactly"):
        fingerprinter.verify_exactly()  # the texts are read here: keep what exact verification needs
    try:
        options.resolve(fingerprinter.bits, getattr(fingerprinter, "sketch_bins", 0) > 0,
                        fingerprinter.settings["method"])
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    # Every output is checked before the run: a run of hours must not end in "cannot write".
    out = output_file(output, force, paths, "-" in paths)
    unique = unique_output(unique_out, force) if unique_out is not None else None
    outputs = [out]
    if isinstance(unique, KeptLines):
        if out.same_file(unique.output):
            raise UsageError("-o and --unique-out name one file")
        unique.output.refuse_inputs(paths, "-" in paths)
        outputs.append(unique.output)
    inputs["overwritten"] = overwritten_files(outputs)
    skipped: list[str] = []
    duplicates: dict[str, str] | None = {} if exact_first else None
    records = _fingerprint_records(fingerprinter, paths, inputs, jobs, silent, skipped, duplicates, verbose,
                                   exclude=() if output else _own_file(stdout_target()),
                                   tee=unique.tee if isinstance(unique, KeptLines) else None)
    if duplicates is not None:
        records = add_exact_duplicates(records, duplicates)
    fingerprints = collect_records((record.id, record) for record in records)
    for repeated in fingerprints.repeated:  # two documents under one id: only the first is clustered
        doc_id = repeated.split(": ", 1)[0]
        skipped.append(doc_id)
        message(f"simdedup: warning: {doc_id}: id of an earlier document; this one is left out")
    clusters = _clusters(fingerprints, options)
    with out.open() as fd:
        _write_clusters(fd, clusters, fingerprints, output_format)
        if unique is not None:
            _write_unique(unique, clusters, fingerprints.ids, jsonl_files, inputs,
                          [*fingerprints.ids, *skipped, *([out.path] if out.path else [])])
    _report_skipped(skipped, len(fingerprints.ids))
    if skipped:
        sys.exit(EXIT_SKIPPED)


@cli.command()
@click.argument("document_a", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@click.argument("document_b", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@_feature_options
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Features listed per side.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def explain(document_a: str, document_b: str, top: int, as_json: bool, **features: Any) -> None:
    """Show why two documents are or are not near-duplicates.

    Prints their Hamming distance, the similarity the sketches estimate (what
    `cluster` uses), the exact weighted Jaccard of their features, and the
    features that pull them together or push them apart.

    \b
    simdedup explain corpus/a.txt corpus/b.txt
    """
    import numpy as np

    from .explain import explain as explain_documents
    from .pipeline import ClusterOptions
    from .similarity import RESEMBLANCE_FLOOR, passes as similarity_passes

    if features["method"] == "sentences":
        raise click.UsageError("explain compares simhash features or nilsimsa digests; use --method simhash or nilsimsa")
    fingerprinter = _make_fingerprinter(**features)
    if features["method"] == "nilsimsa":
        _explain_nilsimsa(fingerprinter, document_a, document_b, as_json)
        return
    result = explain_documents(fingerprinter, document_a, document_b, top)
    if as_json:
        echo(json.dumps(result.as_dict(), ensure_ascii=False))
        return
    defaults = ClusterOptions().resolve(result.bits, result.estimated_similarity is not None)
    candidate = result.distance <= defaults.k  # type: ignore[operator]
    estimate_passes = result.estimated_similarity is None or result.estimated_similarity >= defaults.min_similarity
    verified = estimate_passes
    if result.resemblance is not None:  # dedup verifies these exactly, with the default measure
        verified = bool(similarity_passes(defaults.similarity, np.array([result.similarity]),
                                          np.array([result.resemblance]), defaults.min_similarity,
                                          defaults.min_resemblance)[0])
    lines = [
        f"A: {result.a} ({result.features[0]} features)",
        f"B: {result.b} ({result.features[1]} features)",
        f"Hamming distance: {result.distance} of {result.bits} bits "
        f"({'within' if candidate else 'beyond'} the default k = {defaults.k})",
    ]
    if result.estimated_similarity is not None:
        lines.append(f"estimated similarity (sketch): {result.estimated_similarity:.3f} "
                     f"({'at least' if estimate_passes else 'below'} the default --min-similarity {defaults.min_similarity})")
    lines.append(f"bag: exact weighted Jaccard of the features: {result.similarity:.3f}")
    if result.resemblance is not None:
        lines.append(f"resemblance: exact Jaccard of the token 3-grams: {result.resemblance:.3f}")
        lines.append(f"default --similarity {defaults.similarity}: resemblance at least {defaults.min_resemblance}, "
                     f"or bag at least {defaults.min_similarity} and resemblance at least {RESEMBLANCE_FLOOR}")
    lines.append(f"verdict with default settings: {'near-duplicates' if candidate and verified else 'not near-duplicates'}")
    lines.append("pulling together (shared, weight in A / B):")
    lines += [f"  {f!r} {wa:g} / {wb:g}" for f, wa, wb in result.together] or ["  (none)"]
    lines.append("pushing apart, more in A:")
    lines += [f"  {f!r} +{w:g}" for f, w in result.apart_a] or ["  (none)"]
    lines.append("pushing apart, more in B:")
    lines += [f"  {f!r} +{w:g}" for f, w in result.apart_b] or ["  (none)"]
    echo("\n".join(lines))


def _explain_nilsimsa(fingerprinter: Any, document_a: str, document_b: str, as_json: bool) -> None:
    from .explain import compare_nilsimsa
    from .pipeline import ClusterOptions

    result = compare_nilsimsa(fingerprinter, document_a, document_b)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
        return
    threshold = ClusterOptions.DEFAULT_MIN_SCORE
    click.echo("\n".join([
        f"A: {result.a} ({result.sizes[0]} bytes) nilsimsa {result.digests[0]}",
        f"B: {result.b} ({result.sizes[1]} bytes) nilsimsa {result.digests[1]}",
        f"nilsimsa score: {result.score} on the -128..128 scale ({result.differing_bits} of 256 bits differ; "
        f"independent texts rarely score above 24)",
        f"verdict with default settings: {'near-duplicates' if result.score >= threshold else 'not near-duplicates'} "
        f"(the default --min-score is {threshold})",
    ]))


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option("--max-k", type=click.IntRange(1, 31), default=12, show_default=True,
              help="Largest nearest-neighbour distance searched exactly.")
@click.option("--min-similarity", type=click.FloatRange(0, 1), default=0.88, show_default=True,
              help="Similarity of a verified pair (with sketches).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Also draw the histograms to this PNG file.")
@click.option("--force", is_flag=True, help="Replace the --plot file if it exists.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def stats(files: tuple[str, ...], max_k: int, min_similarity: float, plot: str | None, force: bool,
          as_json: bool) -> None:
    """Distribution of nearest-neighbour distances and cluster sizes, and a suggested k.

    \b
    simdedup stats fingerprints.jsonl
    simdedup stats --plot distances.png fingerprints.jsonl
    """
    from .pipeline import ClusterOptions, load_fingerprints
    from .stats import fingerprint_stats, histogram

    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise click.ClickException("--plot needs matplotlib: pip install 'simdedup[plot]'") from None
    drawing = output_file(plot, force, files, not files or "-" in files) if plot else None
    fingerprints = load_fingerprints(_open_inputs(files))
    result = fingerprint_stats(fingerprints, max_k, ClusterOptions(min_similarity=min_similarity))
    if drawing is not None:
        from .output import output_call
        from .plot import plot_stats

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


@cli.command(name="eval")
@click.option("--gold", type=click.Path(exists=True, dir_okay=False), required=True,
              help="Labelled duplicate pairs: JSON lines with a and b (dup: false lines are skipped), or two ids per line.")
@click.option("--match", type=click.Choice(["id", "basename", "stem"]), default="id", show_default=True,
              help="Compare ids as they are, by file name, or by file name without extension.")
@click.argument("clusters", type=click.Path(dir_okay=False, allow_dash=True), default="-")
def evaluate(gold: str, match: str, clusters: str) -> None:
    """Pairwise precision, recall and F1 of CLUSTERS against your own labels.

    \b
    simdedup cluster fp.jsonl > clusters.jsonl
    simdedup eval --gold pairs.tsv clusters.jsonl
    """
    from .evaluate import read_cluster_members, read_gold_pairs, score_pairs

    with open(gold, encoding="utf-8") as handle:
        pairs = read_gold_pairs(handle, gold, match)
    with click.open_file(clusters, encoding="utf-8") as handle:
        members = list(read_cluster_members(handle, "<stdin>" if clusters == "-" else clusters, match))
    echo(json.dumps(score_pairs(members, pairs).as_dict()))


@cli.command()
@lambda func: _apply(_INPUT_OPTIONS, func)
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of the documents.")
@click.option("--bloom", "bloom_capacity", type=click.IntRange(min=1), metavar="N",
              help="Use a bloom filter sized for N documents instead of remembering every hash.")
@click.option("--error-rate", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=1e-6,
              show_default=True, help="Bloom filter: chance that a new document is reported as seen.")
@click.option("--silent", is_flag=True, help="No progress bar.")
@_output_options
def exact(paths: tuple[str, ...], encoding: str, bloom_capacity: int | None, error_rate: float,
          silent: bool, output: str | None, force: bool, **inputs: Any) -> None:
    """List documents whose text (whitespace aside) appeared earlier in the input.

    One JSON line per repeated document: its id and the id it repeats (null with
    --bloom, which cannot name it). Text-identical documents are found without any
    fingerprint; a bloom filter keeps memory fixed for streams too large for a set.

    \b
    simdedup exact corpus/ > repeats.jsonl
    find crawl -type f -print0 | simdedup exact -0 --bloom 100000000 - > repeats.jsonl
    """
    from .corpus import DocumentReader
    from .corpus import documents
    from .errors import SkipDocument
    from .exact import BloomFilter, SeenDigests
    from .output import LineWriter, overwritten_files
    from .pipeline import source_digest

    try:
        DocumentReader("", encoding)
        seen: Any = BloomFilter(bloom_capacity, error_rate) if bloom_capacity else SeenDigests()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    out = output_file(output, force, paths, "-" in paths)
    sources, total, _ = _sources(paths, **inputs, overwritten=overwritten_files([out]),
                                 exclude=() if output else _own_file(stdout_target()))
    skipped: list[str] = []
    done = 0
    with out.open() as fd:
        writer = LineWriter(fd)
        progressing = progress(sources, silent, total=total, unit="doc", desc="exact")
        for source in itertools.chain.from_iterable(map(documents, progressing)):
            try:
                if source.reason is not None:
                    raise SkipDocument(source.path, source.reason)
                earlier = seen.check(source_digest(source, encoding), source.path)
            except SkipDocument as exc:
                skipped.append(exc.path)
                message(f"simdedup: warning: {exc.path}: {exc.reason}")
                continue
            done += 1
            if earlier is not None:
                writer.write_line(json.dumps({"id": source.path, "duplicate_of": earlier or None},
                                             ensure_ascii=False, separators=(",", ":")))
        writer.flush()
    _report_skipped(skipped, done, "read")
    if skipped:
        sys.exit(EXIT_SKIPPED)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True, readable=False))
@click.option("--keep", "policy",
              type=click.Choice(["representative", "first", "longest", "shortest", "newest", "oldest"]),
              default="representative", show_default=True, help="Which member of each cluster survives.")
@click.option("--kept", is_flag=True, help="Print the survivors instead of the members to drop.")
@click.option("-0", "--null", is_flag=True, help="End each id with NUL instead of a newline (for xargs -0).")
def select(files: tuple[str, ...], policy: str, kept: bool, null: bool) -> None:
    """Print, for every cluster, the members to drop (all but one).

    Reads clusters (files or stdin). Nothing is deleted: pipe the list to
    what you choose. Ties go to the smallest id.

    \b
    simdedup cluster fp.jsonl | simdedup select --keep longest -0 | xargs -0 rm --
    simdedup select --kept clusters.jsonl > survivors.txt
    """
    from .keep import read_clusters, selection

    end = b"\0" if null else b"\n"
    chosen = selection(itertools.chain.from_iterable(
        read_clusters(_text_lines(stream, name), name) for name, stream in _open_inputs(files)), policy)
    for doc_id, why in chosen.held:
        message(f"simdedup: warning: {doc_id}: not listed: {why}")
    out = bytearray()
    for doc_id in chosen.kept if kept else chosen.dropped:
        name = os.fsencode(doc_id) if _is_path_text(doc_id) else None
        if name is None or end in name:
            raise SimdedupError(f"the id {doc_id!r} cannot be listed as a path"
                                + ("; use -0" if name is not None else ""))
        out += name + end
    write_all(stdout_target(), bytes(out))


def _text_lines(stream: Any, name: str) -> Iterator[str]:
    """The lines of a binary stream as text, with ``FILE:LINE`` errors for bytes that are not UTF-8."""
    for number, raw in enumerate(stream, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"{name}:{number}: not UTF-8 text") from None


def _is_path_text(doc_id: str) -> bool:
    """Whether an id is a name the file system can take: no NUL, and no lone surrogate other
    than the ones that stand for a file name's undecodable bytes."""
    try:
        os.fsencode(doc_id)
    except UnicodeEncodeError:
        return False
    return "\0" not in doc_id


@cli.command()
def tokenizers() -> None:
    """List the available tokenizers as JSON lines (built-in and plugins)."""
    from .output import LineWriter
    from .tokenizers import available_tokenizers

    with output_file(None, False).open() as fd:
        writer = LineWriter(fd)
        for info in available_tokenizers():
            writer.write_line(json.dumps(info, ensure_ascii=False, separators=(",", ":")))
        writer.flush()


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the process is, so that it ends as after an error: worker
    processes stopped, temporary output removed. Not an Exception, which code may catch."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, frame: Any) -> None:
    signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once
    raise Terminated(signum)


def main() -> None:
    # simdedup does no multi-threaded linear algebra; OpenBLAS's thread pool would only double
    # numpy's import time (0.07 s of every run) and sit beside the -j worker processes.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .output import reserve_standard_descriptors

    reserve_standard_descriptors()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:  # not when ignored, as under nohup
            signal.signal(signum, _terminate)
    try:
        cli(prog_name="simdedup")
    except Terminated as exc:
        signum = exc.signum
    else:
        return
    # Out of the handler the run's frames are gone, and its workers stopped with them; now end
    # by the signal itself, as a shell or a supervisor expects.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


