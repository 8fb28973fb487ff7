"""simdedup dedup: fingerprint and cluster in one step, --format members, --unique-out."""

from __future__ import annotations

import json
import os

import pytest
from helpers import TEXT, check_cluster, invoke, member_sets, rows, write


@pytest.mark.parametrize("options", [[], ["--singletons"], ["-k", "0"], ["--shingle", "2", "-k", "10"]])
def test_dedup_equals_fingerprint_then_cluster(run, dup_corpus, options):
    fp_options = [o for o in options if o in ("--shingle", "2")]
    cl_options = [o for o in options if o not in ("--shingle", "2")]
    fps = run(["fingerprint", *fp_options, "dups"])
    two_step = run(["cluster", *cl_options], input=fps.stdout)
    one_step = run(["dedup", *options, "dups"])
    assert one_step.exit_code == two_step.exit_code == 0
    # dedup reads the texts and reports the exact resemblance; cluster the sketches' estimate
    assert without_scores(one_step.records) == without_scores(two_step.records)
    assert one_step.stderr == two_step.stderr  # nothing, or the note on an explicit k
    assert all("resemblance" in m for r in one_step.records for m in r["members"])
    assert all("resemblance_estimate" in m or m["distance"] == 0 for r in two_step.records for m in r["members"])


def without_scores(records: list[dict]) -> list[dict]:
    scores = {"resemblance", "resemblance_estimate"}
    return [
        {
            **{k: v for k, v in r.items() if k.removeprefix("min_") not in scores},
            "members": [{k: v for k, v in m.items() if k not in scores} for m in r["members"]],
        }
        for r in records
    ]


def test_dedup_default_groups(run, dup_corpus):
    result = run(["dedup", "dups"])
    assert member_sets(result.records) == dup_corpus
    for rec in result.records:
        check_cluster(rec)


def test_dedup_with_skipped_inputs(run, dup_corpus, tmp_path):
    write(tmp_path / "dups/zz-empty.txt", "")
    result = run(["dedup", "dups"])
    assert result.exit_code == 3
    assert member_sets(result.records) == dup_corpus
    assert "dups/zz-empty.txt" in result.err_lines[0]
    assert "skipped 1" in result.err_lines[-1]


def test_dedup_path_named_twice(run, dup_corpus):
    result = run(["dedup", "--singletons", "dups/base.txt", "dups/base.txt", "dups/copy.txt"])
    assert result.exit_code == 0
    assert member_sets(result.records) == {("dups/base.txt", "dups/copy.txt")}
    assert "1 name leads to a file read under another name" in result.stderr


def test_dedup_k_checked_before_reading(run, dup_corpus):
    result = run(["dedup", "-k", "40", "dups"])
    assert result.exit_code == 2
    assert result.stdout == ""


def test_members_format(tmp_path):
    for name, text in (("a.txt", TEXT), ("b.txt", TEXT + " plus"), ("c.txt", "unrelated words " * 30)):
        (tmp_path / name).write_text(text)
    result = invoke("dedup", "--silent", "--format", "members", tmp_path)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [os.path.basename(line["id"]) for line in lines] == ["a.txt", "b.txt"]
    assert {line["cluster"] for line in lines} == {lines[0]["cluster"]}
    assert sum(line["kept"] for line in lines) == 1
    assert all(set(line) == {"id", "cluster", "kept", "distance", "resemblance"} for line in lines)


def test_unique_out_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in (("a.txt", TEXT), ("b.txt", TEXT + " plus"), ("c.txt", "unrelated words " * 30)):
        (corpus / name).write_text(text)
    before = {p.name: p.read_bytes() for p in corpus.iterdir()}
    result = invoke("dedup", "--silent", "--unique-out", "out", "corpus")
    assert result.exit_code == 0, result.stderr
    clusters = [json.loads(line) for line in result.stdout.splitlines()]
    kept = {clusters[0]["representative"], "corpus/c.txt"}
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert written == kept
    assert {p.name: p.read_bytes() for p in corpus.iterdir()} == before  # inputs untouched
    again = invoke("dedup", "--silent", "--unique-out", "out", "corpus")
    assert again.exit_code == 2 and "--force" in again.stderr
    assert invoke("dedup", "--silent", "--force", "--unique-out", "out", "corpus").exit_code == 0


def test_unique_out_jsonl(tmp_path):
    dump = tmp_path / "dump.jsonl"
    lines = [json.dumps(r) for r in rows()] + ["{broken"]
    dump.write_text("\n".join(lines) + "\n")
    out = tmp_path / "unique.jsonl"
    result = invoke("dedup", "--silent", "--text-field", "body.text", "--id-field", "id", "--unique-out", out, dump)
    assert result.exit_code == 3  # the broken line is skipped and counted
    kept = out.read_text().splitlines()
    representative = json.loads(result.stdout)["representative"]
    assert kept == [line for line in lines[:3] if json.loads(line)["id"] in (representative, "c")]
    assert dump.read_text() == "\n".join(lines) + "\n"
    same = invoke("dedup", "--silent", "--force", "--text-field", "body.text", "--unique-out", dump, dump)
    assert same.exit_code == 2 and "is an input" in same.stderr


def test_dedup_verbose_says_where_the_time_goes(run, dup_corpus):
    result = run(["dedup", "-v", "dups"])
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if line.startswith("simdedup: time: "))
    stages = [part.split(" ")[0] for part in line[len("simdedup: time: ") :].split(", ") if part[0].isalpha()]
    assert stages[0] == "read" and "pair" in stages and "verification" in stages and stages[-1] == "write"
    clusters = len(result.records)
    assert f"({clusters:,} clusters)" in line and "candidate pairs" in line and "verified" in line
    assert "time:" not in run(["dedup", "dups"]).stderr


@pytest.mark.parametrize("stop_after", [0, 1, 5, 17])
@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError])
def test_a_unique_out_directory_stopped_halfway_is_not_there(tmp_path, monkeypatch, stop_after, stop):
    """--unique-out DIR (new) is made beside its name and renamed whole: a run stopped at any
    copy (Ctrl-C, a failed write) leaves no DIR and no temporary directory."""
    import simdedup.unique as unique

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(24):
        (corpus / f"d{i:02d}.txt").write_text(f"document {i} " + " ".join(f"w{i}-{j}" for j in range(40)))
    copy = unique._copy_file
    copied = []

    def failing_copy(*args):
        if len(copied) == stop_after:
            raise stop("stopped here")
        copied.append(args)
        return copy(*args)

    monkeypatch.setattr(unique, "_copy_file", failing_copy)
    out = tmp_path / "kept"
    done = invoke("dedup", "--silent", str(corpus), "--unique-out", str(out))
    assert done.exit_code != 0
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
