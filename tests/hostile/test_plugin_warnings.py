"""Issue 42, item 6: a plugin that registers a built-in's name (or fails to load, or points at
the wrong thing) showed a raw Python warning: the file, the line number, ``UserWarning`` and the
source line. Every Python warning a command meets is one line ``simdedup: warning: ...``
(:func:`simdedup.cli._one_line_warning`); generated sets of bad entry points, installed as an
installer leaves them, for tokenizers and methods."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from simdedup.method_registry import BUILTIN as BUILTIN_METHODS
from simdedup.tokenizers import BUILTIN as BUILTIN_TOKENIZERS

BAD = {
    "tokenizers": [*(f"{name} = bad_plugin:Anything" for name in BUILTIN_TOKENIZERS), "broken = bad_plugin:Missing"],
    "methods": [
        *(f"{name} = bad_plugin:Anything" for name in BUILTIN_METHODS),
        "broken = no_such_module:Spec",
        "wrong = bad_plugin:Anything",
    ],
}


@pytest.mark.parametrize("seed", range(3))
def test_every_plugin_warning_is_one_line(tmp_path, seed):
    rng = random.Random(seed)
    chosen = {group: rng.sample(entries, rng.randint(1, len(entries))) for group, entries in BAD.items()}
    (tmp_path / "bad_plugin.py").write_text("class Anything:\n    pass\n")
    dist_info = tmp_path / "bad_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "".join(f"[simdedup.{group}]\n" + "".join(f"{e}\n" for e in entries) for group, entries in chosen.items())
    )
    (tmp_path / "a.txt").write_text("some words to fingerprint here and there")
    names = {entry.split(" = ")[0] for entries in chosen.values() for entry in entries}
    env = {k: v for k, v in os.environ.items() if k != "SIMDEDUP_LOAD_PLUGINS"}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    env.update(SIMDEDUP_LOAD_PLUGINS=",".join(sorted(names)), PYTHONDONTWRITEBYTECODE="1")
    for args in (["tokenizers"], ["fingerprint", "--silent", "--method", "wrong", str(tmp_path / "a.txt")]):
        done = subprocess.run(
            [sys.executable, "-m", "simdedup", *args], env=env, capture_output=True, text=True, timeout=120
        )
        lines = done.stderr.splitlines()
        assert lines or args[0] != "tokenizers"
        for line in lines:
            assert line.startswith(("simdedup: warning: ", "simdedup: error: ", "Error: ")), done.stderr
        assert "UserWarning" not in done.stderr and "warnings.warn" not in done.stderr
        assert done.returncode != 70
