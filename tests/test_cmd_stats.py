"""simdedup stats: distance histogram, suggested k, plot."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import EXAMPLES, invoke


@pytest.fixture(scope="module")
def example_fingerprints(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp") / "fp.jsonl"
    result = invoke("fingerprint", "--silent", "-o", path, EXAMPLES / "en", EXAMPLES / "zh")
    assert result.exit_code == 0, result.stderr
    return path


def test_stats_text_and_json(example_fingerprints):
    text = invoke("stats", example_fingerprints)
    assert text.exit_code == 0, text.stderr
    assert "nearest-neighbour Hamming distance" in text.stdout and "suggested k:" in text.stdout
    data = json.loads(invoke("stats", "--json", example_fingerprints).stdout)
    assert data["documents"] == 20
    assert sum(data["nearest"]) + data["beyond"] == 20
    assert dict(data["cluster_sizes"])["2"] == 3 and dict(data["cluster_sizes"])["3"] == 0  # as cluster gives
    assert 3 <= data["suggested_k"] <= 12
    # the suggestion keeps the verified pairs
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
