"""The ``simdedup`` command line, run in-process with click's CliRunner."""

from __future__ import annotations

import json
import os
import random
import re
import stat
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.fingerprint import simhash

REPO = Path(__file__).resolve().parents[1]
RECORD_FIELDS = {"id", "simhash", "bits", "features", "bytes", "method", "tokenizer", "options", "hash", "weighting", "sketch"}
CLUSTER_FIELDS = {"cluster", "size", "representative", "max_distance", "min_similarity", "members"}
COMMANDS = ["fingerprint", "cluster", "dedup", "exact", "select", "explain", "stats", "eval", "tokenizers", "convert", "index"]


# --- running the CLI ------------------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    @property
    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]

    @property
    def err_lines(self) -> list[str]:
        return self.stderr.splitlines()


@pytest.fixture
def run():
    """Invoke the CLI in-process; returns a :class:`Run`."""

    def _run(args, input=None, catch=True) -> Run:
        result = CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=catch)
        return Run(result.exit_code, result.stdout, result.stderr, result.exception)

    return _run


# --- corpora --------------------------------------------------------------------------------


def words(seed: int, n: int = 300) -> str:
    r = random.Random(seed)
    return " ".join(f"w{r.randrange(5000)}" for _ in range(n))


def word_tokens(text: str) -> list[str]:
    """The default tokenizer's tokens, spelled independently: CJK characters alone, other words."""
    return re.findall(r"[\u4e00-\u9fff]|[^\W\u4e00-\u9fff]+", text.lower())


def near_copy(text: str) -> str:
    tokens = text.split()
    tokens[len(tokens) // 2] = "changed"
    return " ".join(tokens)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


# File names sorted per directory (not as whole strings): A.txt < a (dir) < a-1.txt < a.txt.
WALK_ORDER = [
    "corpus/A.txt",
    "corpus/a/sub/y y.txt",
    "corpus/a/z.txt",
    "corpus/a-1.txt",
    "corpus/a.txt",
    "corpus/b.txt",
]


@pytest.fixture
def small_corpus(tmp_path, monkeypatch):
    """A small tree under tmp_path/corpus; cwd is tmp_path so ids are relative paths."""
    monkeypatch.chdir(tmp_path)
    texts = {}
    for i, name in enumerate(reversed(WALK_ORDER)):  # created out of order
        texts[name] = f"Document {i} says\nhello   World {i * 7} ünï 中文\n"
        write(tmp_path / name, texts[name])
    return texts


@pytest.fixture
def dup_corpus(tmp_path, monkeypatch):
    """Near-duplicate pairs and unrelated documents; returns the expected groups of ids."""
    monkeypatch.chdir(tmp_path)
    base, other = words(1), words(2)
    write(tmp_path / "dups/base.txt", base)
    write(tmp_path / "dups/copy.txt", near_copy(base))
    write(tmp_path / "dups/exact.txt", base)
    write(tmp_path / "dups/other.txt", other)
    write(tmp_path / "dups/other-copy.txt", near_copy(other))
    for seed in range(3, 8):
        write(tmp_path / f"dups/unrelated-{seed}.txt", words(seed))
    return {
        ("dups/base.txt", "dups/copy.txt", "dups/exact.txt"),
        ("dups/other-copy.txt", "dups/other.txt"),
    }


def member_sets(records: list[dict]) -> set[tuple[str, ...]]:
    return {tuple(m["id"] for m in r["members"]) for r in records}


def record_line(doc_id: str, value: int = 0x0123456789ABCDEF, bits: int = 64, **extra) -> str:
    obj = {"id": doc_id, "simhash": format(value, f"0{bits // 4}x"), "bits": bits, "features": 3,
           "tokenizer": "whitespace", "options": {"shingle": 1}, "hash": "xxh3", **extra}
    return json.dumps(obj)


# --- fingerprint ----------------------------------------------------------------------------


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


# --- skipped inputs -------------------------------------------------------------------------


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


@pytest.fixture
def good_pair(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "corpus/good-1.txt", "the first good document")
    write(tmp_path / "corpus/good-2.txt", "the second good document")
    return tmp_path / "corpus"


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


def test_fingerprint_encoding_option(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "简体中文 文本 测试 这是 一个 例子 简体中文\n"
    write(tmp_path / "gb.txt", text.encode("gb18030"))
    write(tmp_path / "utf8.txt", text)
    refused = run(["fingerprint", "gb.txt"])
    assert refused.exit_code == 3
    assert "--encoding" in refused.stderr
    result = run(["fingerprint", "--encoding", "gb18030", "gb.txt"])
    assert result.exit_code == 0, result.stderr
    (gb,) = result.records
    (utf8,) = run(["fingerprint", "utf8.txt"]).records
    assert gb["simhash"] == utf8["simhash"]
    assert gb["features"] == utf8["features"] == 13  # distinct characters
    assert gb["bytes"] == os.path.getsize("gb.txt")


def test_fingerprint_unknown_encoding_is_a_usage_error(run, good_pair):
    result = run(["fingerprint", "--encoding", "no-such-codec", "corpus"])
    assert result.exit_code == 2
    assert "no-such-codec" in result.stderr
    assert result.stdout == ""


def test_fingerprint_utf16(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "wide text in utf sixteen\n"
    write(tmp_path / "u16.txt", text.encode("utf-16"))
    write(tmp_path / "u8.txt", text)
    result = run(["fingerprint", "--encoding", "utf-16", "u16.txt"])
    assert result.exit_code == 0, result.stderr
    (rec,) = result.records
    assert rec["simhash"] == run(["fingerprint", "u8.txt"]).records[0]["simhash"]
    assert rec["bytes"] == os.path.getsize("u16.txt")


def test_fingerprint_utf16_without_bom_does_not_crash(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "wide text in utf sixteen\n"
    write(tmp_path / "a-bom.txt", text.encode("utf-16"))
    write(tmp_path / "b-nobom.txt", text.encode("utf-16-le"))
    result = run(["fingerprint", "--encoding", "utf-16", "a-bom.txt", "b-nobom.txt"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 3)
    assert result.records[0]["id"] == "a-bom.txt"
    assert "b-nobom.txt" in result.stdout + result.stderr


def test_fingerprint_utf8_bom_is_ignored(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "byte order marks should not matter at all\n"
    write(tmp_path / "bom.txt", b"\xef\xbb\xbf" + text.encode())
    write(tmp_path / "plain.txt", text)
    result = run(["fingerprint", "bom.txt", "plain.txt"])
    assert result.exit_code == 0, result.stderr
    bom, plain = result.records
    assert bom["simhash"] == plain["simhash"]
    assert bom["features"] == plain["features"]


# --- -o / --force ---------------------------------------------------------------------------


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
    _empty(good_pair)
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


# --- tokenizers -----------------------------------------------------------------------------


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


def test_tokenizers_command(run):
    result = run(["tokenizers"])
    assert result.exit_code == 0, result.stderr
    infos = {info["name"]: info for info in result.records}
    assert {"whitespace", "jieba"} <= set(infos)
    assert infos["whitespace"]["options"] == {"shingle": 1}
    assert infos["jieba"]["options"] == {"topk": 20}
    assert all(info["description"] for info in infos.values() if "error" not in info)


# --- cluster --------------------------------------------------------------------------------


def check_cluster(rec: dict) -> None:
    assert set(rec) | {"min_similarity"} == CLUSTER_FIELDS  # min_similarity only with sketches
    assert re.fullmatch("[0-9a-f]{16}", rec["cluster"])
    ids = [m["id"] for m in rec["members"]]
    assert rec["size"] == len(ids)
    assert ids == sorted(ids)
    assert rec["representative"] in ids
    distances = [m["distance"] for m in rec["members"]]
    assert rec["max_distance"] == max(distances)
    assert dict(zip(ids, distances))[rec["representative"]] == 0
    assert all(set(m) - {"similarity", "bytes"} == {"id", "distance"} for m in rec["members"])
    if "min_similarity" in rec:
        assert rec["min_similarity"] == min(m["similarity"] for m in rec["members"])


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
        (record_line("b").replace('"0123456789abcdef"', '81985529216486895'), "simhash"),
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


@pytest.mark.parametrize("second, named", [
    (["--bits", "128"], ("64-bit", "128-bit")),
    (["--shingle", "2"], ("shingle=1", "shingle=2")),
])
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
    data = "\n".join([
        record_line("x"),
        record_line("y"),  # same fingerprint as the first x
        record_line("x", far),  # repeated id: dropped, the first x wins
    ]) + "\n"
    result = run(["cluster", "--singletons"], input=data)
    assert result.exit_code == 0
    (warning,) = result.err_lines
    assert "x" in warning and "<stdin>:3" in warning
    ids = [m["id"] for r in result.records for m in r["members"]]
    assert sorted(ids) == ["x", "y"]
    assert member_sets(result.records) == {("x", "y")}


# --- dedup ----------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [[], ["--singletons"], ["-k", "0"], ["--shingle", "2", "-k", "10"]])
def test_dedup_equals_fingerprint_then_cluster(run, dup_corpus, options):
    fp_options = [o for o in options if o in ("--shingle", "2")]
    cl_options = [o for o in options if o not in ("--shingle", "2")]
    fps = run(["fingerprint", *fp_options, "dups"])
    two_step = run(["cluster", *cl_options], input=fps.stdout)
    one_step = run(["dedup", *options, "dups"])
    assert one_step.exit_code == two_step.exit_code == 0
    # dedup reads the texts and reports exact similarities; cluster has the sketches' estimates
    assert without_similarities(one_step.records) == without_similarities(two_step.records)
    assert one_step.stderr == ""


def without_similarities(records: list[dict]) -> list[dict]:
    return [{**{k: v for k, v in r.items() if k != "min_similarity"},
             "members": [{k: v for k, v in m.items() if k != "similarity"} for m in r["members"]]} for r in records]


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


# --- help -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [None, *COMMANDS])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(run, command, flag):
    args = [command, flag] if command else [flag]
    result = run(args)
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    if command is None:
        for name in COMMANDS:
            assert name in result.stdout


def test_version(run):
    result = run(["--version"])
    assert result.exit_code == 0
    assert "0.1.0" in result.stdout


def test_commands_are_in_readme():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert set(cli.commands) == set(COMMANDS)
    for name in cli.commands:
        assert f"`{name}" in text, name


# --- regressions -----------------------------------------------------------------------------


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


def test_fingerprint_with_plain_clirunner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.txt", "some words")
    result = CliRunner().invoke(cli, ["fingerprint", "a.txt"])
    assert result.exit_code == 0, repr(result.exception)
    assert json.loads(result.stdout)["id"] == "a.txt"


def test_a_failing_plugin_gives_one_line_not_a_traceback(run, tmp_path, monkeypatch):
    from simdedup.tokenizers import Tokenizer, register, unregister

    class Broken(Tokenizer):
        name = "broken-on-read"
        description = "raises on every document"

        def tokens(self, text):
            raise ValueError("no tokens today")

    (tmp_path / "a.txt").write_text("some text", encoding="utf-8")
    register(Broken)
    try:
        result = run(["fingerprint", "--tokenizer", "broken-on-read", tmp_path / "a.txt"])
        assert result.exit_code == 70
        assert result.err_lines == ["simdedup: error: unexpected ValueError: no tokens today (a bug: please report "
                                    "it; SIMDEDUP_DEBUG=1 shows the traceback)"]
        monkeypatch.setenv("SIMDEDUP_DEBUG", "1")
        assert isinstance(run(["fingerprint", "--tokenizer", "broken-on-read", tmp_path / "a.txt"]).exception,
                          ValueError)
    finally:
        unregister("broken-on-read")
