"""Errors the library raises; the CLI turns them into one-line messages. :class:`Warnings` says
the problems a run meets with its inputs, in proportion."""

from __future__ import annotations

from typing import Callable, Iterable


class SimdedupError(Exception):
    """Base class: a problem the user can fix, shown to them as a one-line message."""


class UsageError(SimdedupError):
    """The command line asks for something simdedup will not do (exit status 2), such as an
    output that would replace an input."""


class MissingPackage(SimdedupError):
    """An option needs a package (an extra) that is not installed (exit status 1)."""


class OutputError(SimdedupError):
    """An output cannot be written: a full disk, a closed stdout, an unwritable directory."""

    def __init__(self, reason: str, name: str | None = None):
        super().__init__(f"cannot write {name or 'the output'}: {reason}")
        self.reason = reason
        self.name = name  # None until the writer that knows it names the output

    def __reduce__(self) -> tuple:  # from a worker process, with its own arguments
        return type(self), (self.reason, self.name)


class UnknownTokenizerError(SimdedupError, KeyError):
    """No tokenizer is registered under the requested name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class TokenizerOptionError(SimdedupError, ValueError):
    """A tokenizer was given an option it does not take, or a bad value."""


class PluginError(SimdedupError):
    """A plugin failed outside any one document: to load, start or prepare (exit status 1)."""


class RecordError(SimdedupError):
    """A fingerprint line could not be used; the message starts with ``FILE:LINE:``."""


class IncompatibleSettingsError(RecordError):
    """Fingerprints made with different settings cannot be compared."""


class SkipDocument(SimdedupError):
    """A document cannot be fingerprinted (unreadable, binary, undecodable, empty)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the process is, so that it ends as after an error: worker
    processes stopped, temporary output removed. Not an Exception, which code may catch; like
    ``KeyboardInterrupt``, one of :data:`STOPS`."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


#: what a stop by the user (Ctrl-C, SIGTERM, SIGHUP) raises: never a failure of anybody's code,
#: always the end of the run
STOPS = (KeyboardInterrupt, Terminated)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type when it has none (the errors of
    pyarrow and warcio run over several lines)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class DamagedInput(OSError):
    """Input data that does not decode: a truncated or corrupt compressed file, an HTTP body
    that is not what its headers say (an OSError, so that every reader that handles read errors
    handles it)."""


#: warnings shown in full about one file in a row, before the rest are counted
WARNINGS_PER_FILE = 3
#: where warnings about ids met again are summarised, as they come from any file
REPEATED_IDS = "the input"


class Warnings:
    """The warnings of a run about its inputs, each a line to ``say``: the first
    :data:`WARNINGS_PER_FILE` about one file in a row in full (``FILE:LINE: reason``), then,
    once the run moves on to another file or ends (:meth:`close`), one line counting the rest:
    a file of random bytes read as JSON lines costs four lines, not one per line. With
    ``every`` (``-v``) each is said. Every warning is counted in :attr:`count`; ``hint`` ends the
    counting line (how to see them all)."""

    def __init__(self, say: Callable[[str], None], every: bool = False, hint: str = ""):
        self.say, self.every, self.hint = say, every, hint
        self.count = 0
        self._file: str | None = None  # the file of the warnings in a row
        self._shown = self._held = 0

    def warn(self, where: str, reason: str, file: str | None = None) -> None:
        """Say (or count) that ``where`` (a file, ``FILE:LINE``, an id) has a problem; ``file`` is
        the file it is in, when that is not ``where`` itself."""
        self.count += 1
        file = file or where
        if file != self._file:
            self.close()
            self._file, self._shown = file, 0
        if self.every or self._shown < WARNINGS_PER_FILE:
            self._shown += 1
            self.say(f"simdedup: warning: {where}: {reason}")
        else:
            self._held += 1

    def close(self) -> None:
        """Count the warnings held back about the current file."""
        if self._held:
            problems = "problem" if self._held == 1 else "problems"
            self.say(f"simdedup: warning: {self._file}: ... and {self._held} more {problems}{self.hint}")
        self._held = 0

    def warn_all(self, wheres: Iterable[str], reason: str, file: str | None = None) -> None:
        """:meth:`warn` of each of ``wheres``, for one reason, then :meth:`close`."""
        for where in wheres:
            self.warn(where, reason, file)
        self.close()
