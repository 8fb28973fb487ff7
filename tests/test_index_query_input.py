"""``index query`` reads a document on stdin as it reads a file (one reader: the same matches,
the same refusals), and takes a fingerprint record as the query it is."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from helpers import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup.cli import cli


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("query")
    assert invoke("fingerprint", "--silent", EXAMPLES / "en", "-o", root / "fp.jsonl").exit_code == 0
    assert invoke("index", "create", root / "idx", "-k", 3, "--from", root / "fp.jsonl").exit_code == 0
    return root


def outcome(result, name):
    """What a query gave, its document's name taken out."""
    return result.exit_code, result.stdout.replace(json.dumps(name)[1:-1], "DOC"), result.stderr.replace(name, "DOC")


def documents():
    """Texts of the examples cut, with bytes that are not UTF-8 put in at drawn places."""
    texts = sorted(p.read_bytes() for p in (EXAMPLES / "en").iterdir())
    return st.builds(
        lambda text, cut, bad, at: (text[:cut][:at] + bad + text[:cut][at:]) if bad else text[:cut],
        st.sampled_from(texts),
        st.integers(0, 3000),
        st.sampled_from([b"", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xfe\xff"]),
        st.integers(0, 3000),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=documents(), encoding=st.sampled_from(["utf-8", "utf-8", "latin-1"]))
def test_stdin_and_a_file_of_the_same_bytes_give_the_same_answer(indexed, tmp_path, data, encoding):
    document = tmp_path / "document.txt"
    document.write_bytes(data)
    from_file = invoke("index", "query", "--encoding", encoding, indexed / "idx", document)
    from_stdin = invoke("index", "query", "--encoding", encoding, indexed / "idx", "-", input=data)
    assert from_file.exit_code in (0, 1) and "Traceback" not in from_file.output
    assert outcome(from_file, str(document)) == outcome(from_stdin, "<stdin>")


def test_an_invalid_byte_on_stdin_is_refused_as_in_a_file(indexed, tmp_path):
    data = (EXAMPLES / "en" / "lighthouses.txt").read_bytes()
    data = data[:100] + b"\xff" + data[100:]
    result = invoke("index", "query", indexed / "idx", "-", input=data)
    assert result.exit_code == 1 and "not valid utf-8 at byte 100" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("seed", range(4))
def test_a_record_is_queried_as_the_document_it_was_made_of(indexed, tmp_path, seed):
    """A line of `simdedup fingerprint`, as a file or on stdin, finds what its document finds,
    with a note; a file of several records is one line of refusal."""
    rng = random.Random(seed)
    lines = (indexed / "fp.jsonl").read_text().splitlines()
    line = rng.choice(lines)
    record = json.loads(line)
    (tmp_path / "record.jsonl").write_text(line + "\n")
    by_text = invoke("index", "query", indexed / "idx", record["id"])
    for result in (
        invoke("index", "query", indexed / "idx", tmp_path / "record.jsonl"),
        invoke("index", "query", indexed / "idx", "-", input=" " + line),
    ):
        assert result.exit_code == 0 and result.stdout == by_text.stdout != ""
        assert "a fingerprint record" in result.stderr and len(result.stderr.splitlines()) == 1
    several = rng.sample(lines, rng.randint(2, len(lines)))
    (tmp_path / "records.jsonl").write_text("\n".join(several) + "\n")
    result = invoke("index", "query", indexed / "idx", tmp_path / "records.jsonl")
    assert result.exit_code == 1 and f"holds {len(several)} fingerprint records" in result.stderr


def test_json_that_is_not_a_record_is_a_document(indexed, tmp_path):
    text = json.dumps({"text": (EXAMPLES / "en" / "lighthouses.txt").read_text()})
    result = invoke("index", "query", indexed / "idx", "-", input=text)
    assert result.exit_code == 0 and "record" not in result.stderr
