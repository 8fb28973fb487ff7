"""Inputs and outputs named by URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``file://``):
read and written through fsspec and the store's own package (s3fs, gcsfs, adlfs).

- A URL's id is the URL itself. A prefix is listed like a directory: every object under it,
  filtered as a walk is (:class:`~.walk.WalkFilter`), in the order a walk of the same files on
  disk takes (by path component), so the output is the one the files on disk give, ids aside.
- Objects stream: :func:`open_url` gives a seekable file object that reads ranges of
  :data:`BLOCK_BYTES` as they are needed; decompressors and the table readers wrap it.
- A failure of one object (missing, access denied) reaches the readers as an OSError with a
  one-line reason, so the document is skipped with a warning as a local file would be; a store
  that cannot be reached (after its client's retries with back-off) stops the run with a
  one-line error (:func:`failure`).
- Outputs are written to a local temporary file and uploaded under their name when complete
  (:class:`simdedup.write.RemoteOutput`): the store shows the old object or the whole new one.
- Credentials come from the environment, the filesystem's own configuration, or
  ``--storage-option KEY=VALUE`` (:func:`use_storage_options`). Their values are never shown:
  every message passes through :func:`simdedup.messages.printable`, which hides them.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from contextlib import suppress
from typing import Any, BinaryIO, Iterator

from ..errors import SimdedupError, UsageError, first_line
from ..messages import hide_secret
from .source import Source

#: bytes fetched from the store by one ranged read (readahead beyond what is asked)
BLOCK_BYTES = 4 << 20
#: the schemes read as URLs; any other name is a local path
SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "http", "https", "file", "memory")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: option names (and environment variables) whose values are credentials, never shown
_SECRET_WORDS = ("secret", "token", "password", "key", "credential", "sas", "signature", "connection_string")
_SECRET_ENVIRONMENT = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
)
#: the S3 client's retries: botocore's standard mode (throttling, 5xx, dropped connections, with
#: exponential back-off and jitter), unless ``--storage-option config_kwargs=...`` says otherwise
S3_DEFAULT_CONFIG = {"retries": {"mode": "standard", "max_attempts": 5}}

_options: dict[str, Any] = {}
_filesystems: dict[str, Any] = {}  # this process's: a client's connections and event loop do not survive a fork
os.register_at_fork(after_in_child=_filesystems.clear)


def is_url(path: str) -> bool:
    """Whether ``path`` names an object by URL rather than a local file."""
    match = _URL.match(path)
    return match is not None and match.group(1).lower() in SCHEMES


def use_storage_options(items: tuple[str, ...] | dict[str, Any]) -> None:
    """Set the storage options of every URL of this process (``KEY=VALUE`` items, a value read as
    JSON when it is JSON: ``anon=true``, ``client_kwargs={"region_name": "x"}``); their secret
    values are hidden from every message from now on.

    Raises:
        UsageError: an item is not KEY=VALUE.
    """
    options: dict[str, Any] = {}
    if isinstance(items, dict):
        if items == _options:
            return  # as they are: keep the filesystems made with them
        options = dict(items)
    else:
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"{item!r} is not KEY=VALUE")
            try:
                options[key.strip()] = json.loads(value)
            except ValueError:
                options[key.strip()] = value
    _options.clear()
    _options.update(options)
    _filesystems.clear()
    _hide_secrets(options)


def local_path(name: str) -> str:
    """The local path a ``file://`` URL names (an output there is written as a file is: beside
    it, then renamed); any other name as it is."""
    if name[:7].lower() == "file://":
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(name).path)
    return name


def storage_options() -> dict[str, Any]:
    """The storage options in force (for a task that runs in another process)."""
    return dict(_options)


def _hide_secrets(options: Any, secret: bool = False) -> None:
    if isinstance(options, dict):
        for key, value in options.items():
            _hide_secrets(value, secret or any(word in str(key).lower() for word in _SECRET_WORDS))
    elif isinstance(options, (list, tuple)):
        for value in options:
            _hide_secrets(value, secret)
    elif secret and options is not None:
        hide_secret(str(options))


def _hide_environment() -> None:
    for name in _SECRET_ENVIRONMENT:
        value = os.environ.get(name)
        if value:
            hide_secret(value)


def filesystem(url: str) -> tuple[Any, str]:
    """The filesystem of ``url`` (one per scheme, made with the storage options) and the path of
    the object in it.

    Raises:
        UsageError: credentials written in the URL; no package for its scheme.
    """
    from urllib.parse import urlsplit

    scheme = url.split("://", 1)[0].lower()
    if urlsplit(url).password is not None:
        raise UsageError(
            f"{_without_userinfo(url)}: give credentials with --storage-option or the environment, "
            "not in the URL (where they would be written into every record)"
        )
    fs = _filesystems.get(scheme)
    try:
        if fs is None:
            import fsspec

            _hide_environment()  # the client may read its credentials there
            cls = fsspec.get_filesystem_class(scheme)
            options = dict(_options)
            s3 = scheme in ("s3", "s3a")
            if s3:
                options["config_kwargs"] = {**S3_DEFAULT_CONFIG, **options.get("config_kwargs", {})}
            fs = cls(**options)
            if s3:
                fs.retries = 1  # s3fs's own loop, over botocore's: one attempt, so that they do not multiply
            _filesystems[scheme] = fs
        return fs, fs._strip_protocol(url)
    except ImportError as exc:
        extra = {
            "s3": "s3",
            "s3a": "s3",
            "gs": "gcs",
            "gcs": "gcs",
            "az": "azure",
            "abfs": "azure",
            "abfss": "azure",
            "adl": "azure",
            "http": "http",
            "https": "http",
        }.get(scheme)
        hint = f": pip install 'simdedup[{extra}]'" if extra else ": pip install fsspec"
        raise UsageError(f"reading {scheme}:// URLs needs a package ({first_line(exc)}){hint}") from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--storage-option for {scheme}://: {first_line(exc)}") from None


def _without_userinfo(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('@', 1)[-1]}"


class StoreError(SimdedupError):
    """The store cannot be reached (a refused or dropped connection, a timeout, no credentials),
    after its client's retries: the run stops (exit 1) rather than skip every object after it.
    Not an OSError, so that no reader takes it for one document's problem."""


#: the packages whose own exceptions (not translated into OSError by the filesystem) say that the
#: store, not one object, failed
_TRANSPORTS = ("botocore", "aiobotocore", "aiohttp", "urllib3", "requests", "fsspec", "google", "azure")


def failure(exc: BaseException, url: str) -> Exception:
    """What the readers raise for ``exc``, met reading ``url``: an OSError about the object
    (missing, access denied), or a SimdedupError that stops the run: :class:`StoreError` when the
    store failed, a UsageError for storage options its client does not take; one line each."""
    if isinstance(exc, TypeError):  # the client made lazily, at its first request
        return UsageError(f"--storage-option for {url.split('://', 1)[0]}://: {first_line(exc)}")
    transport = isinstance(exc, (ConnectionError, TimeoutError)) or type(exc).__module__.split(".")[0] in _TRANSPORTS
    if transport and not isinstance(exc, (FileNotFoundError, PermissionError)):
        return StoreError(f"cannot read {url} from its store: {describe(exc)}")
    return OSError(describe(exc))


def describe(exc: BaseException) -> str:
    """One line saying why the store failed (after its client's retries)."""
    if isinstance(exc, FileNotFoundError):
        return "no such object or bucket"
    if isinstance(exc, PermissionError):
        return f"access denied ({first_line(exc)})"
    text = first_line(exc)
    return text if text != type(exc).__name__ else f"{text} (the store did not answer)"


def iter_url_sources(url: str, walk_filter: Any) -> Iterator[Source]:
    """The object ``url`` names, or every object under it (a prefix, listed as a directory is
    walked: filtered by ``walk_filter``, in the order of a walk on disk); a URL that cannot be
    listed is a skipped Source saying why."""
    try:
        fs, path = filesystem(url)
        info = fs.info(path)
        if info.get("type") != "directory":
            yield Source(url, size=info.get("size"), regular=True, version=_version(info))
            return
        listing = fs.find(path, detail=True)
    except FileNotFoundError:
        yield Source(url, "no such object, prefix or bucket")
        return
    except UsageError:
        raise
    except Exception as exc:  # the store's client's errors, whatever their class
        error = failure(exc, url)
        if not isinstance(error, OSError):
            raise error from None
        yield Source(url, f"cannot list: {error}")
        return
    root = path.rstrip("/")
    base = url.rstrip("/")
    entries = []
    for name, entry in listing.items():
        relative = name[len(root) + 1 :] if name.startswith(root + "/") else None
        if not relative or entry.get("type") != "file" or relative.endswith("/"):
            continue
        entries.append((relative.split("/"), relative, entry))
    for parts, relative, entry in sorted(entries, key=lambda e: e[0]):
        full, size = f"{base}/{relative}", entry.get("size") or 0
        if all(
            walk_filter.takes_dir(f"{base}/{'/'.join(parts[:depth])}", base) for depth in range(1, len(parts))
        ) and walk_filter.takes_file(full, base, size):
            yield Source(full, size=size, regular=True, version=_version(entry))


def _version(info: dict) -> str:
    return f"{info.get('size')}:{info.get('ETag') or info.get('etag') or info.get('LastModified') or info.get('mtime')}"


def version(url: str) -> str:
    """What changes when the object ``url`` changes: its size and entity tag (or time), as the
    store says now ("" when it cannot be asked)."""
    try:
        fs, path = filesystem(url)
        return _version(fs.info(path))
    except Exception:
        return ""


class _StoreReader(io.RawIOBase):
    """An object of the store read in ranges: a seekable raw stream whose every failure is an
    OSError saying why in one line (the client's own errors are of many classes)."""

    def __init__(self, handle: Any, url: str):
        self._handle, self._url = handle, url

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._handle.read(len(buffer))
        except Exception as exc:
            raise failure(exc, self._url) from None
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._handle.seek(offset, whence)
        except Exception as exc:
            raise failure(exc, self._url) from None

    def tell(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        if not self.closed:
            with suppress(Exception):
                self._handle.close()
        super().close()


def open_url(url: str, size: int | None = None) -> io.BufferedReader:
    """The object ``url`` names, opened for reading in ranges (``size``: its size, when the
    listing gave it, saves asking for it).

    Raises:
        OSError: it cannot be opened (one line: :func:`describe`); so does reading it.
        StoreError: the store cannot be reached; so does reading it.
        UsageError: as :func:`filesystem`.
    """
    fs, path = filesystem(url)
    options: dict[str, Any] = {"block_size": BLOCK_BYTES, "cache_type": "readahead"}
    if size is not None and url.split("://", 1)[0].lower() in ("s3", "s3a", "gs", "gcs", "abfs", "abfss", "az"):
        options["size"] = size
    try:
        handle = fs.open(path, "rb", **options)
    except Exception as exc:
        raise failure(exc, url) from None
    return io.BufferedReader(_StoreReader(handle, url), 1 << 16)


def object_status(url: str) -> os.stat_result | None:
    """The status of the object ``url`` names, as a file's (a regular file of its size and
    modification time, no device or inode), when the store shows it and its first byte can be
    read now; None when it is missing, not an object (a prefix) or cannot be read.

    Raises:
        StoreError: the store cannot be reached (after its client's retries).
        UsageError: as :func:`filesystem`.
    """
    import stat

    fs, path = filesystem(url)
    try:
        info = fs.info(path)
        if info.get("type") != "file":
            return None
        size = int(info.get("size") or 0)
        if size:  # shown is not readable: a policy may deny the read of an object it lists
            fs.cat_file(path, start=0, end=1)
    except Exception as exc:  # the store's client's errors, whatever their class
        error = failure(exc, url)
        if isinstance(error, OSError):
            return None
        raise error from None
    modified = info.get("LastModified") or info.get("last_modified") or info.get("mtime") or 0
    try:
        seconds = modified.timestamp() if hasattr(modified, "timestamp") else float(modified)
    except (TypeError, ValueError, OverflowError, OSError):
        seconds = 0.0
    if not math.isfinite(seconds):
        seconds = 0.0
    return os.stat_result(
        (stat.S_IFREG | 0o444, 0, 0, 1, 0, 0, size, seconds, seconds, seconds),
        {"st_mtime_ns": int(seconds * 1e9)},
    )


def is_prefix(url: str) -> bool:
    """Whether ``url`` names a prefix (a directory of objects) rather than an object; False when
    the store cannot say (opening it then says why)."""
    try:
        fs, path = filesystem(url)
        return fs.info(path).get("type") == "directory"
    except Exception:  # the store's client's errors, whatever their class: opening reports them
        return False


def open_stored(path: str, size: int | None = None) -> BinaryIO:
    """The bytes of a file, or of an object named by URL (read in ranges: :func:`open_url`), as
    stored.

    Raises:
        OSError: it cannot be opened.
    """
    if is_url(path):
        return open_url(path, size)
    return open(path, "rb")


def read_objects(sources: list[Source], limit: int) -> dict[str, bytes]:
    """The bytes of those of ``sources`` named by URL whose size (from the listing) is at most
    ``limit``, fetched concurrently: one request each, all in flight at once, as the latency of a
    store, not its bandwidth, bounds a run of small objects. An object that fails alone is left
    out (the streaming path then says why).

    Raises:
        StoreError: the store cannot be reached.
    """
    by_scheme: dict[str, list[str]] = {}
    for source in sources:
        if is_url(source.path) and source.size is not None and source.size <= limit:
            by_scheme.setdefault(source.path.split("://", 1)[0].lower(), []).append(source.path)
    fetched: dict[str, bytes] = {}
    for urls in by_scheme.values():
        fs, _ = filesystem(urls[0])
        paths = {fs._strip_protocol(url): url for url in urls}
        try:
            results = fs.cat(list(paths), on_error="return")
        except Exception as exc:
            raise failure(exc, urls[0]) from None
        for path, value in results.items():
            if not isinstance(value, Exception):
                fetched[paths[path]] = value
            elif not isinstance(error := failure(value, paths[path]), OSError):
                raise error
    return fetched
