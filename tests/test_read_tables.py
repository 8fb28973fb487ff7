"""simdedup.read.tables: JSON lines, CSV/TSV, Parquet, compressed files, stretches of JSON lines."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma

import pytest
from helpers import TEXT, invoke, rows
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.read import Source
from simdedup.read.tables import expand_tables, iter_jsonl_lines


def test_zstandard(tmp_path, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(json.dumps(r) for r in rows()) + "\n").encode()))
    result = invoke("fingerprint", "--silent", "--text-field", "body.text", "--id-field", "id", path)
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a", "b", "c"]
    import sys

    monkeypatch.setitem(sys.modules, "zstandard", None)
    without = invoke("fingerprint", "--silent", path)
    assert without.exit_code == 3 and "pip install 'simdedup[zstd]'" in without.stderr


def test_iter_jsonl_fields_ids_and_bad_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(r) for r in rows()] + [
        "not json",
        json.dumps({"id": "x"}),
        json.dumps({"id": "y", "body": {"text": 3}}),
        "",
    ]
    path.write_text("\n".join(lines) + "\n")
    got = [s for s, _ in iter_jsonl_lines(str(path), "body.text", "id")]
    assert [s.path for s in got[:3]] == ["a", "b", "c"] and got[0].text == TEXT
    assert got[3].path == f"{path}:4" and got[3].reason.startswith("not a JSON object (")
    assert got[4].path == f"{path}:5" and "no field 'body.text'" in got[4].reason
    assert got[5].path == f"{path}:6" and "not a string" in got[5].reason
    assert len(got) == 6
    default_ids = [s.path for s, _ in iter_jsonl_lines(str(path), "body.text")][:3]
    assert default_ids == [f"{path}:1", f"{path}:2", f"{path}:3"]


@pytest.mark.parametrize("suffix, opener", [("", open), (".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_jsonl_and_text(tmp_path, suffix, opener):
    with opener(tmp_path / f"d.jsonl{suffix}", "wt") as handle:
        handle.write("\n".join(json.dumps(r) for r in rows()) + "\n")
    with opener(tmp_path / f"plain.txt{suffix}", "wt") as handle:
        handle.write(TEXT)
    result = invoke(
        "fingerprint",
        "--silent",
        "--text-field",
        "body.text",
        "--id-field",
        "id",
        tmp_path / f"d.jsonl{suffix}",
        tmp_path / f"plain.txt{suffix}",
    )
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in records] == ["a", "b", "c", str(tmp_path / f"plain.txt{suffix}")]
    assert records[0]["simhash"] == records[3]["simhash"]  # same text, same fingerprint


def test_jsonl_dedup_and_bad_lines_are_counted(tmp_path):
    path = tmp_path / "dump.ndjson"
    path.write_text("\n".join(json.dumps(r) for r in rows()) + "\n{broken\n")
    result = invoke("dedup", "--silent", "--text-field", "body.text", "--id-field", "id", path)
    assert result.exit_code == 3
    assert f"{path}:4: not a JSON object" in result.stderr and "skipped 1" in result.stderr
    (cluster,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert [m["id"] for m in cluster["members"]] == ["a", "b"]
    # --no-jsonl reads the same file as one text document
    whole = invoke("fingerprint", "--silent", "--no-jsonl", path)
    assert len(whole.stdout.splitlines()) == 1


def test_expand_tables_leaves_text_files(tmp_path):
    sources = [Source("a.txt"), Source("b.jsonl", "missing"), Source("x", text="t")]
    assert list(expand_tables(sources, None)) == sources


def test_csv_and_tsv(tmp_path):
    import csv

    with open(tmp_path / "d.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "body"])
        for r in rows():
            writer.writerow([r["id"], r["body"]["text"]])
    (tmp_path / "d.tsv").write_text("key\tbody\nt1\t" + TEXT + "\n")
    result = invoke(
        "dedup", "--silent", "--text-field", "body", "--id-field", "key", tmp_path / "d.csv", tmp_path / "d.tsv"
    )
    assert result.exit_code == 0, result.stderr
    (cluster,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(m["id"] for m in cluster["members"]) == ["a", "b", "t1"]
    missing = invoke("fingerprint", "--silent", "--text-field", "nope", tmp_path / "d.csv")
    assert missing.exit_code == 3 and "no column 'nope'" in missing.stderr


def test_parquet(tmp_path, monkeypatch):
    path = tmp_path / "d.parquet"
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"key": [r["id"] for r in rows()], "body": [r["body"]["text"] for r in rows()]}), path)
    result = invoke("dedup", "--silent", "--text-field", "body", "--id-field", "key", path)
    assert result.exit_code == 0, result.stderr
    (cluster,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert [m["id"] for m in cluster["members"]] == ["a", "b"]
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as without pyarrow
    without = invoke("fingerprint", "--silent", path)
    assert without.exit_code == 3 and "pip install 'simdedup[parquet]'" in without.stderr


json_lines = st.lists(
    st.one_of(
        st.builds(
            lambda t, i: json.dumps({"text": t, "id": i}, ensure_ascii=False), st.text(max_size=30), st.text(max_size=5)
        ),
        st.sampled_from(["", "   ", "not json", '{"text": 5}', '{"id": "x"}', '{"text": "cr"}\r', "[1, 2]"]),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(json_lines, st.sampled_from([1, 7, 64, 1 << 18]), st.booleans(), st.sampled_from([None, "id"]))
def test_stretches_of_lines_give_the_documents_line_by_line(tmp_path_factory, lines, span, final_newline, id_field):
    """Every way of cutting a JSON-lines file into stretches gives the eager reader's documents."""
    import simdedup.read.tables as tables

    path = tmp_path_factory.mktemp("jsonl") / "d.jsonl"
    path.write_bytes(("\n".join(lines) + ("\n" if final_newline else "")).encode())
    stretches = list(tables.iter_jsonl_unparsed(str(path), "text", id_field, span_bytes=span))
    got = [(d.path, d.reason, d.text) for s in stretches for d in tables.documents(s)]
    want = [(d.path, d.reason, d.text) for d, _ in iter_jsonl_lines(str(path), "text", id_field)]
    assert got == want
    assert all(s.span is not None for s in stretches)
