"""simdedup eval: pairwise scores on small hand-made cases, and the command."""

import json

import pytest
from helpers import invoke

from simdedup.errors import RecordError
from simdedup.eval import read_cluster_members, read_gold_pairs, score_pairs


def test_perfect_and_empty():
    gold = {("a", "b"), ("a", "c"), ("b", "c")}
    s = score_pairs([["a", "b", "c"]], gold)
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)
    s = score_pairs([], gold)
    assert (s.precision, s.recall, s.f1, s.predicted_pairs) == (0.0, 0.0, 0.0, 0)
    assert score_pairs([], set()).f1 == 1.0


def test_hand_computed_case():
    # clusters {a,b,c} and {d,e}: 3 + 1 predicted pairs; gold a-b, d-e, c-f
    gold = {("a", "b"), ("d", "e"), ("c", "f")}
    s = score_pairs([["a", "b", "c"], ["d", "e"]], gold)
    assert s.true_pairs == 2 and s.predicted_pairs == 4 and s.gold_pairs == 3
    assert s.precision == 0.5 and s.recall == round(2 / 3, 4)
    assert s.f1 == round(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), 4)


def test_document_in_two_clusters_counts_once():
    s = score_pairs([["a", "b"], ["a", "c"]], {("a", "c")})
    assert s.predicted_pairs == 1 and s.true_pairs == 0


def test_gold_formats():
    lines = [
        '{"a": "x.txt", "b": "y.txt", "dup": true}',
        '{"a": "x.txt", "b": "z.txt", "dup": false}',
        "# a comment",
        "p\tq",
        "r s",
        "",
    ]
    assert read_gold_pairs(lines, "g") == {("x.txt", "y.txt"), ("p", "q"), ("r", "s")}
    assert read_gold_pairs(['{"a":"d/x.txt","b":"d/y.txt"}'], "g", "stem") == {("x", "y")}
    with pytest.raises(RecordError, match="g:2: expected two ids"):
        read_gold_pairs(["a b", "a b c"], "g")


def test_cluster_lines():
    lines = [json.dumps({"members": [{"id": "d/a.txt"}, {"id": "d/b.txt"}]}), '["c", "d"]']
    assert list(read_cluster_members(lines, "c", "stem")) == [["a", "b"], ["c", "d"]]
    with pytest.raises(RecordError, match="c:1"):
        list(read_cluster_members(["{not json"], "c"))


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


def test_a_missing_cluster_or_gold_file_is_one_line(tmp_path):
    """Opened where every record and cluster file is (``named_streams``): exit 1, one line (it was
    exit 70 for a missing CLUSTERS file)."""
    from click.testing import CliRunner

    from simdedup.cli import cli

    gold = tmp_path / "gold.tsv"
    gold.write_text("a b\n")
    clusters = tmp_path / "c.jsonl"
    clusters.write_text('{"members":[{"id":"a"},{"id":"b"}]}\n')
    for args in (["--gold", gold, tmp_path / "missing.jsonl"], ["--gold", tmp_path / "missing.tsv", clusters]):
        result = CliRunner().invoke(cli, ["eval", *map(str, args)])
        assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1, result.output
        assert "cannot read" in result.stderr
    assert CliRunner().invoke(cli, ["eval", "--gold", str(gold), str(clusters)]).exit_code == 0
