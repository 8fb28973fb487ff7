"""Directories whose files are simdedup's own state: an index (:mod:`simdedup.store`) and the
work directory of a staged run (:mod:`simdedup.engines.workdir`). One check, :func:`refuse_inside`,
keeps every output, every new index and every work directory out of them: a file written there
would be taken for (or replace) a part of that state."""

from __future__ import annotations

import json
import os

from .errors import UsageError

#: an index's catalog, and the marker of an index whose creation has not finished
INDEX_CATALOG = "catalog.sqlite"
INDEX_CREATING = "creating.unfinished"
#: a work directory's settings, written when a run claims it
WORK_DIR_MANIFEST = "manifest.json"


def _is_work_dir(directory: str) -> bool:
    path = os.path.join(directory, WORK_DIR_MANIFEST)
    try:
        if os.path.getsize(path) > 1 << 20:
            return False
        with open(path, "rb") as handle:
            found = json.loads(handle.read())
    except (OSError, ValueError):
        return False
    return isinstance(found, dict) and {"format", "settings"} <= set(found)


def owner(path: str, itself: bool = True) -> str | None:
    """``"the index DIR"`` or ``"the work dir DIR"`` when ``path`` (existing or not; links
    followed) lies inside one, or, with ``itself``, is one; else None."""
    current = os.path.realpath(os.path.abspath(path))
    first = True
    while True:
        if itself or not first:
            if any(os.path.lexists(os.path.join(current, name)) for name in (INDEX_CATALOG, INDEX_CREATING)):
                if os.path.isdir(os.path.join(current, "segments")) or os.path.lexists(
                    os.path.join(current, INDEX_CREATING)
                ):
                    return f"the index {current}"
            if _is_work_dir(current):
                return f"the work dir {current}"
        first = False
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def refuse_inside(path: str, what: str, itself: bool = True) -> None:
    """Raises UsageError when ``path`` (an output, a new index, a work directory; ``what``
    names it) lies inside an index or a work directory (or, with ``itself``, is one).

    URLs are not checked: they name objects, not this machine's directories.
    """
    if "://" in path and not path.startswith("file://"):
        return
    found = owner(path.removeprefix("file://"), itself)
    if found is None:
        return
    if what == "stdout":  # a redirection made the file already: it is not ours to remove
        raise UsageError(f"stdout writes into a file of {found}, whose files are simdedup's own; write it elsewhere")
    raise UsageError(f"{what} is inside {found}, whose files are simdedup's own; write it elsewhere")
