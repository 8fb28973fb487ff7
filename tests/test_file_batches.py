"""Files read whole together (:meth:`SimhashMethod.fingerprint_files`, :class:`FileBuffer`)
give exactly what the document-by-document path gives: the same records, kept texts, skips and
reasons, in the same order, whatever the files (generated with a seed: empty, not UTF-8,
binary, byte-order marks, markup, HTTP responses, exact copies, files across the kernel's
batch bounds, files over the size read whole, tiny and large ones)."""

import os
import random

import pytest

import simdedup.kernels.fastpath as fastpath
from simdedup.methods import SimhashMethod
from simdedup.read import MAX_CARRY, FileBuffer, Source, open_documents, plain_files, read_sources
from simdedup.run import BATCH_SOURCES, fingerprint_batch
from simdedup.tokenizers import get_tokenizer

needs_kernels = pytest.mark.skipif(fastpath.Kernel.loaded() is None, reason="numba or the XXH3 symbol is not available")

WORDS = ["the", "a", "chain", "Σίσυφος", "ΣΑΣ", "漢字", "naïve", "İstanbul", "straße", "x1", "—", "“q”", "ǅ"]


def _text(r: random.Random, size: int) -> bytes:
    out, total = [], 0
    while total < size:
        word = r.choice(WORDS)
        out.append(word + r.choice(" \n\t  "))
        total += len(out[-1].encode())
    return "".join(out).encode()[:size]


def _corpus(tmp_path, seed: int, batch_bytes: int) -> tuple[list[str], list[str]]:
    """Files of every kind the read stage tells apart, in a random order, and those to remove
    once they are walked."""
    r = random.Random(seed)
    copy = _text(r, 5000)
    files: list[bytes | None] = [
        b"",
        b"",
        b"not \xff UTF-8 " + _text(r, 300),
        _text(r, 200) + b"\xc3",  # cut inside a character
        b"\xef\xbb\xbf" + _text(r, 100),  # a byte-order mark
        b"\xef\xbb\xbf",  # only the mark
        b"\xef\xbb\xbf" + copy,  # a copy behind a mark: other bytes
        b"\xff\xfe" + "utf-16 text".encode("utf-16-le"),
        b"text\0with a NUL",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=latin-1\r\n\r\ncaf\xe9 " + _text(r, 50),
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi <b>there</b></p>",
        b'<?xml version="1.0" encoding="iso-8859-1"?><a>caf\xe9</a>',
        b'  <meta charset="utf-8"><p>' + _text(r, 80) + b"</p>",
        b"<html>" + b" " * 1200 + b'<meta charset="latin-1">caf\xe9',
        b"HTTP/",
        b"HTTP",
        b"HTTP/1.1 200",
        b"\xef",  # the start of a mark, over bytes of earlier files in the buffer
        b"\xef\xbb",
        b"<",
        b"\xef\xbb\xbf<?xml version='1.0' encoding='latin-1'?>caf\xe9",  # a mark before the markup
        b"\n\n <meta charset=latin-1>caf\xe9",
        b" \n\t ",  # only whitespace
        b"......",  # no word
        copy,
        copy,
        b"x" * (MAX_CARRY + 10),  # a run without whitespace the reader cuts
        _text(r, 3 * batch_bytes),  # larger than a kernel batch
        None,  # a file that is gone by the time it is read
    ]
    files += [copy] * 3
    files += [_text(r, r.choice([1, 2, 3, 10, 100])) for _ in range(60)]  # many tiny ones
    files += [_text(r, r.randrange(batch_bytes // 3, batch_bytes + 50)) for _ in range(40)]  # around the bounds
    files += [_text(r, 4096), _text(r, 4095)]
    r.shuffle(files)
    paths, gone = [], []
    for number, data in enumerate(files):
        path = tmp_path / f"{number:04d}.txt"
        path.write_bytes(data or b"")
        paths.append(str(path))
        if data is None:
            gone.append(str(path))
    return paths, gone


def _results(results):
    return [
        ("skip", r.path, r.reason)
        if isinstance(r, Source)
        else (r.to_json(), r.encoding, None if r.exact is None else (type(r.exact.text), r.exact.utf8()))
        for r in results
    ]


@needs_kernels
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("encoding", ["utf-8", "auto"])
@pytest.mark.parametrize("warm", [True, False])
def test_files_read_together_give_what_each_read_alone_gives(tmp_path, monkeypatch, seed, exact, encoding, warm):
    """Cold: the kernel starts only after some text, as in a fresh process; small kernel
    batches and buffer, so that files fall across their bounds."""
    batch_bytes = 20_000
    monkeypatch.setattr(fastpath, "BATCH_BYTES", batch_bytes)
    paths, gone = _corpus(tmp_path, seed, batch_bytes)
    sources = list(read_sources(paths).sources)
    for path in gone:
        os.remove(path)
    runs = {}
    for way in ("alone", "together"):
        method = SimhashMethod(get_tokenizer("words"), encoding=encoding)
        if exact:
            method.verify_exactly()
        assert method.reads_files
        monkeypatch.setattr(fastpath, "_bytes_seen", fastpath.START_AFTER_BYTES if warm else 0)
        results = []
        for start in range(0, len(sources), BATCH_SOURCES):
            batch = sources[start : start + BATCH_SOURCES]
            assert plain_files(batch)
            if way == "alone":
                documents = list(open_documents(batch, method.encoding, method.whole_bytes))
                results += method.fingerprint_batch(documents)
            else:
                results += fingerprint_batch(batch, method).results
        runs[way] = _results(results)
    assert runs["together"] == runs["alone"]
    assert len(runs["alone"]) == len(paths)
    reasons = {r[2] for r in runs["alone"] if r[0] == "skip"}
    assert "empty file" in reasons and any("not valid utf-8" in r for r in reasons)  # the corpus has them
    assert any(r.startswith("cannot read") for r in reasons)


@needs_kernels
def test_files_over_the_size_read_whole_stream(tmp_path, monkeypatch):
    """Files over the method's size read whole take the streaming reader, in place."""
    r = random.Random(5)
    paths = []
    for number in range(30):
        path = tmp_path / f"{number:02d}.txt"
        path.write_bytes(_text(r, r.choice([0, 10, 900, 3000, 9000])))
        paths.append(str(path))
    sources = list(read_sources(paths).sources)
    runs = []
    for way in ("alone", "together"):
        method = SimhashMethod(get_tokenizer("words"))
        method.verify_exactly()
        method.whole_bytes = 2000
        monkeypatch.setattr(fastpath, "_bytes_seen", fastpath.START_AFTER_BYTES)
        if way == "alone":
            results = method.fingerprint_batch(list(open_documents(sources, method.encoding, method.whole_bytes)))
        else:
            results = fingerprint_batch(sources, method).results
        runs.append(_results(results))
    assert runs[0] == runs[1]
    assert sum(1 for r in runs[0] if r[0] != "skip" and r[2] is not None and isinstance(r[2][1], bytes)) > 0


def test_other_sources_are_not_plain_files(tmp_path):
    (tmp_path / "a.txt").write_text("a b c")
    assert plain_files([Source(str(tmp_path / "a.txt"))])
    assert not plain_files([Source(str(tmp_path / "a.txt.gz"))])
    assert not plain_files([Source("s3://bucket/a.txt")])
    assert not plain_files([Source("x", "a reason")])
    assert not plain_files([Source("x", text="a text")])


def test_the_file_buffer_reads_as_whole_file_does(tmp_path):
    """Back to back, grown as needed, shrunk back when emptied; what is not read whole is -1
    with nothing held."""
    buffer = FileBuffer(limit=5000, capacity=16, keep=64)
    r = random.Random(3)
    expected = b""
    for number in range(20):
        data = os.urandom(r.randrange(0, 3000))
        path = tmp_path / f"{number}.bin"
        path.write_bytes(data)
        start = buffer.end
        assert buffer.read(Source(str(path))) == len(data)
        assert buffer.bytes(start, buffer.end) == data
        expected += data
    assert buffer.bytes(0, buffer.end) == expected
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 5001)
    end = buffer.end
    assert buffer.read(Source(str(big))) == -1 and buffer.end == end
    assert buffer.read(Source(str(tmp_path / "gone"))) == -1 and buffer.end == end
    assert buffer.read(Source(str(tmp_path))) == -1 and buffer.end == end  # a directory
    buffer.drop(10)
    assert buffer.end == 10
    buffer.clear()
    assert buffer.end == 0 and len(buffer.buffer) == 16


def _cut_inside_a_word_as_numpy_tells(data: bytes, max_carry: int) -> bool:
    """The reference: a gap between ASCII whitespace (or the ends) longer than ``max_carry``."""
    import numpy as np

    space = np.zeros(256, dtype=bool)
    space[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
    spaces = np.concatenate(([-1], np.flatnonzero(space[np.frombuffer(data, dtype=np.uint8)]), [len(data)]))
    return bool(np.diff(spaces).max() > max_carry)


@pytest.mark.parametrize("seed", range(4))
def test_runs_the_reader_would_cut_are_found(monkeypatch, seed):
    """Found with rfind as with a table of whitespace, at and around the bound, in a slice."""
    from simdedup.methods import simhash as module

    monkeypatch.setattr(module, "MAX_CARRY", 50)
    r = random.Random(seed)
    for _ in range(400):
        alphabet = b"ab\xc3\xa9" + bytes([r.choice([9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 0, 33, 255])])
        data = bytes(r.choice(alphabet) for _ in range(r.randrange(0, 400)))
        if r.random() < 0.5:
            at = r.randrange(0, len(data) + 1)
            data = data[:at] + b"x" * r.choice([48, 49, 50, 51, 52]) + data[at:]
        expected = _cut_inside_a_word_as_numpy_tells(data, 50)
        assert module._may_be_cut_inside_a_word(data) == expected
        framed = bytearray(b"  zz" + data + b"z  ")
        assert module._may_be_cut_inside_a_word(framed, 4, 4 + len(data)) == expected


def test_a_replaced_record_is_what_dataclasses_replace_makes():
    import dataclasses

    from simdedup.fingerprints import FingerprintRecord

    record = FingerprintRecord("a", 5, 64, 3, {"method": "simhash"}, 10, b"\1\2", "utf-8", object())
    for changes in ({"id": "b"}, {"id": "", "exact": None}, {}):
        copy = record.replaced(**changes)
        assert copy == dataclasses.replace(record, **changes) and copy is not record
        assert copy.__dict__ == dataclasses.replace(record, **changes).__dict__
    assert record.id == "a"


def test_a_walked_file_is_the_source_its_constructor_makes():
    import dataclasses
    import pickle

    for size in (None, 0, 123):
        made, built = Source.file("/a/b.txt", size), Source("/a/b.txt", size=size, regular=True)
        assert made == built and made.__dict__ == built.__dict__ and repr(made) == repr(built)
        assert pickle.loads(pickle.dumps(made)).__dict__ == built.__dict__
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.path = "x"  # type: ignore[misc]


@needs_kernels
def test_a_method_that_decides_otherwise_reads_files_one_by_one():
    """Subclasses that choose their documents' path themselves, and methods without the
    kernel, take the document-by-document path."""

    class Stricter(SimhashMethod):
        def _kernel_input(self, document):
            return None

    class Own(SimhashMethod):
        def fingerprint_batch(self, documents):
            return super().fingerprint_batch(documents)

    assert SimhashMethod(get_tokenizer("words")).reads_files
    assert not Stricter(get_tokenizer("words")).reads_files
    assert not Own(get_tokenizer("words")).reads_files
    assert not SimhashMethod(get_tokenizer("words"), html=True).reads_files
    assert not SimhashMethod(get_tokenizer("words"), hash_name="md5").reads_files


@needs_kernels
def test_the_buffer_goes_when_the_run_is_done(tmp_path):
    from simdedup.run import fingerprint_batches

    for number in range(3):
        (tmp_path / f"{number}.txt").write_text(f"document number {number} " * 50)
    method = SimhashMethod(get_tokenizer("words"))
    batches = fingerprint_batches(read_sources([str(tmp_path)]).sources, method)
    next(batches)
    assert method._files is not None  # kept from batch to batch
    assert not list(batches)
    assert method._files is None
