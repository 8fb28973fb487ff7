"""Tokenizer plugins are other people's code: whatever one does on a document costs that document
alone (skipped with a warning naming it, exit status 3), at any ``-j``; whatever it does while it
loads, starts or prepares is one clear line (exit status 1); nothing it prints reaches the output.

The plugins are real ones, installed as an installer leaves them (a module and a dist-info
with its entry point on ``PYTHONPATH``), and the runs are real processes, so that ``-j 2`` workers
import them as they would in use. Each document tells the plugin how to misbehave on it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import install_plugin as install
from helpers import near_copy, words

#: misbehaviours that must cost the document they happen on
SKIPPING = [
    "raise",
    "exit",
    "base-exception",
    "tokens-none",
    "tokens-bytes",
    "tokens-numbers",
    "tokens-midway",
    "features-none",
    "features-list",
    "features-number-key",
    "features-text-weight",
    "features-nan",
    "features-negative",
    "features-infinite",
    "features-huge",
    "features-raise",
    "recursion",
]
#: misbehaviours that must cost nothing: noise on stdout, a failing batch call (the documents are
#: then taken one at a time), input lists changed after use
HARMLESS = ["print", "batch-raise"]

PLUGIN = """
import math, os, sys
from simdedup.tokenizers import Tokenizer

CLEAN = os.environ.get("PLUGIN_CLEAN") == "1"


class Odd(BaseException):
    pass


def kind_of(text):
    if CLEAN:
        return None
    return next((word[5:] for word in text.split() if word.startswith("kind-")), None)


def midway(tokens):
    yield from tokens[:3]
    raise RuntimeError("stopped midway")


def deeper(n):
    return deeper(n + 1)


class Hostile(Tokenizer):
    name = "hostile"
    description = "misbehaves on documents that ask it to"
    kind = None  # the misbehaviour the document being tokenized asks for

    def tokens(self, text):
        kind = self.kind
        tokens = [t for t in text.lower().split() if not t.startswith("kind-")]
        if kind == "raise":
            raise ValueError("no tokens today")
        if kind == "exit":
            sys.exit(4)
        if kind == "base-exception":
            raise Odd("odd")
        if kind == "recursion":
            deeper(0)
        if kind == "tokens-none":
            return None
        if kind == "tokens-bytes":
            return [t.encode() for t in tokens]
        if kind == "tokens-numbers":
            return [len(t) for t in tokens]
        if kind == "tokens-midway":
            return midway(tokens)
        if kind == "print":
            print("noise from print")
            sys.stdout.flush()
            os.write(1, b"noise on descriptor 1\\n")
        return tokens

    def features(self, chunks):
        chunks = list(chunks)
        kind = self.kind = kind_of("".join(chunks))
        found = super().features(chunks)
        bad = {
            "features-none": None, "features-list": list(found), "features-number-key": {1: 1.0},
            "features-text-weight": {"a": "1"}, "features-nan": {**found, "a": math.nan},
            "features-negative": {**found, "a": -1.0}, "features-infinite": {**found, "a": math.inf},
            "features-huge": {**found, "a": 2.0 ** 60},
        }
        if kind == "features-raise":
            raise KeyError("a feature")
        return bad.get(kind, found)
"""

MANY = """

    def features_many(self, documents):
        if any(kind_of("".join(d)) == "batch-raise" for d in documents):
            raise RuntimeError("the batch failed")
        found = [self.features(d) for d in documents]
        for d in documents:  # what it was handed is changed after use
            d.clear()
        return found
"""


def simdedup(*args, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "simdedup", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def json_lines(result: subprocess.CompletedProcess) -> list[str]:
    """stdout's lines, each a whole JSON value (noise in the output fails here)."""
    lines = result.stdout.splitlines()
    for line in lines:
        json.loads(line)
    return lines


def corpus(root: Path, rng: random.Random) -> dict[str, str]:
    """Documents with planted near-duplicates; about a third misbehave, each in its own way,
    and a few make harmless noise. Returns the misbehaviour of each document (or "")."""
    kinds = {}
    bases = [words(rng.randrange(10**6), 120) for _ in range(5)]
    for i in range(16):
        text = bases[i % 5] if i < 5 else near_copy(bases[i % 5]) if i < 10 else words(rng.randrange(10**6), 120)
        kind = rng.choice(SKIPPING) if rng.random() < 0.35 else rng.choice(HARMLESS) if rng.random() < 0.3 else ""
        name = f"docs/d{i:02d}.txt"
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(f"{text} kind-{kind}" if kind else text, encoding="utf-8")
        kinds[name] = kind
    return kinds


@pytest.mark.parametrize("seed", [1, 2])
def test_a_plugin_that_misbehaves_on_a_document_costs_that_document(tmp_path, seed):
    rng = random.Random(seed)
    batch = rng.random() < 0.5  # the plugin makes features of many documents at once
    env = install(tmp_path, PLUGIN + (MANY if batch else ""))
    kinds = corpus(tmp_path, rng)
    bad = sorted(name for name, kind in kinds.items() if kind in SKIPPING)
    good = sorted(set(kinds) - set(bad))
    clean = {**env, "PLUGIN_CLEAN": "1"}
    expected_records = json_lines(
        simdedup("fingerprint", "-j", 1, "--tokenizer", "hostile", *good, cwd=tmp_path, env=clean)
    )
    expected_clusters = json_lines(simdedup("dedup", "-j", 1, "--tokenizer", "hostile", *good, cwd=tmp_path, env=clean))
    assert expected_clusters, "the corpus plants near-duplicates"
    for jobs in (1, 2):
        for command, expected in (("fingerprint", expected_records), ("dedup", expected_clusters)):
            result = simdedup(command, "-j", jobs, "--tokenizer", "hostile", "docs", cwd=tmp_path, env=env)
            context = f"{command} -j {jobs}, misbehaving: { ({n: kinds[n] for n in bad}) }\n{result.stderr}"
            assert result.returncode == (3 if bad else 0), context
            assert "Traceback" not in result.stderr and "a bug" not in result.stderr, context
            assert json_lines(result) == expected, context
            warned = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
            assert sorted(line.split(": ")[2] for line in warned) == bad, context
            assert all("hostile" in line for line in warned), context


LOADING = {
    "import raises": ("raise ImportError('no model here')\n" + PLUGIN, 1),
    "import exits": ("import sys\nsys.exit('bye')\n" + PLUGIN, 1),
    "import prints": ("print('loading the model')\n" + PLUGIN, 0),
    "start raises": (PLUGIN + "\n    def __init__(self, **options):\n        raise RuntimeError('no start')\n", 1),
    "prepare raises": (PLUGIN + "\n    def prepare(self):\n        raise OSError('no dictionary')\n", 1),
    "prepare prints": (PLUGIN + "\n    def prepare(self):\n        print('preparing')\n", 0),
    "settings raise": (PLUGIN + "\n    def settings(self):\n        raise ValueError('no settings')\n", 1),
    "settings not JSON": (PLUGIN + "\n    def settings(self):\n        return {'tokenizer': 'hostile', 'x': {1}}\n", 1),
    "weighting unknown": (PLUGIN + "\n    weighting = 'loud'\n", 1),
    "not a tokenizer": (PLUGIN + "\nHostile = object\n", 1),
}


@pytest.mark.parametrize("case", sorted(LOADING))
def test_a_plugin_that_fails_to_load_start_or_prepare_is_one_clear_line(tmp_path, case):
    source, status = LOADING[case]
    env = install(tmp_path, source)
    (tmp_path / "a.txt").write_text(words(1), encoding="utf-8")
    (tmp_path / "b.txt").write_text(near_copy(words(1)), encoding="utf-8")
    result = simdedup("dedup", "-j", 2, "--tokenizer", "hostile", "a.txt", "b.txt", cwd=tmp_path, env=env)
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr and "a bug" not in result.stderr
    lines = json_lines(result)
    if status:
        assert lines == []
        errors = [line for line in result.stderr.splitlines() if "hostile" in line]
        assert len(errors) == 1, result.stderr
    else:
        assert len(lines) == 1  # the pair
