"""Issue 42, item 4: every number read from a record, a cluster line, a gold pair or a spans
record passes one check (:func:`simdedup.jsonline.parse_json_line`): NaN, Infinity, 1e400 and
integers of more than 40 digits are refused there. A NaN in a cluster line gave a report page
that showed no cluster (exit 0; JSON.parse refuses NaN); a 5,000-digit integer, exit 70.

Generated: every numeric field of a fingerprint record and of a cluster line, given a hostile
number, through every command that reads them. None ends in exit 70 or a traceback, and a page
or an output that is written holds only finite JSON numbers.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simdedup.cli import cli
from simdedup.jsonline import parse_json_line

HOSTILE = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "-0",
    "-0.0",
    "1e-400",
    "9" * 5000,
    "-" + "9" * 41,
    str(2**64),
    "2.5",
    "-1",
]
NUMBER = re.compile(r'"(\w+)":(-?\d[\d.eE+-]*)')


def _strict(name: str) -> float:
    raise AssertionError(f"{name} written into an output")


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root = tmp_path_factory.mktemp("numbers")
    corpus = root / "corpus"
    corpus.mkdir()
    text = " ".join(f"w{i}" for i in range(80))
    (corpus / "a.txt").write_text(text)
    (corpus / "b.txt").write_text(text + " tail")
    (corpus / "c.txt").write_text(" ".join(f"v{i}" for i in range(80)))
    runner = CliRunner()
    records = runner.invoke(cli, ["fingerprint", "--silent", str(corpus)]).stdout
    clusters = runner.invoke(cli, ["dedup", "--silent", "--singletons", str(corpus)]).stdout
    assert records.count("\n") == 3 and clusters.count("\n") == 2
    index = root / "idx"
    assert runner.invoke(cli, ["index", "create", str(index), "-k", "3"]).exit_code == 0
    return root, corpus, records, clusters, index


def with_number(text: str, line: int, field: int, number: str) -> str:
    """``text`` with the ``field``-th number of its ``line``-th line replaced by ``number``."""
    lines = text.split("\n")
    target = lines[line % (len(lines) - 1)]
    found = list(NUMBER.finditer(target))
    match = found[field % len(found)]
    lines[line % (len(lines) - 1)] = target[: match.start(2)] + number + target[match.end(2) :]
    return "\n".join(lines)


def check(result, *outputs) -> None:
    assert result.exit_code != 70 and "a bug" not in result.output, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    for output in outputs:
        if result.exit_code == 0 and output.exists():
            text = output.read_text(errors="replace")
            if output.suffix == ".html":
                text = text.split('id="report-data">', 1)[1].split("</script>", 1)[0]
                json.loads(text, parse_constant=_strict)
            else:
                for line in filter(None, text.split("\n")):
                    json.loads(line, parse_constant=_strict)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    line=st.integers(0, 10),
    field=st.integers(0, 20),
    number=st.sampled_from(HOSTILE),
    in_clusters=st.booleans(),
)
@example(line=0, field=3, number="NaN", in_clusters=True)  # the report's page showed no cluster
@example(line=0, field=2, number="9" * 5000, in_clusters=False)  # a record's 5,000-digit integer: exit 70
def test_hostile_numbers_in_records_and_cluster_lines(place, tmp_path_factory, line, field, number, in_clusters):
    root, corpus, records, clusters, index = place
    tmp = tmp_path_factory.mktemp("run")
    fp, lines = tmp / "fp.jsonl", tmp / "clusters.jsonl"
    fp.write_text(records if in_clusters else with_number(records, line, field, number))
    lines.write_text(with_number(clusters, line, field, number) if in_clusters else clusters)
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, [str(a) for a in args])

    out = tmp / "out.jsonl"
    check(run("cluster", fp, "-o", out), out)
    check(run("stats", "--json", fp))
    check(run("convert", "--to", "jsonl", "-o", tmp / "conv.jsonl", fp), tmp / "conv.jsonl")
    check(run("convert", "--to", "binary", "-o", tmp / "conv.sdfp", fp))
    check(run("select", lines))
    page = tmp / "page.html"
    check(run("report", lines, "--documents", corpus, "-o", page), page)
    check(run("eval", "--gold", lines, lines))
    check(run("eval", "--gold", fp, lines))
    check(run("explain", corpus / "a.txt", corpus / "b.txt", "--clusters", lines, "--documents", corpus))
    copy = tmp / "idx"
    shutil.copytree(index, copy)
    check(run("index", "add", copy, fp))
    check(run("index", "create", tmp / "idx2", "-k", "3", "--from", fp))


@given(st.sampled_from(HOSTILE), st.sampled_from(['{"a":%s}', "[%s]", '{"m":[{"d":%s}]}']))
def test_the_one_parse_refuses_every_number_no_line_holds(number, shape):
    line = shape % number
    finite_and_short = number not in ("NaN", "Infinity", "-Infinity", "1e400", "-1e400") and len(number) < 41
    if finite_and_short:
        assert parse_json_line(line) == json.loads(line)
    else:
        with pytest.raises(ValueError, match="JSON number"):
            parse_json_line(line)


_LINE = {
    "cluster": "c1",
    "size": 2,
    "representative": "a.txt",
    "max_distance": 3,
    "min_resemblance": 0.9,
    "members": [
        {"id": "a.txt", "distance": 0, "bytes": 10, "resemblance": 1.0},
        {"id": "b.txt", "distance": 3, "bytes": 12, "resemblance": 0.9},
    ],
}


@settings(max_examples=60, deadline=None)
@given(
    where=st.sampled_from(
        [("size",), ("max_distance",), ("min_resemblance",), (1, "distance"), (1, "bytes"), (1, "resemblance")]
    ),
    value=st.one_of(
        st.integers(max_value=-1),
        st.booleans(),
        st.floats(min_value=1.0001, max_value=1e300),
        st.floats(max_value=-0.0001, min_value=-1e300),
        st.text(max_size=3),
    ),
)
def test_a_number_out_of_its_range_in_a_cluster_line_is_one_error(tmp_path_factory, where, value):
    """Counts are integers of 0 or more and similarities numbers from 0 to 1, whatever the field:
    a size of -1 or a resemblance of 5 is refused in one line naming it (select acts on them,
    the report shows them)."""
    import copy

    line = copy.deepcopy(_LINE)
    target = line if len(where) == 1 else line["members"][where[0]]
    field = where[-1]
    if field in ("distance", "bytes", "size", "max_distance") and isinstance(value, float) and value.is_integer():
        value = -1  # a float that is a whole number: still wrong, as a negative count
    target[field] = value
    path = tmp_path_factory.mktemp("lines") / "c.jsonl"
    path.write_text(json.dumps(line) + "\n")
    done = CliRunner().invoke(cli, ["select", str(path)])
    assert done.exit_code == 1, (field, value, done.output)
    assert done.stderr.count("\n") == 1 and field in done.stderr, done.stderr
