"""Compiled fast path for the common case: ASCII text, ``words`` or ``whitespace`` tokens.

The Python path reads, decodes, tokenizes into strings, counts them in a Counter and hashes
each distinct one: about 10 MB/s. Here one numba kernel walks the lower-cased bytes, finds the
tokens, hashes each with the very same XXH3-64 (the C function exported by the ``xxhash``
package's extension, linked by symbol name), and counts them in an open-addressing table; a
second kernel adds up the simhash bit votes and the sketch's bin minima and densifies them.
Results are identical to the Python path (the tests compare them): for ASCII text
``bytes.lower`` is ``str.lower``, the token classes are the ASCII cases of ``\\w`` and of
``str.split``'s whitespace, and the sums are exact integers.

It is used only where it gives the same answer: 64-bit fingerprints, the ``xxh3`` hash, the
``words`` or ``whitespace`` tokenizer without shingles, UTF-8 input, documents that are ASCII
after an optional byte-order mark and at most :data:`MAX_BYTES` long; anything else takes the
Python path. Compiling costs seconds once; numba caches the machine code (loading numba and
that code still takes about 0.7 s per process), so the kernels are not even imported until a
process has read :data:`START_AFTER_BYTES`: small runs and ``--help`` never pay for them. Without numba (or without the XXH3 symbol in the ``xxhash``
build) everything works, only slower. ``SIMDEDUP_FASTPATH=0`` turns it off.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

MAX_BYTES = 64 << 20
START_AFTER_BYTES = 4 << 20
_SNIFF_BYTES = 8192

_WORD = np.zeros(256, dtype=np.uint8)
for _c in b"abcdefghijklmnopqrstuvwxyz0123456789_":
    _WORD[_c] = 1
_NOT_SPACE = np.ones(256, dtype=np.uint8)
for _c in (9, 10, 11, 12, 13, 28, 29, 30, 31, 32):  # str.split()'s ASCII whitespace
    _NOT_SPACE[_c] = 0
TOKEN_CLASSES = {"words": _WORD, "whitespace": _NOT_SPACE}

_EMPTY = np.uint64(1 << 40)  # as simdedup.sketch.EMPTY: above every 32-bit value
_kernels: Any = None
_bytes_seen = 0


def _compile() -> Any:
    from . import _kernels  # imports numba, compiles or loads the cached machine code

    # Run each kernel once now, so that any failure happens here and not mid-corpus.
    hashes, counts = _kernels.count_tokens(np.frombuffer(b"ab ab c", dtype=np.uint8), _NOT_SPACE)
    _kernels.fingerprint(hashes, counts, np.uint64(57), np.uint64(1 << 40), 128, True)
    return _kernels.count_tokens, _kernels.fingerprint


def kernels() -> Any:
    """The compiled kernels, or None when numba or the XXH3 symbol is not available."""
    global _kernels
    if _kernels is None:
        try:
            _kernels = _compile()
        except Exception:  # no numba, no symbol: the Python path does the work
            _kernels = False
    return _kernels or None


def preload() -> None:
    """Load the kernels now and use them from the first document (before forking workers)."""
    global _bytes_seen
    if kernels() is not None:
        _bytes_seen = max(_bytes_seen, START_AFTER_BYTES)


def eligible(tokenizer: Any, bits: int, hash_name: str, encoding: str) -> bool:
    """Whether documents fingerprinted with these settings can take the fast path."""
    from codecs import lookup

    return (
        os.environ.get("SIMDEDUP_FASTPATH", "1") != "0"
        and tokenizer.name in TOKEN_CLASSES
        and tokenizer.options == {"shingle": 1}
        and bits == 64
        and hash_name == "xxh3"
        and (encoding == "auto" or lookup(encoding).name == "utf-8")  # ASCII reads the same in both
    )


def fingerprint_bytes(data: bytes, tokenizer_name: str, sketch_bins: int, force: bool = False,
                      binary: bool = False) -> Any:
    """``(simhash, sketch, features)`` of an ASCII document, or None to use the Python path.

    ``data`` has passed the empty and binary checks and lost its byte-order mark. Returns None
    for non-ASCII or very large documents, before :data:`START_AFTER_BYTES` have been seen by
    this process (unless ``force``), and when the kernels are not available.
    """
    global _bytes_seen
    _bytes_seen += len(data)
    if len(data) > MAX_BYTES or not data.isascii():
        return None
    if not force and _bytes_seen < START_AFTER_BYTES:
        return None
    compiled = kernels()
    if compiled is None:
        return None
    count_tokens, fingerprint = compiled
    hashes, counts = count_tokens(np.frombuffer(data.lower(), dtype=np.uint8), TOKEN_CLASSES[tokenizer_name])
    if len(hashes) == 0:
        return 0, None, 0
    shift = np.uint64(64 - sketch_bins.bit_length() + 1) if sketch_bins else np.uint64(0)
    value, sketch = fingerprint(hashes, counts, shift, _EMPTY, sketch_bins, binary)
    return int(value), sketch.tobytes() if sketch_bins else None, len(hashes)
