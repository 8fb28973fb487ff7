"""The record scanner: fingerprint lines of one template read without Python's JSON parser
(:mod:`simdedup.fingerprints.columns`; numba source: :mod:`simdedup.kernels.source.scan`)."""

from __future__ import annotations

import numpy as np

from .load import Loaded

#: the fields of a record template, as simdedup.kernels.source.scan numbers them
FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_BYTES, FIELD_SKETCH = range(5)


class RecordScanner(Loaded):
    """The loaded record scanner (:func:`simdedup.kernels.source.scan.scan_records`)."""

    FUNCTIONS = ("scan",)

    def scan(
        self,
        data: memoryview | bytes,
        pieces: tuple[bytes, ...],
        kinds: tuple[int, ...],
        hex_digits: int,
        sketch_chars: int,
        capacity: int,
    ) -> tuple[bytes, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The lines of ``data``, all of the template that the literal ``pieces`` around the
        fields ``kinds`` and the widths make (see :func:`simdedup.kernels.source.scan.scan_records`):
        ``(ids, id_ends, escaped, values, features, sizes, sketches)``, the ids as bytes each
        followed by a newline; None when a line does not fit or there are more than
        ``capacity``."""
        words = max(1, hex_digits // 16)
        sketch_bytes = sketch_chars * 3 // 4
        joined = np.frombuffer(b"".join(pieces) or b"\0", dtype=np.uint8)
        ends = np.cumsum([len(p) for p in pieces]).astype(np.int64)
        steps = np.array(kinds or (0,), dtype=np.int64)
        cap = max(capacity, 1)
        text = np.frombuffer(data, dtype=np.uint8)
        ids = np.empty(max(len(text), 1), dtype=np.uint8)
        id_ends = np.empty(cap, dtype=np.int64)
        escaped = np.empty(cap, dtype=np.uint8)
        values = np.empty((cap, words), dtype=np.uint64)
        features = np.empty(cap, dtype=np.int64)
        sizes = np.empty(cap, dtype=np.int64)
        sketches = np.empty((cap, sketch_bytes), dtype=np.uint8)
        records = self._functions["scan"](
            text.ctypes.data,
            len(text),
            joined.ctypes.data,
            ends.ctypes.data,
            steps.ctypes.data,
            len(kinds),
            hex_digits,
            words,
            sketch_chars,
            sketch_bytes,
            ids.ctypes.data,
            id_ends.ctypes.data,
            escaped.ctypes.data,
            values.ctypes.data,
            features.ctypes.data,
            sizes.ctypes.data,
            sketches.ctypes.data if sketch_bytes else ids.ctypes.data,
            capacity,
        )
        if records < 0:
            return None
        used = int(id_ends[records - 1]) + 1 if records else 0
        return (
            ids[:used].tobytes(),
            id_ends[:records],
            escaped[:records],
            values[:records],
            features[:records],
            sizes[:records],
            sketches[:records],
        )

    def check(self) -> None:
        # Checked as the others: two lines of a template with a 16-digit value and a 4-character
        # sketch (3 bytes), the second with an escape and a CRLF, the third without its newline.
        pieces = (b'{"bytes":', b',"id":"', b'","simhash":"', b'","bits":64,"features":', b',"sketch":"', b'"}')
        kinds = (FIELD_BYTES, FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_SKETCH)
        lines = (
            b'{"bytes":0,"id":"a","simhash":"00000000000000fF","bits":64,"features":7,"sketch":"AP-_"}\n'
            b'{"bytes":-12,"id":"\\\\n","simhash":"8000000000000001","bits":64,"features":0,"sketch":"____"}\r\n'
            b'{"bytes":5,"id":"","simhash":"0000000000000000","bits":64,"features":10,"sketch":"AAAA"}'
        )
        found = self.scan(lines, pieces, kinds, 16, 4, 3)
        if (
            found is None
            or found[0] != b"a\n\\\\n\n\n"
            or found[2].tolist() != [0, 1, 0]
            or found[3][:, 0].tolist() != [255, (1 << 63) + 1, 0]
            or found[4].tolist() != [7, 0, 10]
            or found[5].tolist() != [0, -12, 5]
            or found[6].tolist() != [[0, 255, 191], [255] * 3, [0] * 3]
            or self.scan(lines, pieces, kinds, 16, 4, 2) is not None
        ):
            raise RuntimeError("the record scanner gives wrong results")
