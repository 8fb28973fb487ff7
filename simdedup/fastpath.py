"""Compiled kernels for the hot loops, loaded without numba, each with a Python path that gives
the same results.

- :class:`Kernel`, the fast path for the common case: ASCII text, ``words`` or ``whitespace``
  tokens. The Python path reads, decodes, tokenizes into strings, counts them in a Counter and
  hashes each distinct one: about 10 MB/s. Here one call takes a whole batch of lower-cased
  documents, finds the tokens, hashes each with the very same XXH3-64 (the C function exported
  by the ``xxhash`` package's extension, linked by symbol name), counts them, and adds up the
  simhash bit votes and the sketch's bin minima. Results are identical to the Python path (the
  tests compare them): for ASCII text ``bytes.lower`` is ``str.lower``, the token classes are
  the ASCII cases of ``\\w`` and of ``str.split``'s whitespace, and the sums are exact integers.
  It is used only where it gives the same answer: 64-bit fingerprints, the ``xxh3`` hash, the
  ``words`` or ``whitespace`` tokenizer without shingles, UTF-8 input, documents that are ASCII
  after an optional byte-order mark, and at most :data:`MAX_BYTES` long when read from a file (texts
  held in memory, such as JSON lines, whatever their length); anything else takes
  the Python path.
- :class:`KeywordKernel`: ``jieba-fast``'s TF-IDF keywords of a batch of segmented documents
  (:mod:`simdedup.tokenizers.jieba_tfidf`).
- :class:`PairKernel`: the candidate pairs of a crowded block table (:mod:`simdedup.index`).
- :class:`LinkageKernel`: complete linkage over many verified pairs (:mod:`simdedup.cluster`).

Loading: numba compiles a kernel once (about 2 s) and its machine code is kept in a cache file
(:mod:`simdedup.cache`), keyed by the kernel source, the llvmlite version and the CPU. Later
processes load that file with llvmlite alone in about 40 ms, without importing numba (about
0.4 s), so the fast path pays from half a megabyte (:data:`START_AFTER_BYTES`); ``--help``
and small runs never load it. A kernel is checked against the Python arithmetic when it loads.
Without numba, llvmlite or the XXH3 symbol everything works, only slower.
``SIMDEDUP_FASTPATH=0`` turns them all off.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import cache

MAX_BYTES = 64 << 20
# Loading costs what the Python path takes for about 0.4 MB of text; a batch that brings this
# process past this many bytes is the first to take the kernel.
START_AFTER_BYTES = 1 << 19
BATCH_BYTES = 4 << 20  # documents handed to the kernel at once
TABLE_SLOTS = 1 << 16  # largest table of a batch call; a document with more distinct tokens is retried alone
PLANES = 48  # as simdedup._kernels (which cannot be imported without numba)
SCRATCH_WORDS = PLANES + 4096

_WORD = np.zeros(256, dtype=np.uint8)
for _c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_":
    _WORD[_c] = 1
_NOT_SPACE = np.ones(256, dtype=np.uint8)
for _c in (9, 10, 11, 12, 13, 28, 29, 30, 31, 32):  # str.split()'s ASCII whitespace
    _NOT_SPACE[_c] = 0
TOKEN_CLASSES = {"words": _WORD, "whitespace": _NOT_SPACE}

_ARGTYPES = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
             ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]


class Kernel:
    """The loaded batch kernel and its scratch buffers (one per process; calls from several
    threads take turns, as ctypes lets them run at once and the scratch is shared)."""

    def __init__(self, address: int, engine: Any):
        import threading

        self._engine = engine  # owns the machine code: keep it alive
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, *_ARGTYPES)(address)
        self._lock = threading.Lock()
        self._tables: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._scratch = np.zeros(SCRATCH_WORDS, dtype=np.uint64)

    def _table(self, slots: int) -> tuple[np.ndarray, np.ndarray]:
        """Hash table (key and count side by side) and list of used slots, all zero."""
        if slots > TABLE_SLOTS:  # a one-off for a huge document: not kept
            return np.zeros(2 * slots, np.uint64), np.zeros(slots, np.int64)
        if slots not in self._tables:
            self._tables[slots] = (np.zeros(2 * slots, np.uint64), np.zeros(slots, np.int64))
        return self._tables[slots]

    def fingerprint(self, documents: list[bytes], token_class: str, bins: int,
                    binary: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(simhash values, distinct token counts, sketches (n, bins))`` of ASCII documents."""
        if bins & (bins - 1) or not 0 <= bins <= SCRATCH_WORDS - PLANES:
            raise ValueError(f"sketch bins must be 0 or a power of two up to {SCRATCH_WORDS - PLANES}")
        n = len(documents)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in documents], out=offsets[1:])
        values = np.zeros(n, dtype=np.uint64)
        features = np.zeros(n, dtype=np.int64)
        sketches = np.zeros((n, bins), dtype=np.uint8)
        self._run(bytearray().join(documents), offsets, TOKEN_CLASSES[token_class], bins, binary,
                  values, features, sketches, TABLE_SLOTS)
        for d in np.flatnonzero(features < 0):  # more distinct tokens than the table holds
            size = len(documents[d])
            # Alone, in a table 16 times larger each time, up to one that holds every token distinct:
            # a table sized for that at once (and first filled to a quarter of the bytes) would take
            # about 5 bytes per byte of a 100 MB document, whatever its vocabulary.
            most, slots = 1 << max(10, (size + 2).bit_length()), TABLE_SLOTS
            single = np.array([0, size], dtype=np.int64)
            data = bytearray(documents[d])
            while features[d] < 0 and slots < most:
                slots = min(slots << 4, most)
                self._run(data, single, TOKEN_CLASSES[token_class], bins, binary,
                          values[d:], features[d:], sketches[d:], slots)
        return values, features, sketches

    def _run(self, data: bytearray, offsets: np.ndarray, is_token: np.ndarray, bins: int, binary: bool,
             values: np.ndarray, features: np.ndarray, sketches: np.ndarray, slots: int) -> None:
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        shift = 64 - bins.bit_length() + 1 if bins else 0
        with self._lock:
            table, used = self._table(slots)
            self._function(buffer.ctypes.data, buffer.ctypes.data, offsets.ctypes.data, len(offsets) - 1,
                           is_token.ctypes.data, bins, shift, int(binary), values.ctypes.data,
                           features.ctypes.data, sketches.ctypes.data, table.ctypes.data, used.ctypes.data, slots,
                           self._scratch.ctypes.data)


@dataclass(frozen=True)
class KeywordRules:
    """What the keyword kernel needs to score words as ``jieba.analyse.extract_tags`` does.

    ``keys``/``idf``: an open-addressing table of the XXH3-64 of each word of the IDF table
    (a power of two of slots, key 0 empty, linear probing) and the word's IDF, NaN for a word
    that is dropped; ``median``: the IDF of other words; ``stop``: the stop words, lower-case
    ASCII, back to back, the ``i``-th ending at ``stop_ends[i]``; ``spaces``: the code points
    that ``str.strip`` removes.
    """

    keys: np.ndarray
    idf: np.ndarray
    median: float
    stop: bytes
    stop_ends: np.ndarray
    spaces: np.ndarray


class KeywordKernel:
    """The loaded keyword kernel (:func:`simdedup._kernels.keyword_batch`) and its scratch table."""

    def __init__(self, address: int, engine: Any):
        import threading

        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, *_KEYWORD_ARGTYPES)(address)
        self._lock = threading.Lock()
        self._capacity = 0
        self._table: tuple[np.ndarray, ...] = ()

    def keywords(self, words: list[str], doc_words: np.ndarray, rules: KeywordRules,
                 topk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(best, scores, found)``: document ``d``'s keywords are ``words[best[d, i]]`` with
        ``scores[d, i]`` for ``i < found[d]``, best first. Its words are
        ``words[doc_words[d]:doc_words[d + 1]]``."""
        ndocs = len(doc_words) - 1
        data = "".join(words).encode("utf-8", "surrogatepass")
        buffer = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(1, dtype=np.uint8)
        chars = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        doc_words = np.ascontiguousarray(doc_words, dtype=np.int64)
        most = int(np.diff(doc_words).max()) if ndocs else 0
        best = np.zeros((ndocs, topk), dtype=np.int64)
        scores = np.zeros((ndocs, topk), dtype=np.float64)
        found = np.zeros(ndocs, dtype=np.int64)
        with self._lock:
            if 2 * most > self._capacity:
                self._capacity = 1 << max(10, (2 * most - 1).bit_length())
                self._table = (np.zeros(self._capacity, np.uint64), np.zeros(self._capacity, np.int64),
                               np.zeros(self._capacity, np.int64), np.zeros(self._capacity, np.float64),
                               np.zeros(self._capacity, np.int64))
            stop = np.frombuffer(rules.stop, dtype=np.uint8) if rules.stop else np.zeros(1, dtype=np.uint8)
            self._function(buffer.ctypes.data, len(data), buffer.ctypes.data, chars.ctypes.data, doc_words.ctypes.data,
                           ndocs, rules.keys.ctypes.data, rules.idf.ctypes.data, len(rules.keys), rules.median,
                           rules.spaces.ctypes.data, len(rules.spaces), stop.ctypes.data, rules.stop_ends.ctypes.data,
                           len(rules.stop_ends), topk, *(array.ctypes.data for array in self._table), self._capacity,
                           best.ctypes.data, scores.ctypes.data, found.ctypes.data)
        return best, scores, found


_KEYWORD_ARGTYPES = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                     ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                     ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


class PairKernel:
    """The loaded pair kernel (:func:`simdedup._kernels.table_pairs`)."""

    def __init__(self, address: int, engine: Any):
        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_int64)(address)

    def pairs(self, values: np.ndarray, order: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``(left, right)`` of the pairs within ``k`` among sorted positions with equal
        ``keys``; ``values`` and ``order`` are the fingerprints and rows in sorted order."""
        values = np.ascontiguousarray(values, dtype=np.uint64)
        order = np.ascontiguousarray(order, dtype=np.int64)
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        capacity = 1 << 16
        while True:
            left = np.empty(capacity, dtype=np.int64)
            right = np.empty(capacity, dtype=np.int64)
            found = self._function(values.ctypes.data, order.ctypes.data, keys.ctypes.data, len(values), k,
                                   left.ctypes.data, right.ctypes.data, capacity)
            if found <= capacity:
                return left[:found], right[:found]
            capacity = found


_loaded: dict[str, Any] = {}  # kernel name -> the loaded kernel, or False when it cannot load
_bytes_seen = 0


def _llvm() -> Any:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


def _bind_symbols(llvm: Any, names: list[str]) -> None:
    """Give llvmlite the address of each external symbol of the kernel's machine code.

    ``XXH3_64bits`` comes from the ``xxhash`` extension. The cfunc wrapper that numba puts
    around the kernel also names Python's error functions (found in the process) and numba's
    GIL and refcount helpers, on error paths the kernel never takes (it raises nothing and
    allocates nothing); those are bound to ``abort``, so that such a path, were it ever taken,
    would stop the process rather than jump to nowhere.

    Raises:
        LookupError: a symbol is nowhere to be found (then the Python path does the work).
    """
    import xxhash._xxhash

    libraries = [ctypes.CDLL(xxhash._xxhash.__file__), ctypes.pythonapi]
    abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
    for name in names:
        address = abort if name.startswith(("numba_", "NRT_")) else None
        for library in libraries if address is None else ():
            try:
                address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                break
            except AttributeError:
                continue
        if not address:
            raise LookupError(f"symbol {name} not found")
        llvm.add_symbol(name, address)


def _cache_key(llvm: Any) -> str:
    import llvmlite

    source = (Path(__file__).parent / "_kernels.py").read_bytes()
    parts = [source, llvmlite.__version__.encode(), llvm.get_process_triple().encode(),
             llvm.get_host_cpu_name().encode(), llvm.get_host_cpu_features().flatten().encode(),
             sys.version.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]


def _target_machine(llvm: Any) -> Any:
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, codemodel="jitdefault")


def _compile_object(llvm: Any, machine: Any, compile_name: str) -> tuple[list[str], bytes]:
    """Compile a kernel with numba: ``([symbol name, external symbols...], object code)``."""
    import re

    from . import _kernels

    compiled = getattr(_kernels, compile_name)()
    text = compiled._library.get_llvm_str()
    externals = re.findall(r"^declare [^@]*@([A-Za-z_][\w]*)\(", text, re.M)
    externals += re.findall(r"^@([A-Za-z_]\w*) = external global", text, re.M)
    names = [compiled.native_name] + sorted(name for name in set(externals) if not name.startswith("llvm"))
    return names, machine.emit_object(llvm.parse_assembly(text))


def _load_code(prefix: str, compile_name: str) -> tuple[int, Any]:
    """``(address, engine)`` of a kernel of :mod:`simdedup._kernels`: its kept machine code, or
    compiled by ``_kernels.<compile_name>`` and kept."""
    llvm = _llvm()
    machine = _target_machine(llvm)
    name = f"{prefix}-{_cache_key(llvm)}.o"
    cached = cache.read(name)
    if cached is not None and b"\n" in cached:
        header, code = cached.split(b"\n", 1)
        names = header.decode().split()
    else:
        names, code = _compile_object(llvm, machine, compile_name)
        cache.write(name, " ".join(names).encode() + b"\n" + code)
    _bind_symbols(llvm, names[1:])
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return engine.get_function_address(names[0]), engine


def _load() -> Kernel:
    kernel = Kernel(*_load_code("fastpath", "compile_batch"))
    # Run it once now against the Python arithmetic, so that a failure (a symbol bound wrong,
    # stale machine code) shows here, and the Python path takes over, not mid-corpus.
    from .fingerprint import simhash

    values, features, _ = kernel.fingerprint([b"Ab ab c"], "whitespace", 8, True)
    if features.tolist() != [2] or int(values[0]) != simhash({"ab": 1, "c": 1}):
        raise RuntimeError("the fast-path kernel gives wrong results")
    return kernel


def _load_keywords() -> KeywordKernel:
    kernel = KeywordKernel(*_load_code("keywords", "compile_keywords"))
    # A check against the arithmetic of extract_tags, as for the other kernel: with an empty
    # IDF table every kept word gets the median; "a" is too short, "The" a stop word.
    rules = KeywordRules(np.zeros(2, np.uint64), np.zeros(2), 3.0, b"the", np.array([3]), np.array([32]))
    best, scores, found = kernel.keywords(["中文", " ", "a", "The", "中文", "词"], np.array([0, 6]), rules, 2)
    if found.tolist() != [1] or best[0, 0] != 0 or scores[0, 0] != 2.0 * (3.0 / 2.0):
        raise RuntimeError("the keyword kernel gives wrong results")
    return kernel


def _load_pairs() -> PairKernel:
    kernel = PairKernel(*_load_code("pairs", "compile_pairs"))
    # Checked as the others: runs of keys [7, 7, 7] and [9, 9]; 0b1 and 0b1110 are 4 bits apart.
    values = np.array([0b1, 0b1110, 0b0, 5, 5], dtype=np.uint64)
    left, right = kernel.pairs(values, np.array([4, 2, 0, 1, 3]), np.array([7, 7, 7, 9, 9], dtype=np.uint64), 3)
    if left.tolist() != [4, 2, 1] or right.tolist() != [0, 0, 3]:
        raise RuntimeError("the pair kernel gives wrong results")
    return kernel


def _get(name: str, load: Callable[[], Any]) -> Any:
    """The kernel ``name``, loaded on first use; None when it cannot be loaded or compiled, or
    is turned off."""
    if os.environ.get("SIMDEDUP_FASTPATH", "1") == "0":
        return None
    if name not in _loaded:
        try:
            _loaded[name] = load()
        except Exception:  # no numba or llvmlite, no symbol: the Python path does the work
            _loaded[name] = False
    return _loaded[name] or None


def kernel() -> Kernel | None:
    """The fingerprint kernel (see :func:`_get`)."""
    return _get("fastpath", _load)


def keyword_kernel() -> KeywordKernel | None:
    """The keyword kernel (see :func:`_get`)."""
    return _get("keywords", _load_keywords)


def pair_kernel() -> PairKernel | None:
    """The pair kernel (see :func:`_get`)."""
    return _get("pairs", _load_pairs)


def preload() -> None:
    """Load the kernel now and use it from the first document (before forking workers)."""
    global _bytes_seen
    if kernel() is not None:
        _bytes_seen = max(_bytes_seen, START_AFTER_BYTES)


def ready(size: int) -> Kernel | None:
    """The kernel, once this process has seen :data:`START_AFTER_BYTES` of documents; None
    before that or when there is no kernel. ``size``: bytes about to be fingerprinted."""
    global _bytes_seen
    _bytes_seen += size
    if _bytes_seen < START_AFTER_BYTES:
        return None
    return kernel()


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


class LinkageKernel:
    """The loaded linkage kernel (:func:`simdedup._kernels.link_complete`)."""

    def __init__(self, address: int, engine: Any):
        self._engine = engine
        self._function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, *[ctypes.c_void_p] * 5,
                                          ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                          ctypes.c_int64, *[ctypes.c_void_p] * 7, ctypes.c_int64)(address)

    def link(self, n: int, left: np.ndarray, right: np.ndarray, sketches: np.ndarray | None,
             passing: np.ndarray | None, fps: np.ndarray, k: int) -> np.ndarray:
        """The cluster of each of ``n`` units (a unit of it) from the edges ``left``-``right`` in
        the order they are taken, and the test: with ``sketches`` (``(n, bins)`` uint8),
        ``passing[m]`` for two that agree in ``m`` bins; otherwise at most ``k`` bits between
        rows of ``fps``."""
        left = np.ascontiguousarray(left, dtype=np.int64)
        right = np.ascontiguousarray(right, dtype=np.int64)
        fps = np.ascontiguousarray(fps, dtype=np.uint64)
        if sketches is None:
            sketches, passing, bins = np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.uint8), 0
        else:
            sketches = np.ascontiguousarray(sketches, dtype=np.uint8)
            passing = np.ascontiguousarray(passing, dtype=np.uint8)
            bins = sketches.shape[1]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(left, minlength=n) + np.bincount(right, minlength=n), out=offsets[1:])
        adjacency = np.empty(max(2 * len(left), 1), dtype=np.int64)
        capacity = 1 << max(4, (2 * len(left)).bit_length())
        parent, size, volume, next_member = (np.empty(max(n, 1), dtype=np.int64) for _ in range(4))
        keys = np.full(capacity, np.iinfo(np.uint64).max, dtype=np.uint64)
        good = np.empty(capacity, dtype=np.int64)
        bad = np.empty(capacity, dtype=np.uint8)
        ends = (left, right) if len(left) else (np.zeros(1, dtype=np.int64),) * 2
        status = self._function(n, len(left), ends[0].ctypes.data, ends[1].ctypes.data, offsets.ctypes.data,
                       adjacency.ctypes.data, sketches.ctypes.data, bins, passing.ctypes.data, fps.ctypes.data,
                       fps.shape[1], k, parent.ctypes.data, size.ctypes.data, volume.ctypes.data,
                       next_member.ctypes.data, keys.ctypes.data, good.ctypes.data, bad.ctypes.data, capacity)
        if status != 0:
            raise RuntimeError("the linkage kernel lost count of the edges between two clusters")
        return parent[:n]


def _load_linkage() -> LinkageKernel:
    kernel = LinkageKernel(*_load_code("linkage", "compile_linkage"))
    # Checked as the others: fingerprints 0, 1, 2, 3 at k = 1 join 0 with 1 and 2 with 3, and
    # refuse 0-2 and 1-3 (0 and 3 are two bits apart).
    label = kernel.link(4, np.array([0, 2, 0, 1]), np.array([1, 3, 2, 3]), None, None,
                        np.arange(4, dtype=np.uint64).reshape(4, 1), 1)
    if not (label[0] == label[1] != label[2] == label[3]):
        raise RuntimeError("the linkage kernel gives wrong results")
    return kernel


def linkage_kernel() -> LinkageKernel | None:
    """The linkage kernel (see :func:`_get`)."""
    return _get("linkage", _load_linkage)
