"""simdedup tokenizers: the list of tokenizers and their options."""

from __future__ import annotations


def test_tokenizers_command(run):
    result = run(["tokenizers"])
    assert result.exit_code == 0, result.stderr
    infos = {info["name"]: info for info in result.records}
    assert {"whitespace", "jieba"} <= set(infos)
    assert infos["whitespace"]["options"] == {"shingle": 1}
    assert infos["jieba"]["options"] == {"topk": 20}
    assert all(info["description"] for info in infos.values() if "error" not in info)
