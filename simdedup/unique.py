"""Writing a corpus without its duplicates; the inputs are never modified.

Every cluster keeps its representative; every document outside a cluster is kept. Documents
that were files are copied into a directory, under their id (the path as given, made
relative); documents that were lines of JSON-lines files are written, as the very lines they
were, to one JSON-lines file. Lines that were not documents (malformed ones) are not written.
"""

from __future__ import annotations

import os
import shutil
from typing import Iterable

from .corpus import iter_jsonl_lines
from .errors import SimdedupError


def dropped_ids(clusters: Iterable, ids: list[str]) -> set[str]:
    """Ids of the members that are not their cluster's representative."""
    return {ids[m] for c in clusters for m in c.members if m != c.representative}


def _inside_target(path: str) -> str:
    parts = [p for p in os.path.normpath(path).split(os.sep) if p not in ("", ".")]
    return os.path.join(*[("_up_" if p == ".." else p) for p in parts])


def copy_kept_files(ids: Iterable[str], drop: set[str], directory: str) -> int:
    """Copy every kept document file into ``directory``; returns how many.

    Raises:
        SimdedupError: a copy would land on an input file.
    """
    copied = 0
    for doc_id in ids:
        if doc_id in drop:
            continue
        target = os.path.join(directory, _inside_target(doc_id))
        if os.path.exists(target) and os.path.samefile(target, doc_id):
            raise SimdedupError(f"{target} is an input file; choose a --unique-out outside the inputs")
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        shutil.copyfile(doc_id, target)
        copied += 1
    return copied


def write_kept_lines(files: Iterable[str], drop: set[str], out, text_field: str, id_field: str | None,
                     max_line: int | None = None) -> int:
    """Write the kept document lines of the JSON-lines ``files`` to the binary stream ``out``
    (lines over ``max_line`` bytes were skipped when fingerprinting, and are here)."""
    written = 0
    for path in files:
        for source, raw in iter_jsonl_lines(path, text_field, id_field, max_line):
            if source.reason is None and source.path not in drop:
                out.write(raw if raw.endswith(b"\n") else raw + b"\n")
                written += 1
    return written
