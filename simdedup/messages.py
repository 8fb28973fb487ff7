"""Messages on stderr: one line each, safe to show whatever names they carry. The lowest layer
of output, so that any module (the cache, the readers) can warn without importing the CLI."""

from __future__ import annotations

import sys

import click


def message(text: str) -> None:
    """A line on stderr that does not break a progress bar (dropped when stderr cannot take it).
    Names in it come from files and their contents, so control characters are shown escaped: an
    id can neither drive the terminal nor start a line of its own."""
    text = printable(text)
    try:
        if "tqdm" in sys.modules:
            from tqdm import tqdm

            tqdm.write(text, file=sys.stderr)
        else:
            click.echo(text, err=True)
    except OSError:
        pass


#: values never shown (credentials: see :func:`hide_secret`)
_secrets: set[str] = set()


def hide_secret(value: str) -> None:
    """Never show ``value`` (a credential given to reach a store) in a message from now on."""
    if len(value) >= 4:
        _secrets.add(value)


def printable(text: str) -> str:
    """``text`` with every secret (:func:`hide_secret`) written ``***`` and every character that
    is not printable (controls such as ESC and newline, format characters such as bidirectional
    overrides, lone surrogates) as a Python escape."""
    for secret in _secrets:
        text = text.replace(secret, "***")
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape", "backslashreplace").decode("ascii")
        for c in text
    )
