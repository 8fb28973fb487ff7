"""The output is a function of the input set: the paths named, the files of a directory and
the fingerprint files given to ``cluster`` are sets, whose order and names do not count (ids
come from the input, not from where it sits); only the lines within one file are a sequence.

Each corpus is generated (seeded): documents with planted near-duplicates, and JSON-lines files
that give some ids twice with other texts. The same set, given every way the command line
takes it, must give the same bytes: any order of paths, a directory, a path list on stdin, JSON
lines, ``-j 1`` and ``-j 2``, ``--engine stages`` and ``--engine dask``, and ``fingerprint |
cluster`` beside ``dedup --verify sketch``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import near_copy, words

K = ("-k", "3")  # the staged engines need k; the others are given it too, to compare


def documents(rng: random.Random) -> dict[str, str]:
    """Texts by name: families of a text and its near copies, and documents of their own."""
    docs = {}
    for family in range(rng.randrange(3, 6)):
        text = words(rng.randrange(10**6), rng.randrange(60, 200))
        for member in range(rng.randrange(2, 4)):
            docs[f"f{family}-{member}-{rng.randrange(1000)}.txt"] = text if member == 0 else near_copy(text)
            text = near_copy(text) if rng.random() < 0.5 else text
    for i in range(rng.randrange(3, 8)):
        docs[f"single-{i}.txt"] = words(rng.randrange(10**6), rng.randrange(20, 200))
    return docs


def json_line_files(rng: random.Random, root: Path, docs: dict[str, str]) -> list[str]:
    """The documents as JSON lines (``id``, ``text``) cut into files at random, and a file that
    gives some of their ids again with other texts (a near copy of another document, or of
    their own)."""
    names = list(docs)
    rng.shuffle(names)
    cuts = sorted(rng.sample(range(1, len(names)), 2))
    files = []
    for i, part in enumerate((names[: cuts[0]], names[cuts[0] : cuts[1]], names[cuts[1] :])):
        files.append(_write_lines(root / f"part-{i}.jsonl", [(name, docs[name]) for name in part]))
    again = rng.sample(names, 4)
    files.append(_write_lines(root / "again.jsonl", [(name, near_copy(docs[rng.choice(names)])) for name in again]))
    return files


def _write_lines(path: Path, docs: list[tuple[str, str]]) -> str:
    path.write_text(
        "".join(json.dumps({"id": f"docs/{name}", "text": text}) + "\n" for name, text in docs), encoding="utf-8"
    )
    return path.name


def dedup(run, *args, input=None) -> str:
    result = run(["dedup", *K, *args], input=input)
    assert result.exit_code in (0, 3), result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def in_process(*args, cwd: Path) -> str:
    """A real process, for the engines that start their own (Dask's cluster)."""
    result = subprocess.run(
        [sys.executable, "-m", "simdedup", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SIMDEDUP_LOAD_PLUGINS": ""},
    )
    assert result.returncode in (0, 3), result.stderr
    return result.stdout


@pytest.mark.parametrize("seed", range(4))
def test_one_set_of_files_gives_one_output_however_it_is_named(run, tmp_path, monkeypatch, seed):
    rng = random.Random(seed)
    monkeypatch.chdir(tmp_path)
    docs = documents(rng)
    for name, text in docs.items():
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    paths = [f"docs/{name}" for name in docs]
    rng.shuffle(paths)
    expected = dedup(run, "docs")
    assert expected.count("\n") >= 2, "the corpus plants near-duplicates"
    assert dedup(run, *paths) == expected
    assert dedup(run, "-j", "2", *paths) == expected
    assert dedup(run, "-0", "-", input="\0".join(paths)) == expected
    assert dedup(run, "--engine", "stages", "-j", "2", "docs") == expected
    lines = json_line_files(rng, tmp_path, docs)
    assert dedup(run, "--id-field", "id", *lines[:-1]) == expected  # the same documents as JSON lines


@pytest.mark.parametrize("seed", range(4))
def test_ids_given_twice_resolve_the_same_in_any_order_engine_and_path(run, tmp_path, monkeypatch, seed):
    rng = random.Random(100 + seed)
    monkeypatch.chdir(tmp_path)
    files = json_line_files(rng, tmp_path, documents(rng))
    orders = [files, files[::-1], rng.sample(files, len(files))]
    expected = dedup(run, "--id-field", "id", *orders[0])
    assert expected
    for order in orders[1:]:
        assert dedup(run, "--id-field", "id", *order) == expected, order
    assert dedup(run, "--id-field", "id", "-j", "2", *orders[2]) == expected
    assert dedup(run, "--id-field", "id", "--engine", "stages", *orders[1]) == expected
    renamed = []
    for i, name in enumerate(files):  # other names, which sort in another order
        renamed.append(f"renamed-{len(files) - i}.jsonl")
        (tmp_path / name).rename(tmp_path / renamed[-1])
    assert dedup(run, "--id-field", "id", *renamed) == expected
    if seed == 0:  # one Dask cluster of worker processes: seconds to start
        assert (
            in_process(
                "dedup", *K, "--engine", "dask", "--local", "2", "--id-field", "id", *renamed[::-1], cwd=tmp_path
            )
            == expected
        )

    # fingerprint | cluster is dedup verified by the sketches, whatever the order of the lines
    sketched = dedup(run, "--verify", "sketch", "--id-field", "id", *renamed)
    for order in (renamed, renamed[::-1]):
        fingerprints = run(["fingerprint", "--id-field", "id", *order])
        assert fingerprints.exit_code == 0, fingerprints.stderr
        assert run(["cluster", *K], input=fingerprints.stdout).stdout == sketched
    halves = [run(["fingerprint", "--id-field", "id", name]).stdout for name in renamed]
    for i, half in enumerate(halves):
        (tmp_path / f"fp-{i}.jsonl").write_text(half, encoding="utf-8")
    fingerprint_files = [f"fp-{i}.jsonl" for i in range(len(halves))]
    for order in (fingerprint_files, fingerprint_files[::-1]):
        assert run(["cluster", *K, *order]).stdout == sketched
        assert run(["cluster", *K, "--engine", "stages", *order]).stdout == sketched
