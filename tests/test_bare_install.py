"""Every command and engine after a plain install (no extras): it works, or refuses in one line
naming the extra to install; never exit 70, never a traceback (issue 43).

The bare environment is a new virtualenv with the project's required dependencies only (their
versions as in this one, so pip takes them from its cache) and the project installed from this
checkout (editable, so its kernels' cache is this checkout's and nothing is compiled).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from simdedup.cli import cli
from simdedup.optional import EXTRAS

ROOT = Path(__file__).resolve().parent.parent
EXTRA_LINE = re.compile(r"pip install 'simdedup\[([a-z0-9-]+)\]'")

pytestmark = pytest.mark.slow


def _required() -> list[str]:
    """The required packages (none of an extra), at the versions installed here."""
    requirements = [r for r in importlib.metadata.requires("simdedup") or [] if "extra ==" not in r]
    names = [re.split(r"[<>=!~\[ ;]", requirement)[0] for requirement in requirements]
    return [f"{name}=={importlib.metadata.version(name)}" for name in names]


@pytest.fixture(scope="session")
def bare(tmp_path_factory) -> Path:
    """The ``bin`` folder of a virtualenv holding simdedup and its required packages only."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps"]
    subprocess.run([*pip, *_required(), "setuptools>=70.1"], check=True)
    environment = {**os.environ, "SIMDEDUP_PREPARE": "0"}
    subprocess.run([*pip, "--no-build-isolation", "-e", str(ROOT)], check=True, env=environment)
    found = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.util as u, sys; sys.stdout.write(repr(sorted(set(sys.argv[1:]) & {m for m in sys.argv[1:] if u.find_spec(m)})))",
            *EXTRAS,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout == "[]", f"the bare environment has packages of extras: {found.stdout}"
    return venv / "bin"


def _commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> dict[str, click.Command]:
    context = click.Context(group)
    found: dict[str, click.Command] = {}
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found.update(_commands(command, (*prefix, name)))
        else:
            found[" ".join((*prefix, name))] = command
    return found


#: each command's run on the tiny corpus, in an order where each finds the files an earlier wrote
#: ({corpus}, {a}, {b}: a document, {fp}, {clusters}, {gold}, {spans}, {idx}, {out}: a new name)
RUNS = [
    ("tokenizers", []),
    ("fingerprint", ["-o", "{fp}", "{corpus}"]),
    ("fingerprint", ["--fold", "chinese", "{corpus}"]),
    ("fingerprint", ["--tokenizer", "jieba-fast", "{corpus}"]),
    ("fingerprint", ["s3://bucket/corpus"]),
    ("cluster", ["-o", "{clusters}", "{fp}"]),
    ("dedup", ["{corpus}"]),
    ("convert", ["--to", "binary", "-o", "{out}", "{fp}"]),
    ("eval", ["--gold", "{gold}", "{clusters}"]),
    ("exact", ["{corpus}"]),
    ("explain", ["{a}", "{b}"]),
    ("select", ["{clusters}"]),
    ("stats", ["{fp}"]),
    ("stats", ["--plot", "{out}.png", "{fp}"]),
    ("report", ["-o", "{out}.html", "{clusters}"]),
    ("index create", ["-k", "3", "--from", "{fp}", "{idx}"]),
    ("index add", ["--replace", "{idx}", "{fp}"]),
    ("index query", ["{idx}", "{a}"]),
    ("index cluster", ["{idx}"]),
    ("index stats", ["{idx}"]),
    ("index compact", ["{idx}"]),
    ("spans find", ["-o", "{spans}", "{corpus}"]),
    ("spans strip", ["--spans", "{spans}", "-o", "{out}", "{corpus}"]),
    ("spans report", ["--spans", "{spans}", "-o", "{out}.html", "{corpus}"]),
]
ENGINES = ["stages", "dask"]  # beside local, the runs above


def _corpus(folder: Path) -> Path:
    corpus = folder / "corpus"
    corpus.mkdir()
    text = " ".join(f"word{i % 37} line{i % 11} of the tiny corpus" for i in range(60))
    (corpus / "a.txt").write_text(text + " the end\n")
    (corpus / "b.txt").write_text(text + " another end\n")
    (corpus / "c.txt").write_text("something else entirely, " * 20 + "\n")
    (corpus / "zh.txt").write_text("今天天气很好，我们去公园散步吧。" * 10 + "\n")
    return corpus


def test_every_command_and_engine_works_or_names_its_extra(bare, tmp_path):
    commands = _commands()
    assert {name for name, _ in RUNS} == set(commands), "a command this test does not run"
    corpus = _corpus(tmp_path)
    (tmp_path / "gold.jsonl").write_text(json.dumps({"a": str(corpus / "a.txt"), "b": str(corpus / "b.txt")}) + "\n")
    runs = list(RUNS)
    for name, command in commands.items():
        if any(parameter.name == "engine" for parameter in command.params):
            for engine in ENGINES:
                runs.append(
                    (
                        name,
                        [
                            "--engine",
                            engine,
                            *(["-k", "3"] if name != "fingerprint" else []),
                            "-o",
                            "{out}",
                            "{corpus}" if name != "cluster" else "{fp}",
                        ],
                    )
                )
    outcomes = []
    for number, (name, arguments) in enumerate(runs):
        names = {
            "corpus": corpus,
            "a": corpus / "a.txt",
            "b": corpus / "b.txt",
            "fp": tmp_path / "fp.jsonl",
            "clusters": tmp_path / "clusters.jsonl",
            "gold": tmp_path / "gold.jsonl",
            "spans": tmp_path / "spans.jsonl",
            "idx": tmp_path / "idx",
            "out": tmp_path / f"out-{number}",
        }
        line = [str(bare / "simdedup"), *name.split(), *(argument.format(**names) for argument in arguments)]
        result = subprocess.run(line, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        lines = result.stderr.splitlines()
        where = f"{' '.join(line[1:])}: exit {result.returncode}, stderr {result.stderr!r}"
        assert "Traceback" not in result.stderr, where
        if result.returncode == 0:
            outcomes.append((name, arguments[:2], "ok"))
            continue
        assert result.returncode in (1, 2), where
        assert len(lines) == 1 and EXTRA_LINE.search(lines[0]), where
        outcomes.append((name, arguments[:2], EXTRA_LINE.search(lines[0]).group(1)))
    refused = {(name, tuple(arguments)): extra for name, arguments, extra in outcomes if extra != "ok"}
    # what a plain install cannot do, and what it does (stages on a local work dir needs no fsspec)
    assert refused == {
        ("fingerprint", ("--fold", "chinese")): "zh-fold",
        ("fingerprint", ("--tokenizer", "jieba-fast")): "zh-fast",
        ("fingerprint", ("s3://bucket/corpus",)): "s3",
        ("stats", ("--plot", "{out}.png")): "plot",
        ("fingerprint", ("--engine", "dask")): "dask",
        ("cluster", ("--engine", "dask")): "dask",
        ("dedup", ("--engine", "dask")): "dask",
    }
