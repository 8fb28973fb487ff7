"""Help for people (issue 43): every command's options in sections, its own first and the
engines' last; every option in a section; the summaries a group lists are whole sentences; the
help of the main commands fits about two screens at 80 columns."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner
from test_every_option_counts import walk

from simdedup.cli import cli
from simdedup.help import ENGINES, HELP, ORDER, RUNNING

#: the commands people run most: their help fits about two screens of 50 lines
MAIN = {"fingerprint", "cluster", "dedup", "report", "explain", "select"}
MAX_LINES = 100


def shown(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=80, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def groups(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Group]]:
    found = [(path, group)]
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, click.Group):
            found += groups(command, (*path, name))
    return found


def sections(text: str) -> dict[str, list[str]]:
    """The option lines of each section of a help text (a heading ends with a colon at the margin)."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][^:]*:", line):
            current = line[:-1]
            found[current] = []
        elif current is not None and line.strip():
            found[current].append(line)
    return found


def listed(text: str) -> dict[str, str]:
    """What a group's help lists for each command, its wrapped lines joined."""
    rows: dict[str, str] = {}
    last = None
    for line in sections(text).get("Commands", []):
        name = re.match(r"  (\S+)\s+(.*)", line)
        if name and not line.startswith("   "):
            last = name.group(1)
            rows[last] = name.group(2).strip()
        else:
            rows[last] += " " + line.strip()  # type: ignore[index]
    return rows


COMMANDS = walk()


def test_the_walk_finds_the_commands():
    names = {name for name, _ in COMMANDS}
    assert MAIN <= names and {"index query", "spans find"} <= names and len(names) >= 20


@pytest.mark.parametrize("path,group", groups(), ids=lambda value: " ".join(value) if isinstance(value, tuple) else "")
def test_a_group_lists_each_command_with_a_whole_sentence(path, group):
    rows = listed(shown(*path))
    context = click.Context(group)
    assert set(rows) == set(group.list_commands(context))
    for name, text in rows.items():
        command = group.get_command(context, name)
        assert text.endswith(".") and not text.endswith("..."), (name, text)
        assert text == " ".join((command.short_help or "").split()), (name, text)  # whole, not cut
        assert len(text) <= 64, (name, text)  # one line at 80 columns


@pytest.mark.parametrize("name,command", COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_option_is_in_a_section_and_the_commands_own_come_first(name, command):
    options = [param for param in command.params if isinstance(param, click.Option)]
    unplaced = [param.name for param in options if getattr(param, "section", None) is None]
    assert not unplaced, f"{name}: options in no section: {unplaced}"
    text = shown(*name.split())
    found = sections(text)
    titles = list(found)
    assert titles[-1] == HELP and titles.count(HELP) == 1, (name, titles)
    assert titles[0] not in (ENGINES, RUNNING), (name, titles)
    if ENGINES in titles:
        assert titles[-2] == ENGINES, (name, titles)
    shared = [title for title in titles if title in ORDER]
    assert shared == sorted(shared, key=ORDER.index), (name, titles)  # the shared ones in one order
    # every option is shown, once, under the section it names
    for param in options:
        if param.hidden:
            continue
        flag = max(param.opts, key=len)
        holding = [title for title, lines in found.items() if any(re.search(rf"(^|[ ,]){flag}\b", x) for x in lines)]
        assert holding[:1] == [param.section], (name, flag, holding)


@pytest.mark.parametrize("name", sorted(MAIN))
def test_main_commands_help_fits_two_screens(name):
    text = shown(name)
    assert len(text.splitlines()) <= MAX_LINES, f"{name} --help: {len(text.splitlines())} lines"
    assert max(len(line) for line in text.splitlines()) <= 80


def test_dedup_shows_how_near_duplicates_are_found_first():
    """The issue's example: -k, --min-resemblance, --similarity and -o come before the
    object-store and Dask options."""
    text = shown("dedup")
    order = [text.index(flag) for flag in ("-k, --k", "--min-resemblance", "--similarity", "-o, --output")]
    assert max(order) < text.index("--storage-option") < text.index("--scheduler")
    assert list(sections(text))[:2] == ["Finding near-duplicates", "Output"]
