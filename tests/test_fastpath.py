"""The compiled fast path gives exactly the Python path's fingerprints."""

import importlib
import pkgutil
import random
import string

import pytest
from helpers import word_like_texts
from hypothesis import given, settings
from hypothesis import strategies as st

import simdedup.kernels.fastpath as fastpath
from simdedup import kernels
from simdedup.errors import SkipDocument
from simdedup.kernels import load
from simdedup.methods import Method, SimhashMethod
from simdedup.read import Source, open_documents
from simdedup.run import fingerprint_batch
from simdedup.simhash import as_integers
from simdedup.tokenizers import get_tokenizer

needs_kernels = pytest.mark.skipif(fastpath.Kernel.loaded() is None, reason="numba or the XXH3 symbol is not available")


@pytest.fixture(autouse=True)
def from_the_first_byte(monkeypatch):
    monkeypatch.setattr(fastpath, "START_AFTER_BYTES", 0)


ASCII = string.ascii_letters + string.digits + "_ \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f.,;:!?'\"()-/\\#@$%^&*+=<>[]{}|~`"


def both_paths(
    tmp_path, text: bytes, tokenizer: str, sketch_bins: int = 128, weighting=None, bits: int = 64, sketch_of="shingles"
):
    """The record of the batch path with the kernel loaded, checked to be the kernel's own
    answer (its sketch of features), and the record of the Python path
    (:meth:`SimhashMethod.record`)."""
    from simdedup.read import open_document

    path = tmp_path / "doc.txt"
    path.write_bytes(text)
    method = SimhashMethod(
        get_tokenizer(tokenizer), bits=bits, sketch_bins=sketch_bins, weighting=weighting, sketch_of=sketch_of
    )
    assert method.fast
    fastpath.preload()
    (fast,) = fingerprint_batch([Source(str(path))], method).results
    slow = method.record(open_document(str(path)))
    if isinstance(fast, Source):
        raise SkipDocument(fast.path, fast.reason)
    body = text[3:] if text.startswith(b"\xef\xbb\xbf") else text
    values, counts, sketches = fastpath.Kernel.loaded().fingerprint(
        [body], tokenizer, sketch_bins, method.weighting == "binary", 1, [0], bits
    )
    assert (as_integers(values)[0], int(counts[0])) == (fast.simhash, fast.features)  # the kernel's answer
    assert sketch_bins == 0 or sketch_of == "shingles" or sketches[0].tobytes() == fast.sketch
    return fast, slow


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=ASCII, min_size=1, max_size=3000),
    st.sampled_from(["words", "whitespace"]),
    st.sampled_from([0, 64, 128]),
    st.sampled_from(["binary", "feature"]),
    st.sampled_from(["shingles", "features"]),
)
def test_same_record_on_random_ascii(tmp_path_factory, bits, text, tokenizer, bins, weighting, sketch_of):
    tmp_path = tmp_path_factory.mktemp("doc")
    try:
        fast, slow = both_paths(tmp_path, text.encode(), tokenizer, bins, weighting, bits, sketch_of)
    except Exception as exc:  # both paths must skip the same documents the same way
        assert "no text" in str(exc)
        return
    assert fast is not None
    assert fast.to_json() == slow.to_json()


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=120, deadline=None)
@given(
    word_like_texts(),
    st.sampled_from(["words", "whitespace"]),
    st.sampled_from(["binary", "feature"]),
    st.sampled_from(["shingles", "features"]),
)
def test_same_record_on_word_like_text(tmp_path_factory, bits, text, tokenizer, weighting, sketch_of):
    fast, slow = both_paths(tmp_path_factory.mktemp("doc"), text.encode(), tokenizer, 64, weighting, bits, sketch_of)
    assert fast.to_json() == slow.to_json()


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
def test_same_record_on_a_long_document(tmp_path, bits):
    rng = random.Random(1)
    words = ["".join(rng.choices(string.ascii_letters, k=rng.randint(1, 12))) for _ in range(5000)]
    text = " ".join(rng.choices(words, k=200_000)).encode()  # repeated words: the table grows
    for tokenizer in ("words", "whitespace"):
        fast, slow = both_paths(tmp_path, b"\xef\xbb\xbf" + text, tokenizer, bits=bits)
        assert fast.to_json() == slow.to_json()
        assert fast.bytes == len(text) + 3


def test_not_used_where_it_would_differ():
    assert SimhashMethod(get_tokenizer("words", shingle=2)).fast
    assert SimhashMethod(get_tokenizer("words", shingle=2), bits=128).fast
    assert not SimhashMethod(get_tokenizer("words"), bits=128, ties="one").fast
    assert not SimhashMethod(get_tokenizer("jieba")).fast
    assert not SimhashMethod(get_tokenizer("words"), encoding="latin-1").fast
    assert not SimhashMethod(get_tokenizer("words"), hash_name="md5").fast


@needs_kernels
@pytest.mark.parametrize("bits", ["64", "128"])
def test_cli_output_identical_with_and_without(tmp_path, monkeypatch, bits):
    from click.testing import CliRunner

    from simdedup.cli import cli

    rng = random.Random(2)
    for i in range(40):
        words = [rng.choice(["alpha", "beta", "Gamma", "delta_1", "x", "yz"]) for _ in range(rng.randint(1, 400))]
        (tmp_path / f"d{i:02d}.txt").write_text(" ".join(words) + ("\n" if i % 2 else ""))
    fast = CliRunner().invoke(cli, ["fingerprint", "--silent", "-j", "1", "--bits", bits, str(tmp_path)])
    monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
    slow = CliRunner().invoke(cli, ["fingerprint", "--silent", "-j", "1", "--bits", bits, str(tmp_path)])
    assert fast.exit_code == slow.exit_code == 0
    assert fast.stdout == slow.stdout


def test_without_kernels_the_python_path_answers(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("plain ascii words " * 50)
    monkeypatch.setitem(load._loaded, fastpath.Kernel, False)  # as if numba were missing
    assert fastpath.ready(1 << 30) is None
    (record,) = fingerprint_batch([Source(str(tmp_path / "a.txt"))], SimhashMethod(get_tokenizer("words"))).results
    monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
    assert fingerprint_batch([Source(str(tmp_path / "a.txt"))], SimhashMethod(get_tokenizer("words"))).results == [
        record
    ]


@needs_kernels
@pytest.mark.parametrize("bits", ["64", "128"])
def test_jsonl_documents_identical_with_and_without(tmp_path, monkeypatch, bits):
    import json

    from click.testing import CliRunner

    from simdedup.cli import cli

    rng = random.Random(3)
    lines = [
        json.dumps({"text": " ".join(rng.choice(["alpha", "Beta", "g_1", "café"]) for _ in range(200))})
        for _ in range(30)
    ]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    command = ["fingerprint", "--silent", "-j", "1", "--bits", bits, str(tmp_path / "d.jsonl")]
    fast = CliRunner().invoke(cli, command)
    monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
    slow = CliRunner().invoke(cli, command)
    assert fast.exit_code == slow.exit_code == 0 and fast.stdout == slow.stdout


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("table_slots", [1 << 16, 2048])
def test_a_batch_equals_the_python_path_document_by_document(tmp_path, monkeypatch, table_slots, bits):
    """Many documents in one kernel call: tables reused, grown per document, and (with a small
    largest table) documents retried alone with a larger one."""
    monkeypatch.setattr(fastpath, "TABLE_SLOTS", table_slots)
    rng = random.Random(4)
    vocabulary = ["".join(rng.choices(string.ascii_letters + "_0", k=rng.randint(1, 9))) for _ in range(20000)]
    sources = []
    for i in range(60):
        count = rng.choice([0, 1, 5, 300, 3000, 30000])
        text = " ".join(rng.choices(vocabulary, k=count)) + rng.choice(["", ".", " Caf\u00e9"])
        (tmp_path / f"d{i:02d}.txt").write_text(text)
        sources.append(Source(str(tmp_path / f"d{i:02d}.txt")))
    for tokenizer in ("words", "whitespace"):
        fast = fingerprint_batch(sources, SimhashMethod(get_tokenizer(tokenizer), bits=bits)).results
        monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
        slow = fingerprint_batch(sources, SimhashMethod(get_tokenizer(tokenizer), bits=bits)).results
        monkeypatch.delenv("SIMDEDUP_FASTPATH")
        assert [getattr(r, "reason", None) or r.to_json() for r in fast] == [
            getattr(r, "reason", None) or r.to_json() for r in slow
        ]
        assert sum(isinstance(r, Source) for r in fast) >= 1  # the empty documents


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
@pytest.mark.parametrize("seen_before", [0, 1 << 30])
def test_the_batch_that_starts_the_kernel_equals_the_python_path(tmp_path, monkeypatch, seen_before, bits):
    """The kernel is loaded for a whole batch once the bytes seen reach START_AFTER_BYTES; the
    batches before it take the Python path from the bytes already read. Byte-order marks,
    empty, binary and non-ASCII files and texts held in memory come out the same either way."""
    monkeypatch.setattr(fastpath, "START_AFTER_BYTES", 6000)
    monkeypatch.setattr(fastpath, "_bytes_seen", seen_before)
    rng = random.Random(5)
    contents = [b"", b"\xef\xbb\xbf", b"\x00binary\x00", "na\u00efve text".encode(), b"\xef\xbb\xbfBOM Words here"]
    contents += [
        " ".join(rng.choices(["Alpha", "beta", "g_1", "x.y"], k=rng.randint(1, 400))).encode() for _ in range(25)
    ]
    sources = []
    for i, content in enumerate(contents):
        (tmp_path / f"d{i:02d}.txt").write_bytes(content)
        sources.append(Source(str(tmp_path / f"d{i:02d}.txt")))
    sources += [Source("t1", text="In memory, plain"), Source("t2", text="  "), Source("t3", text="caf\u00e9 cup")]

    def outcomes(results):
        return [getattr(r, "reason", None) or r.to_json() for r in results]

    batch = fingerprint_batch(sources, SimhashMethod(get_tokenizer("words"), bits=bits)).results
    assert fastpath._bytes_seen >= 6000
    monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
    slow = fingerprint_batch(sources, SimhashMethod(get_tokenizer("words"), bits=bits)).results
    assert outcomes(batch) == outcomes(slow)


@needs_kernels
def test_the_kernel_and_its_python_side_agree_on_the_scratch_layout():
    from simdedup.kernels.source import fastpath as source

    assert (source.PLANES, source.SCRATCH_WORDS) == (fastpath.PLANES, fastpath.SCRATCH_WORDS)


@needs_kernels
@pytest.mark.parametrize("bits", [64, 128])
def test_cached_machine_code_loads_without_numba(tmp_path, bits):
    """A fresh process loads the kept machine code and fingerprints without importing numba."""
    import subprocess
    import sys

    fastpath.Kernel.loaded()  # compiled and kept by now
    code = (
        "import sys; from simdedup.kernels import fastpath; from simdedup.simhash import as_integers; "
        "k = fastpath.Kernel.loaded(); "
        f"v, f, s = k.fingerprint([b'Hello hello world'], 'words', 16, True, bits={bits}); "
        "print(as_integers(v)[0], int(f[0]), s.tobytes().hex(), 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    from simdedup.simhash import Simhasher

    value, sketch = Simhasher(bits, "xxh3", sketch_bins=16, weighting="binary")({"hello": 2, "world": 1})
    assert out == [str(value), "2", sketch.hex(), "False"]


def test_short_texts_before_the_kernel_starts_take_the_python_path(monkeypatch):
    """Before START_AFTER_BYTES a text goes to the Python path once (it used to ask the batch
    path again, and again, until the recursion limit)."""
    monkeypatch.setattr(fastpath, "START_AFTER_BYTES", 1 << 30)
    monkeypatch.setattr(fastpath, "_bytes_seen", 0)
    fingerprinter = SimhashMethod(get_tokenizer("words"))
    record = fingerprinter.fingerprint_text("t", "a short text " * 3)
    assert record.features == 3
    results = fingerprint_batch([Source(f"t{i}", text="more short text") for i in range(3000)], fingerprinter).results
    assert [r.features for r in results] == [3] * 3000


def test_every_kernel_loads_and_passes_its_check():
    """numba and llvmlite are dependencies, so here every kernel must load: a kernel whose
    check at load fails would quietly leave the work to the slower path (and skip its tests)."""
    for module in pkgutil.iter_modules(kernels.__path__, "simdedup.kernels."):
        importlib.import_module(module.name)
    families = load.Loaded.__subclasses__()
    assert len(families) >= 9
    for family in families:
        assert family.loaded() is not None, family


@pytest.mark.parametrize(
    "options",
    [
        {"tokenizer": "words"},
        {"tokenizer": "whitespace", "bits": 128, "sketch_bins": 0},
        {"tokenizer": "words", "hash_name": "md5", "weighting": "feature", "encoding": "auto"},
        {"tokenizer": "words", "html": True},
        {"tokenizer": "jieba"},
        {"tokenizer": "jieba-fast"},
    ],
)
def test_the_python_path_together_equals_one_document_at_a_time(tmp_path, monkeypatch, options):
    """A batch of documents, through the kernel where it takes them (UTF-8, words or
    whitespace, 64 or 128 bits) and elsewhere not (other settings, not UTF-8; jieba-fast's
    batches of keywords): the same records and skip reasons as one document at a time."""
    import gzip

    options = dict(options)
    tokenizer = get_tokenizer(options.pop("tokenizer"))
    files = {
        "ascii.txt": "Plain ASCII text, long enough to be fingerprinted. " * 30,
        "cafe.txt": "Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade; \u4e2d\u6587\u6d4b\u8bd5\u6570\u636e " * 20,
        "zh.txt": "\u6211\u4eec\u6d4b\u8bd5\u4e2d\u6587\u5206\u8bcd\u7684\u6570\u636e\u3002" * 40,
        "page.txt": "<html><body><p>Hello \u00e9t\u00e9 world</p><script>x()</script></body></html>",
        "empty.txt": "",
        "spaces.txt": "   \n\t  ",
        "big.txt": "\u00e9l\u00e8ve " * 3000,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "gb.txt").write_bytes("\u6570\u636e\u5206\u8bcd \u00e9".encode("gb18030") * 50)
    (tmp_path / "binary.txt").write_bytes(b"\0\1\2 binary")
    with gzip.open(tmp_path / "packed.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("compressed caf\u00e9 text " * 50)
    monkeypatch.setattr("simdedup.methods.simhash.TOGETHER_BYTES", 5000)  # big.txt streams
    sources = [Source(str(p)) for p in sorted(tmp_path.iterdir())]
    sources += [
        Source("t-ascii", text="short ascii text"),
        Source("t-zh", text="\u4e2d\u6587\u6587\u672c"),
        Source("t-empty", text="  "),
        Source("gone", reason="no such file"),
    ]
    fingerprinter = SimhashMethod(tokenizer, **options)
    together = fingerprint_batch(sources, fingerprinter).results
    alone = Method.fingerprint_batch(
        fingerprinter, open_documents(sources, fingerprinter.encoding)
    )  # streamed, one at a time
    assert [getattr(r, "reason", None) or (r.to_json(), r.encoding) for r in together] == [
        getattr(r, "reason", None) or (r.to_json(), r.encoding) for r in alone
    ]
    assert sum(isinstance(r, Source) for r in together) >= 3


def test_numba_functions_compiled_after_a_kernel_still_run():
    """A kernel compiled in this process (the first run on a machine) must not bind numba's
    runtime helpers to abort: then every function numba compiled later (the exact-similarity
    kernels of dedup) aborted the process. Run in a process of its own, with nothing cached."""
    import subprocess
    import sys

    code = """
import numpy as np
import simdedup.cache, simdedup.kernels.fastpath as fastpath
simdedup.cache.read = lambda name: None  # compile the kernel here, as on a new machine
simdedup.cache.write = lambda name, data: None
assert fastpath.Kernel.loaded() is not None
import numba
@numba.njit
def shared(left, right):
    out = np.zeros(len(left), dtype=np.int64)
    for i in range(len(left)):
        out[i] = left[i] & right[i]
    return out
print(shared(np.arange(5), np.arange(5)).sum())
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "10"


def _copies_corpus(tmp_path):
    """Files of at least COPY_MIN_BYTES and exact copies of them (one behind a byte-order mark),
    a near copy, an unrelated file and small copies, in an order that mixes them."""
    from simdedup.methods.simhash import COPY_MIN_BYTES

    r = random.Random(11)
    vocab = [f"wörd{i}" for i in range(3000)] + ["“quoted”", "dash—dash", "漢字"]

    def text():
        return " ".join(r.choice(vocab) for _ in range(COPY_MIN_BYTES // 4)).encode()

    first, other, small = text(), text(), b"a small file, copied\n"
    near = first.replace(b" ", b"\n", 50)[:-40]
    files = {
        "a.txt": first,
        "b.txt": other,
        "c.txt": first,
        "d.txt": small,
        "e.txt": near,
        "f.txt": first,
        "g.txt": small,
        "h.txt": b"\xef\xbb\xbf" + first,
        "i.txt": other,
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return [str(tmp_path / name) for name in files]


@needs_kernels
def test_exact_copies_get_the_records_fingerprinting_them_gives(tmp_path, monkeypatch):
    """With exact verification (dedup), a document whose bytes were fingerprinted before takes
    that record: the same records as fingerprinting every document, each keeping its own text,
    and the kernel sees each distinct large text once."""
    paths = _copies_corpus(tmp_path)
    plain = SimhashMethod(get_tokenizer("words"))
    exact = SimhashMethod(get_tokenizer("words"))
    exact.verify_exactly()
    fastpath.preload()
    kernel_type = type(fastpath.Kernel.loaded())
    seen = []
    fingerprint = kernel_type.fingerprint_joined  # where every batch goes

    def counting(self, data, offsets, *args):
        seen.extend(bytes(data[start:end]) for start, end in zip(offsets[:-1], offsets[1:]))
        return fingerprint(self, data, offsets, *args)

    monkeypatch.setattr(kernel_type, "fingerprint_joined", counting)
    records = {}
    for name, method in (("plain", plain), ("exact", exact)):
        seen.clear()
        records[name] = fingerprint_batch([Source(p) for p in paths], method).results
        records[name + " seen"] = list(seen)
    assert [(r.to_json(), r.encoding) for r in records["exact"]] == [
        (r.to_json(), r.encoding) for r in records["plain"]
    ]
    for path, record in zip(paths, records["exact"]):
        body = open(path, "rb").read()
        assert record.exact.utf8() == (body[3:] if body.startswith(b"\xef\xbb\xbf") else body)
    assert len(records["plain seen"]) == len(paths)
    # a, b, d, e, g, h (a's bytes behind a BOM are other bytes) and the small copy; not c, f, i
    assert len(records["exact seen"]) == len(paths) - 3


@needs_kernels
def test_bytes_that_collide_with_a_copys_key_are_fingerprinted_as_themselves(tmp_path, monkeypatch):
    """Copies are looked up by a 128-bit hash, which bytes can be crafted to collide with; a copy
    is taken only when its text equals the first one's. Made to collide here (every key equal),
    every document still gets its own record, and dedup the same clusters."""
    import json

    from click.testing import CliRunner

    from simdedup.cli import cli
    from simdedup.methods import simhash

    paths = _copies_corpus(tmp_path)

    def records():
        method = SimhashMethod(get_tokenizer("words"))
        method.verify_exactly()
        return [r.to_json() for r in fingerprint_batch([Source(p) for p in paths], method).results]

    def clusters():
        result = CliRunner().invoke(cli, ["dedup", "-j", "1", "--singletons", *paths])
        assert result.exit_code == 0, result.output
        return sorted(sorted(m["id"] for m in json.loads(line)["members"]) for line in result.stdout.splitlines())

    honest = records(), clusters()
    monkeypatch.setattr(simhash._Copies, "key", staticmethod(lambda data, file: b"one key for all"))
    assert (records(), clusters()) == honest
    names = [[p.rsplit("/", 1)[1] for p in cluster] for cluster in honest[1]]
    assert ["a.txt", "c.txt", "e.txt", "f.txt", "h.txt"] in names and ["b.txt", "i.txt"] in names


@needs_kernels
def test_a_method_keeps_no_text_alive_once_its_records_are_gone(tmp_path):
    """The texts kept for exact verification belong to the records: the copies table refers to
    them only weakly, so once verification drops a record its text goes, whatever the method
    still remembers (a text held past that raised dedup's peak memory by a sixth on real text)."""
    import gc
    import weakref

    paths = _copies_corpus(tmp_path)
    method = SimhashMethod(get_tokenizer("words"))
    method.verify_exactly()
    records = fingerprint_batch([Source(p) for p in paths], method).results
    texts = [weakref.ref(record.exact) for record in records]
    assert all(text() is not None for text in texts)
    del records
    gc.collect()
    assert [text() for text in texts] == [None] * len(texts)
