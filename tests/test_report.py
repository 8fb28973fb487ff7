"""simdedup report without a browser: what goes into the page, and the output rules."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from urllib.parse import unquote_to_bytes

from helpers import near_copy, words, write
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup import report
from simdedup.report import _page, diff_spans, file_link

DATA_BLOCK = re.compile(rb'<script type="application/json" id="report-data">(.*?)</script>', re.S)

# any text: every category, lone surrogates and the characters HTML and JavaScript give meaning to
HOSTILE_TEXT = st.lists(
    st.one_of(
        st.text(st.characters(codec=None)),
        st.sampled_from(list("<>&\"'/!-\u2028\u2029\u202e\x00")),
        st.sampled_from(["</script>", "<!--", "<script>", "{{DATA}}", "{{SCRIPT}}"]),
    )
).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(HOSTILE_TEXT, min_size=1, max_size=6))
def test_corpus_strings_reach_the_page_only_inside_its_data_and_read_back_the_same(strings):
    data = {"ids": strings, "texts": strings[::-1], "settings": [[s, s] for s in strings]}
    page = _page(data)
    page.decode("utf-8")  # valid UTF-8, lone surrogates escaped
    (block,) = DATA_BLOCK.findall(page)
    assert not set(block.decode()) & set("<>&\u2028\u2029")
    assert json.loads(block) == data
    # the page's markup is the template's: two script elements, and nothing of the data outside the block
    assert page.count(b"<script") == 2 and page.count(b"</script>") == 2


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=30).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
def test_a_link_is_a_relative_percent_encoded_path_to_the_file_whatever_its_name(tmp_path_factory, name):
    folder = tmp_path_factory.mktemp("links")
    path = os.fsencode(folder) + b"/" + name
    with open(path, "wb") as handle:
        handle.write(b"text")
    link = file_link(os.fsdecode(path), os.fsdecode(folder))
    assert re.fullmatch(r"\./[A-Za-z0-9%._~/-]+", link)
    assert unquote_to_bytes(link[2:]) == name


def test_no_link_for_an_id_that_is_not_a_regular_file(tmp_path):
    assert file_link(str(tmp_path), str(tmp_path)) is None
    assert file_link("rows.jsonl:3", str(tmp_path)) is None
    assert file_link("javascript:alert(1)", str(tmp_path)) is None


def test_differing_words_and_chinese_characters_are_marked_in_utf16_offsets():
    a, b = "one two three  four", "one 2 three\nfour"
    spans_a, spans_b = diff_spans(a, b)
    assert [a[s:e] for s, e in zip(spans_a[::2], spans_a[1::2])] == ["two"]
    assert [b[s:e] for s, e in zip(spans_b[::2], spans_b[1::2])] == ["2"]  # re-wrapping is no change
    spans_a, spans_b = diff_spans("今天天气很好", "今天天气不好")
    assert (spans_a, spans_b) == ([4, 5], [4, 5])
    emoji = "\U0001f600 x y"  # two UTF-16 units before the changed word
    assert diff_spans(emoji, "\U0001f600 x z")[0] == [5, 6]


def report_corpus(root: Path) -> Path:
    base, other = words(1), words(2)
    write(root / "c/a.txt", base)
    write(root / "c/b.txt", near_copy(base))
    write(root / "c/x.txt", other)
    write(root / "c/y.txt", near_copy(other))
    return root / "c"


def page_data(path: Path) -> dict:
    (block,) = DATA_BLOCK.findall(path.read_bytes())
    return json.loads(block)


def test_report_is_deterministic_and_never_written_over_an_input(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report_corpus(tmp_path)
    assert run(["dedup", "--silent", "c", "-o", "clusters.jsonl"]).exit_code == 0
    assert run(["report", "clusters.jsonl", "--documents", "c", "-o", "one.html"]).exit_code == 0
    assert run(["dedup", "--silent", "c", "-o", "again.jsonl", "--report", "two.html"]).exit_code == 0
    assert run(["report", "again.jsonl", "--documents", "c", "-o", "three.html"]).exit_code == 0
    assert Path("one.html").read_bytes() == Path("three.html").read_bytes()
    assert page_data(Path("two.html"))["overview"]["documents"] == 4
    before = {p: p.read_bytes() for p in Path("c").iterdir()}
    for args in (
        ["report", "clusters.jsonl", "-o", "c/b.txt", "--force"],  # a member
        ["report", "clusters.jsonl", "-o", "clusters.jsonl", "--force"],
        ["dedup", "--silent", "c", "-o", "x.jsonl", "--report", "c/a.txt", "--force"],
        ["dedup", "--silent", "c", "-o", "x.jsonl", "--report", "x.jsonl"],
        ["report", "clusters.jsonl", "-o", "one.html"],
    ):  # exists, no --force
        result = run(args)
        assert result.exit_code == 2, (args, result.stderr)
        assert len(result.err_lines) == 1 or "Usage" in result.stderr
    assert {p: p.read_bytes() for p in Path("c").iterdir()} == before
    assert Path("clusters.jsonl").read_bytes() == Path("again.jsonl").read_bytes()
    assert not Path("x.jsonl").exists()


def test_max_bytes_cuts_the_texts_with_a_mark_and_bounds_the_file(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report_corpus(tmp_path)
    assert run(["dedup", "--silent", "c", "-o", "clusters.jsonl"]).exit_code == 0
    assert run(["report", "clusters.jsonl", "--documents", "c", "-o", "whole.html"]).exit_code == 0
    whole = Path("whole.html").stat().st_size
    limit = whole - 2000
    assert run(["report", "clusters.jsonl", "--documents", "c", "-o", "cut.html", "--max-bytes", limit]).exit_code == 0
    assert Path("cut.html").stat().st_size <= limit
    data = page_data(Path("cut.html"))
    assert all(n > len(t) for n, t in zip(data["lengths"], data["texts"]))  # each cut, and says so
    too_small = run(["report", "clusters.jsonl", "-o", "none.html", "--max-bytes", 1000])
    assert too_small.exit_code == 1 and len(too_small.err_lines) == 1
    assert not Path("none.html").exists()


def test_members_without_a_text_are_reported_and_the_page_is_still_written(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report_corpus(tmp_path)
    assert run(["dedup", "--silent", "c", "-o", "clusters.jsonl"]).exit_code == 0
    os.remove("c/b.txt")
    os.remove("c/y.txt")
    os.mkfifo("c/y.txt")  # a FIFO named by a cluster line is never opened (it would block)
    result = run(["report", "clusters.jsonl", "--documents", "c", "-o", "r.html"])
    assert result.exit_code == 3
    assert sorted(line.split(": ")[2] for line in result.err_lines) == ["c/b.txt", "c/y.txt"]
    data = page_data(Path("r.html"))
    assert sorted(data["ids"][int(i)] for i in data["missing"]) == ["c/b.txt", "c/y.txt"]


_WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "中", "文", ",", ".", "\n", "\n\n", " "])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_WORDS, max_size=60),
    st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["", "dog", "文", "\n"])), max_size=6),
)
def test_the_unmarked_words_of_both_sides_are_one_sequence(words, edits):
    """Whatever lines are matched first, a diff leaves the same tokens unmarked on both sides,
    in order, and marks nothing in two equal texts."""
    a = " ".join(words)
    changed = list(words)
    for position, word in edits:  # replace, insert or delete a word
        position = min(position, len(changed))
        changed[position : position + 1] = [word] if word else []
    b = " ".join(changed)

    def unmarked(text, spans):
        marked = set()
        for start, end in zip(spans[::2], spans[1::2]):
            marked.update(range(start, end))
        return [t.group() for t in report._DIFF_TOKEN.finditer(text) if t.start() not in marked]

    spans_a, spans_b = report.diff_spans(a, b)
    assert unmarked(a, spans_a) == unmarked(b, spans_b)
    assert report.diff_spans(a, a) == ([], [])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(5, 60), min_size=3, max_size=40), st.integers(0, 2**32))
def test_a_rewrapped_text_marks_only_the_words_changed(line_widths, seed):
    """The same words wrapped at other widths (blank lines between paragraphs) mark nothing but
    the words that differ: a blank line anchors no alignment (issue 43: a re-wrapped copy was
    marked whole)."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    text = [rng.choice(vocabulary) for _ in range(sum(line_widths))]
    changed = list(text)
    edited = set()
    for _ in range(rng.randrange(0, 4)):
        at = rng.randrange(len(changed))
        changed[at] = "EDITED"
        edited.add(at)

    def wrapped(tokens, widths):
        lines, at = [], 0
        for n, width in enumerate(widths):
            lines.append(" ".join(tokens[at : at + width]))
            at += width
            if n % 4 == 3:
                lines.append("")  # a paragraph ends
        return "\n".join(lines)

    a = wrapped(text, line_widths)
    b = wrapped(changed, [sum(line_widths[i : i + 3]) for i in range(0, len(line_widths), 3)])
    spans_a, spans_b = diff_spans(a, b)
    marked_b = " ".join(b[s:e] for s, e in zip(spans_b[::2], spans_b[1::2])).split()
    assert marked_b == ["EDITED"] * len(edited)
    marked_a = " ".join(a[s:e] for s, e in zip(spans_a[::2], spans_a[1::2])).split()
    assert sorted(marked_a) == sorted(text[at] for at in edited)


def test_the_rewrapped_example_is_marked_at_its_edits_only():
    a = (Path(__file__).parent.parent / "examples/en/sourdough-loaf-recipe-rewrapped.txt").read_text()
    b = (Path(__file__).parent.parent / "examples/en/sourdough-loaf-recipe.txt").read_text()
    spans_a, _ = diff_spans(a, b)
    marked = [a[s:e] for s, e in zip(spans_a[::2], spans_a[1::2])]
    assert "crackly" in marked and sum(map(len, marked)) < len(a) // 10


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.floats(0.5, 1.0)), st.integers(0, 3), st.booleans()), min_size=2, max_size=12
    ),
    st.data(),
)
def test_the_member_compared_first_is_the_one_that_most_needs_a_look(members, data):
    """Never the representative, never a copy of its text while another member differs; among
    the others the least similar by the score of the cluster line."""
    rep = data.draw(st.integers(0, len(members) - 1))
    rows = [[k, 100, 0, score, True] for k, (score, _, _) in enumerate(members)]
    same = [rep if identical and k != rep else k for k, (_, _, identical) in enumerate(members)]
    same = [min(k, s) for k, s in enumerate(same)]  # the first of the identical texts
    diffs = [None if k == rep else ([0, marks], [0, marks]) for k, (_, marks, _) in enumerate(members)]
    chosen = report._first_compared(rows, diffs, same, rep)
    others = [k for k in range(len(members)) if k != rep]
    assert chosen in others
    differing = [k for k in others if same[k] != same[rep]]
    if differing:
        assert chosen in differing
        scores = [rows[k][3] for k in differing if rows[k][3] is not None]
        if scores:
            assert rows[chosen][3] == min(scores)


def test_the_examples_compare_an_edited_member_not_a_copy(run, tmp_path):
    """A cluster of the representative, a byte-identical copy and an edited copy shows the
    edited one beside the representative."""
    base = words(7, 300)
    write(tmp_path / "c" / "a.txt", base)
    write(tmp_path / "c" / "a-copy.txt", base)
    write(tmp_path / "c" / "b.txt", near_copy(base))
    assert run(["dedup", "--silent", tmp_path / "c", "--report", tmp_path / "r.html"]).exit_code == 0
    data = json.loads(DATA_BLOCK.search((tmp_path / "r.html").read_bytes()).group(1))
    (cluster,) = data["clusters"]
    shown = data["ids"][cluster["members"][cluster["compare"]][0]]
    assert shown.endswith("b.txt"), shown


SETTING_OPTIONS = [
    (),
    ("-k", "5"),
    ("-k", "4", "--bands"),
    ("--linkage", "single", "--singletons"),
    ("--linkage", "star", "--verify", "sketch"),
    ("--similarity", "combined"),
    ("--sketch-of", "features", "-k", "8", "--similarity", "bag"),
    ("--verify", "sketch", "-k", "3"),
]


def test_the_settings_are_shown_in_words(run, tmp_path):
    """Every setting of dedup --report reads as words: nothing left as JSON (null, true, {...})."""
    examples = Path(__file__).parent.parent / "examples"
    for n, options in enumerate(SETTING_OPTIONS):
        page = tmp_path / f"r{n}.html"
        done = run(["dedup", "--silent", *options, examples / "en", "--report", page])
        assert done.exit_code == 0, (options, done.stderr)
        settings = dict(json.loads(DATA_BLOCK.search(page.read_bytes()).group(1))["settings"])
        assert {"candidates", "duplicates", "linkage", "fingerprints"} <= set(settings)
        for label, value in settings.items():
            assert value and not re.search(r"\b(null|None|true|false)\b|[{}\[\]]", value), (options, label, value)
        if "-k" in options:
            assert f"k = {options[options.index('-k') + 1]} bits (-k)" in settings["candidates"]
        else:
            assert "(the default), and pairs whose sketches share a band" in settings["candidates"]
