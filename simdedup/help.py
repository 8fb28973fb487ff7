"""Help for people: every command's options in sections, the most used first, and whole
sentences as the commands' summaries.

Click lists options in one block in the order they are declared. Here each option carries the
title of its section (``param.section``, set where the option is declared: :func:`section`),
and :class:`SectionedCommand` writes the sections in :data:`ORDER`, a command's own section
first. A group lists each command with the first sentence of its help, whole.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

import click

FINDING = "Finding near-duplicates"
OUTPUT = "Output"
READING = "Reading"
FEATURES = "Features"
RUNNING = "Running"
ENGINES = "Engines and object stores"
#: the shared sections, in the order shown after a command's own
ORDER = [FINDING, OUTPUT, READING, FEATURES, RUNNING, ENGINES]
#: where -h goes, after every other section
HELP = "Help"

#: the widest column of option names (a wider name has its help on the next line)
NAMES_WIDTH = 26
#: shorter names for the metavars Click derives from a type
_METAVARS = {" INTEGER RANGE": " N", " FLOAT RANGE": " NUMBER", " INTEGER": " N"}


def section(title: str, *decorators: Callable) -> Callable:
    """A decorator applying option ``decorators`` whose options are shown under ``title``
    (options already given a section keep theirs)."""

    def apply(func: Callable) -> Callable:
        for decorator in reversed(decorators):
            before = len(getattr(func, "__click_params__", []))
            func = decorator(func)
            for param in getattr(func, "__click_params__", [])[before:]:
                if getattr(param, "section", None) is None:
                    param.section = title  # type: ignore[attr-defined]
        return func

    return apply


def in_section(title: str, decorators: list[Callable]) -> list[Callable]:
    """Each of ``decorators``, its options shown under ``title``."""
    return [section(title, decorator) for decorator in decorators]


def summary(command: click.Command) -> str:
    """What a group lists for ``command``: its ``short_help``, else the first sentence of its
    help, whole."""
    if command.short_help:
        return " ".join(command.short_help.split())
    paragraph = inspect.cleandoc(command.help or "").split("\n\n", 1)[0]
    text = " ".join(paragraph.split())
    match = re.search(r"[.!?](?=\s|$)", text)
    return text[: match.end()] if match else text


def help_record(param: click.Parameter, ctx: click.Context) -> tuple[str, str] | None:
    """Click's line for an option, without the range of a number (an error names it) and with
    short metavars."""
    record = param.get_help_record(ctx)
    if record is None:
        return None
    spec, text = record
    for long, short in _METAVARS.items():
        if spec.endswith(long) or f"{long} " in spec:
            spec = spec.replace(long, short)
    if isinstance(param.type, (click.IntRange, click.FloatRange)):
        bounds = param.type._describe_range()
        text = text.replace(f"; {bounds}]", "]").replace(f"  [{bounds}]", "")
    return spec, text


class SectionedCommand(click.Command):
    """A command whose help shows its options in sections: its own first (``sections``: title
    -> the names of its options there, which leave the shared sections they were declared in),
    then :data:`ORDER`, and ``-h`` last, under :data:`HELP`."""

    def __init__(self, *args: Any, sections: dict[str, list[str]] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.own = [title for title in sections or {} if title not in ORDER]
        titles = {name: title for title, names in (sections or {}).items() for name in names}
        for param in self.params:
            if param.name in titles:
                param.section = titles.pop(param.name)  # type: ignore[attr-defined]
        if titles:
            raise ValueError(f"{self.name}: no options {sorted(titles)} to place in sections")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = help_record(param, ctx) if isinstance(param, click.Option) else None
            if record is not None:  # only -h has no section
                sections.setdefault(getattr(param, "section", None) or HELP, []).append(record)
        titles = self.sections_in_order(sections)
        # one column for the option names of every section, as wide as the widest that fits
        width = min(max((len(spec) for rows in sections.values() for spec, _ in rows), default=0), NAMES_WIDTH)
        for title in titles:
            with formatter.section(title):
                formatter.write_dl([(spec.ljust(width), text) for spec, text in sections[title]], col_max=NAMES_WIDTH)

    def sections_in_order(self, sections: dict[str, Any]) -> list[str]:
        """The command's own sections, any others not shared, then the shared ones."""
        titles = [title for title in self.own if title in sections]
        titles += [title for title in sections if title not in (*ORDER, HELP) and title not in titles]
        titles += [title for title in ORDER if title in sections and title not in titles]
        return titles + [HELP] * (HELP in sections)


class SectionedGroup(click.Group):
    """A group whose commands are sectioned and listed with whole first sentences."""

    command_class = SectionedCommand

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
