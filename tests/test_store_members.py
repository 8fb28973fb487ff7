"""Members that are objects of a store, beside local files, against a real S3-compatible server on
127.0.0.1 (moto's server mode: :mod:`s3_server`, as tests/test_remote.py starts it).

Issue 42, item 1: ``select`` kept a member whose id is a URL without looking whether the object
is there, so a gone object got the only local copy listed for deletion. Every member, whatever
its kind (a path, a ``file://`` URL, an object), is kept only when it is there and readable now;
generated layouts of files and objects, some deleted, check that no drop list names a member of
a cluster whose kept member is gone.
"""

from __future__ import annotations

import json
import os
import random

import pytest
from click.testing import CliRunner
from s3_server import S3Server

from simdedup.cli import cli

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")

BUCKET = "members"


@pytest.fixture(scope="module")
def server():
    started = S3Server().start()
    try:
        started.client().create_bucket(Bucket=BUCKET)
        yield started
    finally:
        started.stop()


@pytest.fixture
def s3(server, monkeypatch):
    """The CLI in this process against the server; returns (exit status, stdout, stderr)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server.secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")

    def run(*args: object) -> tuple[int, str, str]:
        words = [str(a) for a in args]
        cut = 2 if words[0] in ("index", "spans") else 1
        option = ["--storage-option", f"endpoint_url={server.endpoint}"]
        result = CliRunner().invoke(cli, [*words[:cut], *option, *words[cut:]])
        assert "Traceback" not in result.output and result.exit_code != 70, result.output
        return result.exit_code, result.stdout, result.stderr

    return run


def cluster_line(members: list[str], representative: str) -> str:
    return json.dumps(
        {
            "cluster": "c",
            "size": len(members),
            "representative": representative,
            "members": [{"id": m, "distance": 0 if m == representative else 3} for m in members],
        }
    )


def test_a_gone_object_is_not_kept_over_the_only_local_copy(server, s3, tmp_path):
    local = tmp_path / "a.txt"
    local.write_text("the only copy on disk")
    server.client().put_object(Bucket=BUCKET, Key="gone/a.txt", Body=b"the only copy on disk")
    url = f"s3://{BUCKET}/gone/a.txt"
    clusters = tmp_path / "clusters.jsonl"
    clusters.write_text(cluster_line([str(local), url], url) + "\n")
    assert s3("select", clusters)[1] == f"{local}\n"  # the object is there: it is kept
    server.client().delete_object(Bucket=BUCKET, Key="gone/a.txt")
    status, out, err = s3("select", clusters)
    assert out == ""  # issue 42: the local file was listed for deletion, exit 0
    assert status == 3 and url in err
    assert s3("select", "--kept", clusters)[1] == f"{local}\n"


def exists(server, doc_id: str) -> bool:
    if doc_id.startswith("s3://"):
        key = doc_id.split("/", 3)[3]
        return "Contents" in server.client().list_objects_v2(Bucket=BUCKET, Prefix=key)
    return os.path.isfile(doc_id.removeprefix("file://"))


@pytest.mark.parametrize("seed", range(6))
def test_no_drop_list_names_a_member_whose_kept_member_is_gone(server, s3, tmp_path, seed):
    """Generated clusters of files, file:// URLs and objects, each there or deleted; a member
    is listed to drop only when it is there and a member of its cluster kept is there too."""
    rng = random.Random(seed)
    lines, clusters = [], []
    for number in range(rng.randint(2, 6)):
        members = []
        for index in range(rng.randint(2, 4)):
            name = f"s{seed}/c{number}/m{index}.txt"
            kind = rng.choice(["path", "file", "object"])
            there = rng.random() < 0.6 or number == index == 0  # something there: the ids are files
            if kind == "object":
                doc_id = f"s3://{BUCKET}/{name}"
                if there:
                    server.client().put_object(Bucket=BUCKET, Key=name, Body=b"text")
            else:
                path = tmp_path / name
                path.parent.mkdir(parents=True, exist_ok=True)
                if there:
                    path.write_text("text")
                doc_id = str(path) if kind == "path" else f"file://{path}"
            members.append(doc_id)
        representative = rng.choice(members)
        clusters.append(members)
        lines.append(cluster_line(members, representative))
    cluster_file = tmp_path / "clusters.jsonl"
    cluster_file.write_text("\n".join(lines) + "\n")
    policy = rng.choice(["representative", "first", "longest", "newest"])
    status, dropped_text, _ = s3("select", "--keep", policy, cluster_file)
    status_kept, kept_text, _ = s3("select", "--keep", policy, "--kept", cluster_file)
    assert status in (0, 3) and status_kept in (0, 3)
    dropped, kept = set(dropped_text.split("\n")) - {""}, set(kept_text.split("\n")) - {""}
    for members in clusters:
        gone = [m for m in members if not exists(server, m)]
        for member in set(members) & dropped:
            assert member not in gone, f"{member} is gone, yet listed"
            assert any(m in kept and m not in gone for m in members), f"{member} dropped, its kept member is gone"
        if len(gone) < len(members):  # a cluster with something left keeps one of those
            assert any(m in kept for m in members if m not in gone)
    assert status == (3 if any(not exists(server, m) for c in clusters for m in c) else 0)


def test_objects_alone_are_looked_at_too(server, s3, tmp_path):
    """Clusters of objects only: a gone object is not kept over one that is there."""
    for key in ("only/x.txt", "only/y.txt"):
        server.client().put_object(Bucket=BUCKET, Key=key, Body=b"text")
    x, y = f"s3://{BUCKET}/only/x.txt", f"s3://{BUCKET}/only/y.txt"
    clusters = tmp_path / "clusters.jsonl"
    clusters.write_text(cluster_line([x, y], x) + "\n")
    assert s3("select", clusters)[1] == f"{y}\n"
    server.client().delete_object(Bucket=BUCKET, Key="only/x.txt")
    status, out, _ = s3("select", clusters)
    assert (status, out) == (3, "")
    assert s3("select", "--kept", clusters)[1] == f"{y}\n"


def test_a_hostile_s3_id_is_never_read_into_the_report(server, s3, tmp_path):
    """Item 3 with a real store: an object named only by a cluster line stays out of the page."""
    server.client().put_object(Bucket=BUCKET, Key="secret/credentials", Body=b"SECRETVALUE in the store")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("a plain document")
    clusters = tmp_path / "clusters.jsonl"
    secret = f"s3://{BUCKET}/secret/credentials"
    clusters.write_text(cluster_line([str(corpus / "a.txt"), secret], secret) + "\n")
    for documents in ([], ["--documents", corpus], ["--documents", f"s3://{BUCKET}/other"]):
        page = tmp_path / "page.html"
        s3("report", clusters, "-o", page, "--force", *documents)
        assert "SECRETVALUE" not in page.read_text()
    s3("report", clusters, "-o", page, "--force", "--documents", f"s3://{BUCKET}/secret")
    assert "SECRETVALUE" in page.read_text()  # given: shown


def put_records(server, key: str, seed: int) -> bytes:
    from helpers import make_records

    from simdedup.fingerprints import json_lines

    data = json_lines(make_records(seed, 6))
    server.client().put_object(Bucket=BUCKET, Key=key, Body=data)
    return data


def stored(server, key: str) -> bytes:
    return server.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()


@pytest.mark.parametrize(
    "command",
    [
        ["cluster"],
        ["stats"],
        ["select"],
        ["report", "-o", "{tmp}/r.html"],
        ["index", "create", "{tmp}/idx", "-k", "3", "--from"],
        ["eval", "--gold", "{tmp}/gold.tsv"],
    ],
)
@pytest.mark.parametrize("spelling", ["s3://{b}/recs", "s3://{b}/recs/"])
def test_a_prefix_is_refused_as_a_record_file_in_one_line(server, s3, tmp_path, command, spelling):
    """Item 2: a prefix read as zero records, exit 0; a local directory was refused."""
    put_records(server, "recs/a.jsonl", 1)
    (tmp_path / "gold.tsv").write_text("a b\n")
    prefix = spelling.format(b=BUCKET)
    args = [part.format(tmp=tmp_path) for part in command]
    status, out, err = s3(*args, prefix)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert "is a prefix" in err
    local_status, _, local_err = s3(*args, tmp_path)  # the same as a local directory
    assert local_status == 2 and local_err.count("\n") == 1


@pytest.mark.parametrize("seed", range(4))
def test_no_output_writes_over_or_into_an_input(server, s3, tmp_path, seed):
    """Generated pairs of an input (an object, a prefix, a file, its file:// URL) and an -o that
    is it or lies under it, for each command that reads record or cluster files: refused before
    anything is written, whatever --force says; the inputs unchanged."""
    rng = random.Random(seed)
    data = put_records(server, f"in{seed}/recs/a.jsonl", seed)
    local = tmp_path / "a.jsonl"
    local.write_bytes(data)
    cases = [
        (f"s3://{BUCKET}/in{seed}/recs/a.jsonl", f"s3://{BUCKET}/in{seed}/recs/a.jsonl"),
        (f"s3://{BUCKET}/in{seed}/recs", f"s3://{BUCKET}/in{seed}/recs/a.jsonl"),
        (f"s3://{BUCKET}/in{seed}/recs/", f"s3://{BUCKET}/in{seed}/recs/new.jsonl"),
        (f"s3://{BUCKET}/in{seed}", f"s3://{BUCKET}/in{seed}/recs/deeper/x.jsonl"),
        (str(local), f"file://{local}"),
        (f"file://{local}", str(local)),
    ]
    for command, flag in ((["cluster"], "-o"), (["report"], "-o"), (["convert", "--to", "jsonl"], "-o")):
        given, output = rng.choice(cases)
        status, out, err = s3(*command, given, flag, output, "--force")
        assert status == 2 and err.count("\n") == 1 and "is an input" in err, (command, given, output, err)
        assert stored(server, f"in{seed}/recs/a.jsonl") == data and local.read_bytes() == data
        listed = server.client().list_objects_v2(Bucket=BUCKET, Prefix=f"in{seed}/")["Contents"]
        assert [o["Key"] for o in listed] == [f"in{seed}/recs/a.jsonl"]
