"""Every compiled kernel that reads a caller's bytes (fingerprints, exact sets, record lines, the
jieba tokenizer's), run on generated inputs placed flush against a page that cannot be read (and
the exact sets' outputs, which the caller sizes, flush against one that cannot be written): a kernel that reads one byte before its input or past its end dies
with SIGSEGV here, where on an ordinary buffer (a bytes object, the file buffer's slack, the
next document) it would read something and go on, and crash only when an input happens to end
at the end of a mapping (a shared-memory block of texts, a large joined batch).

Run as a script, in a child process (tests/hostile/test_kernel_bounds.py), so that a crash is
a failure that names its case:

    python tests/guarded_kernels.py SEED CASES     # prints "case N ..." before each case
    python tests/guarded_kernels.py edges          # every short token near a document's end
    python tests/guarded_kernels.py control        # reads the guard page on purpose: must die
"""

from __future__ import annotations

import ctypes
import json
import mmap
import random
import sys

import numpy as np

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class Guarded:
    """``data`` copied into a fresh mapping between two pages that cannot be read, flush against
    the one after it (``at_end``) or the one before it; :attr:`view` is the copy."""

    def __init__(self, data: bytes, at_end: bool):
        pages = (len(data) + PAGE - 1) // PAGE + 2
        self.map = mmap.mmap(-1, pages * PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        start = (pages - 1) * PAGE - len(data) if at_end else PAGE
        self.map[start : start + len(data)] = data
        for page in (base, base + (pages - 1) * PAGE):
            if _libc.mprotect(page, PAGE, 0) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")
        self.view = memoryview(self.map)[start : start + len(data)]
        self.after = base + (pages - 1) * PAGE  # the first byte that cannot be read


_WORD_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_SEPARATORS = [" ", " ", " ", "\n", "\t", "\r\n", ".", ", ", "-", "'", "\x0c", "\x1f", "é", "中", "\u3000", "\u00a0"]
_OTHER = ["中文", "文本", "é", "ü", "ß", "İ", "Σ", "ﬁ", "①", "\u0301", "😀", "\U00020000", "\ud800", "\u2028", "\ufeff"]


def _text(rng: random.Random) -> bytes:
    """One document's bytes, of a kind chosen at random."""
    kind = rng.randrange(8)
    if kind <= 2:  # words of every length between separators of every kind
        parts = []
        for _ in range(rng.randrange(1, 60)):
            length = rng.choice([1, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, rng.randrange(1, 140)])
            parts.append("".join(rng.choice(_WORD_CHARACTERS) for _ in range(length)))
            parts.append(rng.choice(_SEPARATORS) * rng.choice([1, 1, 1, 2, 7, 70]))
        text = "".join(parts)
    elif kind == 3:  # a short token near the end of a block: white space with letters in it
        size = rng.randrange(60, 200)
        chars = [rng.choice(" \n")] * size
        for _ in range(rng.randrange(1, 4)):
            at = rng.choice([rng.randrange(size), size - rng.randrange(1, 16)])
            for k in range(at, min(size, at + rng.randrange(1, 9))):
                chars[k] = rng.choice(_WORD_CHARACTERS)
        text = "".join(chars)
    elif kind == 4:  # other scripts, emoji, surrogates, combining marks among words
        text = "".join(rng.choice(_OTHER + ["word", " ", "Word", "  "]) for _ in range(rng.randrange(1, 200)))
    elif kind == 5:  # one long token
        text = rng.choice(["", " ", "a "]) + rng.choice(_WORD_CHARACTERS) * rng.randrange(60, 300)
    elif kind == 6:  # random bytes, often not UTF-8
        return rng.randbytes(rng.randrange(0, 400))
    else:  # ASCII text cut to a length near a multiple of 64
        words = " ".join("".join(rng.choice(_WORD_CHARACTERS) for _ in range(rng.randrange(1, 12))) for _ in range(80))
        size = rng.choice([1, 7, 8, 9, 63, 64, 65, 69, 70, 71, 72, 73, 127, 128, 129, 190, 191, 192])
        text = (words[:size] + rng.choice(_SEPARATORS) * 8)[:size]  # often a short word, then separators
    data = text.encode("utf-8", "surrogatepass")
    cut = rng.random()
    if cut < 0.1 and data:  # cut inside a character, or end on a lone lead byte
        return data[: rng.randrange(len(data))] + rng.choice([b"", b"\xe4", b"\xe4\xb8", b"\xf0\x9f\x98", b"\xc3"])
    return data


def _fingerprint(rng: random.Random, texts: list[bytes], at_end: bool) -> None:
    from simdedup.kernels import fastpath

    kernel = fastpath.Kernel.loaded()
    guarded = Guarded(b"".join(texts), at_end)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    flags = np.array([rng.choice([0, fastpath.SURROGATES]) for _ in texts] or [0], dtype=np.uint8)
    kernel.fingerprint_joined(
        guarded.view,
        offsets,
        rng.choice(sorted(fastpath.CLASS_SHIFTS)),
        rng.choice([0, 32, 128]),
        rng.random() < 0.5,
        rng.choice([1, 1, 2, 3]),
        flags,
        rng.choice([64, 128]),
    )


def _exact_sets(rng: random.Random, texts: list[bytes], at_end: bool) -> None:
    from simdedup.kernels.exact import ExactKernel
    from simdedup.similarity import CJK_SHARE, _tables

    kernel = ExactKernel.loaded()
    guarded = Guarded(b"".join(texts), at_end)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    # the outputs with just the room sets_many asks for, flush against a guard too: a write past
    # them would be a crash here, not a neighbour's memory overwritten
    room = len(guarded.view) + len(texts)
    outputs = [_guarded_array(room, np.uint64), _guarded_array(room, np.uint32), _guarded_array(2 * room, np.uint64)]
    words, counts, grams = (array for _, array in outputs)
    kernel.sets_many(guarded.view, offsets, _tables(rng.random() < 0.5), CJK_SHARE, words, counts, grams, 0, 0)


def _jieba(rng: random.Random, texts: list[bytes], at_end: bool) -> None:
    """The jieba tokenizer's kernels (segmentation, keywords and counts) on the documents as
    Python encodes a str for them (lone surrogates kept), in one to three chunks each."""
    from simdedup.kernels.jieba_cut import JiebaCutKernel
    from simdedup.kernels.keywords import KeywordKernel
    from simdedup.tokenizers.jieba_tfidf import _keyword_rules, _segment_tables

    cut, keywords, tables, rules = JiebaCutKernel.loaded(), KeywordKernel.loaded(), _segment_tables(), _keyword_rules()
    strings = [text.decode("utf-8", "surrogateescape") for text in texts]
    guarded = Guarded("".join(strings).encode("utf-8", "surrogatepass"), at_end)
    ends, doc_chunks, at = [], [0], 0
    for string in strings:
        cuts = sorted(rng.randrange(len(string) + 1) for _ in range(rng.randrange(3)))
        ends += [at + c for c in cuts] + [at + len(string)]
        at += len(string)
        doc_chunks.append(len(ends))
    with cut.lock:
        lengths, chunk_words = cut.cut(guarded.view, np.array(ends, dtype=np.int64), tables, rng.random() < 0.3)
        doc_words = chunk_words[doc_chunks]
        keywords.text_keywords(guarded.view, lengths, doc_words, rules, rng.choice([1, 5, 20]))
        keywords.text_counts(guarded.view, lengths, doc_words, rules)


def _guarded_array(length: int, dtype: type) -> tuple[Guarded, np.ndarray]:
    """A writable array of ``length`` values that ends where a page that cannot be touched
    starts (with its mapping, which must outlive it)."""
    guarded = Guarded(bytes(length * np.dtype(dtype).itemsize), at_end=True)
    return guarded, np.frombuffer(guarded.view, dtype=dtype)


_RECORD = {
    "id": "a",
    "simhash": "9260b4bf77e8e450",
    "bits": 64,
    "features": 268,
    "bytes": 3101,
    "method": "simhash",
    "tokenizer": "words",
    "options": {"shingle": 1},
    "hash": "xxh3",
    "weighting": "binary",
    "sketch": "SdLeQC5EJPqdCBo3WDAqIxDOI9o9JPnCfF4vAhvVtLwHl3l8TB-6U8ErpXmPAsYNZjZ-B1MNXkUKb5JzcOxX-2kCj7fxYavo",
}


def _record_lines(rng: random.Random, at_end: bool) -> None:
    """Fingerprint lines of one template, then cut or damaged anywhere."""
    from simdedup.fingerprints.columns import Template
    from simdedup.kernels.scan import RecordScanner

    scanner = RecordScanner.loaded()
    lines = []
    for n in range(rng.randrange(1, 6)):
        record = dict(_RECORD, id=rng.choice(["a", "doc-%d" % n, 'q\\"x', "中文", ""]))
        record["simhash"] = "%016x" % rng.getrandbits(64)
        record["features"], record["bytes"] = rng.randrange(10**6), rng.choice([-1, rng.randrange(10**9)])
        lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=rng.random() < 0.5).encode())
    template = Template.of(lines[0], json.loads(lines[0]), "simhash")
    data = b"\n".join(lines) + rng.choice([b"", b"\n", b"\r\n"])
    if rng.random() < 0.7 and data:
        data = data[: rng.randrange(len(data) + 1)]
    if rng.random() < 0.3 and data:
        at = rng.randrange(len(data))
        data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
    if template is not None:
        template.scan(scanner, Guarded(data, at_end).view, len(lines) + 1)


def edges() -> None:
    """Every document of white space and one short token, of every length from 64 to 150 and
    with the token ending anywhere in its last 20 bytes: where 64 bytes at a time stop."""
    from simdedup.kernels import fastpath
    from simdedup.kernels.exact import ExactKernel
    from simdedup.similarity import CJK_SHARE, _tables

    kernel, exact, table = fastpath.Kernel.loaded(), ExactKernel.loaded(), _tables(True)
    for size in range(64, 151):
        print(f"edges: documents of {size} bytes", flush=True)
        for length in range(1, 10):
            for end in range(size - 20, size + 1):
                data = b" " * (end - length) + b"Ab_9zQ7xY"[:length] + b" " * (size - end)
                guarded = Guarded(data, at_end=True)
                offsets = np.array([0, size], dtype=np.int64)
                for token_class in fastpath.CLASS_SHIFTS:
                    kernel.fingerprint_joined(guarded.view, offsets, token_class, 32, False)
                words, counts, grams = (
                    np.empty(size + 1, np.uint64),
                    np.empty(size + 1, np.uint32),
                    np.empty(2 * size + 2, np.uint64),
                )
                exact.sets_many(guarded.view, offsets, table, CJK_SHARE, words, counts, grams, 0, 0)
    print("done", flush=True)


def run(seed: int, cases: int) -> None:
    rng = random.Random(seed)
    for case in range(cases):
        kernel = ("fingerprint", "exact sets", "record lines", "jieba")[case % 4]
        at_end = rng.random() < 0.7
        texts = [_text(rng) for _ in range(rng.choice([1, 1, 1, 2, 4]))]
        print(
            f"case {case} (seed {seed}): {kernel}, {'at the end' if at_end else 'at the start'}, {texts!r}"[:4000],
            flush=True,
        )
        if kernel == "fingerprint":
            _fingerprint(rng, texts, at_end)
        elif kernel == "exact sets":
            _exact_sets(rng, texts, at_end)
        elif kernel == "jieba":
            _jieba(rng, texts, at_end)
        else:
            _record_lines(rng, at_end)
    print("done", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "edges":
        edges()
    elif sys.argv[1] == "control":
        guarded = Guarded(b"abc", at_end=True)
        print("reading past the end", flush=True)
        ctypes.string_at(guarded.after, 1)  # must die here
        print("read the guard page", flush=True)
    else:
        run(int(sys.argv[1]), int(sys.argv[2]))
