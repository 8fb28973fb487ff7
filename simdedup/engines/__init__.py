"""The engines: ``fingerprint``, ``cluster`` and ``dedup`` as stages over files in a work directory,
run on a Dask cluster (``--engine dask``) or on worker processes of this machine (``--engine
stages``), whose output is byte for byte the one-process output.

    from distributed import Client
    import simdedup.engines as sd

    with Client("tcp://head:8786") as client:
        outcome = sd.dedup(["corpus/"], client=client, work_dir="s3://bucket/work", k=8)
        clusters = outcome.read()        # the JSON lines `simdedup dedup -k 8 corpus/` prints

The stages (:mod:`.fingerprints`, :mod:`.pairs`, :mod:`.groups`, :mod:`.components`) are plain
functions over files and numpy arrays; :mod:`.engine` runs them on Dask or in this process;
:mod:`.run` composes them; :mod:`.commands` is the ``--engine dask`` of the command line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..method_registry import DEFAULT_METHOD

if TYPE_CHECKING:
    from ..options import ClusterOptions, FeatureOptions
    from ..read import Inputs
    from .run import Outcome, Plan

__all__ = ["Outcome", "Plan", "dedup", "cluster"]


def __getattr__(name: str) -> Any:
    """``Outcome`` and ``Plan`` on first use: the command line imports this package on every
    start, and :mod:`.run` brings numpy."""
    if name in ("Outcome", "Plan"):
        from . import run

        return getattr(run, name)
    raise AttributeError(name)


def _engine(client: Any, silent: bool) -> Any:
    from .engine import DaskEngine, Engine

    return Engine(silent) if client is None else DaskEngine(client, silent)


def _target(output: str | None, work: Any) -> Any:
    from .workdir import WorkDir

    return WorkDir(output if output is not None else f"{work.url}/output")


def dedup(
    paths: list[str],
    *,
    client: Any,
    work_dir: str,
    options: ClusterOptions | None = None,
    features: FeatureOptions | None = None,
    inputs: Inputs | None = None,
    output: str | None = None,
    verify: str = "exact",
    plan: Plan | None = None,
    silent: bool = True,
    **option_values: Any,
) -> Outcome:
    """``simdedup dedup PATHS`` on the cluster of ``client`` (None: in this process), as
    ``options`` decide (:class:`simdedup.options.ClusterOptions`; k must be given) with records
    made as ``features`` say (:class:`simdedup.options.FeatureOptions`) from documents read as
    ``inputs`` say (:class:`simdedup.read.Inputs`). Instead of the objects, their fields may be
    given by name (``k=8``, ``linkage="star"``, ``bits=128``, ``tokenizer="jieba"``). The
    output parts go to ``output`` (a directory or URL; default: the work dir's ``output``), and
    :meth:`Outcome.read` gives them joined."""
    from ..read import Inputs, WalkFilter, iter_sources
    from . import run
    from .fingerprints import Recipe, plan_shards
    from .workdir import WorkDir

    plan = plan or run.Plan()
    options, features = _objects(options, features, option_values)
    recipe = Recipe(features.for_measure(options), verify == "exact")
    method = recipe.build()
    from ..fingerprints.record import sketch_kind

    decision = _decision(options, method.bits, sketch_kind(method.settings), features.method, verify == "exact")
    reading = replace(inputs or Inputs(), encoding=features.encoding)
    sources = (
        s
        for s in iter_sources(paths, WalkFilter(reading.globs, reading.excludes, reading.min_bytes))
        if not s.same_file
    )
    shards = plan_shards(sources, reading, plan.shard_bytes, plan.shard_documents)
    work = WorkDir(work_dir)
    try:  # held while the stages run (WorkDir.claim), then let go
        work.claim(
            run.settings_of(
                command="dedup",
                paths=list(paths),
                features=features.as_json(),
                verify=verify,
                decision=decision,
                reading=reading,
                shards=run.shard_identity(shards),
            )
        )
        return run.dedup_stages(
            _engine(client, silent), work, shards, recipe, reading, decision, _target(output, work), plan, _ignore
        )
    finally:
        work.release()


def cluster(
    files: list[str],
    *,
    client: Any,
    work_dir: str,
    options: ClusterOptions | None = None,
    output: str | None = None,
    plan: Plan | None = None,
    silent: bool = True,
    **option_values: Any,
) -> Outcome:
    """``simdedup cluster FILES`` on the cluster of ``client`` (None: in this process), as
    ``options`` decide (:class:`simdedup.options.ClusterOptions`, or its fields by name; k must
    be given)."""
    from . import run
    from .workdir import WorkDir

    options, _ = _objects(options, None, option_values)

    def resolve(bits: int, settings: dict) -> ClusterOptions:
        from ..fingerprints.record import sketch_kind

        return _decision(options, bits, sketch_kind(settings), settings.get("method") or DEFAULT_METHOD)

    work = WorkDir(work_dir)
    try:
        work.claim(
            run.settings_of(
                command="cluster",
                files=list(files),
                options=options,
                identity=run.shard_identity([[_File(f)] for f in files]),
            )
        )
        return run.cluster_stages(
            _engine(client, silent), work, list(files), resolve, _target(output, work), plan or run.Plan(), _ignore
        )
    finally:
        work.release()


def _objects(
    options: ClusterOptions | None, features: FeatureOptions | None, values: dict[str, Any]
) -> tuple[ClusterOptions, FeatureOptions]:
    """The options objects, or the objects of the fields given by name (not both)."""
    from ..errors import UsageError
    from ..options import ClusterOptions, FeatureOptions

    if values and (options is not None or features is not None):
        raise UsageError("give the options objects or their fields, not both")
    named = ClusterOptions.take(values)
    return options or named, features or FeatureOptions.of(**values)


def _decision(
    options: ClusterOptions, bits: int, sketch_of: str | None, method: str, texts: bool = False
) -> ClusterOptions:
    from ..errors import UsageError

    if options.k is None and sketch_of != "shingles":
        raise UsageError("the staged engines need an explicit k for records with sketches of features or none")
    try:
        return options.resolve(bits, sketch_of, method, texts=texts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class _File:
    def __init__(self, path: str):
        self.path = path

    def __repr__(self) -> str:
        return self.path


def _ignore(line: str) -> None:
    """Warnings of the Python API: the outcome lists the skipped documents."""
