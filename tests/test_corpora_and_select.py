"""JSON-lines and compressed inputs; acting on clusters (select, --format members)."""

import bz2
import gzip
import json
import lzma
import os

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.read import Source
from simdedup.read.tables import expand_tables, iter_jsonl_lines
from simdedup.select import POLICIES, kept_member, selection
from simdedup.methods import SimhashMethod
from simdedup.run import fingerprint_batch
from simdedup.tokenizers import get_tokenizer


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


TEXT = " ".join(f"word{i}" for i in range(60))


def rows():
    return [
        {"id": "a", "body": {"text": TEXT}},
        {"id": "b", "body": {"text": TEXT + " plus one"}},
        {"id": "c", "body": {"text": " ".join(f"other{i}" for i in range(60))}},
    ]


def test_zstandard(tmp_path, monkeypatch):
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(json.dumps(r) for r in rows()) + "\n").encode()))
    result = invoke("fingerprint", "--silent", "--text-field", "body.text", "--id-field", "id", path)
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a", "b", "c"]
    import sys

    monkeypatch.setitem(sys.modules, "zstandard", None)
    without = invoke("fingerprint", "--silent", path)
    assert without.exit_code == 3 and "pip install zstandard" in without.stderr


def test_iter_jsonl_fields_ids_and_bad_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(r) for r in rows()] + ["not json", json.dumps({"id": "x"}), json.dumps({"id": "y", "body": {"text": 3}}), ""]
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
    result = invoke("fingerprint", "--silent", "--text-field", "body.text", "--id-field", "id",
                    tmp_path / f"d.jsonl{suffix}", tmp_path / f"plain.txt{suffix}")
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


def test_members_format(tmp_path):
    for name, text in (("a.txt", TEXT), ("b.txt", TEXT + " plus"), ("c.txt", "unrelated words " * 30)):
        (tmp_path / name).write_text(text)
    result = invoke("dedup", "--silent", "--format", "members", tmp_path)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [os.path.basename(line["id"]) for line in lines] == ["a.txt", "b.txt"]
    assert {line["cluster"] for line in lines} == {lines[0]["cluster"]}
    assert sum(line["kept"] for line in lines) == 1
    assert all(set(line) == {"id", "cluster", "kept", "distance", "similarity"} for line in lines)


# --- select ---------------------------------------------------------------------------------

clusters_strategy = st.lists(
    st.lists(st.tuples(st.text("abcxyz", min_size=1, max_size=4), st.integers(0, 50)), min_size=2, max_size=6,
             unique_by=lambda t: t[0]),
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(clusters_strategy, st.sampled_from(["representative", "first", "longest", "shortest"]))
def test_select_never_drops_a_whole_cluster(raw, policy):
    # a document is in one cluster: make ids distinct across clusters
    clusters = [([{"id": f"{n}-{i}", "bytes": b} for i, b in members], f"{n}-{members[-1][0]}")
                for n, members in enumerate(raw)]
    chosen = selection(clusters, policy)
    assert len(chosen.kept) == len(clusters) and chosen.held == []
    assert len(chosen.dropped) == sum(len(members) - 1 for members, _ in clusters)
    for (members, _), survivor in zip(clusters, chosen.kept):
        ids = {m["id"] for m in members}
        assert survivor in ids
        assert ids - set(chosen.dropped) == {survivor}  # every other member is dropped, the survivor not


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5, unique=True), max_size=6),
       st.sampled_from(["first", "longest", "shortest"]))
def test_select_never_drops_what_any_cluster_keeps(raw, policy):
    # ids repeated across cluster lines (concatenated or edited cluster files)
    clusters = [([{"id": i, "bytes": ord(i) % 3} for i in members], None) for members in raw]
    chosen = selection(clusters, policy)
    assert not set(chosen.dropped) & set(chosen.kept)
    for members, _ in clusters:
        assert {m["id"] for m in members} & set(chosen.kept)  # no cluster loses all its members
    assert len(chosen.dropped) == len(set(chosen.dropped))


def test_policies_on_a_hand_made_cluster(tmp_path):
    paths = []
    for i, (name, size) in enumerate((("b.txt", 30), ("a.txt", 10), ("c.txt", 30))):
        path = tmp_path / name
        path.write_text("x" * size)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
        paths.append(str(path))
    members = [{"id": p} for p in sorted(paths)]  # a.txt (10, t+1), b.txt (30, t+0), c.txt (30, t+2)
    name = {m["id"]: os.path.basename(m["id"]) for m in members}
    assert name[kept_member(members, "first")] == "a.txt"
    assert name[kept_member(members, "longest")] == "b.txt"  # tie with c.txt: smallest id
    assert name[kept_member(members, "shortest")] == "a.txt"
    assert name[kept_member(members, "newest")] == "c.txt"
    assert name[kept_member(members, "oldest")] == "b.txt"
    assert name[kept_member(members, "representative", members[2]["id"])] == "c.txt"
    assert set(POLICIES) == {"representative", "first", "longest", "shortest", "newest", "oldest"}


def test_select_cli(tmp_path):
    line = json.dumps({"representative": "z", "members": [{"id": "x", "bytes": 5}, {"id": "y", "bytes": 9},
                                                           {"id": "z", "bytes": 1}]})
    assert invoke("select", "--keep", "longest", input=line + "\n").stdout == "x\nz\n"
    assert invoke("select", "--keep", "longest", "--kept", input=line).stdout == "y\n"
    assert invoke("select", "--keep", "first", "-0", input=line).stdout == "y\0z\0"
    assert invoke("select", input=line).stdout == "x\ny\n"  # the representative stays by default
    bad = invoke("select", input="{}\n")
    assert bad.exit_code == 1 and "<stdin>:1:" in bad.stderr
    missing = invoke("select", "--keep", "newest", input=json.dumps({"members": [{"id": str(tmp_path / "gone")}, {"id": "q"}]}))
    assert missing.exit_code == 1 and "cannot look at" in missing.stderr


def test_walk_filters(tmp_path):
    from simdedup.read import WalkFilter, iter_sources

    for rel, size in (("keep/a.txt", 50), ("keep/b.md", 50), ("keep/tiny.txt", 3), ("drafts/c.txt", 50)):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x" * size)
    walk = lambda f: sorted(os.path.relpath(s.path, tmp_path) for s in iter_sources([str(tmp_path)], f))  # noqa: E731
    assert walk(WalkFilter()) == ["drafts/c.txt", "keep/a.txt", "keep/b.md", "keep/tiny.txt"]
    assert walk(WalkFilter(globs=("*.txt",))) == ["drafts/c.txt", "keep/a.txt", "keep/tiny.txt"]
    assert walk(WalkFilter(excludes=("drafts",))) == ["keep/a.txt", "keep/b.md", "keep/tiny.txt"]
    assert walk(WalkFilter(globs=("keep/*",), min_bytes=10)) == ["keep/a.txt", "keep/b.md"]
    # a file named explicitly is read whatever the filters say
    explicit = list(iter_sources([str(tmp_path / "keep/tiny.txt")], WalkFilter(min_bytes=10)))
    assert explicit == [Source(str(tmp_path / "keep/tiny.txt"))]
    cli_run = invoke("fingerprint", "--silent", "--glob", "*.md", tmp_path)
    assert [json.loads(line)["id"] for line in cli_run.stdout.splitlines()] == [str(tmp_path / "keep/b.md")]


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


ENCODINGS = os.path.join(os.path.dirname(__file__), "fixtures", "encodings")


@pytest.mark.parametrize("name, explicit", [("gb18030.txt", "gb18030"), ("big5.txt", "big5"),
                                            ("shift_jis.txt", "shift_jis"), ("utf-16.txt", "utf-16")])
def test_legacy_encodings(tmp_path, name, explicit):
    path = os.path.join(ENCODINGS, name)
    utf8 = tmp_path / "utf8.txt"
    with open(path + ".expected", encoding="utf-8") as handle:
        utf8.write_text(handle.read(), encoding="utf-8")
    reference = json.loads(invoke("fingerprint", "--silent", utf8).stdout)
    auto = invoke("fingerprint", "--silent", "-v", "--encoding", "auto", path)
    assert auto.exit_code == 0, auto.stderr
    assert json.loads(auto.stdout)["simhash"] == reference["simhash"]
    assert "read as" in auto.stderr  # -v names the chosen encoding
    given = invoke("fingerprint", "--silent", "--encoding", explicit, path)
    assert json.loads(given.stdout)["simhash"] == reference["simhash"]
    plain = invoke("fingerprint", "--silent", path)  # UTF-8 by default: skipped with a hint
    assert plain.exit_code == 3 and plain.stdout == ""
    assert "--encoding" in plain.stderr or "binary" in plain.stderr


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


def test_csv_and_tsv(tmp_path):
    import csv

    with open(tmp_path / "d.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "body"])
        for r in rows():
            writer.writerow([r["id"], r["body"]["text"]])
    (tmp_path / "d.tsv").write_text("key\tbody\nt1\t" + TEXT + "\n")
    result = invoke("dedup", "--silent", "--text-field", "body", "--id-field", "key", tmp_path / "d.csv", tmp_path / "d.tsv")
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


# --- JSON lines read where they are fingerprinted ------------------------------------------------

json_lines = st.lists(
    st.one_of(
        st.builds(lambda t, i: json.dumps({"text": t, "id": i}, ensure_ascii=False), st.text(max_size=30),
                  st.text(max_size=5)),
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
    old = tables.SPAN_BYTES
    tables.SPAN_BYTES = span
    try:
        stretches = list(tables.iter_jsonl_unparsed(str(path), "text", id_field))
    finally:
        tables.SPAN_BYTES = old
    got = [(d.path, d.reason, d.text) for s in stretches for d in tables.documents(s)]
    want = [(d.path, d.reason, d.text) for d, _ in iter_jsonl_lines(str(path), "text", id_field)]
    assert got == want
    assert all(s.span is not None for s in stretches)


def test_jsonl_on_two_workers_equals_one(tmp_path, monkeypatch):
    import simdedup.read.tables as tables

    monkeypatch.setattr(tables, "SPAN_BYTES", 300)  # many stretches, so both workers take some
    lines = [json.dumps({"text": f"{TEXT} {i % 7} variant {i}", "id": f"d{i}"}) for i in range(200)]
    lines[50] = "not json"
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    one = invoke("fingerprint", "--silent", "-j", "1", "--id-field", "id", tmp_path / "d.jsonl")
    two = invoke("fingerprint", "--silent", "-j", "2", "--id-field", "id", tmp_path / "d.jsonl")
    assert one.exit_code == two.exit_code == 3  # the bad line is skipped, with a warning
    assert one.stdout == two.stdout and one.stdout.count("\n") == 199
    assert "d.jsonl:51: not a JSON object" in two.stderr


class _DiesOnSomeDocument(SimhashMethod):
    """Kills its own (worker) process when it meets the document named "die"."""

    def fingerprint_batch(self, documents):
        import signal

        documents = list(documents)
        if any(document.id.endswith("die") for document in documents):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().fingerprint_batch(documents)


def test_a_killed_worker_stops_the_run_with_a_message(tmp_path, alarm):
    """multiprocessing.Pool would wait forever for the lost batch."""
    from simdedup.errors import SimdedupError
    from simdedup.run import BATCH_SOURCES, fingerprint_batches

    sources = [Source(f"t{i}", text=f"document number {i}") for i in range(5 * BATCH_SOURCES)]
    sources[3 * BATCH_SOURCES] = Source("die", text="the end")
    fingerprinter = _DiesOnSomeDocument(get_tokenizer("words"))
    done = []
    with pytest.raises(SimdedupError, match="worker process died"):
        for batch in fingerprint_batches(sources, fingerprinter, jobs=2):
            done.append(batch)
    assert len(done) <= 3  # the batches before it, in order
    assert [r.id for batch in done for r in batch.records] == [f"t{i}" for i in range(len(done) * BATCH_SOURCES)]
