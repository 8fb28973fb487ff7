"""Ids are data: what a command may open of what an id names.

An id comes from the input (a file name, a URL, an ``--id-field`` value of crawled data), so a
cluster line can name any path or URL: ``~/.aws/credentials``, ``../../etc/passwd``,
``http://169.254.169.254/``. A command that reads documents by their ids (``report``, ``explain
--clusters``, ``dedup --report``) opens one only through :class:`GivenDocuments`: the files and
directories (or URLs and prefixes) the user gave that command, and nothing outside them,
whatever the id spells (``..``, a symbolic link out of a directory, ``file://``, another host).
"""

from __future__ import annotations

import os
from typing import Iterable
from urllib.parse import unquote, urlsplit

from .remote import is_url, local_path


class GivenDocuments:
    """The documents the user named (``roots``: files, directories, URLs of objects or
    prefixes); :meth:`refusal` says whether an id is inside them."""

    def __init__(self, roots: Iterable[str]):
        self.files: set[str] = set()  # real paths of the local roots that are not directories
        self.paths: list[str] = []  # real paths of the local directories
        self.urls: list[str] = []  # URL roots, without a trailing "/"
        for root in roots:
            if root == "-":
                continue
            if is_url(root) and local_path(root) == root:
                self.urls.append(root.rstrip("/"))
                continue
            real = _real_path(local_path(root))
            if real is not None and os.path.isdir(real):
                self.paths.append(real)
            elif real is not None:  # a file given (many, for dedup's own inputs): found by a set
                self.files.add(real)

    def refusal(self, doc_id: str) -> str | None:
        """None when the document ``doc_id`` lies inside a root the user gave, else why not:
        an id is opened only there (a local path by where it really leads, links followed)."""
        if not self.paths and not self.files and not self.urls:
            return "no documents given (name them with --documents)"
        if is_url(doc_id) and local_path(doc_id) == doc_id:
            return None if any(_url_inside(doc_id, root) for root in self.urls) else _OUTSIDE
        real = _real_path(local_path(doc_id))
        if real is None:
            return "not a path"
        inside = real in self.files or any(_inside(real, root) for root in self.paths)
        return None if inside else _OUTSIDE


_OUTSIDE = "outside the documents given (ids are data: only --documents are read)"


def _real_path(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # NUL in the name, or a loop on some systems
        return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _url_inside(url: str, root: str) -> bool:
    """Whether ``url`` is the object ``root`` names or under that prefix: the same scheme and
    host, no query or fragment, and no ``.`` or ``..`` step (as written or percent-encoded)
    after the root."""
    if url != root and not url.startswith(root + "/"):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.query or parts.fragment or "@" in parts.netloc:
        return False
    rest = unquote(url[len(root) :])
    return not any(step in (".", "..") for step in rest.replace("\\", "/").split("/"))
