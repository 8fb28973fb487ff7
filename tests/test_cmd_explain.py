"""simdedup explain: why two documents are or are not near-duplicates."""

from __future__ import annotations

import json

from helpers import EXAMPLES, invoke


def test_explain_near_duplicates():
    result = invoke("explain", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/lighthouses-edited-1.txt")
    assert result.exit_code == 0, result.stderr
    assert "verdict (dedup): near-duplicates" in result.stdout
    assert "verdict (cluster, from the records): near-duplicates" in result.stdout
    assert "Hamming distance:" in result.stdout


def test_explain_json_lists_features_pushing_apart():
    result = invoke("explain", "--json", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/home-composting.txt")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["bag"] < 0.5 and data["resemblance"] < 0.1 and data["measure"] == "resemblance"
    assert data["apart_a"] and data["apart_b"] and data["together"]
    apart_a = {item["feature"] for item in data["apart_a"]}
    assert "light" in apart_a  # the lighthouse text's own words push it away from composting
    assert (
        invoke("explain", EXAMPLES / "en/lighthouses.txt", EXAMPLES / "en/home-composting.txt").stdout.count(
            "not near-duplicates"
        )
        == 2  # as dedup and as cluster decide
    )


def test_explain_bad_file(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = invoke("explain", empty, EXAMPLES / "en/lighthouses.txt")
    assert result.exit_code == 1
    assert "empty file" in result.stderr and "Traceback" not in result.stderr


def test_the_verdicts_are_what_dedup_and_cluster_do_with_the_defaults(tmp_path):
    """explain's verdicts agree with dedup and with fingerprint | cluster on the two files: a
    near copy, the same words reordered (its 3-grams differ), and a near copy with few distinct
    features (measured, exactly or from the sketches)."""
    words = [f"w{i % 40}" for i in range(300)]
    cases = {
        "near": (words, words[:150] + ["changed"] + words[151:]),
        "reordered": (words, sorted(words)),
        "short": ([f"w{i % 9}" for i in range(300)], [f"w{i % 9}" for i in range(299)] + ["w0"]),
    }
    for name, (a, b) in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.txt").write_text(" ".join(a))
        (tmp_path / name / "b.txt").write_text(" ".join(b))
        explained = invoke("explain", tmp_path / name / "a.txt", tmp_path / name / "b.txt").stdout
        deduped = invoke("dedup", tmp_path / name).stdout != ""
        records = invoke("fingerprint", tmp_path / name).stdout
        clustered = invoke("cluster", input=records).stdout != ""
        assert ("verdict (dedup): near-duplicates" in explained) == deduped == (name != "reordered"), name
        assert ("verdict (cluster, from the records): near-duplicates" in explained) == clustered == deduped, name


def test_a_raised_threshold_for_short_pairs_is_shown(tmp_path, monkeypatch):
    """With evidence asked of short pairs (similarity.EVIDENCE_GRAMS; 0 by default), explain says
    how far the threshold rose for a pair of few shingles, and dedup holds to it."""
    from simdedup import similarity

    a, b = [f"w{i % 9}" for i in range(30)], [f"w{i % 9}" for i in range(29)] + ["w0"]
    for name, text in (("a.txt", a), ("b.txt", b)):
        (tmp_path / name).write_text(" ".join(text))
    assert "gives less evidence" not in invoke("explain", tmp_path / "a.txt", tmp_path / "b.txt").stdout
    monkeypatch.setattr(similarity, "EVIDENCE_GRAMS", 8.0)
    explained = invoke("explain", tmp_path / "a.txt", tmp_path / "b.txt").stdout
    assert "gives less evidence" in explained
    near = "verdict (dedup): near-duplicates" in explained
    assert near == (invoke("dedup", tmp_path).stdout != "")


def test_rows_of_json_lines_are_explained_as_the_same_texts_in_files(tmp_path):
    """explain --documents finds A and B among the rows it reads (by FILE:LINE or --id-field)
    and says of them what it says of the same texts as files; an id it does not find is one line."""
    import json
    import random

    from click.testing import CliRunner

    from simdedup.cli import cli

    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(2000)]
    runner = CliRunner()
    rows = []
    for n in range(6):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(20, 200))]
        edited = [rng.choice(vocabulary) if rng.random() < 0.05 * n else w for w in words]
        rows += [" ".join(words), " ".join(edited)]
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps({"text": t, "url": f"u{i}"}) + "\n" for i, t in enumerate(rows)))
    for i, text in enumerate(rows):
        (tmp_path / f"{i}.txt").write_text(text)

    def said(*args: str) -> dict:
        done = runner.invoke(cli, ["explain", "--json", *args])
        assert done.exit_code == 0, done.stderr
        return {k: v for k, v in json.loads(done.stdout).items() if k not in ("a", "b")}

    for i in range(0, len(rows), 2):
        files = said(str(tmp_path / f"{i}.txt"), str(tmp_path / f"{i + 1}.txt"))
        assert said(f"{dump}:{i + 1}", f"{dump}:{i + 2}", "--documents", str(dump)) == files
        assert said(f"u{i}", f"u{i + 1}", "--documents", str(dump), "--id-field", "url") == files
    missing = runner.invoke(cli, ["explain", "u0", "u99", "--documents", str(dump), "--id-field", "url"])
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1 and "u99" in missing.stderr
