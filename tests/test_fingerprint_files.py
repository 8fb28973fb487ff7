"""Reading fingerprint lines: the block reader (regular expression + numpy) gives what reading
every line with json.loads gives, and says where a line is wrong."""

import base64
import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.errors import IncompatibleSettingsError, RecordError
from simdedup.fingerprints import FingerprintRecord, read_fingerprint_files

SETTINGS = {
    "method": "simhash",
    "tokenizer": "words",
    "options": {"shingle": 1},
    "bits": 64,
    "hash": "xxh3",
    "weighting": "binary",
    "sketch": 16,
}

ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12) | st.sampled_from(
    ['a"b', "back\\slash", "tab\there", "new\nline", "\u00e9t\u00e9", "\U0001f600", "\x00", "/"]
)


@st.composite
def corpora(draw):
    bits = draw(st.sampled_from([64, 128]))
    sketch = draw(st.sampled_from([0, 16, 128]))
    settings_ = {**SETTINGS, "bits": bits, "sketch": sketch}
    rows = draw(
        st.lists(
            st.tuples(
                ids,
                st.integers(0, 2**bits - 1),
                st.integers(0, 10**6),
                st.none() | st.integers(0, 10**9),
                st.binary(min_size=sketch, max_size=sketch),
            ),
            min_size=1,
            max_size=40,
        )
    )
    return [FingerprintRecord(i, v, bits, f, settings_, size, sk if sketch else None) for i, v, f, size, sk in rows]


def by_lines(data: bytes):
    """The reference: every line decoded alone with json.loads and base64."""
    out = []
    for line in data.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        (value,) = (obj[name] for name in ("simhash", "nilsimsa", "signature") if name in obj)
        sketch = (
            base64.urlsafe_b64decode(obj["sketch"] + "=" * (-len(obj["sketch"]) % 4)) if obj.get("sketch") else None
        )
        settings_ = {
            k: obj[k]
            for k in ("method", "tokenizer", "options", "bits", "hash", "weighting", "ties")
            if obj.get(k) is not None
        }
        out.append(
            SimpleNamespace(
                id=obj["id"],
                simhash=int(value, 16),
                features=obj["features"],
                bytes=obj.get("bytes"),
                sketch=sketch,
                settings={"method": "simhash", **settings_, "sketch": len(sketch or b"")},
            )
        )
    return out


def given_settings(columns):
    return {k: v for k, v in columns.settings.items() if v is not None}


def columns_as_records(columns):
    out = []
    for i, doc_id in enumerate(columns.ids):
        value = sum(int(w) << (64 * j) for j, w in enumerate(columns.values[i]))
        size = int(columns.sizes[i])
        sketch = columns.sketches[i].tobytes() if columns.sketches is not None else None
        out.append((doc_id, value, int(columns.features[i]), None if size == -1 else size, sketch))
    return out


@settings(max_examples=120, deadline=None)
@given(corpora(), st.sampled_from([1 << 25, 64, 200]))
def test_block_reader_equals_line_by_line(rows, block_bytes):  # small blocks: lines cut across blocks
    data = "".join(r.to_json() + "\n" for r in rows).encode()
    columns = read_fingerprint_files([("f", io.BytesIO(data))], block_bytes)
    expected = [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(data)]
    assert columns_as_records(columns) == expected
    assert columns.bits == rows[0].bits and given_settings(columns) == by_lines(data)[0].settings
    assert columns.lines.tolist() == list(range(1, len(rows) + 1))


def canonical(n):
    rows = [
        FingerprintRecord(f"d{i}", i * 7919, 64, 20 + i, SETTINGS, 100 + i, bytes((i + j) % 256 for j in range(16)))
        for i in range(n)
    ]
    return [r.to_json() for r in rows]


@settings(max_examples=80, deadline=None)
@given(corpora(), st.sampled_from([1 << 25, 64, 200]), st.data())
def test_canonical_and_other_json_forms_mixed_read_as_line_by_line(rows, block_bytes, data):
    """Blocks of canonical lines, blocks with other JSON spellings of the same records (which
    go line by line), and the first canonical line anywhere."""
    spelled = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    lines = [json.dumps(json.loads(r.to_json())) if other else r.to_json() for r, other in zip(rows, spelled)]
    text = "".join(line + "\n" for line in lines).encode()
    columns = read_fingerprint_files([("f", io.BytesIO(text))], block_bytes)
    assert columns_as_records(columns) == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)]
    assert columns.lines.tolist() == list(range(1, len(rows) + 1))


def test_a_line_with_other_settings_inside_a_canonical_block_is_named():
    lines = canonical(50)
    other = json.loads(lines[30])
    other["tokenizer"] = "whitespace"
    lines[30] = json.dumps(other, separators=(",", ":"))
    with pytest.raises(IncompatibleSettingsError, match=r"^f:31: fingerprint made with simhash whitespace"):
        read_fingerprint_files([("f", io.BytesIO(("\n".join(lines) + "\n").encode()))])


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"id":"x","simhash":"12","bits":64}', "f:41: field 'simhash' must be 16 hex digits"),
        ("not json", "f:41: not a JSON object"),
        ('{"id":"x","simhash":"000000000000000g","bits":64,"features":1}', "f:41: field 'simhash' is not hexadecimal"),
        ('{"id":"x","simhash":"0000000000000000","bits":64,"features":01}', "f:41: not a JSON object"),
    ],
)
def test_a_bad_line_inside_a_canonical_block_is_named(bad, message):
    lines = canonical(60)
    lines[40] = bad
    with pytest.raises(RecordError, match="^" + message):
        read_fingerprint_files([("f", io.BytesIO(("\n".join(lines) + "\n").encode()))])


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("features", 2**63, "f:41: field 'features' must be a non-negative integer below 2**63"),
        ("bytes", 2**63, "f:41: field 'bytes' must be an integer of 64 bits"),
        ("bytes", -(2**63) - 1, "f:41: field 'bytes' must be an integer of 64 bits"),
    ],
)
def test_a_number_beyond_64_bits_inside_a_canonical_block_is_named(field, value, message):
    lines = canonical(60)
    lines[40] = lines[40].replace(f'"{field}":{json.loads(lines[40])[field]}', f'"{field}":{value}')
    assert str(value) in lines[40]
    with pytest.raises(RecordError, match="^" + re.escape(message)):
        read_fingerprint_files([("f", io.BytesIO(("\n".join(lines) + "\n").encode()))])


def test_canonical_numbers_at_the_ends_of_64_bits():
    rows = [
        FingerprintRecord("a", 1, 64, 2**63 - 1, SETTINGS, -(2**63), bytes(16)),
        FingerprintRecord("b", 2, 64, 0, SETTINGS, 2**63 - 1, bytes(16)),
        FingerprintRecord("c", 3, 64, 7, SETTINGS, None, bytes(16)),
    ]
    columns = read_fingerprint_files([("f", io.BytesIO("".join(r.to_json() + "\n" for r in rows).encode()))])
    assert columns.features.tolist() == [2**63 - 1, 0, 7]
    assert columns.sizes.tolist() == [-(2**63), 2**63 - 1, -1]


def test_blank_lines_crlf_and_no_final_newline():
    lines = canonical(5)
    data = ("\r\n".join(lines[:3]) + "\r\n\r\n  \n" + "\n".join(lines[3:])).encode()
    columns = read_fingerprint_files([("f", io.BytesIO(data))])
    assert columns.ids == [f"d{i}" for i in range(5)]
    assert columns.lines.tolist() == [1, 2, 3, 6, 7]


def test_several_files_keep_their_names_and_lines():
    first, second = canonical(3), canonical(6)[3:]
    columns = read_fingerprint_files(
        [("a", io.BytesIO(("\n".join(first) + "\n").encode())), ("b", io.BytesIO(("\n".join(second) + "\n").encode()))]
    )
    assert columns.files == ["a", "b"]
    assert columns.file_index.tolist() == [0, 0, 0, 1, 1, 1]
    assert columns.lines.tolist() == [1, 2, 3, 1, 2, 3]


def test_hand_written_records_are_read_too():
    data = b'{"bits": 64, "simhash": "00000000000000ff", "id": "x", "features": 3}\n'
    columns = read_fingerprint_files([("f", io.BytesIO(data))])
    assert columns.ids == ["x"] and columns.values.tolist() == [[255]] and columns.sizes.tolist() == [-1]


def test_sketches_read_back_as_written():
    """Sketches of every size decode to their bytes, whole blocks of them at once."""
    rng = np.random.default_rng(0)
    for size in (8, 16, 128, 4096):
        raw = rng.integers(0, 256, (7, size), dtype=np.uint8)
        rows = [
            FingerprintRecord(f"d{i}", i, 64, 10, {**SETTINGS, "sketch": size}, None, row.tobytes())
            for i, row in enumerate(raw)
        ]
        columns = read_fingerprint_files([("f", io.BytesIO("".join(r.to_json() + "\n" for r in rows).encode()))])
        assert np.array_equal(columns.sketches, raw)


# --- the compact binary form (simdedup.fingerprints.binary) ---------------------------------------------------


def binary_of(rows, block_records=1 << 16):
    from simdedup.fingerprints import BinaryWriter

    out = io.BytesIO()
    writer = BinaryWriter(out, block_records)
    writer.write_records(rows)
    writer.flush()
    return out.getvalue()


@settings(max_examples=80, deadline=None)
@given(corpora(), st.sampled_from([1, 3, 1 << 16]))
def test_binary_form_reads_back_as_the_json_lines(rows, block_records):
    data = binary_of(rows, block_records)
    lines = "".join(r.to_json() + "\n" for r in rows).encode()
    from_binary = read_fingerprint_files([("f", io.BytesIO(data))])
    from_json = read_fingerprint_files([("f", io.BytesIO(lines))])
    assert columns_as_records(from_binary) == columns_as_records(from_json)
    assert from_binary.settings == from_json.settings and from_binary.bits == from_json.bits
    assert from_binary.lines.tolist() == list(range(1, len(rows) + 1))
    again = [r for part in from_binary.records(size=7) for r in part]
    assert "".join(r.to_json() + "\n" for r in again).encode() == lines


def test_binary_files_cut_short_are_refused_with_one_error():
    rows = [FingerprintRecord(f"d\n{i}", i, 64, 20, SETTINGS, 10, bytes(16)) for i in range(5)]
    data = binary_of(rows, 2)
    whole = 0
    for cut in range(1, len(data)):
        try:
            columns = read_fingerprint_files([("f", io.BytesIO(data[:cut]))])
        except RecordError as exc:
            assert str(exc).startswith("f: binary block ")
        else:
            whole += 1  # a cut between blocks is a shorter, valid file
            assert columns.ids == [r.id for r in rows[: len(columns.ids)]]
    assert whole == 2


def test_binary_and_json_inputs_mix_and_are_checked():
    rows = [FingerprintRecord(f"d{i}", i, 64, 20, SETTINGS, 10, bytes(16)) for i in range(4)]
    lines = "".join(r.to_json() + "\n" for r in rows[2:]).encode()
    columns = read_fingerprint_files([("a", io.BytesIO(binary_of(rows[:2]))), ("b", io.BytesIO(lines))])
    assert columns.ids == ["d0", "d1", "d2", "d3"]
    other = [FingerprintRecord("x", 1, 64, 20, {**SETTINGS, "tokenizer": "whitespace"}, 10, bytes(16))]
    with pytest.raises(IncompatibleSettingsError, match=r"^b: binary block 1: fingerprint made with simhash whitesp"):
        read_fingerprint_files([("a", io.BytesIO(lines)), ("b", io.BytesIO(binary_of(other)))])


def test_cli_binary_output_clusters_and_converts_like_json_lines(tmp_path):
    from click.testing import CliRunner

    from simdedup.cli import cli

    examples = str(Path(__file__).parent.parent / "examples")
    runner = CliRunner()
    lines = runner.invoke(cli, ["fingerprint", "--silent", examples])
    made = runner.invoke(
        cli, ["fingerprint", "--silent", "--format", "binary", "-o", str(tmp_path / "f.sdfp"), examples]
    )
    assert lines.exit_code == made.exit_code == 0
    data = (tmp_path / "f.sdfp").read_bytes()
    assert data.startswith(b"SIMDEDUP-FP 1\n") and len(data) < len(lines.stdout_bytes) * 0.6
    from_json = runner.invoke(cli, ["cluster", "-"], input=lines.stdout_bytes)
    from_binary = runner.invoke(cli, ["cluster", str(tmp_path / "f.sdfp")])
    assert from_json.exit_code == from_binary.exit_code == 0
    assert from_binary.stdout == from_json.stdout and from_json.stdout.count("\n") == 3
    back = runner.invoke(cli, ["convert", "--to", "jsonl", str(tmp_path / "f.sdfp")])
    assert back.stdout_bytes == lines.stdout_bytes
    again = runner.invoke(cli, ["convert", "--to", "binary", "-"], input=lines.stdout_bytes)
    assert again.stdout_bytes == data


def test_a_damaged_binary_count_is_one_error_line():
    rows = [FingerprintRecord("a", 1, 64, 20, SETTINGS, 10, bytes(16))]
    data = bytearray(binary_of(rows))
    start = data.index(b"}\n") + 2  # the counts follow the template line
    data[start : start + 8] = (1 << 60).to_bytes(8, "little")
    with pytest.raises(RecordError, match="^f: binary block 1"):
        read_fingerprint_files([("f", io.BytesIO(bytes(data)))])


def spelled(record, style):
    """A record as other tools write it: jq (keys sorted, spaces after the separators), pandas
    (ASCII escapes, "\\/", keys in another order), or compact with the keys reversed."""
    obj = json.loads(record.to_json())
    if style == "jq":
        return json.dumps(obj, sort_keys=True, ensure_ascii=False)
    if style == "pandas":
        return json.dumps(dict(sorted(obj.items(), key=lambda item: len(item[0]))), separators=(",", ":")).replace(
            "/", "\\/"
        )
    return json.dumps(dict(reversed(obj.items())), separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=120, deadline=None)
@given(corpora(), st.sampled_from([1 << 25, 64, 300]), st.data())
def test_other_json_spellings_read_as_line_by_line(rows, block_bytes, data):
    """Whole blocks in one other spelling, or spellings mixed line by line, with canonical
    lines among them or not: the records and line numbers of reading every line alone."""
    styles = data.draw(
        st.lists(st.sampled_from(["jq", "pandas", "reversed", "canonical"]), min_size=1, max_size=1)
        | st.lists(st.sampled_from(["jq", "pandas", "reversed", "canonical"]), min_size=len(rows), max_size=len(rows))
    )
    lines = [
        r.to_json() if style == "canonical" else spelled(r, style)
        for r, style in zip(rows, styles * len(rows) if len(styles) == 1 else styles)
    ]
    text = "".join(line + "\n" for line in lines).encode()
    columns = read_fingerprint_files([("f", io.BytesIO(text))], block_bytes)
    assert columns_as_records(columns) == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)]
    assert columns.lines.tolist() == list(range(1, len(rows) + 1))
    assert given_settings(columns) == by_lines(text)[0].settings


@pytest.mark.parametrize(
    "change, error, message",
    [
        (
            lambda obj: obj.update(tokenizer="whitespace"),
            IncompatibleSettingsError,
            "f:41: fingerprint made with simhash whitespace",
        ),
        (lambda obj: obj.pop("weighting"), IncompatibleSettingsError, "f:41: fingerprint made with simhash words"),
        (lambda obj: obj.update(bits=64.0), RecordError, "f:41: field 'bits' must be 64 or 128 for simhash, not 64.0"),
        (lambda obj: obj.update(features=True), RecordError, "f:41: field 'features' must be a non-negative integer"),
        (lambda obj: obj.update(features=-1), RecordError, "f:41: field 'features' must be a non-negative integer"),
        (lambda obj: obj.update(bytes=2**63), RecordError, "f:41: field 'bytes' must be an integer of 64 bits"),
        (lambda obj: obj.update(id=7), RecordError, "f:41: field 'id' must be a string"),
        (lambda obj: obj.update(simhash="00000000000000g0"), RecordError, "f:41: field 'simhash' is not hexadecimal"),
        (lambda obj: obj.update(sketch="AAAA"), RecordError, "f:41: field 'sketch' must hold a power of two"),
        (lambda obj: obj.pop("sketch"), IncompatibleSettingsError, "f:41: fingerprint made with"),
        (lambda obj: obj.pop("id"), RecordError, "f:41: missing field 'id'"),
    ],
)
def test_a_bad_line_among_other_spellings_is_named(change, error, message):
    lines = [json.loads(line) for line in canonical(60)]
    change(lines[40])
    text = "\n".join(json.dumps(obj, sort_keys=True) for obj in lines) + "\n"
    with pytest.raises(error, match="^" + re.escape(message)):
        read_fingerprint_files([("f", io.BytesIO(text.encode()))])


def test_a_setting_spelled_by_some_lines_only_reads_as_line_by_line():
    """The first record leaves out a setting that others spell with its default value."""
    lines = [json.loads(line) for line in canonical(30)]
    for obj in lines[:10]:
        obj.pop("method")
    text = ("\n".join(json.dumps(obj, sort_keys=True) for obj in lines) + "\n").encode()
    columns = read_fingerprint_files([("f", io.BytesIO(text))])
    assert columns_as_records(columns) == [(r.id, r.simhash, r.features, r.bytes, r.sketch) for r in by_lines(text)]


def test_lines_that_are_not_one_record_each_are_named_even_when_they_balance():
    """Two records on one line, and one record over two lines: the numbers of records and of
    lines agree, but line by line both are errors, and so they are here."""
    lines = [json.dumps(json.loads(line), sort_keys=True) for line in canonical(20)]
    two = lines[5] + "," + lines[6]
    split = lines[7][:-1] + ',"x":[{}', "{}]}"
    lines[5:8] = [two, *split]
    with pytest.raises(RecordError, match="^f:6: not a JSON object"):
        read_fingerprint_files([("f", io.BytesIO(("\n".join(lines) + "\n").encode()))])
    lines[5] = json.dumps(json.loads(canonical(20)[5]), sort_keys=True)
    with pytest.raises(RecordError, match="^f:7: not a JSON object"):
        read_fingerprint_files([("f", io.BytesIO(("\n".join(lines) + "\n").encode()))])
