"""Near-duplicates kept apart by linkage: ``explain --clusters`` names the pair across the two
clusters that kept them apart, and the report lists such pairs. Checked against the texts' resemblance measured by the
tests' own definition (helpers.resemblance) on seeded families of edited copies, where complete
linkage must leave verified pairs in different clusters."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import resemblance

from simdedup.apart import kept_apart, why_apart
from simdedup.cli import cli
from simdedup.similarity import needed

THRESHOLD = 0.8


def family(rng: random.Random, folder: Path, prefix: str, size: int) -> None:
    """Copies of one text, each edited from an earlier one: words substituted, or a passage
    added, so that neighbours pass and copies further apart do not."""
    vocabulary = [f"{prefix}{i}" for i in range(3000)]
    texts = [[rng.choice(vocabulary) for _ in range(rng.randrange(300, 500))]]
    for _ in range(size - 1):
        words = list(rng.choice(texts))
        if rng.random() < 0.5:
            for i in rng.sample(range(len(words)), rng.randrange(4, 14)):
                words[i] = rng.choice(vocabulary)
        else:
            at = rng.randrange(len(words))
            words[at:at] = [rng.choice(vocabulary) for _ in range(rng.randrange(10, 50))]
        texts.append(words)
    for i, words in enumerate(texts):
        (folder / f"{prefix}{i:02d}.txt").write_text(" ".join(words) + "\n")


def clusters_of(folder: Path, *options: str) -> list[list[str]]:
    done = CliRunner().invoke(cli, ["dedup", "--silent", "--singletons", *options, str(folder)])
    assert done.exit_code == 0, done.output
    return [[m["id"] for m in json.loads(line)["members"]] for line in done.stdout.splitlines()]


@pytest.mark.parametrize("seed", range(6))
def test_every_verified_pair_across_complete_clusters_has_a_failing_pair_across(seed, tmp_path):
    rng = random.Random(seed)
    for prefix in ("a", "b"):
        family(rng, tmp_path, prefix, 10)
    clusters = clusters_of(tmp_path)
    texts = {doc: Path(doc).read_text() for members in clusters for doc in members}
    where = {doc: i for i, members in enumerate(clusters) for doc in members}
    assert needed(THRESHOLD, 290) == THRESHOLD  # texts this long: no raised threshold
    across = 0
    for a, b in itertools.combinations(sorted(texts), 2):
        if where[a] == where[b]:
            continue
        found = why_apart(a, b, clusters[where[a]], clusters[where[b]], texts)
        near = resemblance(texts[a], texts[b]) >= THRESHOLD
        assert (found is not None) == near, (a, b, resemblance(texts[a], texts[b]))
        if found is None:
            continue
        across += 1
        score, failing = found
        assert score == pytest.approx(resemblance(texts[a], texts[b]), abs=5e-4)
        assert failing is not None, f"complete linkage would have joined {a} and {b}'s clusters"
        x, y, failing_score = failing
        assert where[x] == where[a] and where[y] == where[b]
        assert resemblance(texts[x], texts[y]) < THRESHOLD
        assert failing_score == pytest.approx(resemblance(texts[x], texts[y]), abs=5e-4)
        # the least resembling failing pair, of a or b's own pairs first
        pairs = [(x, y) for x in clusters[where[a]] for y in clusters[where[b]] if (x, y) != (a, b)]
        own = [(x, y) for x, y in pairs if a in (x, y) or b in (x, y)]
        fails = [resemblance(texts[x], texts[y]) for x, y in own if resemblance(texts[x], texts[y]) < THRESHOLD]
        fails = fails or [resemblance(texts[x], texts[y]) for x, y in pairs]
        assert failing_score == pytest.approx(min(fails), abs=5e-4)
    listed = {(p.a, p.b) for p in kept_apart(clusters, texts)}
    for a, b in listed:
        assert where[a] != where[b] and resemblance(texts[a], texts[b]) >= THRESHOLD
    if seed == 0:
        assert across, "the families should leave verified pairs in different clusters"


def test_single_linkage_keeps_no_verified_pair_apart(tmp_path):
    rng = random.Random(3)
    family(rng, tmp_path, "a", 10)
    clusters = clusters_of(tmp_path, "--linkage", "single")
    texts = {doc: Path(doc).read_text() for members in clusters for doc in members}
    assert kept_apart(clusters, texts) == []


@pytest.fixture
def three(tmp_path) -> Path:
    """b, a = b and a passage (0.91), c = b with words changed (0.81 to b, 0.74 to a)."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(5000)]
    base = [rng.choice(vocabulary) for _ in range(400)]
    changed = list(base)
    for i in range(7, 400, 30):
        changed[i] = rng.choice(vocabulary)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "b.txt").write_text(" ".join(base))
    (docs / "a.txt").write_text(" ".join(base + [rng.choice(vocabulary) for _ in range(40)]))
    (docs / "c.txt").write_text(" ".join(changed))
    return docs


def test_explain_names_the_member_that_kept_two_near_duplicates_apart(three, tmp_path, monkeypatch):
    monkeypatch.chdir(three.parent)
    runner = CliRunner()
    clusters = runner.invoke(cli, ["dedup", "--silent", "docs"]).stdout  # c is alone: not written
    (tmp_path / "clusters.jsonl").write_text(clusters)
    args = [
        "explain",
        "docs/b.txt",
        "docs/c.txt",
        "--clusters",
        str(tmp_path / "clusters.jsonl"),
        "--documents",
        "docs",
    ]
    lines = runner.invoke(cli, args).stdout.splitlines()
    assert "clusters: A in cluster 1 (2 members), B in none of them (alone)" in lines
    assert any(line.startswith("kept apart: docs/a.txt (with A) and B have resemblance 0.74") for line in lines)
    placed = json.loads(runner.invoke(cli, [*args, "--json"]).stdout)["clusters"]
    assert placed["kept_apart"] and placed["failing_a"] == "docs/a.txt" and placed["failing_b"] == "docs/c.txt"
    together = runner.invoke(
        cli, ["explain", "docs/a.txt", "docs/b.txt", "--clusters", str(tmp_path / "clusters.jsonl")]
    )
    assert "kept apart" not in together.stdout and "A in cluster 1 (2 members), B in cluster 1" in together.stdout


def test_the_report_lists_the_pairs_kept_apart(three, tmp_path, monkeypatch):
    monkeypatch.chdir(three.parent)
    runner = CliRunner()
    (tmp_path / "clusters.jsonl").write_text(runner.invoke(cli, ["dedup", "--silent", "--singletons", "docs"]).stdout)
    done = runner.invoke(
        cli, ["report", str(tmp_path / "clusters.jsonl"), "--documents", "docs", "-o", str(tmp_path / "r.html")]
    )
    assert done.exit_code == 0, done.output
    page = (tmp_path / "r.html").read_text()
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    ((a, b, cluster_a, cluster_b, score, failing_a, failing_b, failing_score),) = data["apart"]
    assert (data["ids"][a], data["ids"][b]) == ("docs/b.txt", "docs/c.txt") and cluster_a != cluster_b
    assert (data["ids"][failing_a], data["ids"][failing_b]) == ("docs/a.txt", "docs/c.txt")
    assert score >= THRESHOLD > failing_score


def test_clusters_that_cluster_made_are_explained_by_the_estimates_that_made_them(tmp_path, monkeypatch):
    """On cluster lines of fingerprint | cluster, the pair named as keeping two near-duplicates
    apart fails by its sketches' estimate (what cluster decided by), and that is its number."""
    rng = random.Random(8)
    vocabulary = [f"w{i}" for i in range(5000)]
    docs = tmp_path / "docs"
    docs.mkdir()
    for family in range(12):
        base = [rng.choice(vocabulary) for _ in range(300)]
        for member in range(4):
            words = list(base)
            for _ in range(rng.randint(0, 12)):
                words[rng.randrange(len(words))] = rng.choice(vocabulary)
            (docs / f"{family:02d}-{member}.txt").write_text(" ".join(words))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    records = runner.invoke(cli, ["fingerprint", "--silent", "docs"]).stdout
    (tmp_path / "clusters.jsonl").write_text(runner.invoke(cli, ["cluster", "--singletons"], input=records).stdout)
    named = 0
    for family in range(12):
        files = sorted(str(p.relative_to(tmp_path)) for p in docs.glob(f"{family:02d}-*.txt"))
        for a, b in zip(files, files[1:]):
            out = runner.invoke(cli, ["explain", "--json", a, b, "--clusters", "clusters.jsonl", "--documents", "docs"])
            placed = json.loads(out.stdout)["clusters"]
            if not placed["kept_apart"]:
                continue
            assert placed["estimated"] and placed["failing_a"] is not None
            pair = json.loads(
                runner.invoke(cli, ["explain", "--json", placed["failing_a"], placed["failing_b"]]).stdout
            )
            assert pair["resemblance_estimate"] == placed["failing_score"] < 0.8
            named += 1
    assert named  # the seed makes some
