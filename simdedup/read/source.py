"""What the read stage hands on: a document to read, or one skipped and why."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    """A document to read (``reason`` is None) or one that is skipped and why.

    ``path`` is the document's id; a document that came from a JSON-lines file carries its
    ``text`` and has no file of its own.
    """

    path: str
    reason: str | None = None
    text: str | None = None
    #: the weighted features a JSON line gives instead of text (:class:`FeaturesField`)
    features: dict[str, float] | None = field(default=None, compare=False, repr=False)
    size: int | None = field(default=None, compare=False)  # bytes, when known (a regular file)
    #: an object of a store as listed: its size and entity tag, which change when it changes
    version: str | None = field(default=None, compare=False, repr=False)
    #: a regular file when it was found (safe to open without blocking: not a FIFO)
    regular: bool = field(default=False, compare=False, repr=False)
    #: a JSON line not parsed yet, and its (text field, id field): see :func:`documents`
    line: tuple[bytes, str, str | None] | None = field(default=None, compare=False, repr=False)
    #: a stretch of whole lines of a JSON-lines file not read yet: (offset, length, number of
    #: its first line, text field, id field); see :func:`documents`
    span: tuple[int, int, int, str, str | None] | None = field(default=None, compare=False, repr=False)
    #: not read because it names a file read under another name (a link); ``reason`` says which
    same_file: bool = field(default=False, compare=False)
    #: the file of many documents a row, line or record comes from, said with its warnings
    origin: str | None = field(default=None, compare=False, repr=False)
    #: ``FILE:LINE`` (or ``FILE:ROW``) of a row whose id a field gives (``--id-field``)
    place: str | None = field(default=None, compare=False, repr=False)

    @property
    def where(self) -> str:
        """What a warning about it names: ``FILE:LINE (id ID)`` for a row whose id a field
        gives, else its id (which is then its file or ``FILE:LINE``)."""
        return f"{self.place} (id {self.path})" if self.place and self.place != self.path else self.path

    @classmethod
    def file(cls, path: str, size: int | None = None) -> Source:
        """``Source(path, size=size, regular=True)``, a regular file found by a walk, made
        without the frozen dataclass's ``__init__`` (which sets each field through
        ``object.__setattr__``): a walk makes one per file, several times faster this way."""
        source = _new(cls)
        source.__dict__.update(_FILE_FIELDS, path=path, size=size)
        return source


_new = object.__new__
_FILE_FIELDS = Source("", regular=True).__dict__
