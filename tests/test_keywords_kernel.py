"""The keyword kernel (jieba-fast's batches) against the Python scoring of extract_tags."""

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup.kernels import load
from simdedup.kernels.keywords import KeywordKernel
from simdedup.methods import Method, SimhashMethod
from simdedup.read import Source, open_documents
from simdedup.run import fingerprint_batch
from simdedup.tokenizers import get_tokenizer, jieba_tfidf

pytest.importorskip("rjieba")
needs_kernel = pytest.mark.skipif(KeywordKernel.loaded() is None, reason="numba or the XXH3 symbol is not available")

# Words jieba-rs makes of these pieces: known and unknown words, one-character words, stop
# words in any case, spaces that strip() removes (ASCII and not), 2-, 3- and 4-byte UTF-8,
# the KELVIN SIGN, which lower-cases to ASCII, and lone surrogates (JSON lines can hold them).
PIECES = [
    "中文",
    "测试",
    "数据",
    "的",
    "是",
    "我们",
    "分词",
    "鸡尾酒会",
    "The",
    "OF",
    "and",
    "And",
    "python",
    "Python",
    "K",
    "\u212a",
    "ok",
    " ",
    "\u3000",
    "\r\n",
    "\t",
    "\u2003",
    "。",
    "，",
    "2026",
    "3.14",
    "😀😀",
    "𠀀𠀁",
    "é",
    "ée",
    "a b",
    "  x  ",
    "K\u212a",
    "\ud800",
    "数\udfff据",
]


def _python_path(texts):
    tokenizer = get_tokenizer("jieba-fast")
    tokenizer.prepare()
    return [tokenizer.features([text]) for text in texts]  # _KeywordScores: the Python scoring


@needs_kernel
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), min_size=1, max_size=6),
    st.integers(1, 8),
    st.sampled_from([40, 1 << 20]),
)
def test_kernel_keywords_equal_the_python_scoring(monkeypatch, texts, topk, held):
    """Same keywords, same weights (bit for bit), same order, ties included; documents over
    HELD_CHARS (here some of them) counted in Python as they stream."""
    monkeypatch.setattr(jieba_tfidf, "HELD_CHARS", held)
    tokenizer = get_tokenizer("jieba-fast", topk=topk)
    python = get_tokenizer("jieba-fast", topk=topk)
    python.prepare()
    expected = [list(python.features([text]).items()) for text in texts]
    assert [list(f.items()) for f in tokenizer.features_many([[text] for text in texts])] == expected


@needs_kernel
def test_kernel_keywords_on_the_bundled_chinese_text():
    from pathlib import Path

    texts = [p.read_text(encoding="utf-8") for p in sorted((Path(__file__).parents[1] / "examples/zh").glob("*.txt"))]
    tokenizer = get_tokenizer("jieba-fast")
    assert tokenizer.features_many([[t] for t in texts]) == _python_path(texts)
    assert tokenizer.features_many([[t[: len(t) // 2], t[len(t) // 2 :]] for t in texts]) == [
        tokenizer.features([t[: len(t) // 2], t[len(t) // 2 :]]) for t in texts
    ]


def test_spaces_are_what_strip_removes():
    assert set(jieba_tfidf._SPACES) == {c for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert all(chr(c).strip() == "" for c in jieba_tfidf._SPACES)


def test_only_the_kelvin_sign_lower_cases_to_ascii():
    """The kernel takes non-ASCII words for never being stop words (no stop word has a "k")."""
    assert [c for c in range(0x80, sys.maxunicode + 1) if chr(c).lower().isascii()] == [0x212A]


@needs_kernel
def test_the_keyword_table_holds_jiebas_idf():
    rules = jieba_tfidf._keyword_rules()
    idf = jieba_tfidf._jieba_idf()
    assert rules.median == idf.median_idf
    import numpy as np

    assert np.count_nonzero(rules.keys) == len(idf.idf_freq)


def test_without_the_kernel_batches_take_the_python_scoring(monkeypatch):
    monkeypatch.setitem(load._loaded, KeywordKernel, False)
    tokenizer = get_tokenizer("jieba-fast")
    texts = ["我们测试中文分词的数据。" * 3, "  ", "The python 测试数据"]
    assert tokenizer.features_many([[t] for t in texts]) == _python_path(texts)


@needs_kernel
def test_pipeline_batches_equal_one_document_at_a_time(tmp_path, monkeypatch):
    """Files, texts, skipped files and a file too large for a batch: the same records and
    reasons as the one-document path."""
    (tmp_path / "a.txt").write_text("我们测试中文分词的数据。" * 20, encoding="utf-8")
    (tmp_path / "b.txt").write_text("", encoding="utf-8")
    (tmp_path / "c.txt").write_bytes(b"\0\1binary")
    (tmp_path / "d.txt").write_text("。。。 \n", encoding="utf-8")
    (tmp_path / "e.txt").write_bytes("数据分词".encode("gb18030") * 50)
    (tmp_path / "f.txt").write_text("鸡尾酒会 我们" * 300, encoding="utf-8")
    for i in range(12):  # more than one group of 4 * TOGETHER_BYTES
        (tmp_path / f"g{i:02d}.txt").write_text("数据分词测试" * (100 + 20 * i), encoding="utf-8")
    monkeypatch.setattr("simdedup.methods.simhash.TOGETHER_BYTES", 2000)  # f.txt streams
    sources = [Source(str(p)) for p in sorted(tmp_path.iterdir())] + [
        Source("t1", text="数据 测试 数据"),
        Source("missing", reason="gone"),
    ]
    for encoding in ("utf-8", "auto"):
        fingerprinter = SimhashMethod(get_tokenizer("jieba-fast"), encoding=encoding)
        together = fingerprint_batch(sources, fingerprinter).results
        alone = Method.fingerprint_batch(
            fingerprinter, open_documents(sources, fingerprinter.encoding)
        )  # streamed, one at a time
        assert [getattr(r, "reason", None) or (r.to_json(), r.encoding) for r in together] == [
            getattr(r, "reason", None) or (r.to_json(), r.encoding) for r in alone
        ]
        assert sum(isinstance(r, Source) for r in together) >= 3


@needs_kernel
def test_cached_keyword_kernel_loads_without_numba():
    import subprocess

    KeywordKernel.loaded()  # compiled and kept by now
    code = (
        "import sys; from simdedup.kernels.keywords import KeywordKernel; "
        "print(KeywordKernel.loaded() is not None, 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_a_prepared_tokenizer_pickles_and_loads_again():
    import pickle

    tokenizer = get_tokenizer("jieba-fast", topk=5)
    text = "我们测试中文分词的数据。鸡尾酒会"
    before = tokenizer.features_many([[text]])
    copy = pickle.loads(pickle.dumps(tokenizer))
    assert copy.options == {"topk": 5}
    assert copy.features_many([[text]]) == before


def test_lone_surrogates_are_words_of_their_own_as_in_jieba():
    """rjieba cannot take them; jieba makes each a one-character word and a boundary."""
    text = "a\ud800中文测试\ud800数据 the 分词\udfff"
    exact, fast = get_tokenizer("jieba"), get_tokenizer("jieba-fast")
    assert list(fast.tokens(text)) == list(exact.tokens(text))
    assert fast.features_many([[text]]) == [exact.text_features(text)]
