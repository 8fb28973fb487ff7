"""simdedup cluster: groups from fingerprint files or stdin, bad lines, k limits, --against."""

from __future__ import annotations

import json
import os

import pytest
from helpers import REPO, TEXT, check_cluster, invoke, member_sets, record_line, write


def test_cluster_from_file_and_stdin(run, dup_corpus, tmp_path):
    fps = run(["fingerprint", "dups"])
    write(tmp_path / "fps.jsonl", fps.stdout)
    from_file = run(["cluster", "fps.jsonl"])
    from_stdin = run(["cluster"], input=fps.stdout)
    from_dash = run(["cluster", "-"], input=fps.stdout)
    assert from_file.exit_code == from_stdin.exit_code == from_dash.exit_code == 0
    assert from_file.stderr == ""
    assert from_file.stdout == from_stdin.stdout == from_dash.stdout
    for rec in from_file.records:
        check_cluster(rec)
    assert member_sets(from_file.records) == dup_corpus
    exact = next(r for r in from_file.records if r["size"] == 3)
    distances = {m["id"]: m["distance"] for m in exact["members"]}
    assert distances["dups/base.txt"] == distances["dups/exact.txt"]
    assert distances["dups/copy.txt"] + distances["dups/base.txt"] <= 3


def test_cluster_verbose_says_where_the_time_goes(run, dup_corpus):
    fps = run(["fingerprint", "dups"])
    quiet, verbose = run(["cluster"], input=fps.stdout), run(["cluster", "-v"], input=fps.stdout)
    assert quiet.exit_code == verbose.exit_code == 0 and quiet.stderr == ""
    assert verbose.stdout == quiet.stdout
    (line,) = verbose.stderr.splitlines()
    assert line.startswith("simdedup: time: read ")
    stages = [part.split(" ")[0] for part in line[len("simdedup: time: ") :].split(", ") if part[0].isalpha()]
    assert "pair" in stages and "verification" in stages and stages[-1] == "write"
    assert f"({len(fps.lines):,} records)" in line and f"({len(quiet.records):,} clusters)" in line


def test_cluster_several_files(run, dup_corpus, tmp_path):
    lines = run(["fingerprint", "dups"]).lines
    write(tmp_path / "one.jsonl", "\n".join(lines[:5]) + "\n")
    write(tmp_path / "two.jsonl", "\n".join(lines[5:]) + "\n")
    result = run(["cluster", "one.jsonl", "two.jsonl"])
    assert result.exit_code == 0
    assert member_sets(result.records) == dup_corpus


def test_cluster_singletons(run, dup_corpus):
    fps = run(["fingerprint", "dups"])
    result = run(["cluster", "--singletons"], input=fps.stdout)
    assert result.exit_code == 0
    ids = [m["id"] for r in result.records for m in r["members"]]
    assert sorted(ids) == sorted(r["id"] for r in fps.records)
    assert len(ids) == len(set(ids)) == 10
    singles = [r for r in result.records if r["size"] == 1]
    assert len(singles) == 5
    assert all(r["max_distance"] == 0 and r["representative"] == r["members"][0]["id"] for r in singles)
    assert member_sets(result.records) - {r for r in member_sets(result.records) if len(r) == 1} == dup_corpus


def test_cluster_k0_groups_exact_copies_only(run, dup_corpus):
    fps = run(["fingerprint", "dups"]).stdout
    result = run(["cluster", "-k", "0"], input=fps)
    assert result.exit_code == 0
    assert member_sets(result.records) == {("dups/base.txt", "dups/exact.txt")}


@pytest.mark.parametrize("data", ["", "\n\n  \n"])
def test_cluster_empty_input(run, data):
    result = run(["cluster"], input=data)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == ""


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("{not json", "not a JSON object"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"id": "b", "bits": 64}), "simhash"),
        (json.dumps({"simhash": "0" * 16, "bits": 64}), "'id'"),
        (record_line("b").replace('"0123456789abcdef"', '"0123456789abcde"'), "16 hex digits"),
        (record_line("b").replace('"0123456789abcdef"', '"0123456789abcdef0"'), "16 hex digits"),
        (record_line("b").replace('"0123456789abcdef"', '"0123456789abcdeg"'), "not hexadecimal"),
        (record_line("b").replace('"0123456789abcdef"', '" 123456789abcdef"'), "not hexadecimal"),
        (record_line("b").replace('"0123456789abcdef"', "81985529216486895"), "simhash"),
        (record_line("b").replace('"bits": 64', '"bits": 32'), "bits"),
        (record_line("b").replace('"features": 3', '"features": -1'), "features"),
    ],
)
def test_cluster_malformed_line_reports_file_and_line(run, tmp_path, monkeypatch, bad_line, message):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "fps.jsonl", record_line("a") + "\n" + bad_line + "\n" + record_line("c") + "\n")
    result = run(["cluster", "fps.jsonl"])
    assert result.exit_code == 1, result.exception
    assert "fps.jsonl:2:" in result.stderr
    assert message in result.stderr
    assert result.stdout == ""
    stdin = run(["cluster"], input=record_line("a") + "\n" + bad_line + "\n")
    assert stdin.exit_code == 1
    assert "<stdin>:2:" in stdin.stderr


def test_cluster_line_numbers_count_blank_lines_and_restart_per_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "good.jsonl", record_line("a") + "\n" + record_line("b") + "\n")
    write(tmp_path / "bad.jsonl", "\n" + record_line("c") + "\n\nnot json\n")
    result = run(["cluster", "good.jsonl", "bad.jsonl"])
    assert result.exit_code == 1
    assert "bad.jsonl:4:" in result.stderr
    assert result.stdout == ""


def test_cluster_missing_input_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["cluster", "nope.jsonl"])
    assert result.exit_code == 1
    assert "nope.jsonl" in result.stderr
    assert isinstance(result.exception, SystemExit)  # a message, not a crash


def test_cluster_refuses_mixed_tokenizers(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    zh = REPO / "examples" / "zh" / "tea-making.txt"
    jieba = run(["fingerprint", "--tokenizer", "jieba", zh])
    assert jieba.exit_code == 0, jieba.stderr
    assert jieba.records[0]["tokenizer"] == "jieba"
    assert jieba.records[0]["options"] == {"topk": 20}
    data = record_line("ws.txt") + "\n" + jieba.stdout
    write(tmp_path / "mixed.jsonl", data)
    result = run(["cluster", "mixed.jsonl"])
    assert result.exit_code == 1
    assert "mixed.jsonl:2:" in result.stderr
    assert "whitespace(shingle=1)" in result.stderr
    assert "jieba(topk=20)" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "second, named",
    [
        (["--bits", "128"], ("64-bit", "128-bit")),
        (["--shingle", "2"], ("shingle=1", "shingle=2")),
    ],
)
def test_cluster_refuses_other_settings(run, small_corpus, second, named):
    one = run(["fingerprint", "corpus/a.txt"]).stdout
    two = run(["fingerprint", *second, "corpus/b.txt"]).stdout
    result = run(["cluster"], input=one + two)
    assert result.exit_code == 1
    assert "<stdin>:2:" in result.stderr
    assert all(name in result.stderr for name in named)
    assert result.stdout == ""


def test_cluster_k_too_large_for_64_bits(run):
    data = record_line("a") + "\n" + record_line("b", 1) + "\n"
    result = run(["cluster", "-k", "40"], input=data)
    assert result.exit_code == 2
    assert "31" in result.stderr
    assert result.stdout == ""
    assert run(["cluster", "-k", "31"], input=data).exit_code == 0


def test_cluster_k_40_is_fine_for_128_bits(run):
    data = record_line("a", bits=128) + "\n" + record_line("b", (1 << 127) | 5, bits=128) + "\n"
    result = run(["cluster", "-k", "40"], input=data)
    assert result.exit_code == 0, result.stderr
    assert run(["cluster", "-k", "63"], input=data).exit_code == 0


def test_cluster_k_out_of_range_fails_at_parse_time(run):
    # The input is garbage: a parse-time error (2) comes before reading it (which would be 1).
    result = run(["cluster", "-k", "99"], input="garbage\n")
    assert result.exit_code == 2
    assert "99" in result.stderr
    assert result.stdout == ""
    assert run(["cluster", "-k", "-1"], input="").exit_code == 2


def test_cluster_repeated_id_is_warned_and_counted_once(run):
    far = 0x0123456789ABCDEF ^ ((1 << 64) - 1)  # 64 bits away
    data = (
        "\n".join(
            [
                record_line("x"),
                record_line("y"),  # same fingerprint as the first x
                record_line("x", far),  # repeated id: dropped, the x of the smaller fingerprint wins
            ]
        )
        + "\n"
    )
    result = run(["cluster", "--singletons"], input=data)
    assert result.exit_code == 0
    (warning,) = result.err_lines
    assert "x" in warning and "<stdin>:3" in warning
    ids = [m["id"] for r in result.records for m in r["members"]]
    assert sorted(ids) == ["x", "y"]
    assert member_sets(result.records) == {("x", "y")}


@pytest.mark.parametrize("value", ["0x0123456789abcd", "１２３４５６７８９０１２３４５６"])
def test_cluster_rejects_simhash_that_is_not_plain_hex(run, value):
    data = record_line("a") + "\n" + record_line("b").replace("0123456789abcdef", value) + "\n"
    result = run(["cluster"], input=data)
    assert result.exit_code == 1
    assert "<stdin>:2:" in result.stderr


def test_cluster_rejects_float_bits(run):
    data = record_line("a").replace('"bits": 64', '"bits": 64.0') + "\n"
    result = run(["cluster", "--singletons"], input=data)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1
    assert "<stdin>:1:" in result.stderr


def test_cluster_not_utf8_names_the_right_line(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = (record_line("a") + "\n" + record_line("b") + "\n").encode() + b'{"id": "caf\xe9"}\n'
    write(tmp_path / "fps.jsonl", data)
    result = run(["cluster", "fps.jsonl"])
    assert result.exit_code == 1
    assert "not UTF-8" in result.stderr
    assert "fps.jsonl:3:" in result.stderr


def test_cluster_against_an_old_corpus(tmp_path):
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    old_dir.mkdir()
    new_dir.mkdir()
    other = " ".join(f"other{i}" for i in range(60))
    (old_dir / "o1.txt").write_text(TEXT)
    (old_dir / "o2.txt").write_text(TEXT + " and more")  # an old pair: not reported again
    (old_dir / "o3.txt").write_text(other)
    (new_dir / "n1.txt").write_text(TEXT + " plus")  # duplicates old documents
    (new_dir / "n2.txt").write_text("fresh " + " ".join(f"fresh{i}" for i in range(60)))
    (new_dir / "n3.txt").write_text("fresh " + " ".join(f"fresh{i}" for i in range(60)) + " again")
    old = tmp_path / "old.jsonl"
    old.write_text(invoke("fingerprint", "--silent", old_dir).stdout)
    new_fps = invoke("fingerprint", "--silent", new_dir).stdout
    result = invoke("cluster", "--against", old, input=new_fps)
    assert result.exit_code == 0, result.stderr
    clusters = [json.loads(line) for line in result.stdout.splitlines()]
    groups = sorted(sorted((os.path.basename(m["id"]), m["new"]) for m in c["members"]) for c in clusters)
    assert [("n2.txt", True), ("n3.txt", True)] in groups
    with_old = [g for g in groups if ("n1.txt", True) in g][0]
    assert ("o1.txt", False) in with_old
    assert all(any(is_new for _, is_new in g) for g in groups)  # no old-only cluster
    everything = invoke("cluster", input=old.read_text() + new_fps)
    assert len(everything.stdout.splitlines()) >= len(clusters)
