"""Exact-duplicate pre-pass: digests, the exact set, the bloom filter, the CLI."""

import json
import random

import pytest
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.exact import BloomFilter, SeenDigests, content_digest


def test_digest_ignores_layout_not_words():
    a = content_digest(["Hello  world,\n", "this is\ttext. "])
    assert a == content_digest(["  Hello world, this is text."])
    assert a != content_digest(["Hello world, this is text!"])
    assert a != content_digest(["hello world, this is text."])
    assert content_digest(["a ", "b"]) != content_digest(["ab"])


def test_seen_digests_name_the_first():
    seen = SeenDigests()
    assert seen.check(b"x" * 16, "first") is None
    assert seen.check(b"x" * 16, "second") == "first"
    assert seen.check(b"y" * 16, "third") is None


def test_bloom_never_misses_and_keeps_its_error_rate():
    rng = random.Random(0)
    bloom = BloomFilter(20000, 0.01)
    items = [rng.getrandbits(128).to_bytes(16, "little") for _ in range(20000)]
    assert not any(bloom.add(item) for item in items[:100])  # distinct items are new
    for item in items[100:]:
        bloom.add(item)
    assert all(bloom.add(item) for item in items)  # every added item is reported seen
    fresh = [rng.getrandbits(128).to_bytes(16, "little") for _ in range(20000)]
    false_positives = sum(bloom.add(item) for item in fresh[:5000])
    assert false_positives / 5000 < 0.03  # target 0.01 at capacity
    with pytest.raises(ValueError):
        BloomFilter(0)


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "a.txt").write_text("The same text,\nwrapped differently.")
    (tmp_path / "b.txt").write_text("The same text, wrapped differently.\n")
    (tmp_path / "c.txt").write_text("Another text entirely.")
    (tmp_path / "d.txt").write_text("The  same text, wrapped\tdifferently.")
    return tmp_path


def test_exact_command(corpus):
    result = CliRunner().invoke(cli, ["exact", str(corpus)])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["id"].rsplit("/", 1)[1], line["duplicate_of"].rsplit("/", 1)[1]) for line in lines] == [
        ("b.txt", "a.txt"),
        ("d.txt", "a.txt"),
    ]
    bloom = CliRunner().invoke(cli, ["exact", "--bloom", "1000", str(corpus)])
    assert [json.loads(line)["id"] for line in bloom.stdout.splitlines()] == [line["id"] for line in lines]
    assert all(json.loads(line)["duplicate_of"] is None for line in bloom.stdout.splitlines())


def test_dedup_exact_first_gives_the_same_clusters(corpus):
    plain = CliRunner().invoke(cli, ["dedup", "--silent", str(corpus)])
    first = CliRunner().invoke(cli, ["dedup", "--silent", "--exact-first", str(corpus)])
    assert plain.exit_code == first.exit_code == 0, first.stderr
    assert plain.stdout == first.stdout
    (cluster,) = [json.loads(line) for line in first.stdout.splitlines()]
    assert [m["id"].rsplit("/", 1)[1] for m in cluster["members"]] == ["a.txt", "b.txt", "d.txt"]
