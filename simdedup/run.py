"""The stages run in order, one library call per command: read → method → fingerprints →
group, on one process or ``jobs`` worker processes.

Fingerprinting streams (a batch of :data:`BATCH_SOURCES` sources at a time, in input order on
any number of processes); clustering is a barrier that needs every fingerprint first. This is
where an engine plugs in: it runs the same stage functions (:func:`fingerprint_batch` on a
batch of sources, :func:`simdedup.group.cluster_fingerprints` on the columns) elsewhere.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator

from . import workers
from .errors import SimdedupError, Warnings
from .fingerprints import (
    FingerprintRecord,
    FingerprintSet,
    collect_records,
    json_lines,
    load_fingerprints,
    warn_repeated,
)
from .group import Cluster, StageTimes, cluster_fingerprints
from .method_registry import DEFAULT_METHOD
from .options import ClusterOptions, FeatureOptions
from .read import Inputs, Source, open_documents, plain_files, read_sources

if TYPE_CHECKING:
    from .methods import Method


#: sources fingerprinted together: one kernel call, or one task for a worker process
BATCH_SOURCES = 64


@dataclass
class Batch:
    """What one batch of sources gave, in source order: records and skipped sources (with their
    reasons). When rendered where it was made, the records are JSON lines in ``lines`` and
    ``results`` keeps only the skipped sources."""

    results: list[FingerprintRecord | Source]
    notes: list[str]  # "ID: read as ENCODING" for documents whose encoding was detected
    size: int  # bytes of the documents fingerprinted
    count: int  # records made
    lines: bytes = b""

    @property
    def skipped(self) -> list[Source]:
        return [r for r in self.results if isinstance(r, Source)]

    @property
    def records(self) -> list[FingerprintRecord]:
        return [r for r in self.results if not isinstance(r, Source)]

    @classmethod
    def of(cls, results: list[FingerprintRecord | Source], render: bool) -> "Batch":
        records = [r for r in results if not isinstance(r, Source)]
        notes = [f"{r.id}: read as {r.encoding}" for r in records if r.encoding]
        size = sum(r.bytes or 0 for r in records)
        if not render:
            return cls(results, notes, size, len(records))
        lines = json_lines(records)
        return cls([r for r in results if isinstance(r, Source)], notes, size, len(records), lines)


def fingerprint_batch(sources: list[Source], method: Method, render: bool = False) -> Batch:
    """One batch of sources read and fingerprinted: the unit of work of a worker process. A
    document skipped keeps the file it came from (its warning is summarised with that file's)."""
    if getattr(method, "reads_files", False) and plain_files(sources):  # files read whole together
        return Batch.of(method.fingerprint_files(sources), render)  # type: ignore[attr-defined]
    documents = list(open_documents(sources, method.encoding, method.whole_bytes))
    results = method.fingerprint_batch(documents)  # one result per document, in order
    return Batch.of(
        [
            replace(result, origin=result.origin or document.origin, place=result.place or document.place)
            if isinstance(result, Source) and document.origin
            else result
            for result, document in zip(results, documents)
        ],
        render,
    )


_worker: tuple[Method, bool] | None = None


def _init_worker(method: Method, render: bool) -> None:
    global _worker
    _worker = (method, render)


def _work(task: Any) -> Any:
    assert _worker is not None
    method, render = _worker
    if isinstance(task, (_SetsOf, _PlaceRuns)):  # after the pair search, in a worker that keeps texts
        return task.made()
    hold = None
    if isinstance(task, _Holding):
        task, hold = task.task, task.keep
    if isinstance(task, tuple):
        task = [Source.file(path, size) for path, size in zip(*task)]
    batch = fingerprint_batch(task, method, render)
    if hold is not None:
        _hold_texts(batch, hold)
    return batch


# --- texts kept by the workers that read them (dedup -j N) ----------------------------------

_held: dict[int, Any] = {}  # in a worker: the texts of its records (simdedup.similarity.KeptText), by key
_held_keys = itertools.count()


def _hold_texts(batch: Batch, keep: bool) -> None:
    """In a worker: the batch's kept texts stay here (with ``keep``; else they are let go, over
    the budget), and its records carry :class:`~simdedup.similarity.HeldText` handles instead."""
    from .similarity import HeldText, KeptText

    for record in batch.results:
        if isinstance(record, FingerprintRecord) and isinstance(record.exact, KeptText):
            key = next(_held_keys) if keep else -1
            if keep:
                _held[key] = record.exact
            record.exact = HeldText(os.getpid(), key, record.exact.digest(), record.exact.nbytes)


@dataclass
class _Holding:
    """A batch for a worker that keeps its texts (``keep``: while the budget lasts)."""

    task: Any
    keep: bool


_made: Any = None  # in a worker: the sets of its documents of candidate pairs (SetsBlock)


@dataclass
class _SetsOf:
    """In a worker: make the exact sets of its texts ``keys`` (in this order) and keep them, each
    text let go once its sets are made (texts and sets are not all held at once, as in one
    process); their numbers go to the parent, which lays out its index by them."""

    keys: list[int]

    def made(self) -> Any:
        from .similarity import sets_block
        from .verify import texts_releasing

        global _made
        kept = [_held.pop(key, None) for key in self.keys]
        _held.clear()  # the texts of documents in no candidate pair
        _made = sets_block(texts_releasing(kept))  # each text let go once its sets are made
        return _made.numbers()


@dataclass
class _PlaceRuns:
    """In a worker, last: the runs of the sets it made (:attr:`~simdedup.similarity.IndexLayout.runs`)
    copied to where they go in the parent's index, which is the memory at ``path`` (the
    parent's :class:`~simdedup.workers.SharedMemory`, laid out words, shingles, counts), or,
    without one, sent back for the parent to place. The worker ends after it."""

    runs: list[tuple[int, int, int, int]]
    path: str | None
    words: int
    grams: int

    def made(self) -> Any:
        from .similarity import place_runs

        if self.path is None:
            return _made
        memory = workers.map_shared(self.path, _shared_bytes(self.words, self.grams))
        arrays = _shared_arrays(memory, self.words, self.grams)
        place_runs(_made, self.runs, *arrays)
        del arrays  # (a mapping is closed once no array uses it)
        memory.close()
        return None


def _shared_bytes(words: int, grams: int) -> int:
    return 8 * words + 8 * grams + 4 * words


def _shared_arrays(memory: Any, words: int, grams: int) -> tuple[Any, Any, Any]:
    """The words, counts and shingles of an index in shared memory (words, shingles, then counts:
    each array aligned)."""
    import numpy as np

    return (
        np.frombuffer(memory, dtype=np.uint64, count=words, offset=0),
        np.frombuffer(memory, dtype=np.uint32, count=words, offset=8 * (words + grams)),
        np.frombuffer(memory, dtype=np.uint64, count=grams, offset=8 * words),
    )


class TextsInWorkers:
    """The worker processes of a ``dedup -j N`` run, which keep the texts they read: a batch
    of texts would cost the parent more to receive than its exact sets cost to make, and
    verification needs the sets of a third of them (real-en). After the pair search
    :meth:`index` has each worker make the sets of the documents of candidate pairs that it
    holds, at once, and send them. Texts are kept while :attr:`budget` admits them (in input
    order, as in one process); past it, the batches handed out say to keep none."""

    def __init__(self, budget: Any):
        self.budget = budget
        self.pool: workers.Pool | None = None

    def batches(self, tasks: Iterable[Any], jobs: int, method: Method, render: bool) -> Iterator[Batch]:
        self.pool = workers.Pool(jobs, _work, _init_worker, (method, render))
        yield from self.pool.in_order(_Holding(task, not self.budget.ended) for task in tasks)

    def index(self, kept: list[Any]) -> Any:
        """The :class:`~simdedup.similarity.ExactIndex` of ``kept`` (handles or None), in this order."""
        import numpy as np

        from .similarity import IndexLayout, place_runs

        assert self.pool is not None
        worker_of = {pid: w for w, pid in enumerate(self.pool.pids)}
        keys: list[list[int]] = [[] for _ in worker_of]
        rows: list[tuple[int, int] | None] = []
        for held in kept:
            if held is None or held.key < 0:
                rows.append(None)
                continue
            w = worker_of[held.holder]
            rows.append((w, len(keys[w])))
            keys[w].append(held.key)
        layout = IndexLayout(self.pool.each([_SetsOf(k) for k in keys]), rows)
        shared = workers.SharedMemory.create(_shared_bytes(layout.words, layout.grams))
        if shared is None:  # the parent places the runs (not on Linux)
            blocks = self.pool.each([_PlaceRuns(r, None, layout.words, layout.grams) for r in layout.runs])
            self.pool.release()  # the workers end meanwhile, and their texts with them
            arrays = (
                np.empty(layout.words, np.uint64),
                np.empty(layout.words, np.uint32),
                np.empty(layout.grams, np.uint64),
            )
            for block, runs in zip(blocks, layout.runs):
                place_runs(block, runs, *arrays)
            return layout.index(*arrays)
        try:  # the workers place them, in the memory the index then reads
            self.pool.each([_PlaceRuns(r, shared.path, layout.words, layout.grams) for r in layout.runs])
            self.pool.release()
            return layout.index(*_shared_arrays(shared.map(), layout.words, layout.grams))
        finally:
            shared.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


def _task(sources: list[Source]) -> list[Source] | tuple[list[str], list[int | None]]:
    """A batch as it goes to a worker: regular files as their paths and sizes, which pickle
    about fifteen times faster than the Source objects (many small files)."""
    if all(s.regular and s.reason is None and s.text is None and s.line is None and s.span is None for s in sources):
        return [s.path for s in sources], [s.size for s in sources]
    return sources


def default_jobs() -> int:
    """Number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fingerprint_batches(
    sources: Iterable[Source],
    method: Method,
    jobs: int = 1,
    render: bool = False,
    texts_in_workers: TextsInWorkers | None = None,
) -> Iterator[Batch]:
    """Fingerprint the sources :data:`BATCH_SOURCES` at a time, in order; the batches, and so
    the output, are the same for any ``jobs``.

    With ``render``, each batch carries its records as JSON lines instead of objects, made by
    the worker process that fingerprinted them: the parent only writes bytes, so ``jobs``
    workers keep ``jobs`` cores busy. With ``texts_in_workers``, the workers keep the texts
    (:class:`TextsInWorkers`, which the caller closes).
    """
    method.prepare()  # loaded once here, inherited by forked workers
    if jobs > 1:
        _preload_kernels(method, texts_in_workers is not None)
    batches = _batches(sources, BATCH_SOURCES)
    if jobs <= 1:
        for batch in batches:
            yield fingerprint_batch(batch, method, render)
        method.finish()
        return
    if texts_in_workers is not None:
        yield from texts_in_workers.batches(map(_task, batches), jobs, method, render)
        return
    yield from workers.in_order(map(_task, batches), jobs, _work, _init_worker, (method, render))


def _preload_kernels(method: Method, exact_sets: bool) -> None:
    """Load the kernels the workers will run once, before the fork, instead of once in every
    worker: where they must be compiled, that is done (and said) once, in this process, where
    the progress bar leaves it out of its rate. A kernel that cannot be loaded is left to the
    workers, which say so as one process does."""
    from .kernels import fastpath
    from .kernels.exact import ExactKernel
    from .kernels.shingles import ShingleKernel

    if getattr(method, "fast", False):
        fastpath.preload()
    if getattr(method, "shingle_bytes", 0):
        ShingleKernel.loaded()  # every record's sketch
    if exact_sets:
        ExactKernel.loaded()  # the texts' exact sets, made where the texts are


def _batches(sources: Iterable[Source], size: int) -> Iterator[list[Source]]:
    iterator = iter(sources)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _no_note(text: str) -> None:
    pass


@dataclass
class FingerprintRun:
    """Fingerprinting the documents ``paths`` name (:func:`simdedup.read.read_sources`): iterate
    once for the :class:`Batch` objects, in input order.

    Skipped documents are collected in :attr:`skipped` and told to ``note`` as warnings as
    they are met, a few about one file and then their count (:class:`~simdedup.errors.Warnings`;
    with ``verbose``, each of them, and the encodings ``--encoding auto`` chose).
    With ``exact_first``, documents whose text was seen before are not fingerprinted but listed
    in :attr:`duplicates` (``path -> first path``); :meth:`records` adds them back as copies.
    ``count`` walks the paths first, so that :attr:`total` is known (for a progress bar).
    """

    paths: tuple[str, ...]
    method: Method
    inputs: Inputs = field(default_factory=Inputs)
    jobs: int | None = None  # None: every core
    render: bool = False
    exact_first: bool = False
    count: bool = False
    exclude: tuple[tuple[int, int], ...] = ()  # files never to read: the run's own output
    overwritten: dict[tuple[int, int], str] | None = None  # files the outputs write over
    tee: Callable[[Iterator[Source]], Iterator[Source]] | None = None  # sees every source first
    note: Callable[[str], None] = _no_note
    verbose: bool = False
    hold_texts: bool = False  # workers keep the texts for exact verification (dedup)
    skipped: list[str] = field(default_factory=list, init=False)
    tables: list[tuple[str, str]] = field(default_factory=list, init=False)  # (kind, path) of tables read
    duplicates: dict[str, str] | None = field(default=None, init=False)
    total: int | None = field(default=None, init=False)  # documents, or bytes of tables (see unit)
    unit: str = field(default="doc", init=False)
    budget: Any = field(default=None, init=False)  # of the texts kept (simdedup.fingerprints.sets.TextBudget)
    texts_in_workers: TextsInWorkers | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        from .fingerprints.sets import TextBudget

        self.budget = TextBudget()
        plan = read_sources(
            self.paths, self.inputs, self.count, self.tables, self.exclude, self.overwritten, self.note, self.verbose
        )
        self._sources = plan.sources
        self.duplicates = {} if self.exact_first else None
        self.total, self.unit = (plan.table_bytes, "B") if plan.table_bytes else (plan.count, "doc")

    def __iter__(self) -> Iterator[Batch]:
        sources: Iterable[Source] = self._sources
        if self.tee is not None:
            sources = self.tee(iter(sources))
        if self.duplicates is not None:
            from .exact import SeenDigests, exact_duplicates

            sources = exact_duplicates(sources, self.method.encoding, SeenDigests(), self.duplicates)
        jobs = self.jobs or default_jobs()
        if jobs > 1:  # a pool is not worth it for a handful of documents
            sources = iter(sources)  # a list (counted for the progress bar) would give its head twice
            head = list(itertools.islice(sources, 4 * jobs))
            jobs = max(1, min(jobs, len(head) // 4))
            sources = itertools.chain(head, sources)
        warnings = Warnings(self.note, self.verbose, " (-v shows them all)")
        if self.hold_texts and jobs > 1 and getattr(self.method, "exact", False):
            self.texts_in_workers = TextsInWorkers(self.budget)
        for batch in fingerprint_batches(sources, self.method, jobs, self.render, self.texts_in_workers):
            for source in batch.skipped:
                self.skipped.append(source.path)
                warnings.warn(source.where, source.reason or "", source.origin)
            if self.verbose:
                for note in batch.notes:
                    self.note(f"simdedup: {note}")
            yield batch
        warnings.close()

    def records(self, batches: Iterable[Batch] | None = None) -> Iterator[FingerprintRecord]:
        """The records of the run (of ``batches``: the run's batches as the caller iterates
        them), then, with ``exact_first``, a copy of the first record for each exact duplicate."""
        records = (record for batch in (self if batches is None else batches) for record in batch.records)
        if self.duplicates is None:
            yield from records
            return
        from .exact import add_exact_duplicates

        yield from add_exact_duplicates(records, self.duplicates)

    def close(self) -> None:
        """End the workers that keep texts, if any."""
        if self.texts_in_workers is not None:
            self.texts_in_workers.close()

    def done(self, records: int, verb: str = "fingerprinted") -> str | None:
        """The closing line when documents were skipped."""
        if not self.skipped:
            return None
        return f"simdedup: {verb} {records} documents, skipped {len(self.skipped)} (see warnings above)"


def _resolved(options: ClusterOptions, fingerprints: FingerprintSet, note: Callable[[str], None]) -> ClusterOptions:
    """``options`` resolved for the fingerprints, with a note for each default chosen for the user.

    Raises:
        UsageError: an option out of range for the fingerprints.
    """
    from .errors import UsageError
    from .verify import old_rule_note

    try:
        resolved = options.for_fingerprints(fingerprints)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if fingerprints.exact_dropped:
        note(
            f"simdedup: note: {fingerprints.exact_dropped:,} documents beyond the memory budget of exact "
            f"verification are verified with their sketches"
        )
    for said in (old_rule_note(resolved), resolved.k_note(fingerprints.bits)):
        if said:
            note(said)
    if (
        options.k is None
        and resolved.sketch_of == "features"
        and resolved.k < options.DEFAULT_K_VERIFIED * fingerprints.bits // 64  # type: ignore[operator]
    ):
        note(
            f"simdedup: {len(fingerprints.ids):,} documents: k = {resolved.k} by default at this size "
            f"(the pair search for k = {options.DEFAULT_K_VERIFIED} would take long); give -k to choose"
        )
    return resolved


@dataclass
class Clustered:
    """What ``cluster`` and ``dedup`` find: the fingerprints and their clusters (member indices
    into ``fingerprints.ids``); ``new`` marks the documents of an incremental run."""

    fingerprints: FingerprintSet
    clusters: list[Cluster]
    options: ClusterOptions  # resolved
    new: Any = None

    def id_clusters(self) -> list[list[str]]:
        """The clusters as lists of ids, the representative first."""
        ids = self.fingerprints.ids
        return [[ids[c.representative], *(ids[m] for m in c.members if m != c.representative)] for c in self.clusters]


def cluster_files(
    files: Iterable[tuple[str, BinaryIO]],
    options: ClusterOptions = ClusterOptions(),
    against: str | None = None,
    note: Callable[[str], None] = _no_note,
    times: StageTimes | None = None,
    release_sketches: bool = False,
) -> Clustered:
    """``cluster``: the clusters of the fingerprint records in ``files`` (named binary streams).

    With ``against`` (the name of one of the files), an incremental run: only clusters holding a
    document of the other files, and no pair of two documents of ``against``. Of records with
    one id, one is kept (:func:`simdedup.fingerprints.sets.left_out`), with a warning to
    ``note`` for each other. ``times`` records where the time
    goes. With ``release_sketches``, the result's fingerprints have no sketches (they are let
    go once used, see :func:`~simdedup.group.cluster_fingerprints`).
    """
    import numpy as np

    times = times or StageTimes()
    times.start("read")
    fingerprints = load_fingerprints(files)
    times.count("read", len(fingerprints.ids), "records")
    warn_repeated(note, fingerprints.repeated)
    new = None
    if against is not None and fingerprints.sources is not None:
        new = np.array([name != against for name in fingerprints.files or []], dtype=bool)[fingerprints.sources]
    resolved = _resolved(options, fingerprints, note)
    clusters = cluster_fingerprints(fingerprints, resolved, new, times=times, release_sketches=release_sketches)
    return Clustered(fingerprints, clusters, resolved, new)


def dedup_run(
    run: FingerprintRun,
    options: ClusterOptions = ClusterOptions(),
    batches: Iterable[Batch] | None = None,
    times: StageTimes | None = None,
) -> Clustered:
    """``dedup``: the clusters of the documents a fingerprint run makes (of its ``batches``, as
    the caller iterates them, e.g. behind a progress bar). Two documents under one id: one is
    clustered, the same in any input order, and the other is counted as skipped. ``times`` records where the time
    goes. The texts kept for exact verification are let go once measured."""
    times = times or StageTimes()
    try:
        times.start("read and fingerprint")
        fingerprints = collect_records(run.records(batches), run.budget)
        times.count("read and fingerprint", len(fingerprints.ids), "documents")
        run.skipped.extend(fingerprints.repeated)
        warn_repeated(run.note, fingerprints.repeated)
        resolved = _resolved(options, fingerprints, run.note)
        clusters = cluster_fingerprints(
            fingerprints, resolved, times=times, release_texts=True, texts_in_workers=run.texts_in_workers
        )
    finally:
        run.close()
    return Clustered(fingerprints, clusters, resolved)


def prepare_dedup(
    method: Method, options: ClusterOptions, verify: str = "exact", note: Callable[[str], None] = _no_note
) -> None:
    """Check ``options`` against ``method`` before any document is read (a run of hours must not
    end in a usage error), and with ``verify="exact"`` have the method keep the texts exact
    verification measures, unless the kernels that measure them cannot load here: then the
    sketches verify, and ``note`` says so.

    Raises:
        UsageError: an option out of range for the method's fingerprints.
    """
    from .errors import UsageError
    from .fingerprints.record import sketch_kind
    from .methods.simhash import GivenFeaturesMethod, SimhashMethod
    from .similarity import ExactUnavailable, exact_kernel

    if verify not in ("exact", "sketch"):
        raise UsageError("verify must be exact or sketch")
    simhash_of_texts = isinstance(method, SimhashMethod) and not isinstance(method, GivenFeaturesMethod)
    if simhash_of_texts and sketch_kind(method.settings) is None:
        # without a sketch no pair is measured: the distance alone would decide, another measure
        raise UsageError(
            "dedup measures each pair by the resemblance of its texts, which needs their sketches: "
            "--sketch 0 is for records that cluster decides by the distance alone (fingerprint --sketch 0 | cluster)"
        )
    if verify == "exact" and hasattr(method, "verify_exactly"):
        method.verify_exactly()
        if getattr(method, "exact", False):  # the texts will be measured: the kernels must load
            try:
                exact_kernel()
            except ExactUnavailable as exc:
                method.exact = False
                note(f"simdedup: warning: {exc}; the sketches verify instead (as --verify sketch)")
    try:
        options.resolve(
            method.bits, sketch_kind(method.settings), method.settings["method"], texts=getattr(method, "exact", False)
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --- the library in one call ----------------------------------------------------------------


def _method_of(
    method: Method | str | None, features: FeatureOptions | None, inputs: Inputs, values: dict[str, Any]
) -> Method:
    """The method of the library's calls: given, or made from ``features`` (or their fields and
    the method's own options by name, ``method`` its name); features the input gives
    (``inputs``' :class:`~simdedup.read.FeaturesField`) are said so to the method."""
    from .methods import Method

    if isinstance(method, Method):
        if values or features is not None:
            raise SimdedupError("give a method or its options, not both")
        return method
    if features is not None and (values or method is not None):
        raise SimdedupError("give FeatureOptions or their fields, not both")
    if features is None:
        features = FeatureOptions.of(method=method or DEFAULT_METHOD, **values)
    if inputs.given_features and not features.given_features:
        features = replace(features, given_features=True)
    return features.method_object()


def fingerprint(
    paths: Iterable[str] | str,
    method: Method | str | None = None,
    *,
    features: FeatureOptions | None = None,
    jobs: int = 1,
    inputs: Inputs | None = None,
    **method_options: Any,
) -> Iterator[FingerprintRecord]:
    """The fingerprint records of the documents ``paths`` name (files, directories, JSON-lines
    and other tables), in input order; skipped documents are left out with a warning
    (:mod:`warnings`). ``method``: a :class:`~simdedup.methods.Method`, or its name with the
    fields of :class:`~simdedup.options.FeatureOptions` by name (the options of
    :func:`simdedup.methods.make_method`), or ``features`` whole.

    >>> import simdedup
    >>> records = list(simdedup.fingerprint(["examples/en"]))
    >>> records[0].id, records[0].bits
    ('examples/en/bicycle-chain-care-reposted.txt', 64)
    """
    import warnings

    inputs = inputs or Inputs()
    run = FingerprintRun(
        (paths,) if isinstance(paths, str) else tuple(paths),
        _method_of(method, features, inputs, method_options),
        inputs,
        jobs,
        note=lambda text: warnings.warn(text, stacklevel=3),
    )
    yield from run.records()


def cluster(
    records: Iterable[FingerprintRecord] | FingerprintSet | Iterable[str] | str,
    options: ClusterOptions | None = None,
    **option_values: Any,
) -> list[list[str]]:
    """Clusters of near-duplicates among fingerprint records (or the fingerprint files named),
    as lists of ids, the representative first. ``options``, or the fields of
    :class:`simdedup.options.ClusterOptions` (``k=3``, ``linkage="single"``, ...).

    >>> import simdedup
    >>> records = simdedup.fingerprint(["examples/en"])
    >>> simdedup.cluster(records)[1]
    ['examples/en/lighthouses-edited-1.txt', 'examples/en/lighthouses.txt']
    """
    options = options or ClusterOptions(**option_values)
    if isinstance(records, str):
        records = [records]
    if isinstance(records, FingerprintSet):
        fingerprints = records
    else:
        records = list(records)
        if records and isinstance(records[0], str):
            from .read import named_streams

            return cluster_files(named_streams(records), options).id_clusters()  # type: ignore[arg-type]
        fingerprints = collect_records(records)  # type: ignore[arg-type]
    resolved = _resolved(options, fingerprints, _no_note)
    return Clustered(fingerprints, cluster_fingerprints(fingerprints, resolved), resolved).id_clusters()


def dedup(
    paths: Iterable[str] | str,
    method: Method | str | None = None,
    options: ClusterOptions | None = None,
    *,
    features: FeatureOptions | None = None,
    jobs: int = 1,
    inputs: Inputs | None = None,
    verify: str = "exact",
    exact_first: bool = False,
    **option_values: Any,
) -> list[list[str]]:
    """Fingerprint the documents ``paths`` name and cluster them in one go: lists of ids, the
    representative first. ``options`` and ``features`` whole, or their fields by name: keyword
    options go to :class:`simdedup.options.ClusterOptions` or
    :class:`simdedup.options.FeatureOptions` (and the method's own options), whichever takes them.

    >>> import simdedup
    >>> clusters = simdedup.dedup(["examples/en", "examples/zh"])
    >>> len(clusters), clusters[0]
    (3, ['examples/en/bicycle-chain-care-reposted.txt', 'examples/en/bicycle-chain-care.txt'])
    >>> len(simdedup.dedup(["examples/en", "examples/zh"], similarity="combined"))  # edited copies too
    4
    """
    import warnings

    named = ClusterOptions.take(option_values)  # what is left are the features' and the method's
    if options is not None and named != ClusterOptions():
        raise SimdedupError("give ClusterOptions or their fields, not both")
    options = options or named
    from .methods import Method

    inputs = inputs or Inputs()
    if not isinstance(method, Method) and features is None:
        features = FeatureOptions.of(method=method or DEFAULT_METHOD, **option_values)
        method, option_values = None, {}
    made = _method_of(method, None if features is None else features.for_measure(options), inputs, option_values)
    note = lambda text: warnings.warn(text, stacklevel=3)  # noqa: E731
    prepare_dedup(made, options, verify, note)
    run = FingerprintRun(
        (paths,) if isinstance(paths, str) else tuple(paths),
        made,
        inputs,
        jobs,
        exact_first=exact_first,
        note=note,
        hold_texts=True,
    )
    return dedup_run(run, options).id_clusters()
