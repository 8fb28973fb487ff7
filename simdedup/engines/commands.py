"""``--engine dask`` and ``--engine stages`` for ``fingerprint``, ``cluster`` and ``dedup``: the
options, and the commands run as stages (:mod:`simdedup.engines.run`) on a Dask cluster or on
``-j N`` worker processes of this machine.

``-o`` names a directory (or fsspec URL) that receives ``part-00000.jsonl`` ... whose
concatenation is the one-process output; without ``-o`` the parts go to stdout one after the
other. k must be given: a corpus that grows cannot follow the size-dependent default.
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
from ..limits import MAX_JOBS, ensure_open_files, limit_reached
from ..method_registry import DEFAULT_METHOD
from ..optional import need

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
        help="local: this machine (-j); stages: the stages of a Dask run on -j worker processes of this "
        "machine, resumable through --work-dir; dask: those stages over a Dask cluster.",
    ),
    click.option(
        "--scheduler",
        metavar="ADDRESS",
        envvar="DASK_SCHEDULER_ADDRESS",
        help="--engine dask: the scheduler of a running cluster [env: DASK_SCHEDULER_ADDRESS].",
    ),
    click.option(
        "--local",
        "local_workers",
        type=click.IntRange(1, MAX_JOBS),
        metavar="N",
        help="--engine dask: start a local cluster of N worker processes [default: one per core].",
    ),
    click.option(
        "--work-dir",
        metavar="DIR|URL",
        help="--engine dask or stages: where the stages keep their files (any fsspec URL); a rerun with "
        "the same directory skips finished tasks [default: a temporary directory].",
    ),
]


def engine_options(command: str) -> Callable[[Callable], Callable]:
    """Add the engine options to a command (placed right under ``@cli.command()``): with
    ``--engine dask`` or ``stages`` the command runs here instead of its own body."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> Any:
            engine = kwargs.pop("engine")
            connection = Connection(kwargs.pop("scheduler"), kwargs.pop("local_workers"), kwargs.pop("work_dir"))
            if engine == "local":
                if connection.local is not None or connection.work_dir is not None:
                    raise click.UsageError("--local and --work-dir go with --engine dask or stages")
                if kwargs.get("output") and os.path.isdir(kwargs["output"]):
                    raise click.BadParameter(
                        f"File {kwargs['output']!r} is a directory.", param_hint="'-o' / '--output'"
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
            if param.name == "output":  # part files go to a directory (or URL)
                param.type = click.STRING
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
        with Client(connection.scheduler) as client:
            yield DaskEngine(client, silent)
        return
    from ..run import default_jobs

    workers = connection.local or default_jobs()
    # Short of descriptors, a local cluster's workers fail to start, retry and log without end.
    ensure_open_files(DASK_OPEN_FILES * (1 + workers), f"--engine dask --local {workers}")
    with _local_cluster(workers) as cluster, Client(cluster) as client:
        yield DaskEngine(client, silent)


def _local_cluster(workers: int) -> Any:
    """A local cluster of ``workers`` processes; one that does not start (short of memory or
    threads) is one line, without the log of each attempt."""
    import logging

    from distributed import LocalCluster

    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    except Exception as exc:
        reason = limit_reached(exc) or first_line(exc)
        raise SimdedupError(f"--engine dask --local {workers}: the local cluster did not start: {reason}") from None
    finally:
        log.setLevel(level)


@contextmanager
def work_directory(connection: Connection) -> Iterator[WorkDir]:
    from .workdir import WorkDir

    if connection.work_dir is not None:
        yield WorkDir(connection.work_dir)
        return
    with tempfile.TemporaryDirectory(prefix="simdedup-work-") as directory:
        yield WorkDir(directory)


def refuse_overlap(directory: str | None, inputs: Iterable[str], option: str) -> None:
    """Raises UsageError when a directory the run writes into (``-o``, ``--work-dir``) holds one
    of the ``inputs`` or lies inside one: its part files could replace an input, and a walk of
    the input would read them."""
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
            raise UsageError(f"{option} {directory} holds the input {path} or lies inside it; write elsewhere")


#: the names of the part files the engine writes (``--force`` removes only these)
PART_NAME = re.compile(r"part-[0-9]{5}\.(jsonl|sdfp)")


def output_directory(output: str | None, force: bool, work: WorkDir, engine: str = "dask") -> WorkDir:
    """Where the part files go: ``-o`` (empty or new, or emptied of part files with ``--force``),
    else a folder of the work directory whose parts are then written to stdout."""
    from .workdir import WorkDir

    if output is None:
        return WorkDir(f"{work.url}/output")
    target = WorkDir(output)
    try:
        present = target.fs.ls(target.path(""), detail=False)
    except FileNotFoundError:
        present = []
    except NotADirectoryError:
        raise UsageError(f"-o {output}: with --engine {engine}, -o names a directory for the part files") from None
    if present and target.fs.isfile(target.path("")):
        raise UsageError(f"-o {output}: with --engine {engine}, -o names a directory for the part files")
    if present and not force:
        raise SimdedupError(f"-o {output} is not empty; --force replaces the part files in it")
    for name in present:
        if PART_NAME.fullmatch(name.rstrip("/").rsplit("/", 1)[-1]):
            target.fs.rm(name)
    return target


def _write_stdout(data: bytes) -> None:
    from ..write import stdout_target, write_all

    if data:
        write_all(stdout_target(), data)


def _recipe(features: dict[str, Any], given: bool, exact: bool, decision: Any = None) -> tuple[Any, Any]:
    """The fingerprinting recipe of the feature options (``--compat`` applied; for the measure
    of the ``decision`` options, when they are given) and the method."""
    from ..cli_options import build_method, feature_options_of
    from .fingerprints import Recipe

    options = feature_options_of(features, given)
    recipe = Recipe(options if decision is None else options.for_measure(decision), exact)
    return recipe, build_method(recipe.features)


def _shards(paths: tuple[str, ...], inputs: Any, output: str | None, engine: str) -> list:
    from ..read import WalkFilter, iter_sources, without_links
    from ..write import own_file, stdout_target
    from .fingerprints import plan_shards

    if not paths:
        raise click.UsageError("give at least one PATH")
    if "-" in paths:
        raise click.UsageError(f"--engine {engine} reads the paths named, not a list on stdin")
    walk = WalkFilter(inputs.globs, inputs.excludes, inputs.min_bytes)
    exclude = () if output else own_file(stdout_target())
    sources = without_links(iter_sources(paths, walk, exclude), message, False)
    return plan_shards(sources, inputs)


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
    refuse_overlap(output, paths, "-o")
    refuse_overlap(connection.work_dir, paths, "--work-dir")
    shards = _shards(paths, inputs, output, connection.engine)
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
        target = output_directory(output, force, work, connection.engine)
        with stage_engine(connection, silent, jobs) as engine:
            outcome = run.fingerprint_stages(
                engine, work, shards, recipe, inputs, record_format, target, message, verbose
            )
        if output is None:
            run.stream(target, outcome.parts, _write_stdout)
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
    refuse_overlap(output, paths, "-o")
    refuse_overlap(connection.work_dir, paths, "--work-dir")
    shards = _shards(paths, inputs, output, connection.engine)
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
        target = output_directory(output, force, work, connection.engine)
        with stage_engine(connection, silent, jobs) as engine:
            outcome = run.dedup_stages(
                engine, work, shards, recipe, inputs, decision, target, run.Plan(), message, verbose
            )
        if output is None:
            run.stream(target, outcome.parts, _write_stdout)
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

    refuse_overlap(output, files, "-o")
    refuse_overlap(connection.work_dir, files, "--work-dir")
    with work_directory(connection) as work:
        work.claim(
            run.settings_of(command="cluster", files=list(files), options=options, identity=_file_identity(files))
        )
        target = output_directory(output, force, work, connection.engine)
        with stage_engine(connection, False) as engine:
            outcome = run.cluster_stages(engine, work, list(files), resolve, target, run.Plan(), message)
        if output is None:
            run.stream(target, outcome.parts, _write_stdout)


def _file_identity(files: tuple[str, ...]) -> list:
    from ..read.remote import is_url, version

    out = []
    for name in files:
        if is_url(name):
            out.append([name, version(name)])
            continue
        try:
            st = os.stat(name)
            out.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([name])
    return out


RUNNERS = {"fingerprint": run_fingerprint, "dedup": run_dedup, "cluster": run_cluster}
