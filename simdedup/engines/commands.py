"""``--engine dask`` and ``--engine stages`` for ``fingerprint``, ``cluster`` and ``dedup``: the
options, and the commands run as stages (:mod:`simdedup.engines.run`) on a Dask cluster or on
``-j N`` worker processes of this machine.

``-o FILE`` (or URL) is a file, as on the local engine: the parts, made in the work directory,
are concatenated into a temporary file beside it, renamed into place when complete; without
``-o`` they go to stdout one after the other. ``-o DIR/`` (a trailing slash) names a directory
(or fsspec prefix) that receives the part files themselves, ``part-00000.jsonl`` ..., whose
concatenation is that output.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import click

from ..cli_options import EXIT_SKIPPED, message, take_inputs
from ..errors import SimdedupError, UsageError, first_line
from ..help import ENGINES, in_section
from ..limits import MAX_JOBS, ensure_open_files, limit_reached
from ..method_registry import DEFAULT_METHOD
from ..optional import need
from ..owned import refuse_inside

if TYPE_CHECKING:  # numpy comes with it: not on every command's start
    from .workdir import WorkDir

#: descriptors of a Dask client, and of each process of a local cluster (its comms, its nanny);
#: two workers were seen to start with 48 in all
DASK_OPEN_FILES = 64
K_NEEDED = (
    "--engine dask and stages need -k for records with sketches of features or none: their default k depends "
    "on the number of documents, which a staged run does not fix in advance"
)

ENGINE_OPTIONS = [
    click.option(
        "--engine",
        type=click.Choice(["local", "stages", "dask"]),
        default="local",
        show_default=True,
        metavar="NAME",
        help="local; stages (resumable); dask (a cluster).",
    ),
    click.option("--scheduler", metavar="ADDRESS", envvar="DASK_SCHEDULER_ADDRESS", help="dask: a running cluster's."),
    click.option(
        "--local",
        "local_workers",
        type=click.IntRange(1, MAX_JOBS),
        metavar="N",
        help="dask: start one of N processes.",
    ),
    click.option("--work-dir", metavar="DIR|URL", help="The stages' files; a rerun skips tasks done."),
]
ENGINE_OPTIONS = in_section(ENGINES, ENGINE_OPTIONS)


def engine_options(command: str) -> Callable[[Callable], Callable]:
    """Add the engine options to a command (placed right under ``@cli.command()``): with
    ``--engine dask`` or ``stages`` the command runs here instead of its own body."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> Any:
            engine = kwargs.pop("engine")
            connection = Connection(kwargs.pop("scheduler"), kwargs.pop("local_workers"), kwargs.pop("work_dir"))
            given = click.get_current_context().get_parameter_source("scheduler")
            if engine != "dask" and given == click.core.ParameterSource.COMMANDLINE:  # not from the environment
                raise click.UsageError(f"--scheduler goes with --engine dask, not {engine}")
            if engine == "local":
                if connection.local is not None or connection.work_dir is not None:
                    raise click.UsageError("--local and --work-dir go with --engine dask or stages")
                if (kwargs.get("output") or "").endswith("/"):
                    raise click.UsageError(
                        f"-o {kwargs['output']}: a directory of part files goes with --engine stages or dask; "
                        "name a file"
                    )
                return func(**kwargs)
            if engine == "stages" and connection.local is not None:
                raise click.UsageError("--local goes with --engine dask (--engine stages takes -j)")
            if kwargs.pop("index_directory", None) is not None:
                raise click.UsageError(
                    f"--index adds to a persistent index in one process; it does not go with --engine {engine}"
                )
            connection.engine = engine
            return RUNNERS[command](connection, **kwargs)

        for param in getattr(wrapper, "__click_params__", []):
            if param.name == "output":  # a URL, or a directory for the part files (DIR/)
                param.type = click.STRING
                param.metavar = "FILE|DIR/"
                param.help = "Write to this file, not stdout (engines: DIR/ for parts)."
        for option in reversed(ENGINE_OPTIONS):
            wrapper = option(wrapper)
        return wrapper

    return decorate


class Connection:
    def __init__(self, scheduler: str | None, local: int | None, work_dir: str | None, engine: str = "dask"):
        self.scheduler, self.local, self.work_dir, self.engine = scheduler, local, work_dir, engine


@contextmanager
def stage_engine(connection: Connection, silent: bool, jobs: int | None = None) -> Iterator[Any]:
    """A :class:`ProcessEngine` of ``jobs`` processes for ``--engine stages``; else a
    :class:`DaskEngine` on the named scheduler, or on a local cluster started for the run."""
    if connection.engine == "stages":
        from ..run import default_jobs
        from .engine import ProcessEngine

        yield ProcessEngine(jobs or default_jobs(), silent)
        return
    Client = need("distributed", "--engine dask").Client
    from .engine import DaskEngine

    if connection.scheduler and connection.local is None:
        ensure_open_files(DASK_OPEN_FILES, "a Dask client")
        with _client(connection.scheduler) as client:
            yield DaskEngine(client, silent)
        return
    from ..run import default_jobs

    workers = connection.local or default_jobs()
    cores = os.cpu_count() or 1
    if workers > cores:
        message(f"simdedup: note: --local {workers} starts {workers} workers on {cores} cores; they share them")
    # Short of descriptors, a local cluster's workers fail to start, retry and log without end.
    ensure_open_files(DASK_OPEN_FILES * (1 + workers), f"--engine dask --local {workers}")
    with _local_cluster(workers) as cluster, Client(cluster) as client:
        yield DaskEngine(client, silent)


#: seconds to reach a scheduler: one that does not answer is named at once, not after Dask's 30 s
SCHEDULER_TIMEOUT = 5


def _client(address: str) -> Any:
    """A client of the scheduler at ``address``; one that cannot be reached is one line."""
    from distributed import Client

    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SimdedupError(f"--scheduler {address}: cannot connect: {first_line(exc)}") from None


@contextmanager
def _local_cluster(workers: int) -> Iterator[Any]:
    """A local cluster of ``workers`` processes; one that does not start (short of memory or
    threads) is one line, without the log of each attempt.

    The worker processes it starts write their stderr to the null device: Ctrl-C reaches the
    whole process group, and each worker it cuts short while importing would print its
    traceback; this process says what happened, and stops them. Dask's logs are silent while it
    starts and closes (workers it kills on closing are the run's end, not news)."""
    import logging

    from distributed import LocalCluster

    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    cluster = None
    try:
        stderr, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)  # what the workers inherit
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        except Exception as exc:
            reason = limit_reached(exc) or first_line(exc)
            raise SimdedupError(f"--engine dask --local {workers}: the local cluster did not start: {reason}") from None
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)
            os.close(null)
        log.setLevel(level)
        yield cluster
    finally:
        log.setLevel(logging.CRITICAL)
        if cluster is not None:
            cluster.close()
        log.setLevel(level)


@contextmanager
def work_directory(connection: Connection) -> Iterator[WorkDir]:
    from .workdir import WorkDir

    if connection.work_dir is not None:
        refuse_inside(connection.work_dir, f"--work-dir {connection.work_dir}", itself=False)
        work = WorkDir(connection.work_dir)
        try:
            yield work
        finally:
            work.release()
        return
    with tempfile.TemporaryDirectory(prefix="simdedup-work-") as directory:
        work = WorkDir(directory)
        try:
            yield work
        finally:
            work.release()


def refuse_overlap(directory: str | None, inputs: Iterable[str], option: str, what: str = "the input") -> None:
    """Raises UsageError when a directory the run writes into (``-o``, ``--work-dir``) holds one
    of the ``inputs`` (or ``what`` they are) or lies inside one: its part files could replace an
    input, and a walk of the input would read them."""
    if directory is None:
        return
    from ..read.remote import is_url

    store = "://" in directory and not directory.startswith("file://")  # an object store's URLs, as spelled
    root = (
        directory.rstrip("/") + "/"
        if store
        else os.path.realpath(directory.removeprefix("file://")).rstrip(os.sep) + os.sep
    )
    for path in inputs:
        if path == "-" or is_url(path) != store:
            continue
        named = path.rstrip("/") + "/" if store else os.path.realpath(path).rstrip(os.sep) + os.sep
        if named.startswith(root) or root.startswith(named):
            raise UsageError(f"{option} {directory} holds {what} {path} or lies inside it; write elsewhere")


#: the names of the part files the engine writes (``--force`` removes only these)
PART_NAME = re.compile(r"part-[0-9]{5}\.(jsonl|sdfp)")


def names_part_directory(output: str) -> bool:
    """Whether ``-o`` names a directory: spelled with a trailing slash, or an existing one."""
    from ..read.remote import is_url, local_path

    return output.endswith("/") or (not is_url(output) and os.path.isdir(local_path(output)))


def final_output(output: str | None, force: bool, inputs: tuple[str, ...], engine: str, binary: bool = False) -> Any:
    """The file (or stdout) an engine's run ends in, checked before any work, as the local
    engine checks its ``-o``; None when ``-o DIR/`` receives the part files themselves."""
    from ..cli_options import output_file

    if output is not None and names_part_directory(output):
        if not output.endswith("/"):
            raise UsageError(f"-o {output} is a directory; write -o {output}/ to receive the part files in it")
        refuse_overlap(output, inputs, "-o")
        _part_directory_checked(output, force, engine)  # before the work dir is made: a refused run writes nothing
        return None
    return output_file(output, force, inputs, "-" in inputs, binary)


def part_directory(output: str | None, force: bool, work: WorkDir, final: Any, engine: str = "dask") -> WorkDir:
    """Where the part files go: the directory ``-o DIR/`` names (empty or new, or emptied of
    part files with ``--force``) when there is no ``final`` file, else a folder of the work
    directory, whose parts :func:`deliver` then writes to that file."""
    from .workdir import WorkDir

    if final is not None or output is None:
        return WorkDir(f"{work.url}/output")
    target, present = _part_directory_checked(output, force, engine)
    for name in present:
        if PART_NAME.fullmatch(name.rstrip("/").rsplit("/", 1)[-1]):
            target.fs.rm(name)
    return target


def _part_directory_checked(output: str, force: bool, engine: str) -> tuple[WorkDir, list[str]]:
    """The directory ``-o DIR/`` names and what it holds, refused where the run could not write
    its parts there (checked before the work dir is made, and again when the parts go there)."""
    from .workdir import WorkDir

    refuse_inside(output, f"-o {output}")
    target = WorkDir(output)
    try:
        present = target.fs.ls(target.path(""), detail=False)
    except FileNotFoundError:
        present = []
    except NotADirectoryError:
        raise UsageError(f"-o {output}: with --engine {engine}, DIR/ names a directory for the part files") from None
    if present and target.fs.isfile(target.path("")):
        raise UsageError(f"-o {output}: with --engine {engine}, DIR/ names a directory for the part files")
    if present and not force:
        raise SimdedupError(f"-o {output} is not empty; --force replaces the part files in it")
    return target, present


def deliver(final: Any, target: WorkDir, parts: list[str]) -> None:
    """The parts one after the other into the ``final`` output (a file: whole or not at all)."""
    from ..write import write_all
    from . import run

    if final is None:
        return
    with final.open() as fd:
        run.stream(target, parts, functools.partial(write_all, fd))


def _recipe(features: dict[str, Any], given: bool, exact: bool, decision: Any = None) -> tuple[Any, Any]:
    """The fingerprinting recipe of the feature options (``--compat`` applied; for the measure
    of the ``decision`` options, when they are given) and the method."""
    from ..cli_options import build_method, feature_options_of
    from .fingerprints import Recipe

    options = feature_options_of(features, given)
    recipe = Recipe(options if decision is None else options.for_measure(decision), exact)
    return recipe, build_method(recipe.features)


def _shards(paths: tuple[str, ...], inputs: Any, final: Any, engine: str) -> list:
    """The shards of the documents ``paths`` hold; a file the ``final`` output replaces is
    refused, and the file stdout writes into left out, as the local engine does."""
    from ..read import WalkFilter, iter_sources, without_links
    from ..write import overwritten_files, own_file, refuse_overwritten_inputs, stdout_target
    from .fingerprints import plan_shards

    if not paths:
        raise click.UsageError("give at least one PATH")
    if "-" in paths:
        raise click.UsageError(f"--engine {engine} reads the paths named, not a list on stdin")
    walk = WalkFilter(inputs.globs, inputs.excludes, inputs.min_bytes)
    exclude = own_file(stdout_target()) if final is not None and final.path is None else ()
    sources = without_links(iter_sources(paths, walk, exclude), message, False)
    overwritten = overwritten_files([final]) if final is not None else {}
    return plan_shards(refuse_overwritten_inputs(sources, overwritten), inputs)


def _report(skipped: list[str], done: int, verb: str = "fingerprinted") -> None:
    if skipped:
        message(f"simdedup: {verb} {done} documents, skipped {len(skipped)} (see warnings above)")
        sys.exit(EXIT_SKIPPED)


def run_fingerprint(
    connection: Connection,
    paths: tuple[str, ...],
    jobs: int | None,
    silent: bool,
    verbose: bool,
    output: str | None,
    force: bool,
    record_format: str,
    **features: Any,
) -> None:
    from . import run

    inputs = take_inputs(features)
    recipe, _ = _recipe(features, inputs.given_features, False)
    final = final_output(output, force, paths, connection.engine, record_format == "binary")
    refuse_overlap(connection.work_dir, paths, "--work-dir")
    refuse_overlap(connection.work_dir, () if output in (None, "-") else (output,), "--work-dir", "the output")
    shards = _shards(paths, inputs, final, connection.engine)
    with work_directory(connection) as work:
        work.claim(
            run.settings_of(
                command="fingerprint",
                paths=list(paths),
                inputs=_jsonable(dataclasses.asdict(inputs)),
                features=recipe.features.as_json(),
                shards=run.shard_identity(shards),
            )
        )
        target = part_directory(output, force, work, final, connection.engine)
        with stage_engine(connection, silent, jobs) as engine:
            outcome = run.fingerprint_stages(
                engine, work, shards, recipe, inputs, record_format, target, message, verbose
            )
        deliver(final, target, outcome.parts)
    _report(outcome.skipped, outcome.documents)


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in values.items()}


def _sketch_kind(settings: dict) -> str | None:
    from ..fingerprints.record import sketch_kind

    return sketch_kind(settings)


def _decision(options: Any, bits: int, sketch_of: str | None, method: str, engine: str, texts: bool = False) -> Any:
    if options.k is None and sketch_of != "shingles":
        raise click.UsageError(K_NEEDED)
    if method != "simhash":
        raise click.UsageError(f"--engine {engine} clusters simhash fingerprints")
    try:
        return options.resolve(bits, sketch_of, method, texts=texts)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def run_dedup(
    connection: Connection,
    paths: tuple[str, ...],
    jobs: int | None,
    silent: bool,
    verbose: bool,
    output: str | None,
    force: bool,
    verify: str,
    exact_first: bool,
    unique_out: str | None,
    report_path: str | None,
    **features: Any,
) -> None:
    from ..options import ClusterOptions
    from . import run

    if exact_first or unique_out is not None or report_path is not None:
        raise click.UsageError(
            f"--engine {connection.engine} does not take --exact-first, --unique-out or --report "
            "(run `simdedup report` on its clusters)"
        )
    options = ClusterOptions.take(features)
    inputs = take_inputs(features)
    recipe, method = _recipe(features, inputs.given_features, verify == "exact", options)
    decision = _decision(
        options,
        method.bits,
        _sketch_kind(method.settings),
        method.settings["method"],
        connection.engine,
        verify == "exact" and hasattr(method, "verify_exactly"),
    )
    final = final_output(output, force, paths, connection.engine)
    refuse_overlap(connection.work_dir, paths, "--work-dir")
    refuse_overlap(connection.work_dir, () if output in (None, "-") else (output,), "--work-dir", "the output")
    shards = _shards(paths, inputs, final, connection.engine)
    with work_directory(connection) as work:
        work.claim(
            run.settings_of(
                command="dedup",
                paths=list(paths),
                inputs=_jsonable(dataclasses.asdict(inputs)),
                features=recipe.features.as_json(),
                verify=verify,
                decision=decision,
                shards=run.shard_identity(shards),
            )
        )
        target = part_directory(output, force, work, final, connection.engine)
        with stage_engine(connection, silent, jobs) as engine:
            outcome = run.dedup_stages(
                engine, work, shards, recipe, inputs, decision, target, run.Plan(), message, verbose
            )
        deliver(final, target, outcome.parts)
    _report(outcome.skipped, outcome.documents)


def run_cluster(
    connection: Connection,
    files: tuple[str, ...],
    output: str | None,
    force: bool,
    against: str | None,
    verbose: bool,
    **decision: Any,
) -> None:
    """``cluster`` on an engine; its progress lines say where the time goes, ``-v`` or not."""
    from ..options import ClusterOptions
    from . import run

    if against is not None:
        raise click.UsageError(f"--engine {connection.engine} does not take --against")
    if not files or "-" in files:
        raise click.UsageError(f"--engine {connection.engine} reads the fingerprint files named, not stdin")
    options = ClusterOptions.take(decision)

    def resolve(bits: int, settings: dict) -> Any:
        return _decision(
            options, bits, _sketch_kind(settings), settings.get("method") or DEFAULT_METHOD, connection.engine
        )

    final = final_output(output, force, files, connection.engine)
    refuse_overlap(connection.work_dir, files, "--work-dir")
    refuse_overlap(connection.work_dir, () if output in (None, "-") else (output,), "--work-dir", "the output")
    with work_directory(connection) as work:
        work.claim(
            run.settings_of(command="cluster", files=list(files), options=options, identity=_file_identity(files))
        )
        target = part_directory(output, force, work, final, connection.engine)
        with stage_engine(connection, False) as engine:
            outcome = run.cluster_stages(engine, work, list(files), resolve, target, run.Plan(), message)
        deliver(final, target, outcome.parts)


def _file_identity(files: tuple[str, ...]) -> list:
    from ..read.remote import is_url, version
    from .run import file_version

    return [[name, version(name) if is_url(name) else file_version(name)] for name in files]


RUNNERS = {"fingerprint": run_fingerprint, "dedup": run_dedup, "cluster": run_cluster}
