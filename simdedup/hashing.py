"""Stable feature hashes.

A feature hash must give the same value for the same feature on every machine and in every
process, so Python's salted ``hash()`` is never used. The default is xxHash's XXH3 (64- or
128-bit variant, matching the fingerprint width): it is stable by specification, has good
low bits, and costs about 0.1 µs per short token.

A feature hash is any callable ``(feature: str) -> int`` returning an unsigned integer of the
fingerprint's width; tests inject trivial ones so expected fingerprints can be worked out by hand.
"""

from __future__ import annotations

from typing import Callable, Iterable

FeatureHash = Callable[[str], int]
#: hashes many features at once (a list of ints in the same order)
BatchHash = Callable[[Iterable[str]], list[int]]

HASHES = ("xxh3", "md5", "python-hashes")


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


def get_feature_hash(name: str, bits: int) -> FeatureHash:
    """Return the feature hash called ``name`` producing ``bits``-bit integers.

    - ``xxh3``: XXH3-64 or XXH3-128 of the UTF-8 bytes (the default);
    - ``md5``: the last ``bits / 8`` bytes of the MD5 digest, big-endian, as the PyPI ``simhash``
      package uses it (compatibility);
    - ``python-hashes``: :func:`python_hashes` (compatibility).

    Raises:
        ValueError: unknown name or unsupported width.
    """
    if bits not in (64, 128):
        raise ValueError(f"bits must be 64 or 128, not {bits}")
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
