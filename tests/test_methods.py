"""nilsimsa, longest sentences and the compatibility modes, checked against independent code."""

import glob
import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from simdedup.cli import cli
from simdedup.hashing import get_feature_hash, python_hashes
from simdedup.methods.nilsimsa import compare, nilsimsa_digest
from simdedup.methods.sentences import longest_sentences
from simdedup.simhash import Simhasher, simhash
from simdedup.tokenizers import get_tokenizer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# Real documents present on every machine that runs the tests: the standard library's sources.
STDLIB = sorted(glob.glob(str(Path(sys.modules["json"].__file__).parents[1] / "**" / "*.py"), recursive=True))[:300]


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


# --- nilsimsa -------------------------------------------------------------------------------

SPAM = (
    "Dear Friend, You have been selected to receive a FREE vacation package to the Bahamas! "
    "To claim your prize, simply reply to this message with your name, address and phone number "
    "before the end of the month. This offer is limited to the first 100 respondents, so act now. "
    "Our representatives are standing by to take your call. Remember: you must be 18 or older to "
    "qualify. Sincerely, The Holiday Rewards Team. To be removed from our list, reply REMOVE."
)
SPAM_VARIANT = (
    "Dear Friend, You have been chosen to receive a FREE vacation package to the Bahamas!! "
    "To claim your prize, simply reply to this email with your name, address and phone number "
    "before the end of the month. This offer is limited to the first 100 respondents, so act now. "
    "Our representatives are standing by to take your call. Remember: you must be 18 or older to "
    "qualify. Sincerely, The Holiday Rewards Team. To be removed from our list, reply REMOVE. ref 83721"
)


def test_nilsimsa_equals_the_pypi_package():
    nilsimsa = pytest.importorskip("nilsimsa")
    rng = random.Random(1)
    samples = [bytes(rng.randrange(256) for _ in range(n)) for n in (3, 4, 5, 6, 50, 4000)]
    samples += [Path(p).read_bytes()[:6000] for p in STDLIB[:60]]  # the package is slow pure Python
    for data in samples:
        expected = nilsimsa.Nilsimsa(data).hexdigest()
        assert nilsimsa_digest([data]).hex() == expected
        # fed in small pieces, as a long document is read
        assert nilsimsa_digest([data[i : i + 7] for i in range(0, len(data), 7)]).hex() == expected
    a, b = samples[-1], samples[-2]
    assert compare(nilsimsa_digest([a]), nilsimsa_digest([b])) == nilsimsa.compare_digests(
        nilsimsa.Nilsimsa(a).hexdigest(), nilsimsa.Nilsimsa(b).hexdigest()
    )


def test_spam_pair_scores_in_the_nineties():
    score = compare(nilsimsa_digest([SPAM.encode()]), nilsimsa_digest([SPAM_VARIANT.encode()]))
    assert 90 <= score <= 127
    unrelated = (EXAMPLES / "en/home-composting.txt").read_bytes()
    assert compare(nilsimsa_digest([SPAM.encode()]), nilsimsa_digest([unrelated])) < 40


def test_nilsimsa_cli_and_min_score(tmp_path):
    (tmp_path / "spam1.txt").write_text(SPAM)
    (tmp_path / "spam2.txt").write_text(SPAM_VARIANT)
    (tmp_path / "other.txt").write_bytes((EXAMPLES / "en/home-composting.txt").read_bytes())
    fp = invoke("fingerprint", "--silent", "--method", "nilsimsa", tmp_path)
    assert fp.exit_code == 0, fp.stderr
    records = [json.loads(line) for line in fp.stdout.splitlines()]
    assert all(r["method"] == "nilsimsa" and len(r["nilsimsa"]) == 64 for r in records)
    clusters = invoke("cluster", "--min-score", "90", input=fp.stdout)
    assert clusters.exit_code == 0, clusters.stderr
    (only,) = [json.loads(line) for line in clusters.stdout.splitlines()]
    assert [m["id"].rsplit("/", 1)[1] for m in only["members"]] == ["spam1.txt", "spam2.txt"]
    assert invoke("cluster", "--min-score", "128", input=fp.stdout).stdout == ""
    # --min-score is a nilsimsa option; simhash records refuse it
    simhash_fp = invoke("fingerprint", "--silent", tmp_path).stdout
    assert invoke("cluster", "--min-score", "90", input=simhash_fp).exit_code == 2


# --- longest sentences ----------------------------------------------------------------------


def test_longest_sentences_latin_and_chinese():
    text = "Short one. A much longer sentence than that! Medium sized one? 这是一个比较长的中文句子。短句。"
    count, longest = longest_sentences([text], 3)
    assert count == 5
    assert longest == sorted(["A much longer sentence than that!", "Medium sized one?", "这是一个比较长的中文句子。"])
    # chunked text (cut at whitespace) gives the same
    chunks = ["Short one. A much longer ", "sentence than that! Medium sized one? 这是一个比较长的中文句子。短句。"]
    assert longest_sentences(chunks, 3) == (count, longest)


def test_sentences_group_reposts_not_edits(tmp_path):
    body = (
        "First paragraph sentence number one is here. " * 1
        + "Second, a longer sentence that goes on and on about nothing. Third and final long sentence of the body text!"
    )
    (tmp_path / "a.txt").write_text(body)
    (tmp_path / "b.txt").write_text("Reposted.\n\n" + body + "\n\nFooter.")
    (tmp_path / "c.txt").write_text(body.replace("nothing", "something"))
    fp = invoke("fingerprint", "--silent", "--method", "sentences", tmp_path)
    assert fp.exit_code == 0, fp.stderr
    out = invoke("cluster", input=fp.stdout)
    groups = [[m["id"].rsplit("/", 1)[1] for m in json.loads(line)["members"]] for line in out.stdout.splitlines()]
    assert groups == [["a.txt", "b.txt"]]
    assert invoke("cluster", "-k", "2", input=fp.stdout).exit_code == 2


# --- compatibility --------------------------------------------------------------------------


def test_python_hashes_formula():
    # worked by hand from the formula: x = ord('a') << 7 = 12416; x = (12416 * 1000003) ^ 97; x ^= 1
    assert python_hashes("a", 64) == ((12416 * 1000003) ^ 97) ^ 1
    assert python_hashes("", 64) == 0
    assert python_hashes("hello" * 50, 64) < 2**64
    assert get_feature_hash("python-hashes", 128)("hello") == python_hashes("hello", 128)
    fp = Simhasher(64, "python-hashes")
    assert fp({"a": 1}).simhash == python_hashes("a", 64)


def test_simhash_pypi_mode_equals_the_package():
    package = pytest.importorskip("simhash")
    reference = package.Simhash.__new__(package.Simhash)
    reference.reg = r"[\w\u4e00-\u9fcc]+"
    tokenizer = get_tokenizer("simhash-pypi")
    docs = [Path(p).read_text(encoding="utf-8", errors="replace")[:20000] for p in STDLIB[:220]]
    docs += [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*/*.txt"))]
    docs += ["ab", "Hello, World"]
    assert len(docs) >= 200
    for bits in (64, 128):
        fingerprinter = Simhasher(bits, "md5")
        for text in docs:
            tokens = reference._tokenize(text)
            features = tokenizer.text_features(text)
            assert Counter(features) == Counter(tokens)
            # the package's token-list path (its text path crashes under numpy 2 on large counts)
            assert fingerprinter(features).simhash == package.Simhash(tokens, f=bits).value


def test_simhash_pypi_cli(tmp_path):
    (tmp_path / "a.txt").write_text("Hello, World! 你好世界")
    out = invoke("fingerprint", "--silent", "--tokenizer", "simhash-pypi", "--hash", "md5", tmp_path / "a.txt")
    record = json.loads(out.stdout)
    features = get_tokenizer("simhash-pypi").text_features("Hello, World! 你好世界")
    assert int(record["simhash"], 16) == simhash(features, 64, get_feature_hash("md5", 64))
    assert record["hash"] == "md5" and record["tokenizer"] == "simhash-pypi"
