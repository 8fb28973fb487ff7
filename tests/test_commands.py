"""explain, stats and eval through the CLI."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def example_fingerprints(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp") / "fp.jsonl"
    result = invoke("fingerprint", "--silent", "-o", path, EXAMPLES / "en", EXAMPLES / "zh")
    assert result.exit_code == 0, result.stderr
    return path


def test_explain_near_duplicates():
    result = invoke("explain", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/lighthouses-edited-1.txt")
    assert result.exit_code == 0, result.stderr
    assert "verdict with default settings: near-duplicates" in result.stdout
    assert "Hamming distance:" in result.stdout


def test_explain_json_lists_features_pushing_apart():
    result = invoke("explain", "--json", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/home-composting.txt")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["similarity"] < 0.5
    assert data["apart_a"] and data["apart_b"] and data["together"]
    apart_a = {item["feature"] for item in data["apart_a"]}
    assert "light" in apart_a  # the lighthouse text's own words push it away from composting
    assert invoke("explain", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/home-composting.txt").stdout.count(
        "not near-duplicates") == 1


def test_explain_bad_file(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = invoke("explain", empty, EXAMPLES / "en/lighthouses.txt")
    assert result.exit_code == 1
    assert "empty file" in result.stderr and "Traceback" not in result.stderr


def test_stats_text_and_json(example_fingerprints):
    text = invoke("stats", example_fingerprints)
    assert text.exit_code == 0, text.stderr
    assert "nearest-neighbour Hamming distance" in text.stdout and "suggested k:" in text.stdout
    data = json.loads(invoke("stats", "--json", example_fingerprints).stdout)
    assert data["documents"] == 20
    assert sum(data["nearest"]) + data["beyond"] == 20
    assert dict(data["cluster_sizes"])["2"] == 4 and dict(data["cluster_sizes"])["3"] == 1
    assert 3 <= data["suggested_k"] <= 12
    # the tea-making pair is verified at distance 9: the suggestion keeps it
    assert data["suggested_k"] >= max(d for d, c in enumerate(data["verified_distances"]) if c)


def test_stats_plot_without_matplotlib(example_fingerprints, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    result = invoke("stats", "--plot", tmp_path / "p.png", example_fingerprints)
    assert result.exit_code == 1
    assert "matplotlib" in result.stderr and "pip install" in result.stderr
    assert not (tmp_path / "p.png").exists()


def test_stats_plot(example_fingerprints, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "p.png"
    assert invoke("stats", "--plot", out, example_fingerprints).exit_code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_command(tmp_path):
    clusters = tmp_path / "c.jsonl"
    clusters.write_text(json.dumps({"members": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}) + "\n")
    gold = tmp_path / "gold.tsv"
    gold.write_text("a\tb\nc\td\n")
    result = invoke("eval", "--gold", gold, clusters)
    assert result.exit_code == 0, result.stderr
    scores = json.loads(result.stdout)
    assert scores["true_pairs"] == 1 and scores["predicted_pairs"] == 3 and scores["gold_pairs"] == 2
    assert scores["precision"] == round(1 / 3, 4) and scores["recall"] == 0.5
    # clusters on stdin
    assert json.loads(invoke("eval", "--gold", gold, input=clusters.read_text()).stdout) == scores
    gold.write_text("a b c\n")
    bad = invoke("eval", "--gold", gold, clusters)
    assert bad.exit_code == 1 and f"{gold}:1" in bad.stderr
