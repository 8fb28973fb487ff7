"""A work dir never reuses what it made of an input that changed since, even when the rewrite
kept the size and set the modification time back: an input's identity holds its inode change
time and inode, which no rewrite restores."""

from __future__ import annotations

import os
import random
import time

import pytest
from click.testing import CliRunner
from helpers import words

from simdedup.cli import cli
from simdedup.engines.run import file_version


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def rewrite_keeping_size_and_times(path, rng, by_rename: bool) -> None:
    """Change some bytes of ``path`` (letters for letters, so the size stays), then put its
    access and modification times back."""
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    letters = [i for i, b in enumerate(data) if chr(b).isalpha()]
    for i in rng.sample(letters, max(1, len(letters) // 3)):
        data[i] = ord(rng.choice("qxzjvk"))
    if by_rename:
        fresh = path.with_name(path.name + ".new")
        fresh.write_bytes(bytes(data))
        os.replace(fresh, path)
    else:
        with open(path, "r+b") as handle:
            handle.write(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("command", ["dedup", "fingerprint", "cluster"])
def test_a_rewrite_with_size_and_mtime_restored_is_not_reused(tmp_path, seed, command):
    """doc1 is a copy of doc0; the rewrite changes doc1 (or, for cluster, swaps the ids of two
    records of equal length), so the fresh output differs from the first."""
    rng = random.Random(seed)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = [words(rng.randrange(10**6), rng.randint(40, 200)) for _ in range(rng.randint(3, 6))]
    texts[1] = texts[0]
    for i, text in enumerate(texts):
        (corpus / f"doc{i}.txt").write_text(text)
    inputs = corpus
    if command == "cluster":
        inputs = tmp_path / "fp.jsonl"
        assert invoke("fingerprint", "--silent", corpus, "-o", inputs).exit_code == 0
    args = [command, "--engine", "stages", "--work-dir", tmp_path / "work", inputs]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    if command == "cluster":
        before = os.stat(inputs)
        swapped = inputs.read_text().replace("doc1.txt", "docX.txt").replace("doc2.txt", "doc1.txt")
        inputs.write_text(swapped.replace("docX.txt", "doc2.txt"))
        os.utime(inputs, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        rewrite_keeping_size_and_times(corpus / "doc1.txt", rng, by_rename=rng.random() < 0.5)
    again = invoke(*args)
    fresh = invoke(*[tmp_path / "fresh" if str(a) == str(tmp_path / "work") else a for a in args])
    assert fresh.exit_code == 0 and fresh.stdout != first.stdout
    # refused as a work dir of other inputs, or made again: never the old output
    if again.exit_code == 0:
        assert again.stdout == fresh.stdout
    else:
        assert again.exit_code == 1 and "other settings" in again.stderr, again.output


def test_a_file_version_changes_with_every_rewrite_whatever_the_times(tmp_path):
    """The mechanism itself, on seeded rewrites: in place, by rename, with times set back."""
    rng = random.Random(7)
    path = tmp_path / "f.txt"
    path.write_text(words(1, 100))
    seen = {file_version(str(path))}
    for _ in range(20):
        time.sleep(0.02)  # past the clock tick of the last change (the kernel's times are coarse)
        rewrite_keeping_size_and_times(path, rng, by_rename=rng.random() < 0.5)
        version = file_version(str(path))
        assert version not in seen
        seen.add(version)
