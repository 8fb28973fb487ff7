"""``--engine dask``: the same output as one process, byte for byte, on a real LocalCluster of two
worker processes (one for the module); the pair search against ``near_pairs`` and brute force."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from distributed_corpus import write_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.engines import Plan
from simdedup.engines import dedup as distributed_dedup
from simdedup.engines import pairs as pair_stage
from simdedup.engines import run as stages
from simdedup.engines.components import components as task_components
from simdedup.engines.engine import DaskEngine, Engine
from simdedup.engines.groups import budget_mask, components
from simdedup.engines.workdir import WorkDir
from simdedup.fingerprints import REPEATED_ID
from simdedup.fingerprints.record import sketch_kind
from simdedup.linkage import UnionFind
from simdedup.options import ClusterOptions
from simdedup.pairs import near_pairs
from simdedup.read import Inputs
from simdedup.similarity import BUDGET_BYTES

distributed = pytest.importorskip("distributed")  # in the test extra; absent only in a bare install

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def client():
    """One LocalCluster of two worker processes for the module (starting one costs seconds)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as connected:
            yield connected


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """10^4 generated documents in three JSON-lines files (one test below runs 10^5, once)."""
    folder = tmp_path_factory.mktemp("corpus")
    write_corpus(folder, 10_000, seed=3, files=3)
    return folder


@pytest.fixture(scope="module")
def corpus_clusters(corpus) -> bytes:
    """`dedup -k 10` of the corpus in one process."""
    status, single, _ = simdedup("dedup", "-k", 10, "--id-field", "id", corpus)
    assert status == 0 and single.count(b"\n") > 1000
    return single


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("small")
    write_corpus(folder, 1_500, seed=5, files=2)
    return folder


def simdedup(*args: object) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


def on_dask(client, work: Path, *args: object) -> tuple[int, bytes, str]:
    return simdedup(
        *args[:1], "--engine", "dask", "--scheduler", client.scheduler.address, "--work-dir", work, *args[1:]
    )


# --- the pair search --------------------------------------------------------------------------


def brute_force(values: np.ndarray, k: int) -> set[tuple[int, int]]:
    ints = [sum(int(w) << (64 * i) for i, w in enumerate(row)) for row in values.tolist()]
    return {(a, b) for a, b in combinations(range(len(ints)), 2) if (ints[a] ^ ints[b]).bit_count() <= k}


@st.composite
def fingerprint_sets(draw):
    """Distinct fingerprints: random ones, near copies of them, and a crowd sharing all but a
    few low bits (one key of most tables)."""
    words = draw(st.sampled_from([1, 2]))
    k = draw(st.integers(0, 10))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**64, size=(draw(st.integers(1, 30)), words), dtype=np.uint64)
    copies = base[rng.integers(0, len(base), draw(st.integers(0, 30)))].copy()
    for row in copies:
        for bit in rng.integers(0, 64 * words, rng.integers(1, k + 3)):
            row[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    crowd = np.repeat(base[:1], draw(st.integers(0, 40)), axis=0)
    crowd[:, 0] ^= rng.integers(0, 1 << 6, len(crowd)).astype(np.uint64)
    values = np.unique(np.concatenate([base, copies, crowd]), axis=0)
    return values, k


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=fingerprint_sets(), crowd=st.sampled_from([2, 4096]), chunk=st.sampled_from([5, 4096]), broadcast=st.booleans()
)
def test_pairs_equal_near_pairs_and_brute_force(tmp_path_factory, case, crowd, chunk, broadcast):
    """With ``crowd=2`` runs are searched again and then left as crowds to chunk-pair tasks
    (of chunks of 5 rows: many per crowd)."""
    values, k = case
    work = WorkDir(str(tmp_path_factory.mktemp("pairs")))
    plan = Plan(broadcast_bytes=1 << 30 if broadcast else 0, crowd=crowd, crowd_chunk=chunk)
    left, right = stages.near_pairs(Engine(), work, values, k, plan)
    found = list(zip(left.tolist(), right.tolist()))
    assert len(found) == len(set(found))  # each pair once: no pass removes repeats
    assert set(found) == brute_force(values, k)
    l0, r0, _ = near_pairs(values, k)
    assert sorted(found) == list(zip(l0.tolist(), r0.tolist()))


@pytest.mark.parametrize("fastpath", ["1", "0"])
def test_chunk_pairs_are_brute_force(monkeypatch, fastpath):
    """Within one chunk and between two, compiled (the pair kernels) and with numpy."""
    monkeypatch.setenv("SIMDEDUP_FASTPATH", fastpath)
    rng = np.random.default_rng(11)
    for case in range(40):
        words, k = 1 + case % 2, int(rng.integers(0, 12))
        base = rng.integers(0, 2**64, size=(1, words), dtype=np.uint64)
        values = np.unique(
            np.repeat(base, 120, axis=0) ^ rng.integers(0, 1 << 10, (120, words), dtype=np.uint64), axis=0
        )
        rows = rng.permutation(1000)[: len(values)]
        size = int(rng.integers(1, len(values)))
        first = pair_stage.Crowd(values[:size], rows[:size], ())
        second = pair_stage.Crowd(values[size:], rows[size:], ())
        within = pair_stage.chunk_pairs((), k, first, None)
        across = pair_stage.chunk_pairs((), k, first, second)
        near = {(rows[a], rows[b]) for a, b in brute_force(values, k)}
        expected_within = {(min(a, b), max(a, b)) for a, b in near if {a, b} <= set(rows[:size].tolist())}
        expected_across = (
            {(min(a, b), max(a, b)) for a, b in near}
            - expected_within
            - {(min(a, b), max(a, b)) for a, b in near if {a, b} <= set(rows[size:].tolist())}
        )
        for found, expected in ((within, expected_within), (across, expected_across)):
            pairs = list(zip(found[0].tolist(), found[1].tolist()))
            assert len(pairs) == len(set(pairs)) and set(pairs) == expected


@settings(max_examples=40, deadline=None)
@given(case=fingerprint_sets(), parts=st.integers(2, 5))
def test_broadcast_parts_split_each_table(case, parts):
    """A table's parts (ranges of its first block's values) give what the whole table gives,
    and so does the table without the compiled pass over its runs."""
    values, k = case
    bits = 64 * values.shape[1]
    blocks = pair_stage.plan_blocks(len(values), max(k, 1), bits)
    for table in range(len(pair_stage.tables(bits, max(k, 1), blocks))):
        whole = pair_stage.broadcast_task(values, bits, max(k, 1), blocks, table, 0, 1, crowd=2)
        os.environ["SIMDEDUP_FASTPATH"] = "0"
        try:
            numpy_only = pair_stage.broadcast_task(values, bits, max(k, 1), blocks, table, 0, 1, crowd=2)
        finally:
            del os.environ["SIMDEDUP_FASTPATH"]
        assert whole.left.tolist() == numpy_only.left.tolist() and whole.right.tolist() == numpy_only.right.tolist()
        assert [(c.rows.tolist(), c.levels) for c in whole.crowds] == [
            (c.rows.tolist(), c.levels) for c in numpy_only.crowds
        ]
        split = [
            pair_stage.broadcast_task(values, bits, max(k, 1), blocks, table, p, parts, crowd=2) for p in range(parts)
        ]
        assert sorted(
            zip(np.concatenate([f.left for f in split]).tolist(), np.concatenate([f.right for f in split]).tolist())
        ) == list(zip(whole.left.tolist(), whole.right.tolist()))
        assert sorted((c.rows.tolist(), c.levels) for f in split for c in f.crowds) == sorted(
            (c.rows.tolist(), c.levels) for c in whole.crowds
        )


@pytest.mark.parametrize("words,k,crowded", [(1, 6, 1500), (2, 12, 400)])
@pytest.mark.parametrize("broadcast", [True, False])
def test_pairs_on_the_cluster_with_a_crowded_key(client, tmp_path, words, k, crowded, broadcast):
    """Distinct fingerprints that differ only in their 16 low bits share the key of most tables:
    their runs (over 256 rows) are searched again on the remaining bits, where they stay
    crowded, and are compared in tasks of two chunks of 256 rows."""
    rng = np.random.default_rng(7)
    spread = rng.integers(0, 2**64, size=(3000, words), dtype=np.uint64)
    near = spread[:1000].copy()
    near[:, 0] ^= np.uint64(1) << rng.integers(0, 64, 1000).astype(np.uint64)
    crowd = np.repeat(spread[:1], crowded, axis=0)
    crowd[:, 0] ^= rng.choice(1 << 16, crowded, replace=False).astype(np.uint64)
    values = np.unique(np.concatenate([spread, near, crowd]), axis=0)
    plan = Plan(broadcast_bytes=1 << 30 if broadcast else 0, crowd=256, crowd_chunk=256)
    left, right = stages.near_pairs(DaskEngine(client), WorkDir(str(tmp_path)), values, k, plan)
    codes = left * len(values) + right
    assert len(np.unique(codes)) == len(codes)
    l0, r0, _ = near_pairs(values, k)
    assert np.array_equal(np.sort(codes), l0 * len(values) + r0)
    assert len(codes) > crowded**2 // 10  # the crowd gave its quadratic number of pairs
    chunk_tasks = len(list((tmp_path / "done" / "pairs-crowded").iterdir()))
    chunks = -(-crowded // 256)
    assert chunk_tasks >= chunks * (chunks + 1) // 2  # of one crowd at least


# --- the driver's pieces ------------------------------------------------------------------------


def union_find_labels(n: int, left: np.ndarray, right: np.ndarray) -> list[int]:
    """The smallest node of each node's component, by the one-process union-find."""
    uf = UnionFind(n)
    for a, b in zip(left.tolist(), right.tolist()):
        uf.union(a, b)
    roots = uf.roots()
    smallest: dict[int, int] = {}
    for node in range(n):
        smallest.setdefault(roots[node], node)
    return [smallest[roots[node]] for node in range(n)]


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 80), edges=st.lists(st.tuples(st.integers(0, 79), st.integers(0, 79)), max_size=120))
def test_components_are_union_find(n, edges):
    left = np.array([a % n for a, _ in edges], dtype=np.int64)
    right = np.array([b % n for _, b in edges], dtype=np.int64)
    assert components(n, left, right).tolist() == union_find_labels(n, left, right)


@st.composite
def graphs(draw):
    """Nodes (some isolated) joined by random edges, long paths in a random order of their
    nodes (the most rounds), and stars around a random node."""
    n = draw(st.integers(1, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    left, right = [], []
    for kind in draw(st.lists(st.sampled_from(["random", "path", "star"]), max_size=4)):
        nodes = rng.permutation(n)[: rng.integers(1, n + 1)]
        if kind == "random":
            count = int(rng.integers(0, 2 * len(nodes)))
            left.append(rng.choice(nodes, count))
            right.append(rng.choice(nodes, count))
        elif kind == "path":
            left.append(nodes[:-1])
            right.append(nodes[1:])
        else:
            left.append(np.full(len(nodes) - 1, nodes[0]))
            right.append(nodes[1:])
    empty = [np.empty(0, dtype=np.int64)]
    return n, np.concatenate(left or empty).astype(np.int64), np.concatenate(right or empty).astype(np.int64)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graphs(), parts=st.integers(1, 5))
def test_components_in_tasks_are_union_find(tmp_path_factory, graph, parts):
    """Large-star/small-star over edge files gives each node its component's smallest node."""
    n, left, right = graph
    work = WorkDir(str(tmp_path_factory.mktemp("components")))
    label = task_components(Engine(), work, n, left, right, parts, "edges")
    assert label.tolist() == union_find_labels(n, left, right)


class StoppingEngine(Engine):
    """The in-process engine, stopped (as by a kill) before its ``runs + 1``-th stage call; it
    counts the tasks it ran."""

    def __init__(self, runs: int | None = None):
        super().__init__()
        self.runs, self.ran = runs, 0

    def run(self, work, stage, tasks):
        if self.runs is not None:
            if self.runs == 0:
                raise KeyboardInterrupt
            self.runs -= 1
        return super().run(work, stage, tasks)

    def _results(self, work, stage, tasks):
        self.ran += len(tasks)
        return super()._results(work, stage, tasks)


def test_components_in_tasks_resume(tmp_path):
    """Stopped after three stages of a long path, a rerun skips their tasks and ends the same."""
    n = 3000
    order = np.random.default_rng(1).permutation(n)
    left, right = order[:-1], order[1:]
    work = WorkDir(str(tmp_path / "work"))
    with pytest.raises(KeyboardInterrupt):
        task_components(StoppingEngine(3), work, n, left, right, 3, "path")
    resumed = StoppingEngine()
    label = task_components(resumed, work, n, left, right, 3, "path")
    whole = StoppingEngine()
    assert (
        label.tolist()
        == task_components(whole, WorkDir(str(tmp_path / "again")), n, left, right, 3, "path").tolist()
        == [0] * n
    )
    assert whole.ran > 12 and resumed.ran == whole.ran - 9


def test_budget_mask_as_the_one_process_run():
    big = BUDGET_BYTES // 3 + 1
    nbytes = np.array([big, -1, big, big, 10, big, 5], dtype=np.int64)
    # the fourth text would pass the budget: it and every one after it are dropped, small or not
    assert budget_mask(nbytes).tolist() == [True, False, True, False, False, False, False]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1, 40), max_size=60), st.integers(0, 200))
def test_budget_mask_keeps_what_collect_records_keeps(sizes, limit):
    """The stages' mask and the one-process run's records keep the same texts, at any budget."""
    from simdedup.fingerprints import FingerprintRecord, collect_records
    from simdedup.fingerprints.sets import TextBudget

    class Text:  # as a KeptText counts against the budget
        def __init__(self, nbytes: int):
            self.nbytes = nbytes

        def digest(self) -> int:
            return 0

    records = [FingerprintRecord(f"d{i}", i, 64, 20, exact=None if n < 0 else Text(n)) for i, n in enumerate(sizes)]
    original = TextBudget.limit
    TextBudget.limit = limit
    try:
        mask = budget_mask(np.array(sizes, dtype=np.int64))
        collected = collect_records(records)
    finally:
        TextBudget.limit = original
    kept = [e is not None for e in collected.exact] if collected.exact is not None else [False] * len(sizes)
    assert mask.tolist() == kept
    assert collected.exact_dropped == sum(n >= 0 for n in sizes) - int(mask.sum())


@pytest.mark.parametrize("at_once", [1, 7, 1 << 20])
def test_value_pairs_pass_when_some_combination_of_their_sketches_does(monkeypatch, at_once):
    """Rows of one fingerprint may carry different sketches: a pair of values passes when any
    pair of their rows' sketches passes (tested a bounded number of combinations at a time)."""
    from simdedup.engines import groups
    from simdedup.sketch import pair_similarity

    monkeypatch.setattr(groups, "COMBINATIONS_AT_ONCE", at_once)
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, size=(6, 32), dtype=np.uint8)
    row_value = rng.integers(0, 20, size=120)
    sketches = base[rng.integers(0, 6, size=120)].copy()
    sketches[rng.random((120, 32)) < 0.08] = 0  # near copies of the six
    values = groups.distinct_values(row_value.astype(np.uint64).reshape(-1, 1), np.ones(120, dtype=bool))
    left, right = (np.array(side) for side in zip(*combinations(range(len(values.values)), 2)))
    decision = ClusterOptions(8, min_similarity=0.8, similarity="bag").resolve(64, "features")
    got = groups.verified_pairs(left, right, values, sketches, np.ones(120, dtype=bool), decision, False)
    expected = [
        any(
            pair_similarity(sketches, np.array([r]), np.array([q]))[0] >= 0.8
            for r in np.flatnonzero(values.of_row == a)
            for q in np.flatnonzero(values.of_row == b)
        )
        for a, b in zip(left.tolist(), right.tolist())
    ]
    assert got.tolist() == expected and 0 < sum(expected) < len(expected)


# --- byte for byte ------------------------------------------------------------------------------


@pytest.mark.parametrize("linkage", ["complete", "star", "single"])
@pytest.mark.parametrize("bits,k", [("64", 10), ("128", 20)])
def test_dedup_examples_byte_identical(client, tmp_path, linkage, bits, k):
    args = ["-k", k, "--bits", bits, "--linkage", linkage, EXAMPLES]
    status, single, _ = simdedup("dedup", *args)
    assert status == 0 and single.count(b"\n") >= 3
    status, parted, stderr = on_dask(client, tmp_path / "work", "dedup", *args)
    assert status == 0, stderr
    assert parted == single
    assert "simdedup: pairs: " in stderr and " tasks" in stderr


def test_dedup_generated_corpus_byte_identical_in_part_files(client, corpus, corpus_clusters, tmp_path):
    args = ["-k", 10, "--id-field", "id", corpus]
    status, _, stderr = on_dask(client, tmp_path / "work", "dedup", "-o", f"{tmp_path / 'out'}/", *args)
    assert status == 0, stderr
    parts = sorted((tmp_path / "out").iterdir())
    assert [p.name for p in parts] == ["part-00000.jsonl"]
    assert b"".join(p.read_bytes() for p in parts) == corpus_clusters


def test_dedup_o_file_is_the_local_engines_file(client, corpus, corpus_clusters, tmp_path):
    """-o FILE is a regular file holding the one-process output, nothing beside it (issue 43:
    it became a directory of part files)."""
    out = tmp_path / "out" / "clusters.jsonl"
    out.parent.mkdir()
    status, printed, stderr = on_dask(
        client, tmp_path / "work", "dedup", "-k", 10, "--id-field", "id", "-o", out, corpus
    )
    assert status == 0, stderr
    assert printed == b"" and out.is_file() and out.read_bytes() == corpus_clusters
    assert [p.name for p in out.parent.iterdir()] == ["clusters.jsonl"]


@pytest.mark.parametrize("linkage", ["complete", "star", "single"])
@pytest.mark.parametrize("bits,k", [("64", 10), ("128", 20)])
def test_dedup_small_generated_corpus_all_linkages(client, small_corpus, tmp_path, linkage, bits, k):
    """The template family of the corpus is a crowded key; --format members and --singletons too."""
    args = [
        "-k",
        k,
        "--bits",
        bits,
        "--linkage",
        linkage,
        "--id-field",
        "id",
        "--verify",
        "sketch",
        "--format",
        "members",
        "--singletons",
        small_corpus,
    ]
    status, single, _ = simdedup("dedup", *args)
    assert status == 0 and single.count(b"\n") == 1500
    status, parted, stderr = on_dask(client, tmp_path / "work", "dedup", *args)
    assert status == 0, stderr
    assert parted == single


def test_dedup_with_components_in_tasks_byte_identical(client, corpus, corpus_clusters, tmp_path):
    """The pair count over the threshold: large-star/small-star rounds on the cluster."""
    work = tmp_path / "work"
    outcome = distributed_dedup(
        [str(corpus)], client=client, work_dir=str(work), k=10, inputs=Inputs(id_field="id"), plan=Plan(driver_pairs=0)
    )
    assert outcome.read() == corpus_clusters
    assert len(list((work / "done" / "components").iterdir())) >= 4 * 3  # four tasks a stage, rounds


def test_parquet_row_groups_are_shards(client, small_corpus, tmp_path):
    """A Parquet file of six row groups read by three tasks of two; ids are row numbers in the
    whole file (no id column), as one process numbers them."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    texts = [json.loads(line)["text"] for name in sorted(small_corpus.iterdir()) for line in name.open()]
    table = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"text": texts}), table, row_group_size=250)
    assert pq.ParquetFile(table).num_row_groups == 6
    status, single, _ = simdedup("dedup", "-k", 10, "--format", "members", table)
    assert status == 0 and single.count(b"\n") > 300
    work = tmp_path / "work"
    outcome = distributed_dedup(
        [str(table)], client=client, work_dir=str(work), k=10, output_format="members", plan=Plan(shard_documents=500)
    )
    assert len(list((work / "done" / "fingerprint").iterdir())) == 3
    assert outcome.read() == single


def test_cluster_of_fingerprint_files_in_many_parts(client, corpus, tmp_path):
    files = []
    for name in sorted(corpus.iterdir()):
        out = tmp_path / f"{name.stem}.sdfp"
        assert simdedup("fingerprint", "--format", "binary", "--id-field", "id", "-o", out, name)[0] == 0
        files.append(out)
    args = ["-k", 8, "--singletons", *files]
    status, single, _ = simdedup("cluster", *args)
    assert status == 0
    work = WorkDir(str(tmp_path / "work"))
    outcome = stages.cluster_stages(
        DaskEngine(client),
        work,
        [str(f) for f in files],
        lambda bits, settings: _decision(8).resolve(bits, sketch_kind(settings)),
        WorkDir(str(tmp_path / "parts")),
        Plan(rows_per_task=1500),
        lambda line: None,
    )
    assert len(outcome.parts) > 3
    assert outcome.read() == single


def test_cluster_reads_a_binary_file_in_block_ranges(client, corpus, tmp_path):
    """Binary files concatenate: one file of three blocks, read by one task per block; a
    repeated id is warned about at its position in the whole file, as in one process."""
    joined = tmp_path / "joined.sdfp"
    with open(joined, "wb") as out:
        for name in sorted(corpus.iterdir()) + [sorted(corpus.iterdir())[0]]:
            status, data, _ = simdedup("fingerprint", "--format", "binary", "--id-field", "id", name)
            out.write(data)
    status, single, single_err = simdedup("cluster", "-k", 10, joined)
    assert status == 0 and REPEATED_ID in single_err
    warnings = []
    outcome = stages.cluster_stages(
        DaskEngine(client),
        WorkDir(str(tmp_path / "work")),
        [str(joined)],
        lambda bits, settings: ClusterOptions(10).resolve(bits, sketch_kind(settings)),
        WorkDir(str(tmp_path / "parts")),
        Plan(import_records=1),
        warnings.append,
    )
    assert len(list((tmp_path / "work" / "done" / "fingerprint").iterdir())) == 4
    assert outcome.read() == single
    assert "".join(line + "\n" for line in warnings) == single_err


def _decision(k):
    return ClusterOptions(k, singletons=True)


@pytest.fixture(scope="module")
def corpus_100000(tmp_path_factory) -> Path:
    """10^5 generated documents in four files, a template family of about 1,000 among them."""
    folder = tmp_path_factory.mktemp("corpus-100000")
    write_corpus(folder, 100_000, seed=9, files=4, template_share=0.01)
    return folder


# One case in make test; the other linkages and widths (about 3 minutes) run in make large.
@pytest.mark.parametrize(
    "linkage,bits,k",
    [
        ("complete", "64", 8),
        *(
            pytest.param(linkage, bits, k, marks=pytest.mark.slow)
            for linkage in ("complete", "star", "single")
            for bits, k in (("64", 8), ("128", 16))
            if (linkage, bits) != ("complete", "64")
        ),
    ],
)
def test_dedup_of_100000_documents_is_the_one_process_output(client, corpus_100000, tmp_path, linkage, bits, k):
    """At the size of the issue's target, every linkage at both widths. With a crowd of 600 rows
    the template family is a crowded key: searched again on its remaining bits, then left to
    chunk-pair tasks. Verified with the sketches (exact verification is compared at 10^4)."""
    args = ["-k", k, "--bits", bits, "--linkage", linkage, "--verify", "sketch", "--id-field", "id"]
    status, single, _ = simdedup("dedup", *args, corpus_100000)
    assert status == 0 and single.count(b"\n") > 10_000
    work = tmp_path / "work"
    outcome = distributed_dedup(
        [str(corpus_100000)],
        client=client,
        work_dir=str(work),
        k=k,
        bits=bits,
        linkage=linkage,
        verify="sketch",
        inputs=Inputs(id_field="id"),
        plan=Plan(crowd=600, crowd_chunk=1200),
    )
    assert outcome.read() == single
    assert len(list((work / "done" / "pairs-crowded").iterdir())) >= 3  # chunk pairs of a crowd


def test_fingerprint_parts_are_the_one_process_output(client, corpus, tmp_path):
    status, single, _ = simdedup("fingerprint", "--id-field", "id", corpus)
    assert status == 0
    status, parted, stderr = on_dask(client, tmp_path / "work", "fingerprint", "--id-field", "id", corpus)
    assert status == 0, stderr
    assert parted == single


# --- resume, failures, refusals -------------------------------------------------------------------


class HoldTasks(distributed.WorkerPlugin):
    """Holds a worker before it runs a task until the file `gate` exists, except tasks whose key
    starts with one of `free` and the first `first` tasks each worker runs. A test can then stop
    a driver or kill a worker at a known point of the run without racing a fast machine."""

    name = "hold-tasks"

    def __init__(self, gate: str, free: tuple[str, ...] = (), first: int = 0):
        self.gate = gate
        self.free = free
        self.first = first

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or str(key).startswith(self.free):
            return
        if self.first:
            self.first -= 1
            return
        deadline = time.monotonic() + 60
        while not os.path.exists(self.gate) and time.monotonic() < deadline:
            time.sleep(0.02)  # on the worker's event loop: the whole worker waits, queue and all


@pytest.fixture
def hold_tasks(client, tmp_path):
    """Registers a HoldTasks of the given settings; gives the gate to touch. The gate is touched
    at the latest when the test ends, before the plugin is removed."""
    gate = tmp_path / "gate"

    def hold(**settings) -> Path:
        client.register_plugin(HoldTasks(str(gate), **settings))
        return gate

    try:
        yield hold
    finally:
        gate.touch()
        client.unregister_worker_plugin(HoldTasks.name)


def test_a_run_interrupted_and_resumed_gives_the_same_output(client, corpus, corpus_clusters, tmp_path, hold_tasks):
    work = tmp_path / "work"
    gate = hold_tasks(free=("fingerprint-",))  # the run stops between fingerprints and pairs
    command = [
        sys.executable,
        "-m",
        "simdedup",
        "dedup",
        "--engine",
        "dask",
        "--scheduler",
        client.scheduler.address,
        "--work-dir",
        str(work),
        "-k",
        "10",
        "--id-field",
        "id",
        "-o",
        str(tmp_path / "out" / "clusters.jsonl"),
        str(corpus),
    ]
    (tmp_path / "out").mkdir()
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (work / "done" / "fingerprint").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGTERM)
    first.wait(30)
    gate.touch()
    assert first.returncode == -signal.SIGTERM
    assert not (work / "done" / "output").exists()  # it stopped before the end
    assert list((tmp_path / "out").iterdir()) == []  # no part of the output, no temporary file
    second = subprocess.run(command, capture_output=True)
    assert second.returncode == 0, second.stderr
    assert b"simdedup: fingerprint: 1/1 tasks (1 done before)" in second.stderr
    assert (tmp_path / "out" / "clusters.jsonl").read_bytes() == corpus_clusters


def test_a_worker_killed_mid_run_changes_nothing(client, corpus, corpus_clusters, tmp_path, hold_tasks):
    work = tmp_path / "work"
    gate = hold_tasks(first=1)  # each worker fingerprints one shard, then is held in its second
    outcome = {}
    killed = sorted(client.run(os.getpid).values())[0]  # asked now: a held worker does not answer

    def run():
        outcome["done"] = distributed_dedup(
            [str(corpus)],
            client=client,
            work_dir=str(work),
            k=10,
            inputs=Inputs(id_field="id"),
            plan=Plan(shard_bytes=1 << 18),
        )

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while not (work / "done" / "fingerprint").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    fingerprinted = len(list((work / "done" / "fingerprint").iterdir()))
    os.kill(killed, signal.SIGKILL)
    gate.touch()
    thread.join(120)
    assert fingerprinted <= 2  # killed while shards were still being fingerprinted
    assert outcome["done"].read() == corpus_clusters
    client.wait_for_workers(2, timeout=30)
    assert killed not in client.run(os.getpid).values()


def test_a_work_dir_of_other_settings_is_refused(client, tmp_path):
    work = tmp_path / "work"
    assert on_dask(client, work, "dedup", "-k", 10, EXAMPLES)[0] == 0
    status, out, stderr = on_dask(client, work, "dedup", "-k", 8, EXAMPLES)
    assert status == 1 and out == b""
    assert stderr.count("\n") == 1 and "was made with other settings (decision differ)" in stderr


def test_the_engines_run_the_default_and_need_k_only_for_sketches_of_features(client, tmp_path):
    """Records with sketches of shingles are clustered by default (k = 3 and their bands) on
    every engine, as in one process; sketches of features make the default k depend on the
    number of documents, which a staged run does not fix: they need -k."""
    status, single, _ = simdedup("dedup", EXAMPLES)
    assert status == 0 and single
    assert on_dask(client, tmp_path / "work", "dedup", EXAMPLES)[:2] == (0, single)
    status, _, stderr = on_dask(client, tmp_path / "other", "dedup", "--sketch-of", "features", EXAMPLES)
    assert status == 2 and "--engine dask and stages need -k" in stderr


def test_without_dask_one_line_says_how_to_install(tmp_path):
    blocker = tmp_path / "blocker" / "distributed"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no distributed here')\n")
    env = {**os.environ, "PYTHONPATH": f"{blocker.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run(
        [sys.executable, "-m", "simdedup", "dedup", "--engine", "dask", "--local", "1", "-k", "3", str(EXAMPLES)],
        capture_output=True,
        env=env,
    )
    assert result.returncode == 1
    assert result.stderr.decode().splitlines() == [
        "Error: --engine dask needs distributed: pip install 'simdedup[dask]'"
    ]


@pytest.mark.parametrize("where", ["-o", "--work-dir"])
def test_outputs_never_go_where_the_inputs_are(tmp_path, where):
    """-o DIR/ (even with --force, which empties it of part files) and --work-dir must neither
    hold an input nor lie inside an input directory: a part file could replace an input."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(EXAMPLES / "en" / "lighthouses.txt", corpus)
    (corpus / "part-00000.jsonl").write_text('{"id": "x", "text": "an input, not a part file"}\n')
    before = {p.name: p.read_bytes() for p in corpus.iterdir()}
    for target in (corpus, corpus / "inside"):
        args = [
            "dedup",
            "--engine",
            "dask",
            "--local",
            "2",
            "-k",
            "8",
            "--silent",
            "--id-field",
            "id",
            where,
            f"{target}/" if where == "-o" else target,  # -o DIR/: the part files
            corpus,
        ] + (["--force"] if where == "-o" else [])
        status, _, error = simdedup(*args)
        assert status == 2 and "holds the input" in error
    assert {p.name: p.read_bytes() for p in corpus.iterdir()} == before
