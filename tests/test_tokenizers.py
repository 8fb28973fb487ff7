"""Tokenizers and their registry."""

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdedup.tokenizers as registry
from simdedup.errors import MissingPackage, PluginError, TokenizerOptionError, UnknownTokenizerError
from simdedup.tokenizers import Tokenizer, available_tokenizers, get_tokenizer, register, unregister

ZH = (
    "城市公园是市民休闲的重要场所。公园里有湖泊、草坪和树林，每天清晨都有很多老人在这里锻炼身体。"
    "周末的时候，年轻的父母带着孩子来公园放风筝、野餐。公园管理处定期举办花展和音乐会，吸引了大量游客。"
)


def test_whitespace_counts_lowercased_tokens():
    tok = get_tokenizer("whitespace")
    assert tok.text_features("The cat\u3000saw THE\tdog\n") == {"the": 2, "cat": 1, "saw": 1, "dog": 1}


def test_shingles():
    tok = get_tokenizer("whitespace", shingle=2)
    assert tok.text_features("a b c a b") == {"a b": 2, "b c": 1, "c a": 1}
    assert get_tokenizer("whitespace", shingle=5).text_features("only three words") == {"only three words": 1}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", "z", "ü", "中"]), max_size=30), st.integers(1, 4), st.data())
def test_shingles_span_chunks(words, n, data):
    tok = get_tokenizer("whitespace", shingle=n)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(words)), max_size=4)))
    chunks, start = [], 0
    for cut in cuts + [len(words)]:
        chunks.append("".join(w + " " for w in words[start:cut]))
        start = cut
    assert tok.features(chunks) == tok.text_features(" ".join(words))


def test_options_are_checked():
    with pytest.raises(TokenizerOptionError, match="takes no option"):
        get_tokenizer("jieba", shingle=2)
    with pytest.raises(TokenizerOptionError, match="must be int"):
        get_tokenizer("whitespace", shingle="two")
    with pytest.raises(TokenizerOptionError):
        get_tokenizer("whitespace", shingle=0)
    assert get_tokenizer("whitespace", shingle="3").options == {"shingle": 3}


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownTokenizerError, match="available: .*jieba.*whitespace"):
        get_tokenizer("nope")


def test_jieba_equals_extract_tags():
    import jieba.analyse

    tok = get_tokenizer("jieba", topk=10)
    expected = dict(jieba.analyse.extract_tags(ZH, topK=10, withWeight=True))
    assert tok.text_features(ZH) == expected
    assert len(expected) == 10


def test_jieba_chunked_equals_whole():
    tok = get_tokenizer("jieba")
    text = (ZH + "\n") * 3 + "最后 一段 " + ZH
    chunks = [part + "\n" for part in text.split("\n")]
    assert tok.features(chunks) == tok.text_features("".join(chunks))


def test_jieba_weights_are_real_numbers():
    features = get_tokenizer("jieba").text_features(ZH * 50)
    # int(weight * 20) would zero these; the fingerprint must see them
    assert all(0 < w < 1 for w in features.values())


class Letters(Tokenizer):
    name = "letters"
    description = "one token per letter"

    def tokens(self, text):
        return [c for c in text if c.isalpha()]


def test_register_and_use_a_tokenizer():
    register(Letters)
    try:
        assert get_tokenizer("letters").text_features("abca") == {"a": 2, "b": 1, "c": 1}
        assert any(t["name"] == "letters" for t in available_tokenizers())
    finally:
        unregister("letters")
    with pytest.raises(UnknownTokenizerError):
        get_tokenizer("letters")


LETTERS_PLUGIN = """
from simdedup.tokenizers import Tokenizer


class Letters(Tokenizer):
    name = "letters"
    description = "one token per letter"

    def tokens(self, text):
        return [c for c in text if c.isalpha()]
"""


@pytest.fixture
def entry_points(tmp_path, monkeypatch):
    """Two plugins installed as an installer leaves them: a distribution whose entry_points.txt
    names a working tokenizer and one whose module is missing. The registry is read afresh."""
    (tmp_path / "letters_plugin.py").write_text(LETTERS_PLUGIN, encoding="utf-8")
    dist_info = tmp_path / "letters_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: letters-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\nletters = letters_plugin:Letters\nbroken = no_module_named_x:Broken\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "letters_plugin", raising=False)
    monkeypatch.setattr(registry, "_registry", None)  # the registry is read once per process
    yield
    registry._registry = None


def test_entry_point_plugins_load_like_builtins(entry_points, monkeypatch):
    monkeypatch.delenv("SIMDEDUP_LOAD_PLUGINS")
    assert get_tokenizer("letters").text_features("ab") == {"a": 1, "b": 1}
    listed = {t["name"]: t for t in available_tokenizers()}
    assert {"whitespace", "jieba", "letters", "broken"} <= set(listed)
    assert "error" in listed["broken"]  # a broken plugin is reported, the others still work
    with pytest.raises(PluginError, match="failed to load"):
        get_tokenizer("broken")


def test_load_plugins_variable_limits_plugins(entry_points, monkeypatch):
    monkeypatch.setenv("SIMDEDUP_LOAD_PLUGINS", "letters")
    names = {t["name"] for t in available_tokenizers()}
    assert "letters" in names and "broken" not in names


def test_tests_do_not_load_installed_plugins(entry_points):
    # conftest sets SIMDEDUP_LOAD_PLUGINS to empty
    assert {t["name"] for t in available_tokenizers()} == {"jieba", "jieba-fast", "simhash-pypi", "whitespace", "words"}


def test_jieba_fast_gives_jiebas_keywords():
    pytest.importorskip("rjieba")
    from pathlib import Path

    exact, fast = get_tokenizer("jieba"), get_tokenizer("jieba-fast")
    texts = [ZH, ZH * 7] + [
        p.read_text(encoding="utf-8") for p in sorted((Path(__file__).parents[1] / "examples/zh").glob("*.txt"))
    ]
    for text in texts:
        assert fast.text_features(text) == exact.text_features(text)


def test_jieba_fast_without_rjieba(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rjieba", None)
    with pytest.raises(MissingPackage, match=r"pip install 'simdedup\[zh-fast\]'"):
        get_tokenizer("jieba-fast").text_features(ZH)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["ab", "cd", "ef", "gh", "x", " y ", "The", "of", "中文", "中", "ij", "kl"]), max_size=40),
    st.integers(1, 6),
)
def test_keyword_scores_equal_jiebas_loop(words, topk):
    """Remembered per-word IDFs and numpy arithmetic give extract_tags's keywords, weights and
    tie order (several words share an IDF here, so ties are common)."""
    from collections import Counter

    from simdedup.tokenizers.jieba_tfidf import _KeywordScores

    idf = {"ab": 2.0, "cd": 2.0, "ef": 3.5, "gh": 0.5, "中文": 2.0}
    stop = frozenset({"the", "of"})
    freq: dict[str, float] = {}
    for word in words:  # jieba.analyse.tfidf.TFIDF.extract_tags
        if len(word.strip()) < 2 or word.lower() in stop:
            continue
        freq[word] = freq.get(word, 0.0) + 1.0
    total = sum(freq.values())
    expected = sorted(((w, c * (idf.get(w, 1.0) / total)) for w, c in freq.items()), key=lambda x: x[1], reverse=True)[
        :topk
    ]
    scores = _KeywordScores(idf, 1.0, stop)
    scores.top(Counter(["ab", "zz"]), 3)  # some words remembered from an earlier document
    assert list(scores.top(Counter(words), topk).items()) == expected
