"""Errors the library raises; the CLI turns them into one-line messages."""


class SimdedupError(Exception):
    """Base class: a problem the user can fix, shown to them as a one-line message."""


class UsageError(SimdedupError):
    """The command line asks for something simdedup will not do (exit status 2), such as an
    output that would replace an input."""


class OutputError(SimdedupError):
    """An output cannot be written: a full disk, a closed stdout, an unwritable directory."""

    def __init__(self, reason: str, name: str | None = None):
        super().__init__(f"cannot write {name or 'the output'}: {reason}")
        self.reason = reason
        self.name = name  # None until the writer that knows it names the output


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


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type when it has none (the errors of
    pyarrow and warcio run over several lines)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class DamagedInput(OSError):
    """Input data that does not decode: a truncated or corrupt compressed file, an HTTP body
    that is not what its headers say (an OSError, so that every reader that handles read errors
    handles it)."""
