"""The bundled examples: the quick start finds exactly the documented groups, and every pair it
puts together is a near-duplicate by the definition (shingle Jaccard at least 0.8, computed here
from the texts)."""

import itertools
import json
from pathlib import Path

from click.testing import CliRunner
from helpers import resemblance

from simdedup.cli import cli

ROOT = Path(__file__).resolve().parents[1]
# examples/GROUPS.md: the copies each group's edits made
GROUPS = {
    ("en/bicycle-chain-care-reposted.txt", "en/bicycle-chain-care.txt"),
    ("en/lighthouses-edited-1.txt", "en/lighthouses-edited-2.txt", "en/lighthouses.txt"),
    ("en/sourdough-loaf-recipe-rewrapped.txt", "en/sourdough-loaf-recipe.txt"),
    ("zh/city-park-copy.txt", "zh/city-park.txt"),
    ("zh/tea-making-extended.txt", "zh/tea-making.txt"),
}
# of which near-duplicates by default: edited-1 and edited-2 share 0.722 of their word 3-grams
# (complete linkage keeps the first pair, 0.846), the Chinese copies 0.795 and 0.771 of their
# 5-character shingles
DEFAULT_GROUPS = {
    ("en/bicycle-chain-care-reposted.txt", "en/bicycle-chain-care.txt"),
    ("en/lighthouses-edited-1.txt", "en/lighthouses.txt"),
    ("en/sourdough-loaf-recipe-rewrapped.txt", "en/sourdough-loaf-recipe.txt"),
}


def dedup(monkeypatch, *options: str) -> set[tuple[str, ...]]:
    monkeypatch.chdir(ROOT / "examples")
    result = CliRunner().invoke(cli, ["dedup", "--silent", *options, "en", "zh"])
    assert result.exit_code == 0, result.stderr
    return {tuple(m["id"] for m in json.loads(line)["members"]) for line in result.stdout.splitlines()}


def test_quick_start_finds_the_near_duplicates_among_the_documented_groups(monkeypatch):
    found = dedup(monkeypatch)
    assert found == DEFAULT_GROUPS
    texts = {p: (ROOT / "examples" / p).read_text(encoding="utf-8") for group in GROUPS for p in group}
    for group in found:
        assert all(resemblance(texts[a], texts[b]) >= 0.8 for a, b in itertools.combinations(group, 2))
    for group in GROUPS:  # a pair left apart is below 0.8, or its members are with closer ones
        for a, b in itertools.combinations(group, 2):
            together = any({a, b} <= set(g) for g in found)
            assert together or resemblance(texts[a], texts[b]) < 0.8 or any({a, b} & set(g) for g in found)


def test_edited_copies_are_found_on_their_words(monkeypatch):
    """All but the extended tea-making page, whose appended sentence leaves its word counts
    0.866 alike, below --min-similarity 0.88."""
    assert dedup(monkeypatch, "--similarity", "combined") == GROUPS - {
        ("zh/tea-making-extended.txt", "zh/tea-making.txt")
    }
