"""Loading a kernel: its machine code kept in the cache (:mod:`simdedup.cache`), or compiled by
numba from :mod:`simdedup.kernels.source` and kept; each loaded once per process."""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import cache


_loaded: dict[str, Any] = {}  # kernel name -> the loaded kernel, or False when it cannot load


def _llvm() -> Any:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


def _bind_symbols(llvm: Any, names: list[str]) -> None:
    """Give llvmlite the address of each external symbol of the kernel's machine code.

    ``XXH3_64bits`` and ``XXH3_128bits`` come from the ``xxhash`` extension. The cfunc wrapper
    that numba puts around the kernel also names Python's error functions (found in the process)
    and numba's GIL and refcount helpers, on error paths the kernel never takes (it raises
    nothing and allocates nothing); those are bound to ``abort``, so that such a path, were it
    ever taken, would stop the process rather than jump to nowhere, unless numba is loaded and
    has bound them already (binding them over would make every function numba compiles later in
    the process abort).

    Raises:
        LookupError: a symbol is nowhere to be found (then the Python path does the work).
    """
    import xxhash._xxhash

    libraries = [ctypes.CDLL(xxhash._xxhash.__file__), ctypes.pythonapi]
    abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value
    for name in names:
        if name.startswith(("numba_", "NRT_")) and llvm.address_of_symbol(name):
            continue  # numba, imported in this process, registered its own: functions it compiles call them
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
    import unicodedata

    import llvmlite

    sources = [path.read_bytes() for path in sorted((Path(__file__).parent / "source").glob("*.py"))]
    parts = [*sources, llvmlite.__version__.encode(), llvm.get_process_triple().encode(),
             llvm.get_host_cpu_name().encode(), llvm.get_host_cpu_features().flatten().encode(),
             sys.version.encode(), unicodedata.unidata_version.encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]


def _target_machine(llvm: Any) -> Any:
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, codemodel="jitdefault")


def _compile_object(llvm: Any, machine: Any, name: str) -> tuple[list[str], bytes]:
    """Compile kernel ``name`` with numba: ``([symbol name, external symbols...], object code)``."""
    import re

    from .source.compile import compile_kernel

    compiled = compile_kernel(name)
    text = compiled._library.get_llvm_str()
    externals = re.findall(r"^declare [^@]*@([A-Za-z_][\w]*)\(", text, re.M)
    externals += re.findall(r"^@([A-Za-z_]\w*) = external global", text, re.M)
    names = [compiled.native_name] + sorted(symbol for symbol in set(externals) if not symbol.startswith("llvm"))
    return names, machine.emit_object(llvm.parse_assembly(text))


def _load_code(name: str) -> tuple[int, Any]:
    """``(address, engine)`` of a kernel of :mod:`simdedup.kernels.source`: its kept machine code,
    or compiled by ``source.compile.compile_kernel(name)`` and kept."""
    llvm = _llvm()
    machine = _target_machine(llvm)
    kept = f"{name}-{_cache_key(llvm)}.o"
    cached = cache.read(kept)
    if cached is not None and b"\n" in cached:
        header, code = cached.split(b"\n", 1)
        names = header.decode().split()
    else:
        names, code = _compile_object(llvm, machine, name)
        cache.write(kept, " ".join(names).encode() + b"\n" + code)
    _bind_symbols(llvm, names[1:])
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    return engine.get_function_address(names[0]), engine


def _get(name: str, load: Callable[[], Any], fast_path: bool = True) -> Any:
    """The kernel ``name``, loaded on first use; None when it cannot be loaded or compiled, or
    is turned off (a ``fast_path`` one, which has a Python path)."""
    if fast_path and os.environ.get("SIMDEDUP_FASTPATH", "1") == "0":
        return None
    if name not in _loaded:
        try:
            _loaded[name] = load()
        except Exception:  # no numba or llvmlite, no symbol: the Python path does the work
            _loaded[name] = False
    return _loaded[name] or None


def _some(array: np.ndarray, dtype: Any) -> np.ndarray:
    """``array`` contiguous, as ``dtype``, with at least one element (a kernel reads none of an
    empty one, but its address must be one)."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return array if len(array) else np.zeros(1, dtype=dtype)
