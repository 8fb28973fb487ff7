"""simdedup fingerprint: input modes, records, -j, skipped inputs, tokenizer options."""

from __future__ import annotations

import os
import re
import threading
from collections import Counter
from pathlib import Path

import pytest
from helpers import WALK_ORDER, word_tokens, words, write

from simdedup.simhash import simhash

RECORD_FIELDS = {
    "id",
    "simhash",
    "bits",
    "features",
    "bytes",
    "method",
    "tokenizer",
    "options",
    "hash",
    "weighting",
    "sketch_of",
    "sketch",
}


def check_record(rec: dict, bits: int = 64) -> None:
    assert set(rec) == RECORD_FIELDS
    assert re.fullmatch(f"[0-9a-f]{{{bits // 4}}}", rec["simhash"]), rec["simhash"]
    assert rec["bits"] == bits
    assert rec["tokenizer"] == "words"
    assert rec["options"] == {"shingle": 1}
    assert rec["hash"] == "xxh3"
    assert isinstance(rec["features"], int) and rec["features"] > 0


@pytest.mark.parametrize("mode", ["files", "directory", "stdin-lines", "stdin-nul"])
def test_fingerprint_input_modes(run, small_corpus, mode):
    if mode == "files":
        result = run(["fingerprint", *WALK_ORDER])
    elif mode == "directory":
        result = run(["fingerprint", "corpus"])
    elif mode == "stdin-lines":
        result = run(["fingerprint", "-"], input=("\n".join(WALK_ORDER) + "\n").encode())
    else:
        result = run(["fingerprint", "-0", "-"], input="\0".join(WALK_ORDER).encode() + b"\0")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    records = result.records
    assert [r["id"] for r in records] == WALK_ORDER
    for rec in records:
        check_record(rec)
        text = small_corpus[rec["id"]]
        assert rec["bytes"] == len(text.encode())
        features = Counter(word_tokens(text))
        assert rec["features"] == len(features)
        assert int(rec["simhash"], 16) == simhash(dict.fromkeys(features, 1))  # words: binary votes


def test_fingerprint_ids_are_paths_as_given(run, small_corpus):
    result = run(["fingerprint", "./corpus/b.txt", "corpus/a/../a.txt", "corpus/"])
    assert result.exit_code == 0, result.stderr
    ids = [r["id"] for r in result.records]
    assert ids[:2] == ["./corpus/b.txt", "corpus/a/../a.txt"]
    # each file is read once, under the first name that leads to it
    assert ids[2:] == [p for p in WALK_ORDER if p not in ("corpus/a.txt", "corpus/b.txt")]
    assert "2 names lead to a file read under another name" in result.stderr


def test_fingerprint_stdin_nul_separated_names_with_newlines(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "odd\nname.txt", "first document")
    write(tmp_path / "plain.txt", "second document")
    result = run(["fingerprint", "-0", "-"], input=b"odd\nname.txt\0plain.txt")
    assert result.exit_code == 0, result.stderr
    assert [r["id"] for r in result.records] == ["odd\nname.txt", "plain.txt"]


def test_fingerprint_stdin_mixed_with_path_arguments(run, small_corpus):
    result = run(["fingerprint", "corpus/b.txt", "-", "corpus/A.txt"], input=b"corpus/a.txt\r\n")
    assert result.exit_code == 0, result.stderr
    assert [r["id"] for r in result.records] == ["corpus/b.txt", "corpus/a.txt", "corpus/A.txt"]


def test_fingerprint_128_bits(run, small_corpus):
    result = run(["fingerprint", "--bits", "128", "corpus"])
    assert result.exit_code == 0, result.stderr
    records = result.records
    assert len(records) == len(WALK_ORDER)
    for rec in records:
        check_record(rec, bits=128)


def test_fingerprint_requires_a_path(run):
    result = run(["fingerprint"])
    assert result.exit_code == 2
    assert "PATH" in result.stderr


def test_fingerprint_output_is_deterministic(run, dup_corpus):
    first = run(["fingerprint", "dups"])
    second = run(["fingerprint", "dups"])
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert len(first.lines) == 10


def test_fingerprint_jobs_do_not_change_output(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(16):  # 16 // 4 = 4 >= 2, so -j 2 really uses two processes
        write(tmp_path / f"many/{i:02d}.txt", words(100 + i, 50))
    write(tmp_path / "many/empty.txt", "")  # a skip in the middle keeps its place too
    one = run(["fingerprint", "-j", "1", "many"])
    two = run(["fingerprint", "-j", "2", "many"])
    assert one.exit_code == two.exit_code == 3
    assert one.stdout == two.stdout
    assert one.stderr == two.stderr
    assert [r["id"] for r in one.records] == [f"many/{i:02d}.txt" for i in range(16)]
    stdin = run(["fingerprint", "-j", "2", "-"], input="\n".join(f"many/{i:02d}.txt" for i in range(16)))
    assert stdin.exit_code == 0
    assert stdin.stdout == one.stdout


def _empty(d: Path) -> str:
    write(d / "empty.txt", "")
    return "corpus/empty.txt"


def _binary(d: Path) -> str:
    write(d / "image.bin", b"GIF89a\x00\x01\x02 some text")
    return "corpus/image.bin"


def _bad_utf8(d: Path) -> str:
    write(d / "latin1.txt", "café au lait, crème brûlée".encode("latin-1"))
    return "corpus/latin1.txt"


def _whitespace(d: Path) -> str:
    write(d / "blank.txt", " \n\t\r\n   \n")
    return "corpus/blank.txt"


def _fifo(d: Path) -> str:
    os.mkfifo(d / "pipe")
    return "corpus/pipe"


def _loop(d: Path) -> str:
    os.symlink(os.path.abspath(d), d / "loop")
    return "corpus/loop"


def _broken(d: Path) -> str:
    os.symlink("does-not-exist.txt", d / "dangling.txt")
    return "corpus/dangling.txt"


BAD_INPUTS = {
    "empty": (_empty, "empty"),
    "binary": (_binary, "binary"),
    "invalid-utf8": (_bad_utf8, "--encoding"),
    "whitespace-only": (_whitespace, "no text"),
    "fifo": (_fifo, "FIFO"),
    "broken-symlink": (_broken, "broken symbolic link"),
}


@pytest.mark.parametrize("kind", list(BAD_INPUTS))
def test_fingerprint_skips_bad_input(run, good_pair, alarm, kind):
    make, reason = BAD_INPUTS[kind]
    bad = make(good_pair)
    result = run(["fingerprint", "corpus"])
    assert result.exit_code == 3, (result.stderr, result.exception)
    assert sorted(r["id"] for r in result.records) == ["corpus/good-1.txt", "corpus/good-2.txt"]
    warning, summary = result.err_lines  # exactly one warning and the summary
    assert bad in warning and reason in warning
    assert "warning" in warning
    assert "skipped 1" in summary and "fingerprinted 2" in summary


def test_fingerprint_symlink_loop_ends_and_reads_nothing_twice(run, good_pair, alarm):
    _loop(good_pair)
    os.symlink(os.path.abspath(good_pair / "good-1.txt"), good_pair / "zz-link-to-good-1.txt")
    result = run(["fingerprint", "corpus"])
    assert result.exit_code == 0, result.stderr
    # the loop is not followed; a link to a file read under its own name is not read again
    assert [r["id"] for r in result.records] == ["corpus/good-1.txt", "corpus/good-2.txt"]
    assert len(result.err_lines) == 1 and "1 name leads to a file read under another name" in result.stderr


def test_fingerprint_missing_path(run, good_pair):
    result = run(["fingerprint", "corpus/good-1.txt", "corpus/missing.txt", "corpus/good-2.txt"])
    assert result.exit_code == 3
    assert [r["id"] for r in result.records] == ["corpus/good-1.txt", "corpus/good-2.txt"]
    warning, summary = result.err_lines
    assert "corpus/missing.txt" in warning and "no such file" in warning
    assert "skipped 1" in summary


def test_fingerprint_skips_all_bad_inputs_together(run, good_pair, alarm):
    bad = [make(good_pair) for make, _ in BAD_INPUTS.values()]
    result = run(["fingerprint", "corpus", "corpus/missing.txt"])
    assert result.exit_code == 3
    assert len(result.records) == 2
    *warnings, summary = result.err_lines
    assert len(warnings) == len(bad) + 1
    for path in [*bad, "corpus/missing.txt"]:
        assert sum(path in w for w in warnings) == 1, path
    assert f"skipped {len(bad) + 1}" in summary


def test_fingerprint_reads_an_explicit_fifo(run, tmp_path, alarm):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = "text that arrives through a named pipe"

    def writer():
        with open(fifo, "w") as handle:
            handle.write(text)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    result = run(["fingerprint", fifo])
    thread.join(5)
    assert result.exit_code == 0, result.stderr
    (rec,) = result.records
    assert rec["id"] == str(fifo)
    assert int(rec["simhash"], 16) == simhash(dict.fromkeys(text.split(), 1))


def test_unknown_tokenizer(run, small_corpus):
    result = run(["fingerprint", "--tokenizer", "nope", "corpus"])
    assert result.exit_code == 2
    assert "nope" in result.stderr
    assert "whitespace" in result.stderr and "jieba" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["--tokenizer", "jieba", "--shingle", "2"],
        ["--topk", "5"],  # whitespace takes no topk
        ["-O", "noequals"],
        ["-O", "shingle=abc"],
        ["-O", "shingle=0"],
        ["-O", "colour=red"],
        ["--shingle", "0"],
    ],
)
def test_bad_tokenizer_options(run, small_corpus, args):
    result = run(["fingerprint", *args, "corpus"])
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""
    assert "Error" in result.stderr


def test_tokenizer_option_equals_shingle_flag(run, small_corpus):
    flag = run(["fingerprint", "--shingle", "2", "corpus"])
    generic = run(["fingerprint", "-O", "shingle=2", "corpus"])
    plain = run(["fingerprint", "corpus"])
    assert flag.exit_code == generic.exit_code == 0
    assert flag.stdout == generic.stdout
    assert all(r["options"] == {"shingle": 2} for r in flag.records)
    assert flag.stdout != plain.stdout
    for rec in flag.records:
        tokens = word_tokens(small_corpus[rec["id"]])
        assert rec["features"] == len(set(zip(tokens, tokens[1:])))
