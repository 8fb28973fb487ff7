"""The one loader of the kernels: each is declared once in :data:`KERNELS` (where its numba source
is, its C signature), its machine code kept in the cache (:mod:`simdedup.cache`) or compiled by
numba and kept, and each family (a :class:`Loaded` subclass) loaded and checked once per process.

Adding a kernel: its numba function in a module of :mod:`simdedup.kernels.source`, a line in
:data:`KERNELS`, and a :class:`Loaded` subclass that names it in ``FUNCTIONS``, calls it and checks
it (:meth:`Loaded.check`); the family's ``loaded()`` then gives it, or None.
"""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import os
import re
import sys
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .. import cache


class Compiled:
    """A compiled kernel: the function ``function`` of ``simdedup.kernels.source.<source>``, and
    its arguments in order, each a C type: ``i64``, ``u64``, ``f64``, or a pointer to numbers of
    one of the types ``u8``, ``u16``, ``u32``, ``i32``, ``u64``, ``i64``, ``f64`` (``u8*`` ...). It returns
    an ``i64``.

    The machine code takes one pointer to a struct of these arguments (:meth:`struct`; pointers
    as 64-bit addresses) and calls the function with them: an adapter generated from this list
    (:meth:`adapter_source`), so that the numba source keeps named, typed parameters and the C
    signature stays one argument however many the kernel takes."""

    def __init__(self, source: str, function: str, **arguments: str):
        self.source, self.function, self.arguments = source, function, arguments

    def __repr__(self) -> str:
        return f"Compiled({self.source!r}, {self.function!r}, {self.arguments!r})"

    def struct(self) -> type[ctypes.Structure]:
        """The arguments as a ctypes struct (the layout of :meth:`record`)."""
        fields = {"i64": ctypes.c_int64, "u64": ctypes.c_uint64, "f64": ctypes.c_double}
        return type(
            f"{self.function}_arguments",
            (ctypes.Structure,),
            {
                "_fields_": [
                    (name, ctypes.c_uint64 if kind.endswith("*") else fields[kind])
                    for name, kind in self.arguments.items()
                ]
            },
        )

    def record(self) -> np.dtype:
        """The arguments as an aligned numpy record (numba's view of :meth:`struct`)."""
        fields = {"i64": np.int64, "u64": np.uint64, "f64": np.float64}
        return np.dtype(
            [(name, np.uint64 if kind.endswith("*") else fields[kind]) for name, kind in self.arguments.items()],
            align=True,
        )

    def adapter_source(self) -> str:
        """The numba source of the C entry point: reads the struct, turns addresses back into
        typed pointers, and calls the kernel."""
        values = [
            f"as_pointer(a.{name}, types.{_NUMBA_NAMES[kind[:-1]]})" if kind.endswith("*") else f"a.{name}"
            for name, kind in self.arguments.items()
        ]
        return f"def entry(block):\n    a = carray(block, 1)[0]\n    return kernel({', '.join(values)})\n"

    def ctypes_function(self, address: int) -> Any:
        """The compiled code at ``address`` as a Python callable taking the arguments in order
        (addresses as integers)."""
        struct = self.struct()
        function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.POINTER(struct))(address)
        byref = ctypes.byref

        def call(*arguments: Any) -> int:
            return function(byref(struct(*arguments)))

        call.function = function  # type: ignore[attr-defined]  # kept alive with the callable
        return call


_NUMBA_NAMES = {
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "i32": "int32",
    "u64": "uint64",
    "i64": "int64",
    "f64": "float64",
}


#: every kernel by the name its machine code is kept under
KERNELS = {
    "fastpath": Compiled(
        "fastpath",
        "fingerprint_batch",
        data_p="u8*",
        offsets_p="i64*",
        ndocs="i64",
        flags_p="u8*",
        blocks_p="u16*",
        entries_p="u32*",
        nentries="i64",
        extra_p="u32*",
        nextra="i64",
        class_shift="i64",
        shingle="i64",
        starts_p="i64*",
        tokens_p="u8*",
        tokens_address="u64",
        token_room="i64",
        bins="i64",
        shift="u64",
        binary="i64",
        words="i64",
        values_p="u64*",
        features_p="i64*",
        sketches_p="u8*",
        table_p="u64*",
        highs_p="u64*",
        used_p="i64*",
        capacity="i64",
        scratch_p="u64*",
    ),
    "keywords": Compiled(
        "keywords",
        "keyword_batch",
        data_p="u8*",
        nbytes="i64",
        address="u64",
        token_chars_p="i64*",
        doc_tokens_p="i64*",
        ndocs="i64",
        vocab_keys_p="u64*",
        vocab_idf_p="f64*",
        vocab_slots="i64",
        median="f64",
        spaces_p="i64*",
        nspaces="i64",
        stop_p="u8*",
        stop_ends_p="i64*",
        nstop="i64",
        topk="i64",
        keys_p="u64*",
        counts_p="i64*",
        first_p="i64*",
        idfs_p="f64*",
        used_p="i64*",
        capacity="i64",
        best_p="i64*",
        best_scores_p="f64*",
        nbest_p="i64*",
        kept_counts_p="i64*",
        ahead_p="u64*",
    ),
    "jieba-cut": Compiled(
        "jieba_cut",
        "cut_batch",
        data_p="u8*",
        nbytes="i64",
        chunk_ends_p="i64*",
        nchunks="i64",
        classes_p="u8*",
        nclasses="i64",
        roots_p="u64*",
        trie_p="u64*",
        ntrie="i64",
        weights_p="f64*",
        nweights="i64",
        unknown="f64",
        start_p_p="f64*",
        trans_p_p="f64*",
        emit_p_p="f64*",
        emit_chars="i64",
        emit_first="i64",
        recut="i64",
        words_p="i64*",
        nwords="i64",
        chunk_words_p="i64*",
        units_p="u32*",
        values_p="f64*",
        ends_p="i64*",
        states_p="u8*",
        first_p="i64*",
        room="i64",
    ),
    "pairs": Compiled(
        "pairs",
        "table_pairs",
        values_p="u64*",
        order_p="i64*",
        keys_p="u64*",
        n="i64",
        words="i64",
        k="i64",
        left_p="i64*",
        right_p="i64*",
        capacity="i64",
    ),
    "cross": Compiled(
        "pairs",
        "cross_pairs",
        first_p="u64*",
        n_first="i64",
        second_p="u64*",
        n_second="i64",
        words="i64",
        k="i64",
        left_p="i64*",
        right_p="i64*",
        capacity="i64",
    ),
    "packed": Compiled(
        "pairs",
        "packed_pairs",
        packed_p="u64*",
        n="i64",
        index_bits="i64",
        values_p="u64*",
        words="i64",
        k="i64",
        crowd="i64",
        left_p="i64*",
        right_p="i64*",
        capacity="i64",
        runs_p="i64*",
        counts_p="i64*",
        masks_p="u64*",
        nmasks="i64",
    ),
    "canonical": Compiled(
        "pairs",
        "canonical_pairs",
        values_p="u64*",
        n="i64",
        words="i64",
        left_p="i64*",
        right_p="i64*",
        npairs="i64",
        masks_p="u64*",
        chosen_p="u8*",
        ends_p="i64*",
        nlevels="i64",
        limits_p="i64*",
    ),
    "linkage": Compiled(
        "linkage",
        "link_complete",
        n="i64",
        nedges="i64",
        left_p="i64*",
        right_p="i64*",
        offsets_p="i64*",
        adjacency_p="i64*",
        sketches_p="u8*",
        bins="i64",
        passing_p="u8*",
        first_bins="i64",
        fps_p="u64*",
        words="i64",
        k="i64",
        parent_p="i64*",
        size_p="i64*",
        volume_p="i64*",
        next_p="i64*",
        keys_p="u64*",
        good_p="i64*",
        bad_p="u8*",
        capacity="i64",
        exact="i64",
        has_p="u8*",
        bag_hashes_p="u64*",
        bag_weights_p="u32*",
        bag_offsets_p="i64*",
        bag_totals_p="i64*",
        gram_hashes_p="u64*",
        gram_offsets_p="i64*",
        gram_totals_p="i64*",
        measure="i64",
        min_similarity="f64",
        min_resemblance="f64",
        floor="f64",
        evidence="f64",
    ),
    "scan": Compiled(
        "scan",
        "scan_records",
        data_p="u8*",
        nbytes="i64",
        pieces_p="u8*",
        ends_p="i64*",
        kinds_p="i64*",
        steps="i64",
        hex_digits="i64",
        words="i64",
        sketch_chars="i64",
        sketch_bytes="i64",
        ids_p="u8*",
        id_ends_p="i64*",
        escaped_p="u8*",
        values_p="u64*",
        features_p="i64*",
        sizes_p="i64*",
        sketches_p="u8*",
        capacity="i64",
    ),
    "shingles-start": Compiled(
        "shingles", "sketch_start", state_p="i64*", keys_p="u64*", winners_p="u64*", bins="i64", a_bins="i64"
    ),
    "shingles-update": Compiled(
        "shingles",
        "sketch_update",
        data_p="u8*",
        size="i64",
        table_p="u32*",
        state_p="i64*",
        keys_p="u64*",
        winners_p="u64*",
        elements_p="u64*",
        bins="i64",
        a_bins="i64",
        capacity="i64",
    ),
    "shingles-finish": Compiled(
        "shingles",
        "sketch_finish",
        state_p="i64*",
        keys_p="u64*",
        winners_p="u64*",
        elements_p="u64*",
        bins="i64",
        a_bins="i64",
        capacity="i64",
        cjk_share="f64",
        value_bits="i64",
        out_p="u8*",
    ),
    "shingles-texts": Compiled(
        "shingles",
        "sketch_texts",
        data_p="u8*",
        offsets_p="i64*",
        ntexts="i64",
        table_p="u32*",
        bins="i64",
        a_bins="i64",
        capacity="i64",
        cjk_share="f64",
        value_bits="i64",
        state_p="i64*",
        keys_p="u64*",
        winners_p="u64*",
        elements_p="u64*",
        out_p="u8*",
        kinds_p="i64*",
    ),
    "exact-tokens": Compiled(
        "exact",
        "exact_tokens",
        data_p="u8*",
        offsets_p="i64*",
        ntexts="i64",
        table_p="u32*",
        cjk_share="f64",
        words_p="u64*",
        grams_p="u64*",
        sizes_p="i64*",
    ),
    "exact-distinct": Compiled(
        "exact",
        "exact_distinct",
        words_p="u64*",
        counts_p="u32*",
        grams_p="u64*",
        offsets_p="i64*",
        ntexts="i64",
        sizes_p="i64*",
        out_p="i64*",
    ),
    "exact-shared": Compiled(
        "exact",
        "exact_shared",
        hashes_p="u64*",
        weights_p="u32*",
        offsets_p="i64*",
        ndocs="i64",
        left_p="i64*",
        right_p="i64*",
        npairs="i64",
        weighted="i64",
        out_p="i64*",
    ),
    "exact-buckets": Compiled(
        "bounds",
        "exact_bucket_counts",
        hashes_p="u64*",
        weights_p="u32*",
        offsets_p="i64*",
        ndocs="i64",
        units_p="i64*",
        nunits="i64",
        weighted="i64",
        totals_p="i64*",
        shift="i64",
        buckets="i64",
        limit="i64",
        counts_p="u16*",
    ),
    "exact-bucket-bounded": Compiled(
        "bounds",
        "exact_bucket_bounded",
        counts_p="u16*",
        nrows="i64",
        buckets="i64",
        sizes_p="i64*",
        limit="i64",
        left_p="i64*",
        right_p="i64*",
        npairs="i64",
        out_p="f64*",
    ),
    "units": Compiled(
        "units",
        "cut_units",
        data_p="u8*",
        offsets_p="i64*",
        ndocs="i64",
        unit="i64",
        min_halves="i64",
        table_p="u32*",
        abbreviations_p="u64*",
        nabbreviations="i64",
        lines_p="i64*",
        line_room="i64",
        codes_p="i64*",
        units_p="i64*",
        unit_room="i64",
        text_p="u8*",
        text_room="i64",
        text_address="u64",
        hashes_p="u64*",
        scratch_p="u64*",
        nbins="i64",
        keys_p="u32*",
        nbands="i64",
        state_p="i64*",
    ),
    "exact-verdicts": Compiled(
        "exact",
        "exact_verdicts",
        bag_hashes_p="u64*",
        bag_weights_p="u32*",
        bag_offsets_p="i64*",
        bag_totals_p="i64*",
        gram_hashes_p="u64*",
        gram_offsets_p="i64*",
        gram_totals_p="i64*",
        ndocs="i64",
        left_p="i64*",
        right_p="i64*",
        npairs="i64",
        measure="i64",
        min_similarity="f64",
        min_resemblance="f64",
        floor="f64",
        evidence="f64",
        similarity_p="f64*",
        passing_p="u8*",
    ),
}


def _as_pointer() -> Any:
    """A numba intrinsic: ``as_pointer(address, types.uint8)`` is the address as a pointer to uint8."""
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def as_pointer(typingctx: Any, address: Any, kind: Any) -> Any:
        target = types.CPointer(kind.dtype)

        def codegen(context: Any, builder: Any, signature: Any, arguments: Any) -> Any:
            return builder.inttoptr(arguments[0], context.get_value_type(target))

        return target(address, kind), codegen

    return as_pointer


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


def _sources(module: str) -> list[bytes]:
    """The source of ``kernels/source/<module>.py`` and of the modules of that folder it imports,
    the whole code numba compiles for a kernel of it."""
    folder = Path(__file__).parent / "source"
    seen: dict[str, bytes] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen[name] = (folder / f"{name}.py").read_bytes()
            pending += [match.decode() for match in re.findall(rb"^from \.(\w+) import", seen[name], re.M)]
    return [seen[name] for name in sorted(seen)]


def _cache_key(llvm: Any, kernel: Compiled) -> str:
    """What the machine code of ``kernel`` depends on: its source, its signature, llvmlite, the
    CPU, Python and its Unicode version."""
    import unicodedata

    import llvmlite

    parts = [
        *_sources(kernel.source),
        repr(kernel).encode(),
        kernel.adapter_source().encode(),
        inspect.getsource(_as_pointer).encode(),
        llvmlite.__version__.encode(),
        llvm.get_process_triple().encode(),
        llvm.get_host_cpu_name().encode(),
        llvm.get_host_cpu_features().flatten().encode(),
        sys.version.encode(),
        unicodedata.unidata_version.encode(),
    ]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:24]


def cache_name(name: str) -> str:
    """The name of the cache file of kernel ``name``'s machine code (:func:`_cache_key`)."""
    return f"{name}-{_cache_key(_llvm(), KERNELS[name])}.o"


def _target_machine(llvm: Any) -> Any:
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3, codemodel="jitdefault"
    )


def _compile_object(llvm: Any, machine: Any, kernel: Compiled) -> tuple[list[str], bytes]:
    """Compile ``kernel`` with numba as a C function: ``([symbol name, external symbols...], object code)``."""
    import importlib

    import numba
    from numba import carray, types

    kernel_function = getattr(importlib.import_module(f"{__package__}.source.{kernel.source}"), kernel.function)
    namespace = {
        "carray": carray,
        "types": types,
        "as_pointer": _as_pointer(),
        "kernel": numba.njit(error_model="numpy")(kernel_function),
    }
    exec(kernel.adapter_source(), namespace)
    signature = types.int64(types.CPointer(numba.from_dtype(kernel.record())))
    compiled = numba.cfunc(signature, nopython=True, error_model="numpy")(namespace["entry"])
    text = compiled._library.get_llvm_str()
    externals = re.findall(r"^declare [^@]*@([A-Za-z_][\w]*)\(", text, re.M)
    externals += re.findall(r"^@([A-Za-z_]\w*) = external global", text, re.M)
    names = [compiled.native_name] + sorted(symbol for symbol in set(externals) if not symbol.startswith("llvm"))
    return names, machine.emit_object(llvm.parse_assembly(text))


#: called after each compilation (whether it worked or not): a progress bar leaves the time out of
#: its rate (``tqdm.unpause``), so that the first batch's compilation makes no estimate
compile_listeners: list[Any] = []
#: what the first compilation in a process says on stderr, before it starts
COMPILING = (
    "simdedup: compiling its kernels for this machine, once (about a minute, longer on a busy machine); "
    "later runs start at once"
)
_said = False


def _say_compiling() -> None:
    global _said
    if not _said:
        _said = True  # prepare() sets it: it says each kernel itself, and has no click to say it with
        from ..messages import message

        message(COMPILING)


#: the machine code loaded so far, by kernel name: its address and the engine that owns it (kept
#: alive as long as the process)
_code: dict[str, tuple[int, Any]] = {}


def _load_code(name: str) -> int:
    """The address of kernel ``name``: its kept machine code, or compiled and kept."""
    if name in _code:
        return _code[name][0]
    llvm = _llvm()
    machine = _target_machine(llvm)
    kept = cache_name(name)
    cached = cache.read(kept)
    if cached is not None and b"\n" in cached:
        header, code = cached.split(b"\n", 1)
        names = header.decode().split()
    else:
        _say_compiling()
        try:
            names, code = _compile_object(llvm, machine, KERNELS[name])
        finally:
            for listener in compile_listeners:
                listener()
        cache.write(kept, " ".join(names).encode() + b"\n" + code)
    _bind_symbols(llvm, names[1:])
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    _code[name] = engine.get_function_address(names[0]), engine
    return _code[name][0]


L = TypeVar("L", bound="Loaded")


class Loaded:
    """The Python side of a family of kernels: the kernels it calls (``FUNCTIONS``, names of
    :data:`KERNELS`), as ctypes functions in ``_functions``, and a check of their results."""

    FUNCTIONS: tuple[str, ...] = ()
    #: whether there is a Python path, so that ``SIMDEDUP_FASTPATH=0`` turns this family off
    FAST_PATH = True

    def __init__(self, functions: dict[str, Any]):
        self._functions = functions

    def check(self) -> None:
        """Run the kernels once against the Python arithmetic, so that a failure (a symbol bound
        wrong, stale machine code) shows at load, and the Python path takes over, not mid-corpus.

        Raises:
            RuntimeError: a kernel gives wrong results.
        """
        raise NotImplementedError

    @classmethod
    def loaded(cls: type[L]) -> L | None:
        """This family, loaded and checked on first use; None when it cannot be loaded or
        compiled (no numba or llvmlite, no symbol, a failed check), or is turned off."""
        if cls.FAST_PATH and os.environ.get("SIMDEDUP_FASTPATH", "1") == "0":
            return None
        if cls not in _loaded:
            try:
                family = cls({name: KERNELS[name].ctypes_function(_load_code(name)) for name in cls.FUNCTIONS})
                family.check()
                _loaded[cls] = family
            except Exception:  # no numba or llvmlite, no symbol: the Python path does the work
                _loaded[cls] = False
        return _loaded[cls] or None


_loaded: dict[type[Loaded], Any] = {}  # each family loaded, or False when it cannot load


def _some(array: np.ndarray, dtype: Any) -> np.ndarray:
    """``array`` contiguous, as ``dtype``, with at least one element (a kernel reads none of an
    empty one, but its address must be one)."""
    array = np.ascontiguousarray(array, dtype=dtype)
    return array if len(array) else np.zeros(1, dtype=dtype)
