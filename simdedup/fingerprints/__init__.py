"""The fingerprint stage's output: records, their two file forms, and the column form that
clustering reads.

- :mod:`.record`: one document's :class:`FingerprintRecord` and its JSON line;
- :mod:`.binary`: the compact binary form;
- :mod:`.columns`: fingerprint files of either form read into numpy columns;
- :mod:`.sets`: a :class:`FingerprintSet` to cluster (one record of each id, chosen by content).
"""

from .binary import BinaryWriter
from .columns import FingerprintColumns, read_fingerprint_files
from .record import FingerprintRecord, describe_settings, json_lines
from .sets import REPEATED_ID, FingerprintSet, collect_records, load_fingerprints, warn_repeated

__all__ = [
    "REPEATED_ID",
    "BinaryWriter",
    "FingerprintColumns",
    "FingerprintRecord",
    "FingerprintSet",
    "collect_records",
    "describe_settings",
    "json_lines",
    "load_fingerprints",
    "warn_repeated",
    "read_fingerprint_files",
]
