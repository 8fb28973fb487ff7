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

if TYPE_CHECKING:
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
    k: int,
    output: str | None = None,
    verify: str = "exact",
    jsonl: bool | None = None,
    text_field: str = "text",
    id_field: str | None = None,
    plan: Plan | None = None,
    silent: bool = True,
    **options: Any,
) -> Outcome:
    """``simdedup dedup -k K PATHS`` on the cluster of ``client`` (None: in this process).
    ``options`` are the fields of :class:`simdedup.options.ClusterOptions` (``linkage="star"``,
    ``min_similarity=0.9``, ``output_format="members"``, ...) and the feature options by their
    command-line names (``bits="128"``, ``tokenizer_name="jieba"``, ...); the output parts go to
    ``output`` (a directory or URL; default: the work dir's ``output``), and
    :meth:`Outcome.read` gives them joined."""
    from ..cli_options import feature_defaults, without_other_methods_options
    from ..options import ClusterOptions
    from ..read import Inputs, WalkFilter, iter_sources
    from . import run
    from .fingerprints import Recipe, plan_shards
    from .workdir import WorkDir

    plan = plan or run.Plan()
    unresolved = ClusterOptions.take(options)
    features = without_other_methods_options({**feature_defaults(), **options})
    recipe = Recipe(tuple(sorted(features.items())), False, verify == "exact")
    method = recipe.build()
    decision = replace(unresolved, k=k).resolve(method.bits, method.sketch_bins > 0, "simhash")
    reading = Inputs(jsonl=jsonl, text_field=text_field, id_field=id_field, encoding=features["encoding"])
    sources = (s for s in iter_sources(paths, WalkFilter()) if not s.same_file)
    shards = plan_shards(sources, reading, plan.shard_bytes, plan.shard_documents)
    work = WorkDir(work_dir)
    work.claim(
        run.settings_of(
            command="dedup",
            paths=list(paths),
            features={**features, "tokenizer_options": list(features["tokenizer_options"])},
            verify=verify,
            decision=decision,
            reading=reading,
            shards=run.shard_identity(shards),
        )
    )
    return run.dedup_stages(
        _engine(client, silent), work, shards, recipe, reading, decision, _target(output, work), plan, _ignore
    )


def cluster(
    files: list[str],
    *,
    client: Any,
    work_dir: str,
    k: int,
    output: str | None = None,
    plan: Plan | None = None,
    silent: bool = True,
    **options: Any,
) -> Outcome:
    """``simdedup cluster -k K FILES`` on the cluster of ``client`` (None: in this process);
    ``options`` are the fields of :class:`simdedup.options.ClusterOptions`."""
    from ..method_registry import DEFAULT_METHOD
    from ..options import ClusterOptions
    from . import run
    from .workdir import WorkDir

    unresolved = replace(ClusterOptions(**options), k=k)

    def resolve(bits: int, settings: dict) -> ClusterOptions:
        return unresolved.resolve(bits, bool(settings.get("sketch")), settings.get("method") or DEFAULT_METHOD)

    work = WorkDir(work_dir)
    work.claim(
        run.settings_of(
            command="cluster",
            files=list(files),
            options=unresolved,
            identity=run.shard_identity([[_File(f)] for f in files]),
        )
    )
    return run.cluster_stages(
        _engine(client, silent), work, list(files), resolve, _target(output, work), plan or run.Plan(), _ignore
    )


class _File:
    def __init__(self, path: str):
        self.path = path

    def __repr__(self) -> str:
        return self.path


def _ignore(line: str) -> None:
    """Warnings of the Python API: the outcome lists the skipped documents."""
