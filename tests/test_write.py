"""-o and --force: outputs written whole, never over an existing file unasked."""

from __future__ import annotations

import os
import stat

from helpers import WALK_ORDER, write


def test_output_file(run, small_corpus, tmp_path):
    expected = run(["fingerprint", "corpus"]).stdout
    result = run(["fingerprint", "-o", "out.jsonl", "corpus"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert (tmp_path / "out.jsonl").read_text() == expected
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat("out.jsonl").st_mode) == 0o666 & ~umask


def test_output_file_refused_without_force(run, small_corpus, tmp_path):
    out = write(tmp_path / "out.jsonl", "precious\n")
    result = run(["fingerprint", "-o", out, "corpus"])
    assert result.exit_code == 2
    assert "--force" in result.stderr
    assert out.read_text() == "precious\n"
    assert result.stdout == ""
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".simdedup-")]


def test_output_file_replaced_with_force(run, small_corpus, tmp_path):
    out = write(tmp_path / "out.jsonl", "precious\n" * 10000)
    result = run(["fingerprint", "--force", "-o", out, "corpus"])
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == run(["fingerprint", "corpus"]).stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".simdedup-")]


def test_output_dash_is_stdout(run, small_corpus, tmp_path):
    result = run(["fingerprint", "-o", "-", "corpus"])
    assert result.exit_code == 0
    assert [r["id"] for r in result.records] == WALK_ORDER
    assert not (tmp_path / "-").exists()


def test_output_file_in_missing_directory(run, small_corpus, tmp_path):
    result = run(["fingerprint", "-o", "no/such/dir/out.jsonl", "corpus"])
    assert result.exit_code == 1
    assert "cannot write" in result.stderr
    assert result.stdout == ""


def test_output_file_written_when_inputs_skipped(run, good_pair, tmp_path):
    write(good_pair / "empty.txt", "")
    result = run(["fingerprint", "-o", "out.jsonl", "corpus"])
    assert result.exit_code == 3
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


def test_cluster_output_file(run, dup_corpus, tmp_path):
    fps = run(["fingerprint", "dups"]).stdout
    expected = run(["cluster"], input=fps).stdout
    write(tmp_path / "old.jsonl", "old\n")
    assert run(["cluster", "-o", "old.jsonl"], input=fps).exit_code == 2
    assert (tmp_path / "old.jsonl").read_text() == "old\n"
    result = run(["cluster", "--force", "-o", "old.jsonl"], input=fps)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert (tmp_path / "old.jsonl").read_text() == expected != ""


def test_cluster_error_leaves_no_output_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["cluster", "-o", "out.jsonl"], input="not json\n")
    assert result.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []
