"""simdedup.read.walk: finding the documents (walk order, filters, links, FIFOs) and lists of paths."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from helpers import invoke, write_file
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simdedup.read import Source, iter_sources, read_path_list


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


def test_iter_sources_walks_recursively_in_sorted_order_per_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Created out of order; names chosen so that sorting per directory (by entry name) differs
    # from sorting whole path strings ("a-1.txt" < "a.txt" < "a/..." as strings).
    for name in [
        "corpus/b.txt",
        "corpus/a.txt",
        "corpus/a/z.txt",
        "corpus/a-1.txt",
        "corpus/a/sub/y.txt",
        "corpus/A.txt",
    ]:
        write_file(tmp_path / name, "x\n")
    got = list(iter_sources(["corpus"]))
    assert got == [
        Source("corpus/A.txt"),
        Source("corpus/a/sub/y.txt"),
        Source("corpus/a/z.txt"),
        Source("corpus/a-1.txt"),
        Source("corpus/a.txt"),
        Source("corpus/b.txt"),
    ]


def test_iter_sources_keeps_explicit_paths_as_given_and_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_file(tmp_path / "d" / "b.txt", "x")
    write_file(tmp_path / "d" / "a.txt", "x")
    got = list(iter_sources(["d/b.txt", "./d/a.txt", "missing.txt"]))
    assert got[0] == Source("d/b.txt")
    assert got[1] == Source("./d/a.txt")
    assert got[2].path == "missing.txt"
    assert "no such file" in got[2].reason


def test_explicit_links_are_told_apart_from_what_they_name(tmp_path, monkeypatch):
    """Named on the command line: a broken link, a link to a directory (walked), a link to a
    file (read once, after the file, as another name of it), a missing path."""
    monkeypatch.chdir(tmp_path)
    write_file(tmp_path / "d" / "a.txt", "x")
    os.symlink("nowhere.txt", "broken")
    os.symlink("d", "dir-link")
    os.symlink("d/a.txt", "file-link")
    got = list(iter_sources(["broken", "file-link", "missing", "d/a.txt", "dir-link"]))
    by_path = {s.path: s for s in got}
    assert "broken symbolic link" in by_path["broken"].reason
    assert "no such file or directory" in by_path["missing"].reason
    assert by_path["d/a.txt"].reason is None
    assert by_path["file-link"].same_file and by_path["file-link"].path == got[-1].path  # links last
    assert "dir-link/a.txt" in by_path and by_path["dir-link/a.txt"].same_file


def test_iter_sources_reports_problem_entries_during_walk(tmp_path):
    top = tmp_path / "c"
    good = write_file(top / "good.txt", "x")
    os.mkfifo(top / "pipe")
    os.symlink(top, top / "loop")  # a directory symlink loop
    os.symlink(top / "nowhere", top / "broken")
    got = {s.path: s.reason for s in iter_sources([str(top)])}
    assert got[good] is None
    assert "broken symbolic link" in got[str(top / "broken")]
    assert "FIFO" in got[str(top / "pipe")]
    assert str(top / "loop") not in got  # a link back into the tree is not followed
    assert len(got) == 3


def test_walk_follows_links_leading_out_of_the_tree_once(tmp_path):
    outside = write_file(tmp_path / "outside" / "o.txt", "x")
    top = tmp_path / "c"
    write_file(top / "a.txt", "x")
    os.symlink(tmp_path / "outside", top / "l1")
    os.symlink(tmp_path / "outside", top / "l2")
    got = [s.path for s in iter_sources([str(top)])]
    assert got == [str(top / "a.txt"), str(top / "l1" / "o.txt")]
    assert os.path.realpath(got[1]) == os.path.realpath(outside)


def test_iter_sources_explicit_fifo_is_a_readable_source(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # Must not open (and so block on) the FIFO: only stat it.
    assert list(iter_sources([str(fifo)])) == [Source(str(fifo))]


def test_iter_sources_is_lazy(tmp_path):
    write_file(tmp_path / "a.txt", "x")

    def names():
        yield str(tmp_path / "a.txt")
        raise AssertionError("read too far")

    it = iter_sources(names())
    assert next(it) == Source(str(tmp_path / "a.txt"))


@pytest.mark.parametrize(
    "data, null, expected",
    [
        (b"a.txt\nb c.txt\n", False, ["a.txt", "b c.txt"]),
        (b"a.txt\nb.txt", False, ["a.txt", "b.txt"]),  # no final newline
        (b"a.txt\r\nb.txt\r\n", False, ["a.txt", "b.txt"]),  # CRLF
        (b"\n\na.txt\n\n\nb.txt\n\n", False, ["a.txt", "b.txt"]),  # empty lines ignored
        (b"\r\n", False, []),
        (b"", False, []),
        (b"a.txt\0b\nc.txt\0", True, ["a.txt", "b\nc.txt"]),  # newline inside a NUL-separated name
        (b"a\r\0b.txt", True, ["a\r", "b.txt"]),  # NUL mode keeps a trailing CR
        (b"\0\0a.txt\0\0", True, ["a.txt"]),
        (b"a.txt\0b.txt", True, ["a.txt", "b.txt"]),
        (b"one two.txt\n", True, ["one two.txt\n"]),  # NUL mode does not split on newline
    ],
)
def test_read_path_list(data, null, expected):
    assert list(read_path_list(io.BytesIO(data), null)) == expected


def test_read_path_list_entry_spanning_read_blocks():
    names = [f"dir/{i:06d}-{'x' * 50}.txt" for i in range(3000)]  # > 64 KiB in total
    data = "\n".join(names).encode()
    assert len(data) > 3 * (1 << 16)
    assert list(read_path_list(io.BytesIO(data))) == names
    assert list(read_path_list(io.BytesIO(data.replace(b"\n", b"\0")), True)) == names


def test_read_path_list_undecodable_bytes_round_trip():
    raw = b"caf\xe9.txt"  # Latin-1 name, not UTF-8
    (name,) = read_path_list(io.BytesIO(raw + b"\n"))
    assert os.fsencode(name) == raw


@pytest.mark.parametrize("seed", range(8))
def test_every_link_is_named_for_where_it_leads(tmp_path, seed):
    """Generated graphs of symbolic links (to other links, to files, to nothing, to themselves):
    each is read as the file it reaches, or said to be a loop or broken, in a walk and named."""
    import random

    rng = random.Random(seed)
    top = tmp_path / "links"
    top.mkdir()
    names = [f"l{i}" for i in range(rng.randint(2, 7))]
    targets = {}
    for name in names:
        kind = rng.choice(["link", "link", "file", "nothing"])
        targets[name] = rng.choice(names) if kind == "link" else f"{name}.txt" if kind == "file" else "gone"
        if kind == "file":
            (top / f"{name}.txt").write_text("text")
        os.symlink(targets[name], top / name)

    def expected(name: str) -> str:
        seen = set()
        while name in targets:
            if name in seen:
                return "symbolic link loop"
            seen.add(name)
            name = targets[name]
        return "file" if name != "gone" else "broken symbolic link"

    walked = {os.path.basename(s.path): s for s in iter_sources([str(top)])}
    named = {os.path.basename(s.path): s for s in iter_sources([str(top / n) for n in names])}
    for name in names:
        want = expected(name)
        for found in (walked, named):
            if want == "file":  # read, under its own name or as another name of a file read
                assert found[name].reason is None or found[name].same_file
            else:
                assert found[name].reason.startswith(want), (name, want, found[name].reason)


#: a set of characters as fnmatch reads it: '[', an optional '!', an optional first ']', the rest up to ']'
#: (possessive: taken once, never given back, as fnmatch's scan)
_SET = re.compile(r"\[!?+\]?+[^\]]*\]")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]!*?a/-", max_size=8))
@example("[")  # issue 42: matched nothing, without a word
@example("[]")
@example("[!]")
@example("[]]")
def test_a_pattern_is_refused_exactly_when_a_bracket_never_closes(pattern):
    from simdedup.errors import UsageError
    from simdedup.read import WalkFilter
    from simdedup.read.walk import glob_problem

    unclosed = "[" in _SET.sub("", pattern)
    assert (glob_problem(pattern) is not None) == (unclosed or pattern == "")
    if glob_problem(pattern) is None:
        WalkFilter(globs=(pattern,), excludes=(pattern,))
    else:
        with pytest.raises(UsageError):
            WalkFilter(globs=(pattern,))


def test_an_invalid_glob_is_a_usage_error_in_one_line(tmp_path):
    write_file(tmp_path / "[a.txt", "x")
    for option in ("--glob", "--exclude"):
        result = invoke("fingerprint", option, "[", tmp_path)
        assert result.exit_code == 2 and result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1 and "never closed" in result.stderr
    assert json.loads(invoke("fingerprint", "--glob", "[[]a.txt", tmp_path).stdout)["id"].endswith("[a.txt")
