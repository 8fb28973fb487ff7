"""Inputs and outputs named by URL, against a real S3-compatible server on 127.0.0.1 (moto's server
mode in its own process: :mod:`s3_server`), never a mock of the client.

Everything read from the bucket must give, byte for byte, what the same files give on disk, ids
aside (``s3://corpus/tree`` is the directory the tree was uploaded from): in one process, with
``-j 2``, on the stages engine and on a Dask LocalCluster."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import WALK_ORDER, Run, near_copy, words, write
from s3_server import S3Server

from simdedup.cli import cli
from simdedup.messages import printable
from simdedup.read import WalkFilter, iter_sources

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")
try:  # imported while the tests are collected, as tests/test_distributed.py does: on import it makes
    import distributed  # the exception classes defined by then picklable (tblib), which the tests of
except ImportError:  # tests/test_workers.py, collected by then, must not see happen as they run
    distributed = None

BUCKET = "corpus"
TREE = f"s3://{BUCKET}/tree"
MANY = f"s3://{BUCKET}/many"


def _tree(root: Path) -> None:
    """Files whose walk order differs from a plain sort of their names (``a/`` before ``a-1.txt``),
    near copies among them, and every table kind, compressed and not."""
    for i, name in enumerate(WALK_ORDER):
        write(root / "docs" / name.removeprefix("corpus/"), words(i))
    for i in range(24):
        write(root / "docs" / f"set{i % 3}" / f"doc{i:02d}.txt", words(100 + i))
        write(root / "docs" / f"set{i % 3}" / f"doc{i:02d}-copy.txt", near_copy(words(100 + i)))
    lines = [
        json.dumps({"id": f"row{i}", "text": words(200 + i // 2) if i % 2 else near_copy(words(200 + i // 2))})
        for i in range(120)
    ]
    write(root / "tables" / "rows.jsonl.gz", gzip.compress(("\n".join(lines) + "\n").encode()))
    write(root / "tables" / "plain.jsonl", "\n".join(lines[:40]) + "\n")
    write(root / "tables" / "rows.csv", "id,text\n" + "".join(f"c{i},{words(300 + i % 7)}\n" for i in range(20)))
    import pyarrow as pa
    import pyarrow.parquet as pq

    for shard in range(2):
        texts = [words(400 + i % 9) for i in range(60)]
        table = pa.table({"id": [f"p{shard}-{i}" for i in range(60)], "text": texts})
        (root / "tables").mkdir(parents=True, exist_ok=True)
        pq.write_table(table, root / "tables" / f"shard-{shard}.parquet", row_group_size=16)
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(root / "tables" / "crawl.warc.gz", "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for n in range(4):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/plain; charset=utf-8")], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(
                    f"http://example.test/{n}",
                    "response",
                    payload=io.BytesIO(words(500 + n % 2).encode()),
                    http_headers=headers,
                )
            )


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The server with a user, a bucket holding the tree and 2,000 small objects, and auth on."""
    server = S3Server().start()
    try:
        server.make_user()
        server.client().create_bucket(Bucket=BUCKET)
        root = tmp_path_factory.mktemp("remote")
        _tree(root / "tree")
        for i in range(2000):
            text = words(i % 1500, 40)  # a quarter of them repeat another
            write(root / "many" / f"d{i // 100:02d}" / f"{i:04d}.txt", text)
        server.upload_tree(BUCKET, "tree", root / "tree")
        server.upload_tree(BUCKET, "many", root / "many")
        server.require_auth()
        server.root = root
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3(store, monkeypatch):
    """Run the CLI in this process with the user's key in the environment; returns a function of
    the arguments that gives a :class:`Run` (``--storage-option endpoint_url`` added)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", store.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", store.secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")

    def run(*args: object) -> Run:
        command, *rest = [str(a) for a in args]
        result = CliRunner().invoke(cli, [command, "--storage-option", f"endpoint_url={store.endpoint}", *rest])
        return Run(result.exit_code, result.stdout, result.stderr, result.exception)

    return run


def on_disk(store, text: str, prefix: str = TREE, folder: str = "tree") -> str:
    """``text`` with the bucket's URLs as the paths of the files they were uploaded from."""
    return text.replace(prefix, str(store.root / folder))


def cluster_lines(text: str) -> list[str]:
    """Cluster lines without their cluster ids (a hash of the representative's id), sorted
    (clusters come in the order of their ids: WARC records' http:// ids sort before s3:// ids,
    after /tmp/ ids)."""
    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        del record["cluster"]
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return sorted(lines)


def clusters_on_disk(store, text: str) -> list[str]:
    """Cluster lines with their ids mapped to disk (:func:`cluster_lines`)."""
    return cluster_lines(on_disk(store, text))


def local(*args: object) -> Run:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return Run(result.exit_code, result.stdout, result.stderr, result.exception)


@pytest.fixture(scope="module")
def disk_outputs(store):
    tree = store.root / "tree"
    fingerprints = local("fingerprint", "--silent", "-j", "1", tree)
    clusters = local("dedup", "--silent", "-j", "1", "-k", "10", tree)
    assert fingerprints.exit_code == clusters.exit_code == 0, clusters.stderr
    assert clusters.stdout.count("\n") > 30
    return fingerprints.stdout, clusters.stdout


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bucket_equals_disk_in_one_process(s3, store, disk_outputs, jobs):
    fingerprints = s3("fingerprint", "--silent", "-j", jobs, f"{TREE}/")
    clusters = s3("dedup", "--silent", "-j", jobs, "-k", "10", TREE)
    assert fingerprints.exit_code == 0 and clusters.exit_code == 0, fingerprints.stderr + clusters.stderr
    assert fingerprints.stdout.startswith(f'{{"id":"{TREE}/docs/A.txt"')  # ids are URLs
    assert on_disk(store, fingerprints.stdout) == disk_outputs[0]
    assert clusters_on_disk(store, clusters.stdout) == cluster_lines(disk_outputs[1])


@pytest.mark.parametrize("engine", ["stages", "dask"])
def test_bucket_equals_disk_on_the_engines(s3, store, disk_outputs, engine, tmp_path):
    if engine == "dask" and distributed is None:
        pytest.skip("--engine dask needs distributed")
    workers = ["-j", "2"] if engine == "stages" else ["--local", "2"]
    result = s3("dedup", "--silent", "--engine", engine, *workers, "-k", "10", "--work-dir", tmp_path / "work", TREE)
    assert result.exit_code == 0, result.stderr
    assert clusters_on_disk(store, result.stdout) == cluster_lines(disk_outputs[1])
    # the shards the workers read name the objects: nothing of the corpus went through the work dir
    work_files = [p for p in (tmp_path / "work").rglob("*") if p.is_file() and "fingerprints" not in p.parts]
    assert not any(b"Lorem" in p.read_bytes() for p in work_files)
    inside = s3("dedup", "--engine", engine, *workers, "-k", "10", "-o", f"{TREE}/docs/parts/", TREE)
    assert inside.exit_code == 2 and "holds the input" in inside.stderr
    # -o URL is one object, the bytes of stdout (the work dir's output is reused: a concatenation)
    key = f"runs/clusters-{engine}.jsonl"
    named = s3(
        "dedup",
        "--silent",
        "--engine",
        engine,
        *workers,
        "-k",
        "10",
        "--work-dir",
        tmp_path / "work",
        "-o",
        f"s3://{BUCKET}/{key}",
        TREE,
    )
    assert named.exit_code == 0 and named.stdout == "", named.stderr
    assert store.client().get_object(Bucket=BUCKET, Key=key)["Body"].read().decode() == result.stdout
    if engine == "stages":
        records = s3("fingerprint", "--silent", "--engine", engine, *workers, "--work-dir", tmp_path / "fp", TREE)
        assert records.exit_code == 0 and on_disk(store, records.stdout) == disk_outputs[0]
        # an object rewritten since (same size): the work dir is not reused
        client = store.client()
        key = "tree/docs/b.txt"
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        client.put_object(Bucket=BUCKET, Key=key, Body=body[::-1])
        try:
            rerun = s3(
                "dedup", "--silent", "--engine", engine, *workers, "-k", "10", "--work-dir", tmp_path / "work", TREE
            )
        finally:
            client.put_object(Bucket=BUCKET, Key=key, Body=body)
        assert rerun.exit_code == 1 and "made with other settings" in rerun.stderr


def test_thousands_of_objects(s3, store):
    started = time.perf_counter()
    result = s3("fingerprint", "--silent", "-j", "1", MANY)
    assert result.exit_code == 0, result.stderr
    assert len(result.lines) == 2000
    disk = local("fingerprint", "--silent", "-j", "2", store.root / "many")
    assert on_disk(store, result.stdout, MANY, "many") == disk.stdout
    assert time.perf_counter() - started < 60


def test_prefix_walked_as_a_directory(store, s3):
    """Generated --glob / --exclude / --min-bytes: the listing takes the files the walk on disk
    takes, in its order."""
    from simdedup.read.remote import use_storage_options

    s3("fingerprint", "--silent", f"{TREE}/nothing")  # sets the endpoint in this process
    use_storage_options({"endpoint_url": store.endpoint})
    patterns = ["*.txt", "*-copy.txt", "a", "sub", "set1", "docs/set2/*", "*.parquet", "*.gz", "y *", "A*", "tables"]
    rng = random.Random(31)
    for _ in range(16):
        walk = WalkFilter(
            tuple(rng.sample(patterns, rng.randrange(3))),
            tuple(rng.sample(patterns, rng.randrange(3))),
            rng.choice([0, 0, 200, 1700, 2000]),
        )
        for folder in ("", "/docs", "/docs/"):
            remote = [s.path for s in iter_sources([TREE + folder], walk)]
            disk = [s.path for s in iter_sources([str(store.root / "tree") + folder], walk)]
            assert [on_disk(store, p).replace("//", "/") for p in remote] == [p.replace("//", "/") for p in disk], walk


def test_large_compressed_object_streams(store, s3, monkeypatch):
    """A JSON-lines object of 13 MB compressed is read in ranges of 1 MB (4 MB unless a test
    says so): the reader's memory peaks far below the object's size."""
    from simdedup.read import remote
    from simdedup.read.remote import open_url, use_storage_options
    from simdedup.read.tables import iter_jsonl_unparsed

    rng = random.Random(7)
    lines = b"".join(json.dumps({"text": rng.randbytes(600).hex()}).encode() + b"\n" for _ in range(20_000))
    data = gzip.compress(lines, 1)
    store.client().put_object(Bucket=BUCKET, Key="big/rows.jsonl.gz", Body=data)
    assert len(data) > 12 << 20
    monkeypatch.setattr(remote, "BLOCK_BYTES", 1 << 20)
    use_storage_options({"endpoint_url": store.endpoint})
    open_url(f"s3://{BUCKET}/big/rows.jsonl.gz").read(1)  # the client made (its service models take 20 MB)
    tracemalloc.start()
    try:
        count = sum(1 for source in iter_jsonl_unparsed(f"s3://{BUCKET}/big/rows.jsonl.gz") if source.reason is None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < len(data) / 2, f"peak {peak} for an object of {len(data)} bytes"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_objects_deleted_between_listing_and_reading(store, s3, monkeypatch, jobs):
    """A seeded choice of objects deleted once the prefix is listed: each is skipped with a
    warning (exit 3), every other is fingerprinted."""
    from simdedup.read import walk

    client = store.client()
    names = [f"vanish{jobs}/d{i % 3}/{i:03d}.txt" for i in range(45)]
    for name in names:
        client.put_object(Bucket=BUCKET, Key=name, Body=words(len(name) + names.index(name)).encode())
    gone = sorted(random.Random(int(jobs)).sample(names, 6))
    listed = walk.iter_url_sources

    def listing_then_delete(url, walk_filter):
        sources = list(listed(url, walk_filter))
        client.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": name} for name in gone]})
        yield from sources

    monkeypatch.setattr(walk, "iter_url_sources", listing_then_delete)
    result = s3("fingerprint", "--silent", "-v", "-j", jobs, f"s3://{BUCKET}/vanish{jobs}/")
    assert result.exit_code == 3
    assert [r["id"] for r in result.records] == [
        f"s3://{BUCKET}/{n}" for n in sorted(names, key=lambda n: n.split("/")) if n not in gone
    ]
    warned = [line.split(": ")[2] for line in result.err_lines[:-1]]
    assert warned == [f"s3://{BUCKET}/{n}" for n in sorted(gone, key=lambda n: n.split("/"))]
    assert all("no such object" in line for line in result.err_lines[:-1])


def test_objects_access_denied(store, s3):
    """A user who may list the prefix but not read some of its objects: each of those is skipped
    with a warning (exit 3), the others are fingerprinted."""
    key, secret = store.make_user("limited", f"arn:aws:s3:::{BUCKET}/tree/docs/set1/*")
    result = s3(
        "fingerprint",
        "--silent",
        "-v",
        "--storage-option",
        f"key={key}",
        "--storage-option",
        f"secret={secret}",
        f"{TREE}/docs/",
    )
    assert result.exit_code == 3, result.stderr
    denied = sorted(f"{TREE}/docs/set1/{p.name}" for p in (store.root / "tree" / "docs" / "set1").iterdir())
    assert [line.split(": ")[2] for line in result.err_lines[:-1]] == denied
    assert all("access denied" in line for line in result.err_lines[:-1])
    assert len(result.records) == 54 - len(denied) and not any("/set1/" in r["id"] for r in result.records)


def test_missing_bucket_object_and_fingerprint_file(s3):
    result = s3("fingerprint", "--silent", "s3://no-such-bucket/x/", f"{TREE}/docs/no-such.txt", f"{TREE}/docs/a.txt")
    assert result.exit_code == 3 and len(result.records) == 1
    assert [line.split(": ")[2] for line in result.err_lines[:2]] == [
        "s3://no-such-bucket/x/",
        f"{TREE}/docs/no-such.txt",
    ]
    missing = s3("cluster", f"{TREE}/no-such.jsonl")
    assert missing.exit_code == 1 and len(missing.err_lines) == 1 and "Traceback" not in missing.stderr


def test_wrong_credentials_and_secrets_never_shown(store, s3, tmp_path):
    wrong = "Wr0ngSecretValue-do-not-show"
    denied = s3(
        "fingerprint",
        "--silent",
        "--storage-option",
        "key=AKIAWRONGKEY000",
        "--storage-option",
        f"secret={wrong}",
        TREE,
    )
    assert denied.exit_code in (1, 3) and denied.records == []
    assert "access denied" in denied.stderr or "InvalidAccessKeyId" in denied.stderr
    assert all(line.startswith("simdedup: ") for line in denied.err_lines) and len(denied.err_lines) <= 2
    assert wrong not in denied.stdout + denied.stderr
    assert printable(f"a message naming {wrong}") == "a message naming ***"  # whatever a client says
    # The valid secret, given on the command line, then in the environment (as the fixture
    # sets it), reaches neither the messages nor the outputs nor the work directory.
    work = tmp_path / "work"
    runs = [
        s3(
            "dedup",
            "--storage-option",
            f"secret={store.secret}",
            "--storage-option",
            f"key={store.key}",
            "--engine",
            "stages",
            "-j",
            "1",
            "-k",
            "10",
            "--work-dir",
            work,
            TREE,
        ),
        s3(
            "dedup",
            "-v",
            "-k",
            "10",
            "-o",
            f"s3://{BUCKET}/out/secret-check.jsonl",
            "--report",
            tmp_path / "r.html",
            f"{TREE}/docs/",
            "s3://no-such-bucket/",
        ),
    ]
    assert [r.exit_code for r in runs] == [0, 3], runs[1].stderr
    for run in runs:
        assert store.secret not in run.stdout + run.stderr
    uploaded = store.client().get_object(Bucket=BUCKET, Key="out/secret-check.jsonl")["Body"].read()
    for data in [
        uploaded,
        (tmp_path / "r.html").read_bytes(),
        *(p.read_bytes() for p in work.rglob("*") if p.is_file()),
    ]:
        assert store.secret.encode() not in data


def test_outputs_to_the_store_are_whole_or_absent(store, s3, disk_outputs):
    client = store.client()
    out = f"s3://{BUCKET}/results/clusters.jsonl"
    result = s3("dedup", "--silent", "-k", "10", "-o", out, TREE)
    assert result.exit_code == 0 and result.stdout == ""
    body = client.get_object(Bucket=BUCKET, Key="results/clusters.jsonl")["Body"].read().decode()
    assert clusters_on_disk(store, body) == cluster_lines(disk_outputs[1])
    again = s3("dedup", "--silent", "-k", "10", "-o", out, TREE)
    assert again.exit_code == 2 and "--force" in again.stderr
    over_input = s3("dedup", "--silent", "-k", "10", "--force", "-o", f"{TREE}/tables/plain.jsonl", f"{TREE}/tables")
    assert over_input.exit_code == 2 and "an output never writes over an input" in over_input.stderr
    # a run that fails after its output was opened uploads nothing
    failed = s3(
        "dedup",
        "--silent",
        "-k",
        "10",
        "-o",
        f"s3://{BUCKET}/results/failed.jsonl",
        "--unique-out",
        f"s3://{BUCKET}/results/unique.jsonl",
        f"{TREE}/docs",
    )
    assert failed.exit_code == 2
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="results/").get("Contents", [])]
    assert keys == ["results/clusters.jsonl"]  # neither output, nor a probe, nor a part


def test_unique_out_and_select_on_urls(store, s3, tmp_path):
    table = f"{TREE}/tables/rows.jsonl.gz"
    unique = s3("dedup", "--silent", "-k", "10", "--unique-out", f"s3://{BUCKET}/results/unique.jsonl", table)
    disk_unique = tmp_path / "unique.jsonl"
    on_disk_run = local(
        "dedup", "--silent", "-k", "10", "--unique-out", disk_unique, store.root / "tree" / "tables" / "rows.jsonl.gz"
    )
    assert unique.exit_code == on_disk_run.exit_code == 0, unique.stderr
    kept = store.client().get_object(Bucket=BUCKET, Key="results/unique.jsonl")["Body"].read()
    assert kept == disk_unique.read_bytes() and 0 < kept.count(b"\n") < 120
    copies = s3("dedup", "--silent", "-k", "10", "--unique-out", tmp_path / "kept", f"{TREE}/docs")
    disk_copies = local(
        "dedup", "--silent", "-k", "10", "--unique-out", tmp_path / "kept-disk", store.root / "tree" / "docs"
    )
    assert copies.exit_code == disk_copies.exit_code == 0, copies.stderr
    kept_files = {
        p.relative_to(tmp_path / "kept" / "s3:" / BUCKET / "tree"): p.read_bytes()
        for p in (tmp_path / "kept").rglob("*")
        if p.is_file()
    }
    disk_files = {
        p.relative_to(tmp_path / "kept-disk" / "%2F" / str(store.root / "tree").lstrip("/")): p.read_bytes()
        for p in (tmp_path / "kept-disk").rglob("*")
        if p.is_file()
    }
    assert kept_files == disk_files and len(kept_files) == 54 - 24  # one of each near-copy pair
    clusters = s3("dedup", "--silent", "-k", "10", f"{TREE}/docs")
    (tmp_path / "clusters.jsonl").write_text(clusters.stdout)
    dropped = local("select", tmp_path / "clusters.jsonl")
    assert dropped.exit_code == 0, dropped.stderr
    assert dropped.lines and all(line.startswith(f"{TREE}/docs/set") for line in dropped.lines)
    disk_clusters = local("dedup", "--silent", "-k", "10", store.root / "tree" / "docs")
    (tmp_path / "disk.jsonl").write_text(disk_clusters.stdout)
    assert on_disk(store, dropped.stdout) == local("select", tmp_path / "disk.jsonl").stdout


def test_server_stopped_mid_read():
    """The store goes away while runs read it, once their first records are out: a run over
    many small objects (fetched together) and one streaming a compressed object (read in
    ranges). Each ends with one line, exit 1, no traceback; what it wrote is whole lines."""
    server = S3Server().start()
    try:
        client = server.client()
        client.create_bucket(Bucket="gone")
        for i in range(300):
            client.put_object(Bucket="gone", Key=f"p/{i:04d}.txt", Body=words(i, 200).encode())
        rng = random.Random(5)
        rows = b"".join(json.dumps({"text": rng.randbytes(300).hex()}).encode() + b"\n" for _ in range(16_000))
        client.put_object(Bucket="gone", Key="big/rows.jsonl.gz", Body=gzip.compress(rows, 1))
        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": server.key,
            "AWS_SECRET_ACCESS_KEY": server.secret,
            "PYTHONPATH": os.pathsep.join(sys.path),
        }
        processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "simdedup",
                    "fingerprint",
                    "-j",
                    "1",
                    "--storage-option",
                    f"endpoint_url={server.endpoint}",
                    "--storage-option",
                    'config_kwargs={"retries": {"mode": "standard", "max_attempts": 2}}',
                    f"s3://gone/{prefix}/",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for prefix in ("p", "big")
        ]
        firsts = [process.stdout.readline() for process in processes]  # reading has begun
        server.stop()
        outputs = [(first + process.stdout.read(), process.stderr.read()) for first, process in zip(firsts, processes)]
        for process in processes:  # (communicate would skip what is buffered)
            process.wait(60)
    finally:
        server.stop()
    for process, (out, err), total in zip(processes, outputs, (300, 16_000)):
        lines = err.decode().splitlines()
        assert process.returncode == 1, err
        assert len(lines) == 1 and lines[0].startswith("Error: cannot read s3://gone/"), lines
        records = out.decode().splitlines()
        assert 0 < len(records) < total and all(json.loads(line)["id"].startswith("s3://gone/") for line in records)


def test_cluster_against_fingerprints_in_the_store(store, s3, disk_outputs, tmp_path):
    """`cluster --against OLD` takes OLD at a URL as it takes a file: the same clusters."""
    client = store.client()
    old, new = disk_outputs[0].splitlines(keepends=True)[::2], disk_outputs[0].splitlines(keepends=True)[1::2]
    client.put_object(Bucket=BUCKET, Key="runs/old.jsonl", Body="".join(old).encode())
    (tmp_path / "old.jsonl").write_text("".join(old), encoding="utf-8")
    (tmp_path / "new.jsonl").write_text("".join(new), encoding="utf-8")
    from_store = s3("cluster", "-k", "10", "--against", f"s3://{BUCKET}/runs/old.jsonl", tmp_path / "new.jsonl")
    from_disk = local("cluster", "-k", "10", "--against", tmp_path / "old.jsonl", tmp_path / "new.jsonl")
    assert from_store.exit_code == from_disk.exit_code == 0, from_store.stderr
    assert from_store.stdout == from_disk.stdout and from_disk.stdout.count("\n") > 5
    missing = s3("cluster", "-k", "10", "--against", f"s3://{BUCKET}/runs/none.jsonl", tmp_path / "new.jsonl")
    assert missing.exit_code == 1 and len(missing.stderr.splitlines()) == 1
