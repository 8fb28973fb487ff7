"""The bundled examples: the quick start finds exactly the documented groups."""

from pathlib import Path

from click.testing import CliRunner

from simdedup.cli import cli

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {
    ("en/bicycle-chain-care-reposted.txt", "en/bicycle-chain-care.txt"),
    ("en/lighthouses-edited-1.txt", "en/lighthouses-edited-2.txt", "en/lighthouses.txt"),
    ("en/sourdough-loaf-recipe-rewrapped.txt", "en/sourdough-loaf-recipe.txt"),
    ("zh/city-park-copy.txt", "zh/city-park.txt"),
    ("zh/tea-making-extended.txt", "zh/tea-making.txt"),
}


def test_quick_start_finds_the_documented_groups(monkeypatch):
    import json

    monkeypatch.chdir(ROOT / "examples")
    result = CliRunner().invoke(cli, ["dedup", "--silent", "en", "zh"])
    assert result.exit_code == 0, result.stderr
    found = {tuple(m["id"] for m in json.loads(line)["members"]) for line in result.stdout.splitlines()}
    assert found == GROUPS
