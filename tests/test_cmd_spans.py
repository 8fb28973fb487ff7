"""``simdedup spans find|strip``: repeated units found as a brute force finds them, the first
copy kept in the order of ids and offsets, the same output at any -j and in any input order,
and stripped documents that lose only whole units."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup.similarity import ExactIndex, KeptText
from simdedup.spans.units import normalized, units, weights

SENTENCES = [
    "The quick brown fox jumps over the lazy dog near the river bank today.",
    "Copyright (c) 2024 The Example Project authors, all rights reserved worldwide.",
    "Licensed under the Apache License, Version 2.0; you may not use this file except in compliance.",
    "这是一个用来测试中文段落重复检测的句子，它足够长，可以被当作一个单位。",
    "日本語の文章もここに含まれていて、重複の検出が正しく動くかどうかを確かめる。",
    "Short line.",
    "NAME",
    "• item",
    "Dr. Smith measured 3.14 meters at http://example.com/page.html before lunch.",
    "Ὀδυσσεύς sailed home across the wine-dark sea for ten long years and more.",
]


def _corpus(r: random.Random, documents: int) -> dict[str, str]:
    """Documents of paragraphs of sentences drawn from a small pool (so that they repeat),
    with a unique sentence in each paragraph now and then."""
    corpus = {}
    for d in range(documents):
        paragraphs = []
        for p in range(r.randrange(1, 5)):
            sentences = r.sample(SENTENCES, r.randrange(1, 3))
            if r.random() < 0.4:
                sentences.append(f"Unique words {d} {p} " + " ".join(f"w{r.randrange(10**6)}" for _ in range(12)) + ".")
            paragraphs.append(" ".join(sentences))
        corpus[f"doc-{d:03d}.txt"] = "\n\n".join(paragraphs) + "\n"
    return corpus


def _write_corpus(root: Path, corpus: dict[str, str]) -> Path:
    for name, text in corpus.items():
        write(root / "c" / name, text)
    return root / "c"


def _spans(run, args) -> list[dict]:
    result = run(["spans", "find", "--silent", *args])
    assert result.exit_code == 0, result.stderr
    return result.records


@pytest.mark.parametrize("unit", ["paragraph", "line", "sentence"])
def test_exact_repeats_are_the_brute_force_ones(run, tmp_path, monkeypatch, unit):
    """With --exact-only, a unit is removed exactly when a unit of the same text (white space
    aside) of at least --min-words words comes before it in (id, offset) order; it repeats the
    first of them, and counts the documents that hold that text."""
    monkeypatch.chdir(tmp_path)
    corpus = _corpus(random.Random(unit), 12)
    _write_corpus(tmp_path, corpus)
    found = _spans(run, ["--unit", unit, "--exact-only", "--max-removed", "1", "-j", "1", "c"])
    by_text = defaultdict(list)
    for name in sorted(corpus):
        text = corpus[name]
        spans = units(text, unit)
        for (start, end), weight in zip(spans, weights(text, spans)):
            if weight >= 10:
                by_text[normalized(text[start:end])].append((f"c/{name}", start, end))
    expected = {}
    for copies in by_text.values():
        holders = len({doc for doc, _, _ in copies})
        for doc, start, end in copies[1:]:
            expected.setdefault(doc, []).append((start, end, copies[0][0], copies[0][1], holders))
    expected = {doc: sorted(spans) for doc, spans in expected.items()}
    got = {
        record["id"]: [
            (s["start_char"], s["end_char"], s["repeats"]["id"], s["repeats"]["start_char"], s["documents"])
            for s in record["spans"]
        ]
        for record in found
    }
    assert got == expected
    assert [r["id"] for r in found] == sorted(r["id"] for r in found)


def test_near_duplicates_resemble_a_kept_copy(run, tmp_path, monkeypatch):
    """Every removed span resembles the copy it repeats at --min-resemblance or more (measured
    here on its own), that copy is kept, and near copies with a changed word are found."""
    monkeypatch.chdir(tmp_path)
    base = " ".join(f"word{i}" for i in range(40))
    edited = base.replace("word20", "changed")
    write(tmp_path / "c" / "a.txt", f"Intro a.\n\n{base}\n")
    write(tmp_path / "c" / "b.txt", f"Intro b.\n\n{edited}\n")
    write(tmp_path / "c" / "c.txt", f"Intro c.\n\n{base.upper()}\n")
    found = _spans(run, ["--max-removed", "1", "c"])
    texts = {name: (tmp_path / name).read_text() for name in ("c/a.txt", "c/b.txt", "c/c.txt")}
    removed = {(r["id"], s["start_char"]) for r in found for s in r["spans"]}
    assert {r["id"] for r in found} == {"c/b.txt", "c/c.txt"}
    for record in found:
        for span in record["spans"]:
            copy = span["repeats"]
            assert (copy["id"], copy["start_char"]) not in removed
            a = texts[record["id"]][span["start_char"] : span["end_char"]]
            b = texts[copy["id"]][copy["start_char"] : copy["end_char"]]
            measured = ExactIndex([KeptText(a), KeptText(b)]).jaccard("grams", [0], [1])[0]
            assert measured >= 0.8 and abs(measured - span["similarity"]) < 0.001


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6))
def test_same_output_at_any_jobs_and_input_order(seed, run, tmp_path_factory):
    """-j 1, -j 2, the files named in another order and the same documents as JSON lines in
    another order give the same bytes."""
    root = tmp_path_factory.mktemp("same")
    r = random.Random(seed)
    corpus = _corpus(r, 40)
    paths = [str(root / name) for name in corpus]
    for path, text in zip(paths, corpus.values()):
        write(Path(path), text)
    lines = [json.dumps({"id": path, "text": text}) for path, text in zip(paths, corpus.values())]
    r.shuffle(lines)
    write(root / "j" / "x.jsonl", "\n".join(lines[:10]) + "\n")
    write(root / "j" / "y.jsonl", "\n".join(lines[10:]) + "\n")
    shuffled = paths[:]
    r.shuffle(shuffled)
    unit = r.choice(["paragraph", "line", "sentence"])
    outputs = [
        run(["spans", "find", "--silent", "--unit", unit, *args]).stdout
        for args in (
            ["-j", "1", *paths],
            ["-j", "2", *shuffled],
            ["-j", "2", "--id-field", "id", str(root / "j")],
        )
    ]
    assert outputs[0] and outputs[0] == outputs[1] == outputs[2]


def test_an_id_twice_is_refused(run, tmp_path):
    write(tmp_path / "d.jsonl", '{"id": "x", "text": "one"}\n{"id": "x", "text": "two"}\n')
    result = run(["spans", "find", "--id-field", "id", str(tmp_path / "d.jsonl")])
    assert result.exit_code == 1
    assert "x: more than one document has this id" in result.stderr


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), unit=st.sampled_from(["paragraph", "line", "sentence"]))
def test_strip_removes_whole_units_only(seed, unit, run, tmp_path_factory):
    """What strip writes is each document without its removed units and white space: every
    other character stays, in order; the output is valid UTF-8; documents marked left_whole
    are written whole."""
    root = tmp_path_factory.mktemp("strip")
    corpus = _corpus(random.Random(seed), 15)
    path = root / "docs.jsonl"
    write(path, "".join(json.dumps({"id": n, "text": t, "meta": {"n": n}}) + "\n" for n, t in corpus.items()))
    spans = run(["spans", "find", "--silent", "--id-field", "id", "--unit", unit, str(path)])
    write(root / "spans.jsonl", spans.stdout)
    result = run(
        ["spans", "strip", "--spans", root / "spans.jsonl", "--id-field", "id", path, "-o", root / "out.jsonl"]
    )
    assert result.exit_code == 0, result.stderr
    records = {r["id"]: r for r in spans.records}
    written = {}
    for line in (root / "out.jsonl").read_bytes().decode("utf-8").splitlines():
        record = json.loads(line)
        assert record["meta"] == {"n": record["id"]}  # the other fields are kept
        written[record["id"]] = record["text"]
    for name, text in corpus.items():
        record = records.get(name)
        if record is None or record["left_whole"]:
            assert written[name] == text
            continue
        removed = [(s["start_char"], s["end_char"]) for s in record["spans"]]
        kept = "".join(c for k, c in enumerate(text) if not any(a <= k < b for a, b in removed))
        if name not in written:  # emptied: nothing but white space was left
            assert not kept.strip()
            continue
        assert "".join(written[name].split()) == "".join(kept.split())


def test_strip_output_is_new_and_never_an_input(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = _corpus(random.Random(7), 6)
    _write_corpus(tmp_path, corpus)
    spans = run(["spans", "find", "--silent", "c"])
    write(tmp_path / "spans.jsonl", spans.stdout)
    write(tmp_path / "full" / "x.txt", "x")
    assert run(["spans", "strip", "--spans", "spans.jsonl", "c", "-o", "full"]).exit_code == 2
    assert run(["spans", "strip", "--spans", "spans.jsonl", "c", "-o", "c/doc-000.txt"]).exit_code == 2
    result = run(["spans", "strip", "--spans", "spans.jsonl", "c", "-o", "clean"])
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "clean" / "c").iterdir()) == sorted(corpus)
    assert {p.name: p.read_text() for p in (tmp_path / "c").iterdir()} == corpus  # inputs untouched


def test_strip_writes_documents_changed_since_whole(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = "Repeated paragraph with more than ten words in it for sure, really.\n\n"
    write(tmp_path / "c" / "a.txt", "A.\n\n" + text)
    write(tmp_path / "c" / "b.txt", "B.\n\n" + text)
    write(tmp_path / "spans.jsonl", run(["spans", "find", "--silent", "c"]).stdout)
    write(tmp_path / "c" / "b.txt", "B changed.\n\n" + text)
    result = run(["spans", "strip", "--spans", "spans.jsonl", "c", "-o", "out"])
    assert result.exit_code == 3
    assert "changed since the spans were found" in result.stderr
    assert (tmp_path / "out" / "c" / "b.txt").read_text() == "B changed.\n\n" + text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.sampled_from(["", "x", "Short.", "word " * 12, "\x00bin", "caf\xe9", SENTENCES[1]]), max_size=4),
    min_words=st.integers(0, 20),
    unit=st.sampled_from(["paragraph", "line", "sentence"]),
)
def test_few_units_or_none(texts, min_words, unit, run, tmp_path_factory):
    """Corpora of no document, of documents without a unit long enough, of one unit, of files
    that are skipped: a usual exit (0, or 3 when a file was skipped), never a bug."""
    root = tmp_path_factory.mktemp("few")
    (root / "c").mkdir()
    for k, text in enumerate(texts):
        (root / "c" / f"{k}.txt").write_bytes(text.encode("latin-1") if "\xe9" in text else text.encode())
    result = run(["spans", "find", "--silent", "--unit", unit, "--min-words", min_words, root / "c"])
    assert result.exit_code in (0, 3), result.stderr
    write(root / "spans.jsonl", result.stdout)
    stripped = run(["spans", "strip", "--spans", root / "spans.jsonl", root / "c", "-o", root / "out"])
    assert stripped.exit_code in (0, 3), stripped.stderr


def test_a_pipe_is_read_once(run, tmp_path, alarm):
    """JSON lines from a FIFO: found, and the near-duplicate candidates among them, which
    cannot be read again, are left unverified (nothing waits for a writer that is gone)."""
    import os
    import threading

    base = " ".join(f"word{i}" for i in range(30))
    lines = [{"id": "a", "text": base}, {"id": "b", "text": base.replace("word9", "other")}, {"id": "c", "text": base}]
    fifo = tmp_path / "docs.jsonl"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as handle:
            handle.write("".join(json.dumps(line) + "\n" for line in lines))

    writer = threading.Thread(target=feed)
    writer.start()
    result = run(["spans", "find", "--silent", "-j", "1", "--id-field", "id", fifo])
    writer.join()
    assert result.exit_code == 0, result.stderr
    assert [(r["id"], [s["repeats"]["id"] for s in r["spans"]]) for r in result.records] == [("c", ["a"])]
