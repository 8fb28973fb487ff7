"""The stages composed, for ``fingerprint``, ``cluster`` and ``dedup`` on an engine.

fingerprint (tasks) -> rows: repeated ids, text budget (driver) -> pairs (tasks; crowds that stay
crowded in chunk-pair tasks) -> groups (driver; the components in tasks beyond ``Plan.driver_pairs``
pairs) -> records: linkage per batch of groups (tasks) -> output parts sorted by first member
(tasks). Every hand-off is a file in the work directory; task names say what the task covers
(a hash of its rows or ranges), so a rerun reuses exactly the tasks it would run again.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
import xxhash

from ..errors import RecordError, Warnings
from ..fingerprints.sets import record_key, warn_repeated
from ..options import ClusterOptions
from ..read import Inputs, Source
from ..similarity import DEFAULT_FOLDING
from ..verify import old_rule_note
from . import components as component_stage
from . import fingerprints as fp_stage
from . import groups as group_stage
from . import pairs as pair_stage
from .engine import Engine, Task
from .workdir import WorkDir

#: the pair search broadcasts the fingerprint column while it takes at most this many bytes
#: (a quarter of a small worker's memory); beyond, it shuffles
BROADCAST_BYTES = 1 << 30
#: connected components run on the driver up to this many verified pairs; beyond, in tasks
DRIVER_PAIRS = 10**8
#: rows per linkage task (whole groups: a large group is one task)
ROWS_PER_TASK = 200_000


@dataclass
class Plan:
    """How the work is cut (none of it changes the output)."""

    shard_bytes: int = fp_stage.SHARD_BYTES
    shard_documents: int = fp_stage.SHARD_DOCUMENTS
    import_records: int = fp_stage.IMPORT_RECORDS  # cluster: records of a binary file per task
    broadcast_bytes: int = BROADCAST_BYTES
    chunk_bytes: int = 256 << 20  # shuffle mode: bytes of the column per map task
    crowd: int = pair_stage.CROWD
    crowd_chunk: int = pair_stage.CROWD  # rows of a chunk of a run that stays crowded (a task: two chunks)
    driver_pairs: int = DRIVER_PAIRS  # connected components on the driver up to this many pairs, beyond in tasks
    rows_per_task: int = ROWS_PER_TASK
    output_parts: int | None = None  # None: one per records task


@dataclass
class Outcome:
    """What a run did, for the caller to report."""

    skipped: list[str] = field(default_factory=list)  # documents skipped (warned about)
    parts: list[str] = field(default_factory=list)  # output part names, in order
    documents: int = 0
    clusters: int = 0
    target: WorkDir | None = None  # where the parts are

    def read(self) -> bytes:
        """The parts one after the other: the one-process output."""
        assert self.target is not None
        return b"".join(self.target.read_bytes(name) for name in self.parts)


def _digest(*arrays: Any) -> str:
    h = xxhash.xxh3_64()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes() if isinstance(a, np.ndarray) else repr(a).encode())
    return h.hexdigest()[:12]


def shard_identity(shards: list[list[Any]]) -> str:
    """A digest of the shards and the versions of their files (:func:`file_version`; of objects:
    sizes and entity tags): a rerun on changed inputs is refused instead of mixing old parts in."""
    from ..read.remote import is_url, version

    h = xxhash.xxh3_64()
    for shard in shards:
        for entry in shard:
            path = entry.path.rsplit(":", 1)[0] if isinstance(entry, Source) and entry.span else entry.path
            if is_url(path):
                listed = entry.version if isinstance(entry, Source) else None
                h.update(f"{entry!r}{listed or version(path)}\n".encode("utf-8", "surrogatepass"))
                continue
            h.update(f"{entry!r}{file_version(path)}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def file_version(path: str) -> str:
    """What changes whenever a local file's content may have: its size, modification time,
    inode and inode change time. A rewrite that keeps the size and sets the modification time
    back (``touch -r``, ``os.utime``, ``rsync -t``) cannot set the change time back, nor keep the
    inode of a file replaced by rename. ("" for a file that cannot be read.)"""
    import os

    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_ctime_ns}"


def fingerprint_parts(
    engine: Engine,
    work: WorkDir,
    shards: list[list[Any]],
    recipe: fp_stage.Recipe,
    reading: Inputs,
    warn: Callable[[str], None],
    verbose: bool = False,
) -> tuple[list[dict], list[str]]:
    """The fingerprint stage's results and the documents it skipped (warned of; with
    ``verbose``, the tasks' notes too)."""
    tasks = [
        Task(f"{i:05d}", fp_stage.fingerprint_shard, (work, i, shard, recipe, reading))
        for i, shard in enumerate(shards)
    ]
    results = engine.run(work, fp_stage.STAGE, tasks)
    skipped = []
    warnings = Warnings(warn)
    for result in results:
        for path, reason, *where in result["skipped"]:  # (a work directory of before has no origin, no place)
            skipped.append(path)
            origin, place = (*where, None, None)[:2]
            warnings.warn(Source(path, place=place).where, reason, origin)
    warnings.close()
    if verbose:
        for result in results:
            for note in result["notes"]:
                warn(f"simdedup: {note}")
    return results, skipped


def import_parts(engine: Engine, work: WorkDir, files: list[str], records_per_task: int) -> list[dict]:
    shards = fp_stage.plan_imports(files, records_per_task)
    tasks = [
        Task(f"{i:05d}-{_digest(repr(shard))}", fp_stage.import_file, (work, i, shard))
        for i, shard in enumerate(shards)
    ]
    results = engine.run(work, fp_stage.STAGE, tasks)
    for result in results:
        if "error" in result:
            raise RecordError(result["error"])
    return results


@dataclass
class Rows:
    """The driver's columns of every row (in input order) and which rows take part."""

    part_starts: np.ndarray
    fps: np.ndarray
    features: np.ndarray
    sketches: np.ndarray | None
    kept: np.ndarray  # the record kept of its id (simdedup.fingerprints.sets.left_out)
    texts: np.ndarray | None  # a kept text within the budget (exact verification), per row
    nbytes: np.ndarray  # the size of each row's kept text as the budget counts it, -1: none
    ids_of: Callable[[np.ndarray], list[str]]  # the ids of some rows (read from their parts)


def load_rows(work: WorkDir, results: list[dict]) -> Rows:
    counts = np.array([r["count"] for r in results], dtype=np.int64)
    part_starts = np.concatenate(([0], np.cumsum(counts)))
    fps, features, sketches, hashes, nbytes = [], [], [], [], []
    for i in range(len(results)):
        part = fp_stage.read_part(work, i)
        if len(part.ids):
            fps.append(part.values)
        features.append(part.features)
        if part.sketches is not None:
            sketches.append(part.sketches)
        arrays = work.read_arrays(f"{fp_stage.part_name(i)}.npz")
        hashes.append(arrays["id_hash"])
        nbytes.append(arrays["text_nbytes"])
    all_fps = np.concatenate(fps) if fps else np.empty((0, 1), dtype=np.uint64)
    hash_column = np.concatenate(hashes) if hashes else np.empty(0, dtype=np.uint64)

    def by_part(rows: np.ndarray, of_part: Callable[[int, np.ndarray], list[Any]]) -> list[Any]:
        """``of_part(part, its rows)`` for the rows of each part, in the order of ``rows``."""
        part_of = np.searchsorted(part_starts, rows, side="right") - 1
        out: dict[int, Any] = {}
        for part in np.unique(part_of).tolist():
            chosen = rows[part_of == part]
            out.update(zip(chosen.tolist(), of_part(part, chosen - part_starts[part])))
        return [out[row] for row in rows.tolist()]

    def ids_of(rows: np.ndarray) -> list[str]:
        return by_part(rows, lambda part, local: [fp_stage.read_part(work, part).ids[i] for i in local.tolist()])

    def keys_of(part: int, local: np.ndarray) -> list[tuple]:
        columns = fp_stage.read_part(work, part)
        texts = fp_stage.read_texts(work, part, local, True)
        return [
            record_key(
                columns.values[i],
                columns.features[i],
                columns.sizes[i],
                None if columns.sketches is None else columns.sketches[i],
                text,
            )
            for i, text in zip(local.tolist(), texts)
        ]

    kept = group_stage.kept_rows(hash_column, ids_of, lambda rows: by_part(rows, keys_of))
    nbytes_column = np.concatenate(nbytes) if nbytes else np.empty(0, dtype=np.int64)
    texts = None
    if (nbytes_column >= 0).any():
        texts = np.zeros(len(kept), dtype=bool)
        texts[kept] = group_stage.budget_mask(nbytes_column[kept])
    return Rows(
        part_starts,
        all_fps,
        np.concatenate(features) if features else np.empty(0, dtype=np.int64),
        np.concatenate(sketches) if sketches else None,
        kept,
        texts,
        nbytes_column,
        ids_of,
    )


def near_pairs(engine: Engine, work: WorkDir, values: np.ndarray, k: int, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``values`` (distinct) within ``k``, found in tasks (broadcast or shuffle)."""
    n, words = values.shape
    empty = np.empty(0, dtype=np.int64)
    if k == 0 or n < 2:
        return empty, empty
    bits = 64 * words
    blocks = pair_stage.plan_blocks(n, k, bits)
    table_count = len(pair_stage.tables(bits, k, blocks))
    parts = max(1, math.ceil(4 * engine.workers / table_count))
    base = f"b{blocks}-k{k}-{_digest(values)}"
    if values.nbytes <= plan.broadcast_bytes:
        shared = engine.share(values)
        names = [f"{base}-t{t:03d}-p{p:03d}of{parts}" for t in range(table_count) for p in range(parts)]
        tasks = [
            Task(
                name, _broadcast_pairs, (work, name, shared, bits, k, blocks, i // parts, i % parts, parts, plan.crowd)
            )
            for i, name in enumerate(names)
        ]
    else:
        tasks = _shuffle_tasks(engine, work, values, bits, k, blocks, parts, plan, base)
    results = engine.run(work, "pairs", tasks)
    # the runs that stayed crowded: one task per pair of their chunks of ``plan.crowd_chunk`` rows
    chunk_tasks = [
        Task(
            f"{crowd['name']}-{first[0]}-{second[0]}",
            _chunk_pairs,
            (work, f"{crowd['name']}-{first[0]}-{second[0]}", crowd["name"], words, crowd["levels"], k, first, second),
        )
        for result in results
        for crowd in result["crowds"]
        for first, second in pair_stage.chunk_spans(crowd["rows"], plan.crowd_chunk)
    ]
    if chunk_tasks:
        engine.run(work, "pairs-crowded", chunk_tasks)
    lefts, rights = [], []
    for task in tasks + chunk_tasks:
        arrays = work.read_arrays(f"pairs/{task.name}.npz")
        lefts.append(arrays["left"])
        rights.append(arrays["right"])
    return np.concatenate(lefts), np.concatenate(rights)


def _write_pairs(work: WorkDir, name: str, left: np.ndarray, right: np.ndarray) -> dict:
    work.write_arrays(f"pairs/{name}.npz", left=left, right=right)
    return {"count": len(left), "bytes": 16 * len(left)}


def _write_found(work: WorkDir, name: str, found: pair_stage.Found) -> dict:
    """A pair task's pairs, and each crowd it left as ``crowds/NAME-I.bin``: per row its number
    and its fingerprint's words (uint64), so that a chunk task reads its rows only."""
    crowds = []
    for i, crowd in enumerate(found.crowds):
        crowd_name = f"{name}-c{i:04d}"
        work.write_bytes(
            f"crowds/{crowd_name}.bin", np.hstack([crowd.rows.astype(np.uint64).reshape(-1, 1), crowd.values]).tobytes()
        )
        crowds.append(
            {
                "name": crowd_name,
                "rows": len(crowd.rows),
                "levels": [[bits, blocks, list(chosen)] for bits, blocks, chosen in crowd.levels],
            }
        )
    return {**_write_pairs(work, name, found.left, found.right), "crowds": crowds}


def _read_chunk(work: WorkDir, name: str, words: int, span: tuple[int, int]) -> pair_stage.Crowd:
    width = 8 * (1 + words)
    data = np.frombuffer(work.read_range(f"crowds/{name}.bin", width * span[0], width * span[1]), dtype=np.uint64)
    data = data.reshape(-1, 1 + words)
    return pair_stage.Crowd(np.ascontiguousarray(data[:, 1:]), data[:, 0].astype(np.int64), ())


def _chunk_pairs(
    work: WorkDir,
    name: str,
    crowd: str,
    words: int,
    levels: list,
    k: int,
    first: tuple[int, int],
    second: tuple[int, int],
) -> dict:
    """The pairs of a crowd between two of its chunks (within one when they are the same)."""
    levels = tuple((bits, blocks, tuple(chosen)) for bits, blocks, chosen in levels)
    one = _read_chunk(work, crowd, words, first)
    other = None if first == second else _read_chunk(work, crowd, words, second)
    return _write_pairs(work, name, *pair_stage.chunk_pairs(levels, k, one, other))


def _broadcast_pairs(
    work: WorkDir,
    name: str,
    values: np.ndarray,
    bits: int,
    k: int,
    blocks: int,
    table: int,
    part: int,
    parts: int,
    crowd: int,
) -> dict:
    return _write_found(work, name, pair_stage.broadcast_task(values, bits, k, blocks, table, part, parts, crowd))


def _shuffle_tasks(
    engine: Engine,
    work: WorkDir,
    values: np.ndarray,
    bits: int,
    k: int,
    blocks: int,
    ranges: int,
    plan: Plan,
    base: str,
) -> list[Task]:
    """The map tasks run here (one per chunk of the column, which they read from the work
    dir); the reduce tasks of each (table, range) are returned to run."""
    n = len(values)
    chunks = max(2, math.ceil(values.nbytes / plan.chunk_bytes))
    bounds = pair_stage.range_bounds(values[:: max(1, n // 100_000)], bits, k, blocks, ranges)
    mapped = f"{base}-r{ranges}-{_digest(bounds)}"
    starts = np.linspace(0, n, chunks + 1).astype(np.int64)
    for c in range(chunks):  # written on every run: a damaged copy is never reused
        work.write_arrays(f"column/{mapped}-chunk{c:04d}.npz", values=values[starts[c] : starts[c + 1]])
    maps = [
        Task(
            f"{mapped}-map{c:04d}",
            _map_chunk,
            (work, f"{mapped}-chunk{c:04d}", f"{mapped}-map{c:04d}", int(starts[c]), bits, k, blocks, bounds),
        )
        for c in range(chunks)
    ]
    engine.run(work, "pairs-map", maps)
    table_count = bounds.shape[0]
    return [
        Task(
            f"{mapped}-t{t:03d}-r{r:03d}",
            _reduce_range,
            (work, [m.name for m in maps], f"{mapped}-t{t:03d}-r{r:03d}", bits, k, blocks, t, r, plan.crowd),
        )
        for t in range(table_count)
        for r in range(ranges)
    ]


def _map_chunk(
    work: WorkDir, chunk: str, name: str, start: int, bits: int, k: int, blocks: int, bounds: np.ndarray
) -> dict:
    values = work.read_arrays(f"column/{chunk}.npz")["values"]
    rows = np.arange(start, start + len(values), dtype=np.int64)
    files = pair_stage.map_chunk(values, rows, bits, k, blocks, bounds)
    for t, data in enumerate(files):
        work.write_bytes(f"shuffle/{name}-t{t:03d}.npz", data)
    return {"count": len(values), "bytes": sum(map(len, files))}


def _reduce_range(
    work: WorkDir, maps: list[str], name: str, bits: int, k: int, blocks: int, table: int, which: int, crowd: int
) -> dict:
    slices = [pair_stage.read_slice(work.read_bytes(f"shuffle/{m}-t{table:03d}.npz"), which) for m in maps]
    return _write_found(work, name, pair_stage.reduce_slices(slices, bits, k, blocks, table, crowd))


def cluster_rows(
    engine: Engine,
    work: WorkDir,
    rows: Rows,
    decision: ClusterOptions,
    plan: Plan,
    folding: int,
    target: WorkDir,
    warn: Callable[[str], None],
) -> Outcome:
    """Pairs, groups, linkage and the output parts, from the rows the first stage wrote."""
    kept_rows = np.flatnonzero(rows.kept)
    exact = rows.texts is not None and bool(rows.texts.any())
    texts = rows.texts if exact else None
    dropped = 0 if rows.texts is None else int(((rows.nbytes >= 0) & rows.kept & ~rows.texts).sum())
    if dropped:
        warn(
            f"simdedup: note: {dropped:,} documents beyond the memory budget of exact verification are "
            f"verified with their sketches"
        )
    for said in (old_rule_note(decision), decision.k_note(64 * rows.fps.shape[1])):
        if said:
            warn(said)
    start = time.perf_counter()
    fps, features = rows.fps[kept_rows], rows.features[kept_rows]
    pairable = decision.may_pair(features, None if texts is None else texts[kept_rows])
    values = group_stage.distinct_values(fps, pairable)
    engine.note(
        f"simdedup: distinct (driver): {len(kept_rows):,} rows, {len(values.values):,} distinct fingerprints, "
        f"{time.perf_counter() - start:.1f} s"
    )
    left, right = near_pairs(engine, work, values.values[values.searched], decision.k, plan)
    start = time.perf_counter()
    left, right = values.searched[left], values.searched[right]
    sketches = None if rows.sketches is None else rows.sketches[kept_rows]
    if decision.bands and sketches is not None:
        band_left, band_right = group_stage.band_value_pairs(fps, sketches, pairable, values, decision)
        count = len(values.values)
        code = np.unique(np.concatenate((left * count + right, band_left * count + band_right)))
        left, right = code // count, code % count
    verified = group_stage.verified_pairs(left, right, values, sketches, pairable, decision, exact)
    left, right = left[verified], right[verified]
    if len(left) > plan.driver_pairs:  # large-star/small-star in tasks, not timed as the driver's
        driver_seconds = time.perf_counter() - start
        parts = component_stage.plan_parts(len(left), engine.workers)
        label = component_stage.components(engine, work, len(values.values), left, right, parts, _digest(left, right))
        start = time.perf_counter() - driver_seconds
    else:
        label = group_stage.components(len(values.values), left, right)
    group = label[values.of_row]  # of each kept row
    sizes = np.bincount(group, minlength=len(values.values))
    grouped = sizes[group] >= 2
    tasks: list[Task] = []
    order = np.argsort(group[grouped], kind="stable")
    members = kept_rows[grouped][order]
    member_groups = group[grouped][order]
    group_sizes = np.unique(member_groups, return_counts=True)[1]
    engine.note(
        f"simdedup: groups (driver): {len(left):,} of {len(verified):,} pairs kept, {len(group_sizes):,} "
        f"groups of {len(members):,} rows, the largest {group_sizes.max(initial=0):,}, "
        f"{time.perf_counter() - start:.1f} s"
    )
    ends = np.cumsum(group_sizes)
    for batch in group_stage.batches(group_sizes, plan.rows_per_task):
        first, last = (ends[batch[0]] - group_sizes[batch[0]]), ends[batch[-1]]
        batch_rows = np.sort(members[first:last])
        name = f"groups-{_digest(batch_rows, repr(decision))}"
        tasks.append(
            Task(
                name,
                group_stage.linkage_task,
                (
                    work,
                    name,
                    rows.part_starts,
                    batch_rows,
                    None if texts is None else texts[batch_rows],
                    decision,
                    folding,
                ),
            )
        )
    if decision.singletons:
        alone = kept_rows[~grouped]
        part_of = np.searchsorted(rows.part_starts, alone, side="right") - 1
        for part in np.unique(part_of).tolist():
            local = alone[part_of == part] - rows.part_starts[part]
            name = f"alone-{part:05d}-{_digest(local, repr(decision))}"
            tasks.append(Task(name, group_stage.singletons_task, (work, name, part, local, decision, exact)))
    results = engine.run(work, "records", tasks)
    outcome = Outcome(documents=len(kept_rows), clusters=sum(r["count"] for r in results), target=target)
    parts = plan.output_parts or max(1, len(tasks))
    bounds = group_stage.output_bounds([key for r in results for key in r["sample"]], parts)
    names = [t.name for t in tasks]
    out_tasks = []
    for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
        part_name = f"part-{i:05d}.jsonl"
        out_tasks.append(
            Task(
                f"{_digest(names, low, high, work.relative(target.url))}-{part_name}",
                group_stage.output_task,
                (work, names, low, high, target, part_name),
            )
        )
        outcome.parts.append(part_name)
    engine.run(work, "output", out_tasks)
    return outcome


def _fingerprint_output(work: WorkDir, index: int, target: WorkDir, part_name: str, render: str) -> dict:
    """One part of ``fingerprint``'s output: the part's records as JSON lines or in the binary form."""
    data = work.read_bytes(f"{fp_stage.part_name(index)}.sdfp")
    if render == "jsonl":
        import io

        from ..fingerprints import json_lines, read_fingerprint_files

        columns = read_fingerprint_files([(part_name, io.BytesIO(data))]) if data else None
        data = b"" if columns is None else b"".join(json_lines(records) for records in columns.records())
    target.write_bytes(part_name, data)
    return {"count": 0, "bytes": len(data)}


def fingerprint_output(engine: Engine, work: WorkDir, results: list[dict], target: WorkDir, render: str) -> list[str]:
    suffix = "jsonl" if render == "jsonl" else "sdfp"
    names = [f"part-{i:05d}.{suffix}" for i in range(len(results))]
    tasks = [
        Task(
            f"{_digest(work.relative(target.url), render)}-{name}", _fingerprint_output, (work, i, target, name, render)
        )
        for i, name in enumerate(names)
    ]
    engine.run(work, "output", tasks)
    return names


def settings_of(**values: Any) -> dict[str, Any]:
    """Settings as the manifest keeps them (JSON values)."""
    out = {}
    for key, value in values.items():
        if hasattr(value, "__dataclass_fields__"):
            value = asdict(value)
        out[key] = value
    return out


def stream(target: WorkDir, parts: Iterable[str], write: Callable[[bytes], None]) -> None:
    for name in parts:
        write(target.read_bytes(name))


# --- the commands' stage sequences ------------------------------------------------------------


def dedup_stages(
    engine: Engine,
    work: WorkDir,
    shards: list[list[Any]],
    recipe: fp_stage.Recipe,
    reading: Inputs,
    decision: ClusterOptions,
    target: WorkDir,
    plan: Plan,
    warn: Callable[[str], None],
    verbose: bool = False,
) -> Outcome:
    """Fingerprint and cluster: the output of ``dedup`` as part files in ``target``."""
    results, skipped = fingerprint_parts(engine, work, shards, recipe, reading, warn, verbose)
    start = time.perf_counter()
    rows = load_rows(work, results)
    engine.note(
        f"simdedup: rows (driver): {len(rows.kept):,} rows read from {len(results)} parts, "
        f"{time.perf_counter() - start:.1f} s"
    )
    repeated = np.flatnonzero(~rows.kept)
    repeated_ids = rows.ids_of(repeated) if len(repeated) else []
    skipped.extend(repeated_ids)
    warn_repeated(warn, repeated_ids)
    folding = min((r["folding"] for r in results), default=DEFAULT_FOLDING)  # one method made every part
    outcome = cluster_rows(engine, work, rows, decision, plan, folding, target, warn)
    outcome.skipped = skipped
    return outcome


def cluster_stages(
    engine: Engine,
    work: WorkDir,
    files: list[str],
    resolve: Callable[[int, dict], ClusterOptions],
    target: WorkDir,
    plan: Plan,
    warn: Callable[[str], None],
) -> Outcome:
    """Cluster fingerprint files: the output of ``cluster`` as part files in ``target``;
    ``resolve(bits, settings)`` gives the decision for the fingerprints found."""
    results = import_parts(engine, work, files, plan.import_records)
    settings = fp_stage.check_settings(results, [r["path"] for r in results]) or {}
    decision = resolve(next((r["bits"] for r in results if r["count"]), 64), settings)
    start = time.perf_counter()
    rows = load_rows(work, results)
    engine.note(
        f"simdedup: rows (driver): {len(rows.kept):,} rows read from {len(results)} parts, "
        f"{time.perf_counter() - start:.1f} s"
    )
    repeated = np.flatnonzero(~rows.kept)
    if len(repeated):
        part_of = np.searchsorted(rows.part_starts, repeated, side="right") - 1
        wheres = (
            f"{results[part]['path']}:{results[part]['lines'][row - rows.part_starts[part]]}: {doc_id}"
            for row, part, doc_id in zip(repeated.tolist(), part_of.tolist(), rows.ids_of(repeated))
        )
        warn_repeated(warn, wheres)
    return cluster_rows(engine, work, rows, decision, plan, True, target, warn)


def fingerprint_stages(
    engine: Engine,
    work: WorkDir,
    shards: list[list[Any]],
    recipe: fp_stage.Recipe,
    reading: Inputs,
    record_format: str,
    target: WorkDir,
    warn: Callable[[str], None],
    verbose: bool = False,
) -> Outcome:
    """The output of ``fingerprint`` as part files in ``target``."""
    results, skipped = fingerprint_parts(engine, work, shards, recipe, reading, warn, verbose)
    parts = fingerprint_output(engine, work, results, target, record_format)
    return Outcome(skipped, parts, sum(r["count"] for r in results), target=target)
