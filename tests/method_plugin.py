"""A method added the way the README says (one module, one registration), for
tests/test_method_registry.py: a hash of the whole text, widened to the width asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import xxhash

from simdedup.fingerprints import FingerprintRecord
from simdedup.methods import Method
from simdedup.read import Document, text_chunks


@dataclass
class WholeTextMethod(Method):
    name: str = "whole"
    bits: int = 64
    encoding: str = "utf-8"

    @property
    def settings(self) -> dict[str, Any]:
        return {"method": self.name, "bits": self.bits}

    def record(self, document: Document) -> FingerprintRecord:
        chunks = text_chunks(document.text) if document.text is not None else document.reader
        data = "".join(chunks).encode("utf-8", "surrogatepass")  # type: ignore[arg-type]
        value = 0
        for word in range(self.bits // 64):
            value |= xxhash.xxh3_64_intdigest(data, seed=word) << (64 * word)
        return FingerprintRecord(document.id, value, self.bits, len(data.split()), self.settings, len(data))


def make(*, bits: int, encoding: str, method: str = "whole", **_: Any) -> WholeTextMethod:
    return WholeTextMethod(method, bits, encoding)
