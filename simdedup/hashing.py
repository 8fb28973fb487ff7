"""Stable feature hashes.

A feature hash must give the same value for the same feature on every machine and in every
process, so Python's salted ``hash()`` is never used. The default is xxHash's XXH3 (64- or
128-bit variant, matching the fingerprint width): it is stable by specification, has good
low bits, and costs about 0.1 µs per short token.

A feature hash is any callable ``(feature: str) -> int`` returning an unsigned integer of the
fingerprint's width; tests inject trivial ones so expected fingerprints can be worked out by hand.
"""

from __future__ import annotations

import struct
from typing import Callable, Iterable

FeatureHash = Callable[[str], int]
#: hashes many features at once (a list of ints in the same order)
BatchHash = Callable[[Iterable[str]], list[int]]

HASHES = ("xxh3", "md5", "python-hashes", "jenkins")


def python_hashes(feature: str, bits: int) -> int:
    """The string hash of the widely copied python-hashes simhash (compatibility only).

    ``x = ord(s[0]) << 7``, then ``x = ((x * 1000003) ^ ord(c)) & mask`` for every character,
    then ``x ^= len(s)``; the empty string hashes to 0. Slow, and weak in its low bits.
    """
    if not feature:
        return 0
    mask = (1 << bits) - 1
    x = ord(feature[0]) << 7
    for char in feature:
        x = ((x * 1000003) ^ ord(char)) & mask
    return x ^ len(feature)


_WORD = 0xFFFFFFFF


def _rotated(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _WORD


#: lookup3's mix(): six steps ``a -= c; a ^= rot(c, k); c += b`` on (a, b, c) turned one place
#: each time (the second is ``b -= a; b ^= rot(a, k); a += c``), with these k
_MIX_ROTATIONS = (4, 6, 8, 16, 19, 4)
#: lookup3's final(): seven steps ``c ^= b; c -= rot(b, k)``, then with (a, c), (b, a), ...
_FINAL_ROTATIONS = (14, 11, 25, 16, 4, 14, 24)


def _mix(state: list[int]) -> None:
    for step, k in enumerate(_MIX_ROTATIONS):
        target, source, added = step % 3, (step + 2) % 3, (step + 1) % 3
        state[target] = ((state[target] - state[source]) & _WORD) ^ _rotated(state[source], k)
        state[source] = (state[source] + state[added]) & _WORD


def _final(state: list[int]) -> None:
    for step, k in enumerate(_FINAL_ROTATIONS):
        target, source = (step + 2) % 3, (step + 1) % 3
        state[target] = ((state[target] ^ state[source]) - _rotated(state[source], k)) & _WORD


def hashlittle2(data: bytes, primary: int = 0, secondary: int = 0) -> tuple[int, int]:
    """Bob Jenkins' lookup3 ``hashlittle2`` (2006): the primary and secondary 32-bit hashes of
    ``data`` (``*pc`` and ``*pb`` on return) from the two initial values.

    The key is read as little-endian 32-bit words, 12 bytes at a time; the last block (1 to 12
    bytes) is padded with zeros, which gives what each of lookup3's branches gives.
    """
    start = (0xDEADBEEF + len(data) + primary) & _WORD
    state = [start, start, (start + secondary) & _WORD]  # a, b, c
    if data:
        blocks = (len(data) + 11) // 12
        words = struct.unpack(f"<{3 * blocks}I", data.ljust(12 * blocks, b"\0"))
        for block in range(blocks):
            if block:
                _mix(state)
            state = [(value + word) & _WORD for value, word in zip(state, words[3 * block : 3 * block + 3])]
        _final(state)
    return state[2], state[1]


def jenkins(feature: str) -> int:
    """The 64-bit feature hash of yanyiwu/simhash (and seomoz/simhash-cpp): lookup3's
    :func:`hashlittle2` of the UTF-8 bytes with both initial values 0, as ``(c << 32) | b``."""
    primary, secondary = hashlittle2(feature.encode("utf-8", "surrogatepass"))
    return primary << 32 | secondary


def get_feature_hash(name: str, bits: int) -> FeatureHash:
    """Return the feature hash called ``name`` producing ``bits``-bit integers.

    - ``xxh3``: XXH3-64 or XXH3-128 of the UTF-8 bytes (the default);
    - ``md5``: the last ``bits / 8`` bytes of the MD5 digest, big-endian, as the PyPI ``simhash``
      package uses it (compatibility);
    - ``python-hashes``: :func:`python_hashes` (compatibility);
    - ``jenkins``: :func:`jenkins`, 64 bits only (compatibility).

    Raises:
        ValueError: unknown name or unsupported width.
    """
    if bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, not {bits}")
    if name == "jenkins":
        if bits != 64:
            raise ValueError("the jenkins hash has 64 bits: use --bits 64")
        return jenkins
    if name == "md5":
        import hashlib

        size = bits // 8

        def md5(feature: str) -> int:
            return int.from_bytes(hashlib.md5(feature.encode("utf-8", "surrogatepass")).digest()[-size:], "big")

        return md5
    if name == "python-hashes":
        return lambda feature: python_hashes(feature, bits)
    if name != "xxh3":
        raise ValueError(f"unknown feature hash {name!r}; known: {', '.join(HASHES)}")
    import xxhash

    digest = xxhash.xxh3_64_intdigest if bits == 64 else xxhash.xxh3_128_intdigest

    def xxh3(feature: str) -> int:
        return digest(feature.encode("utf-8", "surrogatepass"))

    xxh3.__name__ = f"xxh3_{bits}"
    return xxh3


def get_batch_hash(name: str, bits: int) -> BatchHash:
    """Like :func:`get_feature_hash`, for many features per call: the per-feature loop runs in C."""
    single = get_feature_hash(name, bits)
    if name != "xxh3":
        return batch_of(single)
    import xxhash

    digest = xxhash.xxh3_64_intdigest if bits == 64 else xxhash.xxh3_128_intdigest

    def xxh3_many(features: Iterable[str]) -> list[int]:
        try:
            return list(map(digest, map(str.encode, features)))
        except UnicodeEncodeError:  # a lone surrogate: encode it as the single-feature hash does
            return list(map(single, features))

    return xxh3_many


def batch_of(hashfunc: FeatureHash) -> BatchHash:
    """A batch hash that calls a single-feature hash (for injected test hashes)."""
    return lambda features: list(map(hashfunc, features))
