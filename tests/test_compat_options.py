"""The options that reproduce other tools: ties, case, given features, --compat presets, the
jenkins hash, and nilsimsa's short inputs, whole score range and explanation."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.hashing import get_feature_hash
from simdedup.simhash import Simhasher, simhash

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def invoke(*args, input=None, env=None):
    return CliRunner(env=env).invoke(cli, [str(a) for a in args], input=input)


def records(result) -> list[dict]:
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def md5_64(token: str) -> int:
    """The md5 feature hash, written out: the last 8 bytes of the digest, big-endian."""
    return int.from_bytes(hashlib.md5(token.encode("utf-8")).digest()[-8:], "big")


def votes_simhash(weights: dict[str, float], hashfunc, ties_set: bool, bits: int = 64) -> int:
    """Charikar's simhash by the definition: per bit, the weights for minus the weights against."""
    fingerprint = 0
    for i in range(bits):
        balance = sum(w if hashfunc(f) >> i & 1 else -w for f, w in weights.items())
        if balance > 0 or (ties_set and balance == 0):
            fingerprint |= 1 << i
    return fingerprint


def write_jsonl(path: Path, values: list, field: str = "f") -> Path:
    path.write_text("".join(json.dumps({field: v}) + "\n" for v in values), encoding="utf-8")
    return path


# --- ties --------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=6), st.integers(0, 4), max_size=8), st.sampled_from(["zero", "one"])
)
def test_ties_follow_the_definition(features, ties):
    hashfunc = get_feature_hash("md5", 64)
    expected = votes_simhash(features, hashfunc, ties == "one")
    assert simhash(features, 64, hashfunc, ties) == expected
    fingerprinter = Simhasher(64, "md5", ties=ties, sketch_bins=128)
    assert fingerprinter(features).simhash == expected
    # many documents at once: the same sums
    many = fingerprinter.many([features, {"x": 1}, features])
    assert [f.simhash for f in many] == [expected, fingerprinter({"x": 1}).simhash, expected]


def test_ties_option_through_the_cli(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [["alpha", "beta"]])
    (zero,) = records(invoke("fingerprint", "--silent", "--hash", "md5", "--features-field", "f", path))
    (one,) = records(invoke("fingerprint", "--silent", "--hash", "md5", "--features-field", "f", "--ties", "one", path))
    # two features of weight 1: a bit ties where their hashes differ
    assert int(zero["simhash"], 16) == md5_64("alpha") & md5_64("beta")
    assert int(one["simhash"], 16) == md5_64("alpha") | md5_64("beta")
    assert "ties" not in zero and one["ties"] == "one"


def test_records_that_differ_in_ties_do_not_mix(tmp_path):
    (tmp_path / "a.txt").write_text("one two three four five six seven eight nine ten eleven")
    (tmp_path / "b.txt").write_text("one two three four five six seven eight nine ten twelve")
    zero = invoke("fingerprint", "--silent", tmp_path / "a.txt").stdout
    one = invoke("fingerprint", "--silent", "--ties", "one", tmp_path / "b.txt").stdout
    mixed = invoke("cluster", input=zero + one)
    assert mixed.exit_code == 1
    assert re.search(r"<stdin>:2: .*ties give 1", mixed.stderr)
    # "ties":"zero" written out is the default: compatible with a record that omits it
    explicit = zero.replace('"weighting":', '"ties":"zero","weighting":')
    assert invoke("cluster", input=zero + explicit.replace("a.txt", "c.txt")).exit_code == 0
    bad = invoke("cluster", input=zero.replace('"weighting":', '"ties":"half","weighting":'))
    assert bad.exit_code == 1 and "<stdin>:1: field 'ties'" in bad.stderr
    # the binary form keeps the setting
    assert (
        invoke(
            "fingerprint",
            "--silent",
            "--ties",
            "one",
            "--format",
            "binary",
            "-o",
            tmp_path / "b.sdfp",
            tmp_path / "b.txt",
        ).exit_code
        == 0
    )
    assert invoke("convert", "--to", "jsonl", tmp_path / "b.sdfp").stdout == one


# --- case ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tokenizer", ["words", "whitespace"])
def test_lowercase_option(tmp_path, tokenizer):
    (tmp_path / "a.txt").write_text("Apple apple APPLE pie")
    (default,) = records(invoke("fingerprint", "--silent", "--tokenizer", tokenizer, tmp_path / "a.txt"))
    (kept,) = records(
        invoke("fingerprint", "--silent", "--tokenizer", tokenizer, "-O", "lowercase=false", tmp_path / "a.txt")
    )
    (same,) = records(
        invoke("fingerprint", "--silent", "--tokenizer", tokenizer, "-O", "lowercase=yes", tmp_path / "a.txt")
    )
    assert (default["features"], kept["features"]) == (2, 4)
    assert default["options"] == {"shingle": 1} and kept["options"] == {"lowercase": False, "shingle": 1}
    assert same == default  # the default, given: recorded as before
    assert invoke("fingerprint", "-O", "lowercase=maybe", tmp_path / "a.txt").exit_code == 2


@pytest.mark.parametrize(
    "options", [["-O", "lowercase=false"], ["--ties", "one"], ["--tokenizer", "whitespace", "-O", "lowercase=false"]]
)
def test_options_the_kernel_lacks_give_what_the_python_path_gives(tmp_path, options):
    """Over half a megabyte of ASCII, enough for the compiled kernel to load, which knows neither
    option: the output must equal the Python path's, and the definition's."""
    words = ["Alpha", "alpha", "Beta", "beta", "GAMMA", "gamma", "delta", "Delta", "x", "y"]
    for number in range(40):
        text = " ".join(words[(number * 7 + i * i) % len(words)] + str(i % (number + 3)) for i in range(2000))
        (tmp_path / f"{number:02d}.txt").write_text(text)
    args = ["fingerprint", "--silent", "-j", "1", *options, tmp_path]
    python = invoke(*args, env={"SIMDEDUP_FASTPATH": "0"})
    default = invoke(*args)
    assert python.exit_code == 0 and default.stdout == python.stdout
    record = json.loads(default.stdout.splitlines()[0])
    text = (tmp_path / "00.txt").read_text()
    tokens = re.findall(r"\w+", text) if record["tokenizer"] == "words" else text.split()
    if record["options"].get("lowercase", True):
        tokens = [t.lower() for t in tokens]
    weights = dict.fromkeys(tokens, 1) if record["weighting"] == "binary" else Counter(tokens)
    assert int(record["simhash"], 16) == votes_simhash(
        weights, get_feature_hash("xxh3", 64), record.get("ties") == "one"
    )


# --- given features ------------------------------------------------------------------------------


def test_features_field_forms_agree(tmp_path):
    forms = [
        ["a", "b", "a"],
        [["a", 2], ["b", 1]],
        {"a": 2, "b": 1},
        [["a", "1"], "a", ["b", "1.0"]],
        {"a": "2", "b": 1},
    ]
    path = write_jsonl(tmp_path / "f.jsonl", forms)
    found = records(invoke("fingerprint", "--silent", "--hash", "md5", "--features-field", "f", path))
    expected = votes_simhash({"a": 2, "b": 1}, md5_64, False)
    assert [int(r["simhash"], 16) for r in found] == [expected] * len(forms)
    assert {r["tokenizer"] for r in found} == {"given"} and {json.dumps(r["options"]) for r in found} == {"{}"}
    assert all("bytes" not in r and r["features"] == 2 for r in found)
    assert len({r["sketch"] for r in found}) == 1


def test_bad_features_are_skipped_with_file_and_line(tmp_path):
    lines = [
        {"id": "ok", "f": ["x", "y"]},
        {"id": "neg", "f": [["x", -1]]},
        {"id": "word", "f": [["x", "many"]]},
        {"id": "nan", "f": {"x": "nan"}},
        {"id": "bool", "f": [["x", True]]},
        {"id": "null", "f": {"x": None}},
        {"id": "nested", "f": [["x", 1, 2]]},
        {"id": "text", "f": "x y"},
        {"id": "empty", "f": []},
        {"id": "none"},
        {"id": "huge", "f": [["x", 2**40]]},
        {"id": "ok2", "f": {"y": 1.5}},
    ]
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    result = invoke(
        "fingerprint", "--silent", "-v", "--features-field", "f", "--id-field", "id", path
    )  # -v: every warning
    assert result.exit_code == 3
    assert [r["id"] for r in records_of(result)] == ["ok", "ok2"]
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    expected_lines = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]
    assert [
        int(re.search(rf"{re.escape(str(path))}:(\d+)[: ]", w).group(1)) for w in warnings if str(path) in w
    ] == expected_lines
    # a line that parses but holds no feature is named by its line and its id
    assert f"simdedup: warning: {path}:9 (id empty): no features (an empty list or object)" in warnings
    assert "the weight of 'x' is not a number: 'many'" in result.stderr
    assert "the weight of 'x' must be a number from 0 to 2**38, not -1" in result.stderr


def test_heavy_given_weights_are_sketched_as_a_set(tmp_path):
    """A weight is a multiplicity for the sketch only up to a sum of 2**26 (the sketch draws an
    element per unit): beyond, the sketch is the plain set's, and the simhash still weighs."""
    path = write_jsonl(tmp_path / "f.jsonl", [[["a", 2**27], ["b", 1]], [["a", 1], ["b", 1]], [["a", 2], ["b", 1]]])
    heavy, plain, light = records(invoke("fingerprint", "--silent", "--hash", "md5", "--features-field", "f", path))
    assert heavy["sketch"] == plain["sketch"] != light["sketch"]
    assert int(heavy["simhash"], 16) == md5_64("a")


def records_of(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_features_field_needs_json_lines_and_no_tokenizer(tmp_path):
    (tmp_path / "a.txt").write_text("plain text")
    result = invoke("fingerprint", "--silent", "--features-field", "f", tmp_path / "a.txt")
    assert result.exit_code == 3 and "--features-field reads features from JSON lines" in result.stderr
    path = write_jsonl(tmp_path / "f.jsonl", [["a"]])
    for option in (["--tokenizer", "whitespace"], ["--shingle", "2"], ["-O", "lowercase=false"], ["--html"]):
        refused = invoke("fingerprint", "--features-field", "f", *option, path)
        assert refused.exit_code == 2 and "does not apply" in refused.stderr
    assert invoke("fingerprint", "--method", "nilsimsa", "--features-field", "f", path).exit_code == 2
    assert invoke("fingerprint", "--text-field", "t", "--features-field", "f", path).exit_code == 2


def test_features_field_on_several_processes_and_in_dedup(tmp_path):
    for number in range(12):
        write_jsonl(
            tmp_path / f"{number:02d}.jsonl",
            [{"k": [f"w{i}" for i in range(number, number + 30)]}, {"k": [["w1", "bad"]]}],
        )
    one = invoke("fingerprint", "--silent", "-j", "1", "--features-field", "f.k", tmp_path)
    two = invoke("fingerprint", "--silent", "-j", "2", "--features-field", "f.k", tmp_path)
    assert one.exit_code == two.exit_code == 3 and one.stdout == two.stdout and len(one.stdout.splitlines()) == 12
    kept = tmp_path / "kept.jsonl"
    dedup = invoke("dedup", "--silent", "--features-field", "f.k", "--unique-out", kept, tmp_path)
    assert dedup.exit_code == 3
    assert len(kept.read_text().splitlines()) == 12 - sum(
        json.loads(line)["size"] - 1 for line in dedup.stdout.splitlines()
    )


# --- presets -------------------------------------------------------------------------------------


def readme_presets() -> dict[str, list[str]]:
    """The README's table of what each --compat preset sets."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `--compat ([\w-]+)` \| `([^`]+)` \|", text, re.M)
    return {name: options.split() for name, options in rows}


def test_readme_lists_what_each_preset_sets(tmp_path):
    presets = readme_presets()
    assert set(presets) == {"python-hashes", "jieba-article", "pypi-simhash", "yanyiwu"}
    documents = [EXAMPLES / "en" / "lighthouses.txt", EXAMPLES / "zh" / "tea-making.txt"]
    for name, options in presets.items():
        with_preset = invoke("fingerprint", "--silent", "--compat", name, *documents)
        spelled_out = invoke("fingerprint", "--silent", *options, *documents)
        assert with_preset.exit_code == 0, with_preset.stderr
        assert with_preset.stdout == spelled_out.stdout, name


def test_presets_refuse_options_that_disagree(tmp_path):
    path = EXAMPLES / "en" / "lighthouses.txt"
    for args, message in [
        (["--compat", "python-hashes", "--hash", "xxh3"], "sets --hash python-hashes"),
        (["--compat", "python-hashes", "--ties", "zero"], "sets --ties one"),
        (["--compat", "yanyiwu", "--bits", "128"], "sets --bits 64"),
        (["--compat", "jieba-article", "-O", "scale=10"], "reproduces its tool with scale=20"),
        (["--compat", "pypi-simhash", "--method", "nilsimsa"], "takes no --method"),
    ]:
        result = invoke("fingerprint", *args, path)
        assert result.exit_code == 2 and message in result.stderr, args
    # options that agree, or that the tool takes as an argument (yanyiwu's topN), are fine
    assert (
        invoke("fingerprint", "--silent", "--compat", "python-hashes", "--hash", "python-hashes", path).exit_code == 0
    )
    topk = records(invoke("fingerprint", "--silent", "--compat", "yanyiwu", "--topk", "50", path))
    assert topk[0]["options"]["topk"] == 50
    # with given features the tokenizer part drops out
    features = write_jsonl(tmp_path / "f.jsonl", [[["x", 1], ["y", 2]]])
    (record,) = records(invoke("fingerprint", "--silent", "--compat", "yanyiwu", "--features-field", "f", features))
    assert (record["tokenizer"], record["hash"], record["bits"]) == ("given", "jenkins", 64)


#: spellings of a value as the tokenizers read them
_SPELLINGS = {
    True: ["true", "yes", "on", "1", "TRUE", " Yes "],
    False: ["false", "no", "off", "0", "False", " NO "],
}


def _spellings(value, draw) -> tuple[str, bool]:
    """A spelling of ``value`` or of another value, and whether it is ``value``."""
    if isinstance(value, bool):
        same = draw(st.booleans())
        return draw(st.sampled_from(_SPELLINGS[value if same else not value])), same
    other = draw(st.integers(1, 6))
    return draw(st.sampled_from([str(other), f" {other}"])), other == value


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_an_option_beside_a_preset_is_taken_when_it_agrees_and_refused_when_not(data):
    """Issue 42, item 7: each preset's tokenizer options (its own and the tokenizer's defaults,
    --shingle included), given in any spelling the tokenizer reads: agreeing is the preset's
    fingerprint, disagreeing is refused in one line (``-O lowercase=no`` was refused beside a
    preset setting it false; ``--shingle 3`` and ``-O width=3`` were taken silently)."""
    from simdedup.compat import ADJUSTABLE, PRESETS
    from simdedup.tokenizers import tokenizer_class

    name = data.draw(st.sampled_from(sorted(n for n in PRESETS if PRESETS[n]["tokenizer_name"] != "jieba")))
    preset = PRESETS[name]
    cls = tokenizer_class(preset["tokenizer_name"])
    fixed = cls(**dict(item.split("=", 1) for item in preset.get("tokenizer_options", ())))
    key = data.draw(st.sampled_from(sorted(k for k in {**cls.defaults, **cls.optional} if k not in ADJUSTABLE)))
    spelled, same = _spellings(fixed.option(key), data.draw)
    option = data.draw(st.sampled_from(["-O", "--shingle"] if key == "shingle" else ["-O"]))
    given_option = [option, spelled.strip()] if option == "--shingle" else [option, f"{key}={spelled}"]
    if option == "--shingle" and not spelled.strip().isdigit():
        return
    path = EXAMPLES / "en" / "lighthouses.txt"
    alone = invoke("fingerprint", "--silent", "--compat", name, path)
    beside = invoke("fingerprint", "--silent", "--compat", name, *given_option, path)
    if same:
        assert beside.exit_code == 0, beside.stderr
        assert json.loads(beside.stdout)["simhash"] == json.loads(alone.stdout)["simhash"]
    else:
        assert beside.exit_code == 2 and beside.stdout == "", (given_option, beside.output)
        assert len(beside.stderr.strip().splitlines()) == 1 and f"--compat {name}" in beside.stderr


def test_two_presets_are_refused_and_one_twice_is_one():
    path = EXAMPLES / "en" / "lighthouses.txt"
    refused = invoke("fingerprint", "--compat", "python-hashes", "--compat", "pypi-simhash", path)
    assert refused.exit_code == 2 and "--compat takes one preset" in refused.stderr
    twice = invoke("fingerprint", "--silent", "--compat", "yanyiwu", "--compat", "yanyiwu", path)
    assert twice.stdout == invoke("fingerprint", "--silent", "--compat", "yanyiwu", path).stdout


def article_code(text: str) -> int:
    """The jieba article's simhash (widely copied, e.g. in shibing624/similarities
    similarities/literalsim.py), as the issue describes it: extract_tags top 20 over the words of
    jieba.cut joined with "|", weights int(weight * 20), python-hashes' string hash under a
    128-bit mask cut to its low 64 bits, a bit set when its sum is above 0."""
    import jieba
    import jieba.analyse

    def string_hash(source: str) -> str:
        x = ord(source[0]) << 7
        for c in source:
            x = ((x * 1000003) ^ ord(c)) & (2**128 - 1)
        x ^= len(source)
        return bin(x).replace("0b", "").zfill(64)[-64:]

    keywords = jieba.analyse.extract_tags("|".join(jieba.cut(text)), topK=20, withWeight=True, allowPOS=())
    sums = [0] * 64
    for feature, weight in keywords:
        weight = int(weight * 20)
        for i, bit in enumerate(string_hash(feature)):
            sums[i] += weight if bit == "1" else -weight
    return int("".join("1" if s > 0 else "0" for s in sums), 2)


def test_jieba_article_preset_gives_the_articles_fingerprints():
    pytest.importorskip("jieba")
    documents = sorted((EXAMPLES / "zh").glob("*.txt")) + sorted(
        (REPO / "tests" / "fixtures" / "yanyiwu").glob("news*")
    )
    found = records(invoke("fingerprint", "--silent", "--compat", "jieba-article", *documents))
    assert [int(r["simhash"], 16) for r in found] == [article_code(p.read_text(encoding="utf-8")) for p in documents]
    assert found[0]["options"] == {"recut": True, "scale": 20, "topk": 20}


def test_jieba_article_options_on_jieba_fast():
    pytest.importorskip("rjieba")
    documents = sorted((EXAMPLES / "zh").glob("*.txt"))
    exact = invoke("fingerprint", "--silent", "--compat", "jieba-article", *documents)
    fast = invoke("fingerprint", "--silent", "--compat", "jieba-article", "--tokenizer", "jieba-fast", *documents)
    assert fast.exit_code == 2  # the preset names its tokenizer
    fast = invoke(
        "fingerprint",
        "--silent",
        "--tokenizer",
        "jieba-fast",
        "-O",
        "recut=true",
        "-O",
        "scale=20",
        "--hash",
        "python-hashes",
        "--weighting",
        "feature",
        *documents,
    )
    assert fast.stdout == exact.stdout.replace('"tokenizer":"jieba"', '"tokenizer":"jieba-fast"')


# --- nilsimsa --------------------------------------------------------------------------------


def test_nilsimsa_short_inputs_have_the_references_digest(tmp_path):
    nilsimsa = pytest.importorskip("nilsimsa")
    texts = [b"", b"a", b"ab", b"abc", b"\xc3\xa9"]
    for number, data in enumerate(texts):
        (tmp_path / f"{number}.txt").write_bytes(data)
    write_jsonl(tmp_path / "t.jsonl", ["", "a", "ab"], "text")
    result = invoke("fingerprint", "--silent", "--method", "nilsimsa", tmp_path)
    assert result.exit_code == 0 and result.stderr == ""
    digests = {r["id"].rsplit("/", 1)[1]: r["nilsimsa"] for r in records(result)}
    expected = {f"{n}.txt": nilsimsa.Nilsimsa(data).hexdigest() for n, data in enumerate(texts)}
    expected.update({f"t.jsonl:{n + 1}": nilsimsa.Nilsimsa(t).hexdigest() for n, t in enumerate([b"", b"a", b"ab"])})
    assert digests == expected
    assert digests["1.txt"] == "0" * 64


def test_min_score_covers_the_whole_scale(tmp_path):
    """For every score of -128..128, cluster --min-score S --linkage single groups exactly the
    documents joined by pairs scoring S or more (brute force here)."""
    texts = [
        "a",
        "ab",
        "The quick brown fox",
        "The quicker brown fox",
        "abcdefghijklmnopqrstuvwxyz",
        "1",
        "Hello nilsimsa!",
        "Hello world!",
        (EXAMPLES / "en" / "home-composting.txt").read_text(),
    ]
    for number, text in enumerate(texts):
        (tmp_path / f"{number}.txt").write_text(text)
    fingerprinted = invoke("fingerprint", "--silent", "--method", "nilsimsa", tmp_path)
    digests = {r["id"]: int(r["nilsimsa"], 16) for r in records(fingerprinted)}
    ids = sorted(digests)
    scores = {(a, b): 128 - (digests[a] ^ digests[b]).bit_count() for a in ids for b in ids if a < b}
    assert min(scores.values()) < 0 < max(scores.values())
    for threshold in sorted({-128, -127, -20, -1, 0, 1, 50, 90, 127, 128, *scores.values()}):
        groups = {i: {i} for i in ids}
        for (a, b), score in scores.items():
            if score >= threshold and groups[a] is not groups[b]:
                merged = groups[a] | groups[b]
                for member in merged:
                    groups[member] = merged
        expected = sorted(sorted(g) for g in {id(g): g for g in groups.values()}.values() if len(g) > 1)
        clustered = invoke("cluster", "--min-score", threshold, "--linkage", "single", input=fingerprinted.stdout)
        assert clustered.exit_code == 0, clustered.stderr
        found = sorted(sorted(m["id"] for m in c["members"]) for c in records(clustered))
        assert found == expected, threshold
    assert invoke("cluster", "--min-score", "129", input=fingerprinted.stdout).exit_code == 2


def test_explain_nilsimsa(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("The quick brown fox")
    b.write_text("The quicker brown fox")
    text = invoke("explain", "--method", "nilsimsa", a, b)
    assert text.exit_code == 0
    assert "nilsimsa score: 91 on the -128..128 scale (37 of 256 bits differ" in text.stdout
    assert "0a31b4be01a0808a29e0ec60e9a258545dc0526770022348380a2128708f2fdb" in text.stdout
    assert "verdict with default settings: near-duplicates" in text.stdout
    result = json.loads(invoke("explain", "--method", "nilsimsa", "--json", a, b).stdout)
    assert (result["score"], result["differing_bits"], result["bytes"]) == (91, 37, [19, 21])
    assert invoke("explain", "--method", "sentences", a, b).exit_code == 2
