"""Files simdedup computes once and keeps: the fast path's machine code, jieba's IDF table.

They live in ``simdedup/__pycache__`` beside the package, as Python's own bytecode does, or in
``$XDG_CACHE_HOME/simdedup`` (``~/.cache/simdedup``) where the package folder is read-only.
A name should say what the contents depend on (a hash of the inputs); a file that cannot be
read or written is computed again, never an error. Deleting them is always safe.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dirs() -> list[Path]:
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(__file__).parent / "__pycache__", Path(xdg) / "simdedup"]


def read(name: str) -> bytes | None:
    """The contents of the cached file ``name``, or None."""
    for folder in cache_dirs():
        try:
            return (folder / name).read_bytes()
        except OSError:
            continue
    return None


def write(name: str, data: bytes) -> None:
    """Keep ``data`` as ``name`` in the first folder that takes it (written whole or not at all)."""
    for folder in cache_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, folder / name)  # readers never see half a file
            return
        except OSError:
            continue
