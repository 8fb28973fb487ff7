"""The command line as a whole: help, version, the README's list of commands, a failing plugin."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner
from helpers import REPO, write

from simdedup.cli import cli

COMMANDS = [
    "fingerprint",
    "cluster",
    "dedup",
    "exact",
    "select",
    "explain",
    "stats",
    "eval",
    "tokenizers",
    "convert",
    "index",
    "report",
    "spans",
]


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
    names = cli.list_commands(click.Context(cli))
    assert set(names) == set(COMMANDS)
    for name in names:
        assert f"`{name}" in text, name


def test_fingerprint_with_plain_clirunner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.txt", "some words")
    result = CliRunner().invoke(cli, ["fingerprint", "a.txt"])
    assert result.exit_code == 0, repr(result.exception)
    assert json.loads(result.stdout)["id"] == "a.txt"


def test_a_plugin_failing_on_a_document_skips_it_with_one_line(run, tmp_path):
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
        assert result.exit_code == 3
        assert result.stdout == ""
        assert result.err_lines[0] == (
            f"simdedup: warning: {tmp_path / 'a.txt'}: tokenizer 'broken-on-read' failed: ValueError: no tokens today"
        )
    finally:
        unregister("broken-on-read")
