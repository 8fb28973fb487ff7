"""What the kernels share: the XXH3 functions of the xxhash extension, the mixing and UTF-8
decoding steps, a population count, unaligned loads and stores of eight bytes, and a prefetch."""

import llvmlite.binding
import numba
import numpy as np
import xxhash._xxhash
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic
from numba.cpython.unsafe.numbers import leading_zeros

# XXH3_64bits of the xxhash extension, linked by its symbol name. It takes (pointer, length);
# the pointer is passed as an address, which the C calling convention allows.
llvmlite.binding.load_library_permanently(xxhash._xxhash.__file__)
xxh3 = types.ExternalFunction("XXH3_64bits", types.uint64(types.uintp, types.uintp))


@intrinsic
def xxh3_128(typingctx, address, length):
    """``(low 64 bits, high 64 bits)`` of ``XXH3_128bits(address, length)`` of the xxhash
    extension. The C function returns a struct of two uint64 by value, which numba's
    ExternalFunction cannot declare; clang lowers that return to the literal struct
    ``{i64, i64}`` (on x86-64 and aarch64), so it is declared so here."""
    signature = types.UniTuple(types.uint64, 2)(types.uintp, types.uintp)

    def codegen(context, builder, sig, args):
        word = ir.IntType(64)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.LiteralStructType([word, word]), [word, word]), "XXH3_128bits"
        )
        pair = builder.call(function, args)
        halves = (builder.extract_value(pair, 0), builder.extract_value(pair, 1))
        return context.make_tuple(builder, sig.return_type, halves)

    return signature, codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to bring ``array[index]`` into its caches (``llvm.prefetch``): no effect but
    time, where a lookup in a table of megabytes would otherwise wait for memory."""

    def codegen(context, builder, signature, arguments):
        view = context.make_array(signature.args[0])(context, builder, arguments[0])
        address = builder.bitcast(builder.gep(view.data, [arguments[1]]), ir.IntType(8).as_pointer())
        word = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [address.type, word, word, word]), "llvm.prefetch.p0"
        )
        builder.call(function, [address, word(0), word(3), word(1)])  # a read, kept close, of data
        return context.get_dummy_value()

    return types.void(array, index), codegen


GOLDEN = np.uint64(0x9E3779B97F4A7C15)
LOW32 = np.uint64(0xFFFFFFFF)
ONE = np.uint64(1)


@numba.njit(inline="always")
def _mix(x):  # pragma: no cover - compiled
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(inline="always")
def _decode(data, i, end, surrogates):  # pragma: no cover - compiled
    """``(code point, length)`` of the UTF-8 character at ``data[i]`` (not ASCII), as Python's
    strict decoder reads it (with ``surrogatepass`` when ``surrogates``); length 0 if invalid."""
    c = np.int64(data[i])
    if c < 0xC2 or c > 0xF4:
        return 0, 0
    if c < 0xE0:
        if i + 1 >= end or (data[i + 1] & 0xC0) != 0x80:
            return 0, 0
        return ((c & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F), 2
    low, high = 0x80, 0xBF
    if c < 0xF0:
        if c == 0xE0:
            low = 0xA0
        elif c == 0xED and not surrogates:
            high = 0x9F
        if i + 2 >= end or not low <= data[i + 1] <= high or (data[i + 2] & 0xC0) != 0x80:
            return 0, 0
        return ((c & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F), 3
    if c == 0xF0:
        low = 0x90
    elif c == 0xF4:
        high = 0x8F
    if i + 3 >= end or not low <= data[i + 1] <= high or (data[i + 2] & 0xC0) != 0x80 or (data[i + 3] & 0xC0) != 0x80:
        return 0, 0
    return (
        ((c & 0x07) << 18)
        | ((np.int64(data[i + 1]) & 0x3F) << 12)
        | ((np.int64(data[i + 2]) & 0x3F) << 6)
        | (np.int64(data[i + 3]) & 0x3F)
    ), 4


_M1, _M2, _M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@numba.njit(inline="always")
def _popcount(x):  # pragma: no cover - compiled; SWAR (LLVM makes it one instruction)
    x = x - ((x >> ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


#: 1 in each byte of a word
BYTES_01 = np.uint64(0x0101010101010101)
_HIGH_BITS = BYTES_01 * np.uint64(0x80)


@intrinsic
def _load8(typingctx, pointer, at):
    """The eight bytes at ``pointer[at:]`` as one little-endian uint64 (an unaligned load)."""

    def codegen(context, builder, sig, args):
        address = builder.gep(args[0], [args[1]])
        return builder.load(builder.bitcast(address, ir.IntType(64).as_pointer()), align=1)

    return types.uint64(pointer, at), codegen


@intrinsic
def _store8(typingctx, pointer, at, value):
    """Write ``value`` as eight little-endian bytes at ``pointer[at:]`` (an unaligned store)."""

    def codegen(context, builder, sig, args):
        address = builder.gep(args[0], [args[1]])
        builder.store(args[2], builder.bitcast(address, ir.IntType(64).as_pointer()), align=1)
        return context.get_dummy_value()

    return types.void(pointer, at, value), codegen


@numba.njit(inline="always")
def _past_non_ascii(pointer, i):  # pragma: no cover - compiled
    """0 when the 64 bytes from ``pointer[i]`` on are all ASCII, else how far past ``i`` the
    last of them that is not ends (no 64 bytes of ASCII start before there)."""
    every = np.uint64(0)
    for w in range(8):
        every |= _load8(pointer, i + 8 * w)
    if every & _HIGH_BITS == 0:
        return 0
    w = 7
    while _load8(pointer, i + 8 * w) & _HIGH_BITS == 0:
        w -= 1
    return 8 * w + ((63 - np.int64(leading_zeros(_load8(pointer, i + 8 * w) & _HIGH_BITS))) >> 3) + 1


@numba.njit(inline="always")
def _between8(x, low, high):  # pragma: no cover - compiled
    """Bit 7 of each byte of ``x`` (eight ASCII bytes) set when the byte is within
    ``low`` (at least 1) .. ``high``, the rest 0: no byte carries into the next."""
    at_least = x + BYTES_01 * np.uint64(0x80 - low)
    above = x + BYTES_01 * np.uint64(0x7F - high)
    return at_least & ~above & _HIGH_BITS


@numba.njit(inline="always")
def _word_bytes8(x):  # pragma: no cover - compiled
    """:func:`_between8`'s marks of the ASCII word characters (``\\w``: letters, digits, ``_``)."""
    letters = _between8(x | (BYTES_01 * np.uint64(0x20)), 0x61, 0x7A)  # either case
    return letters | _between8(x, 0x30, 0x39) | _between8(x, 0x5F, 0x5F)


@numba.njit(inline="always")
def _space_bytes8(x):  # pragma: no cover - compiled
    """:func:`_between8`'s marks of the ASCII white space (``str.isspace``: 9-13, 28-32)."""
    return _between8(x, 0x09, 0x0D) | _between8(x, 0x1C, 0x20)


@numba.njit(inline="always")
def _byte_bits(marks):  # pragma: no cover - compiled
    """Bit 7 of each byte of ``marks`` gathered into eight bits (byte k to bit k): one multiply."""
    return ((marks >> np.uint64(7)) * np.uint64(0x0102040810204080)) >> np.uint64(56)


@numba.njit(inline="always")
def _mask64(pointer, i, kind):  # pragma: no cover - compiled
    """Bit k set when byte ``pointer[i + k]`` (64 ASCII bytes) is a word character (``kind``
    1) or white space (``kind`` 2)."""
    mask = np.uint64(0)
    for w in range(8):
        x = _load8(pointer, i + 8 * w)
        marks = _word_bytes8(x) if kind == 1 else _space_bytes8(x)
        mask |= _byte_bits(marks) << np.uint64(8 * w)
    return mask
