"""The command line as a whole: help, version, the README's list of commands, a failing plugin."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

from helpers import REPO, write

COMMANDS = ["fingerprint", "cluster", "dedup", "exact", "select", "explain", "stats", "eval", "tokenizers", "convert", "index", "report"]


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
