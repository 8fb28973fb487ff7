"""What every fingerprinting method is: documents in, fingerprint records out."""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import SkipDocument
from ..fingerprints import FingerprintRecord
from ..read import Document, Source


class Method:
    """How documents become fingerprint records; a subclass makes one kind of fingerprint.

    A method never opens a path: the read stage hands it :class:`~simdedup.read.Document`
    objects (a text, bytes read whole, or a reader streaming a file's chunks), reading whole the
    files of up to :attr:`whole_bytes` bytes. Subclasses set ``bits``, ``encoding`` and
    :attr:`settings` and implement :meth:`record`.
    """

    bits: int
    encoding: str
    #: files up to this size are read whole for the method (0: every file streams)
    whole_bytes: int = 0

    @property
    def settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Load what the method needs before documents arrive (inherited by worker processes)."""

    def finish(self) -> None:
        """Let go of what the method keeps from one batch to the next (called after the last
        batch of a run in this process; the method still works after it)."""

    def record(self, document: Document) -> FingerprintRecord:
        """The record of one document.

        Raises:
            SkipDocument: unreadable, empty, binary or undecodable, or nothing to fingerprint.
        """
        raise NotImplementedError

    def fingerprint_batch(self, documents: Iterable[Document]) -> list[FingerprintRecord | Source]:
        """A record, or a source with the reason it was skipped, for each document in order."""
        return [self._one(document) for document in documents]

    def fingerprint_text(self, doc_id: str, text: str) -> FingerprintRecord:
        """The record of a text held in memory.

        Raises:
            SkipDocument: nothing to fingerprint.
        """
        (result,) = self.fingerprint_batch([Document(doc_id, text=text)])
        if isinstance(result, Source):
            raise SkipDocument(doc_id, result.reason or "no text to fingerprint")
        return result

    def _one(self, document: Document) -> FingerprintRecord | Source:
        if document.reason is not None:
            return document.skipped
        try:
            return self.record(document)
        except SkipDocument as exc:
            return Source(document.id, exc.reason)
