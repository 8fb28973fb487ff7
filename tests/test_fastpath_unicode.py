"""The compiled path on any UTF-8 text gives the Python path's records, byte for byte: the same
tokens (letters and digits as the ``words`` pattern sees them, every CJK character alone,
Unicode whitespace), the same lower case (``str.lower``, with its several-character and
final-sigma cases), the same hashes, and the same answer for bytes that are not UTF-8."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdedup.kernels.fastpath as fastpath
from simdedup.methods import SimhashMethod
from simdedup.read import Source
from simdedup.run import fingerprint_batch
from simdedup.simhash import as_integers
from simdedup.tokenizers import get_tokenizer

needs_kernels = pytest.mark.skipif(fastpath.Kernel.loaded() is None, reason="numba or the XXH3 symbol is not available")
pytestmark = needs_kernels

# Characters where the rules have their special cases: Turkish dotted and dotless i, the
# Greek sigmas, German sharp s, ligatures, the Kelvin and Ohm signs and the Angstrom sign,
# titlecase digraphs, characters that are case-ignorable (combining marks, modifier letters,
# apostrophes, middle dot, format characters) or cased and ignorable (U+0345), full-width
# forms, kana, Hangul, CJK ideographs of the basic and astral planes, astral letters and
# digits, emoji, Unicode spaces, other scripts' digits, the byte-order mark.
SPECIAL = (
    "\u0130Ii\u0131\u03a3\u03c3\u03c2\u0391\u1e9e\u00df\ufb01\ufb03\u212a\u2126\u212b\u01c4\u01c5\u01c6"
    "\u0345\u02b0\u0307\u0301\u0308'\u2019.\u00b7:\u00ad\u200d\u2060\ufeff\uff21\uff41\uff11\uff0c"
    "\u4e2d\u6587\u65e5\u672c\u3042\u30ab\u30fc\u30fb\u3007\ud55c\uac00\uff76\U00020000\U0002a6d6"
    "\U0001d400\U0001d7d8\U0001f600\U00010400 \t\n\u3000\u00a0\u2028\u0085\x1c_0\u0661\u0968\u00bd\u2460"
)
characters = st.one_of(
    st.sampled_from(SPECIAL),
    st.characters(max_codepoint=0x7F, codec="utf-8"),
    st.characters(codec="utf-8"),  # every code point but surrogates (lone ones come separately)
    st.characters(min_codepoint=0x0370, max_codepoint=0x03FF, codec="utf-8"),  # Greek: sigmas in context
)
# ... and short texts of the case-sensitive ones alone, where their contexts meet often
CASES = "\u0130Ii\u0131\u03a3\u03c3\u03c2\u0391\u1e9e\ufb01\u212a\u01c5\u0345\u02b0\u0307\u0301'\u2019.\u00b7\u00ad \n"
texts = st.one_of(st.text(characters, max_size=200), st.text(st.sampled_from(CASES), max_size=30))
lone_surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())

# byte sequences Python's strict UTF-8 decoder refuses (and one it takes: the byte-order mark)
BAD_BYTES = [
    b"\x80",
    b"\xbf",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\xe0\x80\x80",
    b"\xe0\x9f\xbf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xff",
    b"\xfe",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xef\xbb\xbf",
]


@pytest.fixture(autouse=True)
def from_the_first_byte(monkeypatch):
    monkeypatch.setattr(fastpath, "START_AFTER_BYTES", 0)


def outcomes(results):
    return [getattr(r, "reason", None) or (r.to_json(), r.encoding) for r in results]


def both_paths(monkeypatch, sources, tokenizer="words", shingle=1, **options):
    """The outcomes of the batch of ``sources`` with the kernel and on the Python path."""
    fast = fingerprint_batch(sources, SimhashMethod(get_tokenizer(tokenizer, shingle=shingle), **options)).results
    with monkeypatch.context() as patch:
        patch.setenv("SIMDEDUP_FASTPATH", "0")
        slow = fingerprint_batch(sources, SimhashMethod(get_tokenizer(tokenizer, shingle=shingle), **options)).results
    return outcomes(fast), outcomes(slow)


settings_of_both = st.tuples(
    st.sampled_from(["words", "whitespace"]),
    st.integers(1, 3),
    st.sampled_from([0, 16, 128]),
    st.sampled_from(["binary", "feature"]),
    st.sampled_from(["shingles", "features"]),
)


@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(texts, st.text(st.one_of(characters, lone_surrogates), max_size=100)), min_size=1, max_size=6),
    settings_of_both,
)
def test_texts_in_memory_give_the_python_paths_records(monkeypatch, bits, batch, setting):
    tokenizer, shingle, bins, weighting, sketch_of = setting
    sources = [Source(f"t{i}", text=text) for i, text in enumerate(batch)]
    fast, slow = both_paths(
        monkeypatch, sources, tokenizer, shingle, sketch_bins=bins, weighting=weighting, bits=bits, sketch_of=sketch_of
    )
    assert fast == slow


#: markup's own declaration of its encoding: the kernel takes documents that declare UTF-8 (or
#: nothing), the Python path the others; both must give the same record or skip
DECLARATIONS = [
    b"",
    b'<?xml version="1.0" encoding="UTF-8"?>\n',
    b'<html><head><meta charset="utf8">',
    b'<meta http-equiv="Content-Type" content="text/html; charset=utf-8">',
    b'<?xml version="1.0" encoding="iso-8859-1"?>\n',
    b"<html><meta charset=latin-1>",
    b'<meta charset="utf-16">',
    b'<meta charset="no-such-charset">',
]
documents_as_bytes = st.tuples(
    st.sampled_from(DECLARATIONS),
    st.one_of(
        texts.map(lambda text: text.encode()),
        st.lists(st.one_of(texts.map(lambda text: text.encode()), st.sampled_from(BAD_BYTES)), max_size=6).map(
            b"".join
        ),
    ),
).map(b"".join)


@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(documents_as_bytes, min_size=1, max_size=6), settings_of_both, st.sampled_from(["utf-8", "auto"]))
def test_files_give_the_python_paths_records_and_skips(
    tmp_path_factory, monkeypatch, bits, contents, setting, encoding
):
    """Valid or not, with or without a byte-order mark: the same record, or the same reason to skip."""
    tokenizer, shingle, bins, weighting, sketch_of = setting
    folder = tmp_path_factory.mktemp("docs")
    sources = []
    for i, content in enumerate(contents):
        (folder / f"d{i}.txt").write_bytes(content)
        sources.append(Source(str(folder / f"d{i}.txt")))
    fast, slow = both_paths(
        monkeypatch,
        sources,
        tokenizer,
        shingle,
        sketch_bins=bins,
        weighting=weighting,
        encoding=encoding,
        bits=bits,
        sketch_of=sketch_of,
    )
    assert fast == slow


@pytest.mark.parametrize(
    "text",
    [
        "\u0130stanbul \u0130ZM\u0130R D\u0130YARBAKIR i\u0307stanbul",  # Turkish capital dotted I: 'i' + U+0307
        "\u039f\u0394\u039f\u03a3 \u03a3 \u0391\u03a3. \u03a3\u0391 \u0391\u03a3'\u03a3 \u0391\u0345\u03a3 x\u03a3\u0301y",
        "\u1e9e STRA\u1e9eE Stra\u00dfe \ufb01ne \ufb02ow \ufb03x \u212a\u2126\u212b \u01c4\u01c5\u01c6",
        "\uff21\uff22\uff23 \uff41\uff42\uff43 \uff11\uff12\uff13 \uff76\uff85",
        "\u4e2d\u6587\u6d4b\u8bd5abc\u4e2ddef \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 "
        "\ud55c\uad6d\uc5b4 \U00020000\U0002a6d6",
        "\U0001d400\U0001d401 \U0001d7d8\U0001d7d9 \U0001f600smile\U0001f600 \U00010400\U00010428",
        "e\u0301t\u00e9 a\u0308 n\u0303o \u0915\u093f\u0924\u093e\u092c \u0661\u0662\u0663 \u00bd \u2460",
        "\u00a0no\u2028break\u3000ideographic\u0085next\x1cfile\u200bzero\ufeffbom",
        "x\ud800y \udcff\udc80 \ud83d\ude00 surrogate\udfff",  # lone surrogates, as JSON may give them
    ],
)
@pytest.mark.parametrize("tokenizer", ["words", "whitespace"])
@pytest.mark.parametrize("shingle", [1, 2, 3])
@pytest.mark.parametrize("bits", [64, 128])
def test_the_special_cases_of_unicode(monkeypatch, text, tokenizer, shingle, bits):
    sources = [Source("upper", text=text), Source("lower", text=text.lower()), Source("many", text=(text + "\n") * 50)]
    fast, slow = both_paths(monkeypatch, sources, tokenizer, shingle, bits=bits)
    assert fast == slow


@pytest.mark.parametrize("bits", [64, 128])
@settings(max_examples=100, deadline=None)
@given(st.lists(texts.filter(str.strip), min_size=1, max_size=5), st.sampled_from(["words", "whitespace"]))
def test_the_kernel_itself_takes_every_utf8_text(bits, batch, tokenizer):
    """Not a fallback: the kernel makes the Python path's simhash, feature count and sketch."""
    fingerprinter = SimhashMethod(get_tokenizer(tokenizer), bits=bits, sketch_of="features")
    expected = []
    for text in batch:
        features = get_tokenizer(tokenizer).features([text])
        expected.append((*fingerprinter.simhasher(features), len(features)) if features else None)
    values, counts, sketches = fastpath.Kernel.loaded().fingerprint(
        [text.encode() for text in batch], tokenizer, 128, fingerprinter.weighting == "binary", bits=bits
    )
    got = [
        (value, sketch.tobytes(), count) if count else None
        for value, count, sketch in zip(as_integers(values), counts.tolist(), sketches)
    ]
    assert got == expected


@pytest.mark.parametrize("bits", [64, 128])
def test_invalid_utf8_is_refused_by_the_kernel_and_skipped_as_the_python_path_says(tmp_path, monkeypatch, bits):
    for i, bad in enumerate(BAD_BYTES[:-1]):
        (tmp_path / f"d{i:02d}.txt").write_bytes(b"caf\xc3\xa9 " + bad + b" au lait")
    refused = fastpath.Kernel.loaded().fingerprint(
        [b"caf" + bad for bad in BAD_BYTES[:-1]], "words", 0, True, bits=bits
    )[1]
    assert refused.tolist() == [fastpath.INVALID] * (len(BAD_BYTES) - 1)
    sources = [Source(str(path)) for path in sorted(tmp_path.iterdir())]
    fast, slow = both_paths(monkeypatch, sources, bits=bits)
    assert fast == slow
    assert all("not valid utf-8 at byte 6" in outcome for outcome in fast)


@pytest.mark.parametrize("bits", [64, 128])
def test_a_run_longer_than_the_reader_carries_is_cut_as_the_reader_cuts_it(tmp_path, monkeypatch, bits):
    """The reader cuts a run of more than MAX_CARRY characters without whitespace where it
    stands; such a document takes the Python path, so the tokens are the same."""
    from simdedup.read import MAX_CARRY

    (tmp_path / "long.txt").write_bytes(b"first words " + "\u00e9x".encode() * (MAX_CARRY // 2 + 1000) + b" last")
    (tmp_path / "short.txt").write_bytes(b"first words " + b"x" * (MAX_CARRY - 1000) + b" last" * 1000)
    for tokenizer in ("words", "whitespace"):
        fast, slow = both_paths(monkeypatch, [Source(str(p)) for p in sorted(tmp_path.iterdir())], tokenizer, bits=bits)
        assert fast == slow


@pytest.mark.parametrize("bits", ["64", "128"])
def test_cli_output_identical_on_mixed_scripts_files_and_json_lines(tmp_path, monkeypatch, bits):
    from click.testing import CliRunner

    from simdedup.cli import cli

    (tmp_path / "docs").mkdir()
    samples = [
        "\u201cCurly\u201d quotes \u2014 na\u00efve caf\u00e9, \u0130stanbul \u039f\u0394\u039f\u03a3 " * 40,
        "\u6211\u4eec\u6d4b\u8bd5\u4e2d\u6587\u5206\u8bcd\u7684\u6570\u636e\u3002Mixed English \u4e2d\u6587 " * 60,
        "\ufeffwith a byte-order mark \U0001f600 " * 30,
    ]
    for i, sample in enumerate(samples):
        (tmp_path / "docs" / f"d{i}.txt").write_text(sample, encoding="utf-8")
    (tmp_path / "docs" / "latin1.txt").write_bytes("caf\u00e9 cr\u00e8me br\u00fbl\u00e9e ".encode("latin-1") * 40)
    lines = [json.dumps({"text": sample}) for sample in samples] + ['{"text": "lone \\ud800 surrogate \\udcff"}']
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n")
    for options in ([], ["--encoding", "auto", "-v"], ["--tokenizer", "whitespace", "--shingle", "2"]):
        command = [
            "fingerprint",
            "-j",
            "1",
            "--bits",
            bits,
            *options,
            str(tmp_path / "docs"),
            str(tmp_path / "d.jsonl"),
        ]
        fast = CliRunner().invoke(cli, command)
        monkeypatch.setenv("SIMDEDUP_FASTPATH", "0")
        slow = CliRunner().invoke(cli, command)
        monkeypatch.delenv("SIMDEDUP_FASTPATH")
        assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
        assert fast.stdout.count("\n") >= 6
