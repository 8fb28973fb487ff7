"""Files simdedup computes once and keeps: the fast path's machine code, jieba's IDF table.

They live in ``simdedup/__pycache__/simdedup-2`` beside the package, as Python's own bytecode does, or in
``$XDG_CACHE_HOME/simdedup/2`` (``~/.cache/simdedup/2``) where the package folder is read-only,
or only in ``$SIMDEDUP_CACHE_DIR/2`` when that is set. ``pip install .`` fills the first while it
builds the wheel (``setup.py``, :mod:`simdedup.kernels.prepare`).
A name should say what the contents depend on (a hash of the inputs); a file that cannot be
read or written is computed again, never an error. Deleting them is always safe.

What is read back is machine code run as is, so a file is trusted only if it is whole: each
starts with the SHA-256 of its name and contents, checked on every read. A file that fails
(truncated, overwritten, another cache file copied over it) costs a warning and is made again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .write import current_umask

#: the layout of the files (in the folder names, so that files of other layouts are never read)
LAYOUT = 2
DIGEST_BYTES = 32


def cache_dirs() -> list[Path]:
    """Where cache files are looked for, and written to the first that takes them:
    ``$SIMDEDUP_CACHE_DIR`` alone when it is set, else beside the package, then the user's."""
    chosen = os.environ.get("SIMDEDUP_CACHE_DIR")
    if chosen:
        return [Path(chosen) / str(LAYOUT)]
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(__file__).parent / "__pycache__" / f"simdedup-{LAYOUT}", Path(xdg) / "simdedup" / str(LAYOUT)]


def _digest(name: str, data: bytes | memoryview) -> bytes:
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(data)  # not joined to the name: a copy of a large file costs as much as its hash
    return digest.digest()


def read(name: str) -> bytes | None:
    """The contents of the cached file ``name``, or None (a damaged one with a warning)."""
    data = read_view(name)
    return None if data is None else data.tobytes()


def read_view(name: str) -> memoryview | None:
    """:func:`read`, as a view of the bytes read (large tables need no copy of their 10 MB)."""
    for folder in cache_dirs():
        try:
            stored = (folder / name).read_bytes()
        except OSError:
            continue
        data = memoryview(stored)[DIGEST_BYTES:]
        if stored[:DIGEST_BYTES] == _digest(name, data):
            return data
        from .messages import message

        message(f"simdedup: warning: {folder / name}: damaged cache file, made again")
    return None


def write(name: str, data: bytes) -> None:
    """Keep ``data`` as ``name`` in the first folder that takes it (written whole or not at all)."""
    for folder in cache_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}-")
            # readable as Python's bytecode is (mkstemp's 0600 would make every other user of an
            # installed package compile again); its digest, not its owner, is what is trusted
            os.fchmod(fd, 0o644 & ~current_umask())
            with os.fdopen(fd, "wb") as handle:
                handle.write(_digest(name, data) + data)
            os.replace(temporary, folder / name)  # readers never see half a file
            return
        except OSError:
            continue
