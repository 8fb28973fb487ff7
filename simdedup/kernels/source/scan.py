"""numba source of the record scanner (:mod:`simdedup.kernels.scan`): fingerprint lines of one
template."""

import numba
import numpy as np
from numba import carray

_HEX_VALUES = np.full(256, 255, dtype=np.uint8)
for _digits, _first in ((b"0123456789", 0), (b"abcdef", 10), (b"ABCDEF", 10)):
    _HEX_VALUES[np.frombuffer(_digits, dtype=np.uint8)] = np.arange(_first, _first + len(_digits))
_BASE64URL_VALUES = np.full(256, 255, dtype=np.uint8)
_BASE64URL_VALUES[
    np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8)
] = np.arange(64)


@numba.njit(inline="always")
def _piece(data, i, n, pieces, start, end):  # pragma: no cover - compiled
    """Where ``data`` goes on after the literal ``pieces[start:end]`` at ``i``; -1 when it is not there."""
    if i < 0 or i + (end - start) > n:
        return -1
    for j in range(start, end):
        if data[i] != pieces[j]:
            return -1
        i += 1
    return i


@numba.njit(inline="always")
def _natural(data, i, n):  # pragma: no cover - compiled
    """``(value, next)`` of the decimal ``0|[1-9][0-9]*`` at ``i``, ``next`` -1 when there is none or
    it has more than 18 digits (the regular-expression path decides those)."""
    if i < 0 or i >= n or data[i] < 48 or data[i] > 57:
        return 0, -1
    if data[i] == 48:
        return 0, i + 1
    value = 0
    start = i
    while i < n and 48 <= data[i] <= 57:
        if i - start == 18:
            return 0, -1
        value = value * 10 + np.int64(data[i] - 48)
        i += 1
    return value, i


#: the fields of a template (simdedup.fingerprints.columns.Template)
FIELD_ID, FIELD_HEX, FIELD_FEATURES, FIELD_BYTES, FIELD_SKETCH = range(5)


def scan_records(
    data_p,
    nbytes,
    pieces_p,
    ends_p,
    kinds_p,
    steps,
    hex_digits,
    words,
    sketch_chars,
    sketch_bytes,
    ids_p,
    id_ends_p,
    escaped_p,
    values_p,
    features_p,
    sizes_p,
    sketches_p,
    capacity,
):  # pragma: no cover - compiled
    """Fingerprint lines of one template (:class:`simdedup.fingerprints.columns.Template`):

        pieces[0] FIELD kinds[0] pieces[1] ... FIELD kinds[steps - 1] pieces[steps] \r? \n

    where ``pieces`` holds ``steps + 1`` literals ending at ``ends``, and the fields are:
    FIELD_ID, JSON string content (no control character, a backslash escapes the next one);
    FIELD_HEX, ``hex_digits`` hex digits; FIELD_FEATURES, ``0|[1-9][0-9]*``; FIELD_BYTES, the
    same with an optional minus; FIELD_SKETCH, ``sketch_chars`` URL-safe base64 characters.
    Every line of ``data`` must fit, the last may lack its newline. The ids are copied to
    ``ids``, each followed by a newline (``id_ends``: where each ends), ``escaped`` marks those
    with a backslash; the fingerprints go to ``values`` (``words`` a record, word 0 low), the
    numbers to ``features`` and ``sizes`` (0 and -1 when the template has no such field), the
    decoded sketches to ``sketches``. Returns the number of records, or -1 when a line does
    not fit, a number has more than 18 digits or there are more than ``capacity`` lines: the
    caller then reads the block another way."""
    if hex_digits != 16 * words:
        return -1
    n = nbytes
    data = carray(data_p, (max(n, 1),))
    ends = carray(ends_p, (steps + 1,))
    kinds = carray(kinds_p, (max(steps, 1),))
    pieces = carray(pieces_p, (max(ends[steps], 1),))
    cap = max(capacity, 1)
    ids = carray(ids_p, (max(n, 1),))
    id_ends = carray(id_ends_p, (cap,))
    escaped = carray(escaped_p, (cap,))
    values = carray(values_p, (cap * words,))
    features = carray(features_p, (cap,))
    sizes = carray(sizes_p, (cap,))
    sketches = carray(sketches_p, (max(cap * sketch_bytes, 1),))
    i = 0
    r = 0
    w = 0
    while i < n:
        if r == capacity:
            return -1
        features[r] = 0
        sizes[r] = -1
        escaped[r] = 0
        id_ends[r] = w
        start = 0
        for step in range(steps):
            i = _piece(data, i, n, pieces, start, ends[step])
            start = ends[step]
            if i < 0:
                return -1
            kind = kinds[step]
            if kind == FIELD_ID:  # up to its closing quote (the first byte of the next piece)
                while True:
                    if i >= n or data[i] < 32:
                        return -1
                    c = data[i]
                    if c == 34:
                        break
                    if c == 92:
                        escaped[r] = 1
                        ids[w] = c
                        w += 1
                        i += 1
                        if i >= n or data[i] < 32:
                            return -1
                        c = data[i]
                    ids[w] = c
                    w += 1
                    i += 1
                id_ends[r] = w
            elif kind == FIELD_HEX:
                if i + hex_digits > n:
                    return -1
                for word in range(words):  # 16 digits a word, the first word the highest
                    value = np.uint64(0)
                    for d in range(i + 16 * word, i + 16 * word + 16):
                        nibble = _HEX_VALUES[data[d]]
                        if nibble > 15:
                            return -1
                        value = (value << np.uint64(4)) | np.uint64(nibble)
                    values[r * words + words - 1 - word] = value
                i += hex_digits
            elif kind == FIELD_FEATURES or kind == FIELD_BYTES:
                sign = 1
                if kind == FIELD_BYTES and i < n and data[i] == 45:
                    sign = -1
                    i += 1
                number, i = _natural(data, i, n)
                if i < 0:
                    return -1
                if kind == FIELD_FEATURES:
                    features[r] = number
                else:
                    sizes[r] = sign * number
            else:  # FIELD_SKETCH
                if i + sketch_chars > n:
                    return -1
                out = r * sketch_bytes
                held = np.uint32(0)
                invalid = np.uint32(0)
                for d in range(sketch_chars):  # six bits a character; bits past the last byte are dropped
                    six = np.uint32(_BASE64URL_VALUES[data[i + d]])
                    invalid |= six
                    held = (held << np.uint32(6)) | (six & np.uint32(63))
                    if d & 3 == 3:
                        sketches[out] = np.uint8(held >> np.uint32(16))
                        sketches[out + 1] = np.uint8((held >> np.uint32(8)) & np.uint32(255))
                        sketches[out + 2] = np.uint8(held & np.uint32(255))
                        out += 3
                        held = np.uint32(0)
                if invalid > 63:
                    return -1
                tail = sketch_chars & 3  # 2 or 3 characters: 1 or 2 bytes
                if tail >= 2:
                    held <<= np.uint32(6 * (4 - tail))
                    sketches[out] = np.uint8(held >> np.uint32(16))
                    if tail == 3:
                        sketches[out + 1] = np.uint8((held >> np.uint32(8)) & np.uint32(255))
                i += sketch_chars
        i = _piece(data, i, n, pieces, start, ends[steps])
        if i < 0:
            return -1
        if i < n and data[i] == 13:
            i += 1
        if i < n:
            if data[i] != 10:
                return -1
            i += 1
        ids[w] = 10
        w += 1
        r += 1
    return r
