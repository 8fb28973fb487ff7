"""The jieba tokenizer's kernels against jieba itself: ``jieba.cut`` word for word and
``jieba.analyse.extract_tags`` keyword for keyword and weight for weight (bit for bit), on real
Chinese text and on generated text; and its Python path (``SIMDEDUP_FASTPATH=0``, jieba cutting)
record for record."""

from __future__ import annotations

import logging
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup.kernels.jieba_cut import ALNUM, BLOCK, DIGIT, HMM_HAN, JiebaCutKernel, JiebaTables
from simdedup.tokenizers import get_tokenizer

pytest.importorskip("jieba")
import jieba  # noqa: E402
import jieba.analyse  # noqa: E402
import jieba.finalseg  # noqa: E402

jieba.setLogLevel(logging.ERROR)
needs_kernels = pytest.mark.skipif(JiebaCutKernel.loaded() is None, reason="the jieba kernels cannot load here")

# Real Chinese text: the bundled examples and the news of yanyiwu/simhash's tests.
REAL = sorted((REPO / "examples" / "zh").glob("*.txt")) + sorted((REPO / "tests/fixtures/yanyiwu").glob("news*"))
SHARED_ZH = REPO.parent / "shared" / "eval" / "dev-zh" / "docs"
CORPORA = REPO / "benchmarks" / ".corpus"
EVAL = REPO / "benchmarks" / ".eval"


def _dictionary_words(count: int) -> list[str]:
    """``count`` words of jieba's own dictionary, chosen by a seeded generator."""
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as lines:
        words = [line.split(" ", 1)[0] for line in lines]
    return random.Random(7).sample(words, count)


WORDS = _dictionary_words(3000)

# Pieces of text for every rule of jieba.cut: dictionary words whole and broken, runs of Han it
# does not know (its HMM), Han outside its range (U+9FD6 on, extension A, non-BMP), Latin and
# digits with the characters of its blocks (+#&._%-) and finalseg's numbers ("3.14", "50%"),
# white space of every kind ("\r\n" is one word), punctuation, full-width forms, emoji, lone
# surrogates (JSON lines can hold them) and any character at all.
PIECES = st.one_of(
    st.sampled_from(WORDS),
    st.tuples(st.sampled_from(WORDS), st.integers(0, 3), st.integers(1, 4)).map(lambda t: t[0][t[1] : t[1] + t[2]]),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=8),
    st.text(st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF), min_size=1, max_size=3),
    st.text(st.sampled_from(string.ascii_letters + string.digits + "+#&._%-"), min_size=1, max_size=10),
    st.sampled_from(["3.14", "50%", "1.5%", "v2.0", "C++", "AT&T", "a.b", "x-y", "1.", ".5", "T恤", "B超", "IC卡"]),
    st.sampled_from(
        [" ", "  ", "\t", "\n", "\r\n", "\r", "\r\r\n", "\u3000", "\xa0", "\u2003", "\x0b", "\x1c", "\x85"]
    ),
    st.text(st.sampled_from("，。！？、；：“”‘’（）《》【】…—·|"), min_size=1, max_size=3),
    st.text(st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E), min_size=1, max_size=4),
    st.sampled_from(["😀", "𠀀", "𠀁𠀂", "\U0002a6d6", "é", "ß", "Ω", "ä中", "ǅ"]),
    st.sampled_from(["\ud800", "\udfff", "\udc80中", "数\ud83d据"]),
    st.characters(),
)
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def _tags(text: str, topk: int) -> list[tuple[str, float]]:
    return jieba.analyse.extract_tags(text, topK=topk, withWeight=True)


@needs_kernels
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_words_are_jiebas(text):
    assert list(get_tokenizer("jieba").tokens(text)) == jieba.lcut(text)


@needs_kernels
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXTS, min_size=1, max_size=5), st.integers(1, 25))
def test_keywords_and_weights_are_extract_tags(texts, topk):
    """A batch of documents at once and each alone: the words, weights (==, bit for bit) and
    order of extract_tags, ties included."""
    tokenizer = get_tokenizer("jieba", topk=topk)
    expected = [_tags(text, topk) for text in texts]
    assert [list(found.items()) for found in tokenizer.features_many([[text] for text in texts])] == expected
    assert [list(tokenizer.text_features(text).items()) for text in texts] == expected


@needs_kernels
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXTS, min_size=1, max_size=4), st.integers(1, 25), st.integers(0, 40))
def test_recut_and_scale_are_the_articles_recipe(texts, topk, scale):
    """``recut``: extract_tags over the words of jieba.cut joined with "|"; ``scale``:
    int(weight * scale)."""
    tokenizer = get_tokenizer("jieba", topk=topk, recut=True, scale=scale)
    expected = []
    for text in texts:
        tags = _tags("|".join(jieba.cut(text)), topk)
        expected.append([(word, float(int(weight * scale))) for word, weight in tags] if scale else tags)
    assert [list(found.items()) for found in tokenizer.features_many([[text] for text in texts])] == expected


@pytest.fixture(scope="module")
def jiebas_own_path():
    """The jieba tokenizer on its Python path (jieba cutting), as ``SIMDEDUP_FASTPATH=0`` makes it."""

    def make(**options):
        os.environ["SIMDEDUP_FASTPATH"] = "0"
        try:
            tokenizer = get_tokenizer("jieba", **options)
            tokenizer.prepare()
        finally:
            del os.environ["SIMDEDUP_FASTPATH"]
        return tokenizer

    return make


@needs_kernels
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(TEXTS, min_size=1, max_size=4), min_size=1, max_size=4),
    st.booleans(),
    st.sampled_from([30, 1 << 20]),
    st.sampled_from([3, 1 << 19]),
)
def test_documents_in_chunks_are_counted_as_on_jiebas_path(
    jiebas_own_path, monkeypatch, documents, recut, held, counted
):
    """A document given in chunks (as long ones are read): each chunk cut alone, the counts
    summed over the document, as jieba's path does; documents over HELD_CHARS (here some of
    them) stream through the kernels in groups of chunks, their words counted a few at a time
    and the counts summed, instead of going to them whole."""
    from simdedup.tokenizers import jieba_tfidf

    monkeypatch.setattr(jieba_tfidf, "HELD_CHARS", held)
    monkeypatch.setattr(jieba_tfidf, "_COUNTED_WORDS", counted)
    expected = [jiebas_own_path(recut=recut).features(chunks) for chunks in documents]
    tokenizer = get_tokenizer("jieba", recut=recut)
    assert tokenizer.features_many(documents) == expected
    assert [tokenizer.features(chunks) for chunks in documents] == expected


@needs_kernels
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_chinese_text(path):
    text = path.read_text(encoding="utf-8")
    tokenizer = get_tokenizer("jieba")
    assert list(tokenizer.tokens(text)) == jieba.lcut(text)
    assert list(tokenizer.text_features(text).items()) == _tags(text, 20)
    recut = get_tokenizer("jieba", recut=True, topk=5)
    assert list(recut.text_features(text).items()) == _tags("|".join(jieba.cut(text)), 5)


@needs_kernels
def test_a_long_document_streams_past_the_kernels_batch(monkeypatch, jiebas_own_path):
    """Over HELD_CHARS the words are counted as the chunks stream: the same keywords."""
    from simdedup.tokenizers import jieba_tfidf

    text = "".join(path.read_text(encoding="utf-8") for path in REAL)
    chunks = [text[i : i + 997] for i in range(0, len(text), 997)]
    monkeypatch.setattr(jieba_tfidf, "HELD_CHARS", 5000)
    assert get_tokenizer("jieba").features(chunks) == jiebas_own_path().features(chunks)


def _documents(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@needs_kernels
@pytest.mark.slow
@pytest.mark.parametrize(
    "folder",
    [SHARED_ZH, CORPORA / "real-zh", CORPORA / "real-mixed", EVAL / "dev-zh-pkg/docs", EVAL / "dev-mixed-pkg/docs"],
    ids=["dev-zh", "real-zh", "real-mixed", "dev-zh-pkg", "dev-mixed-pkg"],
)
def test_every_document_of_the_chinese_corpora(folder):
    """Every document of ../shared's dev-zh, of make corpora's real-zh and real-mixed and of
    make eval-data's Chinese sets (each skipped when absent): words and keywords."""
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    tokenizer = get_tokenizer("jieba")
    texts = [path.read_text(encoding="utf-8", errors="surrogateescape") for path in _documents(folder)]
    different = [
        path for path, text in zip(_documents(folder), texts) if list(tokenizer.tokens(text)) != jieba.lcut(text)
    ]
    assert different == []
    found = tokenizer.features_many([[text] for text in texts])
    assert [path for path, f, text in zip(_documents(folder), found, texts) if list(f.items()) != _tags(text, 20)] == []


@needs_kernels
def test_a_sample_of_the_shared_chinese_dev_set():
    if not SHARED_ZH.is_dir():
        pytest.skip("../shared/eval/dev-zh is absent")
    paths = random.Random(3).sample(_documents(SHARED_ZH), 40)
    texts = [path.read_text(encoding="utf-8") for path in paths]
    found = get_tokenizer("jieba").features_many([[text] for text in texts])
    assert [list(f.items()) for f in found] == [_tags(text, 20) for text in texts]


def test_character_classes_are_those_of_jiebas_expressions():
    """Every code point, by another route than the tables' (fullmatch, one at a time)."""
    from simdedup.tokenizers.jieba_tfidf import _segment_tables

    tables = _segment_tables()
    assert tables is not None
    classes = tables.classes
    patterns = [
        (jieba.re_han_default, BLOCK),
        (jieba.finalseg.re_han, HMM_HAN),
        (jieba.finalseg.re_skip, ALNUM),
        (__import__("re").compile(r"\d"), DIGIT),
    ]
    for c in range(sys.maxunicode + 1):
        found = classes[c] if c < len(classes) else 0
        expected = sum(bit for pattern, bit in patterns if pattern.fullmatch(chr(c)))
        assert found == expected, hex(c)


def test_the_tables_hold_jiebas_dictionary():
    from simdedup.tokenizers.jieba_tfidf import _segment_tables

    tables = _segment_tables()
    jieba.dt.check_initialized()
    assert (tables.total, tables.entries) == (jieba.dt.total, len(jieba.dt.FREQ))
    assert JiebaTables.from_bytes(tables.to_bytes()).to_bytes() == tables.to_bytes()
    for damaged in (b"", b"{}\n", tables.to_bytes()[:-9], b"x" * 100):
        with pytest.raises(ValueError):
            JiebaTables.from_bytes(damaged)


def _python(code: str, **env: str) -> list[str]:
    environment = {**os.environ, "SIMDEDUP_LOAD_PLUGINS": "", **env}
    environment.pop("SIMDEDUP_FASTPATH", None) if "SIMDEDUP_FASTPATH" not in env else None
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, cwd=REPO, check=True
    )
    return done.stdout.split()


@needs_kernels
def test_the_kernels_need_neither_jieba_nor_numba_once_kept():
    get_tokenizer("jieba").text_features("中文分词的测试")  # compiled and kept by now
    text = "我们测试中文分词。"
    code = (
        "import sys; from simdedup.tokenizers import get_tokenizer; "
        f"t = get_tokenizer('jieba'); print('|'.join(t.features_many([[{text!r}]])[0]), "
        "'jieba' in sys.modules, 'numba' in sys.modules)"
    )
    assert _python(code) == ["|".join(word for word, _ in _tags(text, 20)), "False", "False"]


@needs_kernels
def test_a_user_dictionary_sends_the_work_to_jieba(tmp_path):
    """A process that changed jieba's dictionary gets jieba's words, not the shipped ones."""
    (tmp_path / "user.txt").write_text("测试分词 100000 n\n", encoding="utf-8")
    text = "我们测试分词的数据，测试分词的结果。" * 3
    code = (
        "import jieba, jieba.analyse, logging; jieba.setLogLevel(logging.ERROR); "
        f"jieba.load_userdict({str(tmp_path / 'user.txt')!r}); "
        "from simdedup.tokenizers import get_tokenizer; "
        f"t = get_tokenizer('jieba', topk=3); text = {text!r}; "
        "print(list(t.text_features(text).items()) == jieba.analyse.extract_tags(text, 3, withWeight=True), "
        "'测试分词' in t.text_features(text))"
    )
    assert _python(code) == ["True", "True"]


def test_without_the_kernels_jieba_does_the_work(jiebas_own_path):
    tokenizer = jiebas_own_path(topk=7)
    assert "jieba" in sys.modules
    for path in REAL[:3]:
        text = path.read_text(encoding="utf-8")
        assert list(tokenizer.text_features(text).items()) == _tags(text, 7)
        assert tokenizer.features_many([[text]]) == [dict(_tags(text, 7))]


@needs_kernels
@pytest.mark.parametrize(
    "options,jobs",
    [
        (["--tokenizer", "jieba"], ("1", "2")),
        (["--tokenizer", "jieba", "--topk", "5", "-O", "recut=true", "-O", "scale=7"], ("2",)),
        (["--compat", "jieba-article"], ("1",)),
        (["--compat", "yanyiwu"], ("1",)),
    ],
    ids=["jieba", "options", "jieba-article", "yanyiwu"],
)
def test_fingerprints_are_those_of_jiebas_path(tmp_path, options, jobs):
    """`simdedup fingerprint`: the records of the Python path (-j 1), byte for byte."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for path in REAL:
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "mixed.txt").write_text(
        "C++ 与 Python 3.14 的比较，50% 的人\r\n喜欢😀𠀀 ＡＢＣ１２３。", encoding="utf-8"
    )
    outputs = []
    for fast, job in [("0", "1"), *(("1", j) for j in jobs)]:
        out = tmp_path / f"{fast}-{job}.jsonl"
        command = [sys.executable, "-m", "simdedup", "fingerprint", "--silent", "-j", job, *options]
        environment = {**os.environ, "SIMDEDUP_FASTPATH": fast, "SIMDEDUP_LOAD_PLUGINS": ""}
        subprocess.run([*command, "-o", str(out), str(folder)], check=True, env=environment, cwd=REPO)
        outputs.append(out.read_bytes())
    assert outputs[0].count(b"\n") == len(REAL) + 1
    assert outputs[1:] == outputs[:1] * (len(outputs) - 1)


def test_the_tokenizer_list_says_jieba_is_exact():
    found = invoke("tokenizers")
    assert found.exit_code == 0
    assert "extract_tags exactly" in found.output
