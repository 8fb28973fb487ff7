"""Numbers from users are untrusted: every numeric option of every command, found in click's own
metadata, and every numeric field of fingerprint and cluster records, given huge, negative,
zero, NaN and infinite values. Each run ends with a documented exit status, in bounded time,
without ever allocating what the number asks for: the runs go through a process whose address
space is capped, with ``SIMDEDUP_DEBUG`` set so that a MemoryError would surface as itself
instead of as the one-line message the command line turns it into."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import click
import pytest
from helpers import REPO, record_line, words, write

from simdedup.cli import cli

DOCUMENTED = {0, 1, 2, 3}
ADDRESS_SPACE = 3 << 30
SECONDS_PER_RUN = 120  # a hang, not a slow machine: -j 512 starting 512 processes took 40 s loaded
HOSTILE = ["0", "-1", "-0.5", "nan", "inf", "-inf", "1e300", "999999999999", str(10**30), str(2**63), str(-(2**63) - 1)]

#: what each command needs besides the option under test; a new command fails the test until it
#: is listed here
BASE_ARGS = {
    "fingerprint": ["corpus"],
    "dedup": ["corpus"],
    "exact": ["corpus"],
    "cluster": ["fp.jsonl"],
    "stats": ["fp.jsonl"],
    "convert": ["--to", "binary", "-o", "out.sdfp", "fp.jsonl"],
    "explain": ["corpus/a.txt", "corpus/b.txt"],
    "eval": ["--gold", "gold.tsv", "clusters.jsonl"],
    "select": ["clusters.jsonl"],
    "report": ["clusters.jsonl", "-o", "report.html", "--force"],
    "tokenizers": [],
    "index create": ["idx-new", "-k", "3"],
    "index add": ["idx", "fp.jsonl"],
    "index query": ["idx", "corpus/a.txt"],
    "index cluster": ["idx"],
    "index compact": ["idx"],
    "index stats": ["idx"],
    "spans find": ["corpus"],
    "spans strip": ["--spans", "spans.jsonl", "corpus", "-o", "stripped.jsonl", "--force"],
    "spans report": ["--spans", "spans.jsonl", "corpus", "-o", "spans.html", "--force"],
}

# Runs the invocations read from stdin (one JSON list of arguments a line) in this process and
# prints one JSON object a line: exit status, the exception if not SystemExit, seconds taken.
DRIVER = """
import json, os, sys, time
from click.testing import CliRunner
from simdedup.cli import cli
for line in sys.stdin:
    args = json.loads(line)
    start = time.monotonic()
    result = CliRunner().invoke(cli, args)
    exception = result.exception
    print(json.dumps({"args": args, "exit": result.exit_code, "seconds": time.monotonic() - start,
                      "exception": None if exception is None or isinstance(exception, SystemExit)
                      else repr(exception)[:300]}), flush=True)
"""


def commands(group: click.Group = cli, path: tuple[str, ...] = ()):
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name), command


def numeric(param: click.Parameter) -> bool:
    return isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))


def run_all(invocations: list[list[str]], cwd) -> list[dict]:
    """Each invocation, in one process capped at :data:`ADDRESS_SPACE`."""
    import os
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    env = {**os.environ, "SIMDEDUP_DEBUG": "1", "PYTHONPATH": str(REPO), "SIMDEDUP_LOAD_PLUGINS": ""}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input="".join(json.dumps(a) + "\n" for a in invocations),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        preexec_fn=cap,
        timeout=SECONDS_PER_RUN * len(invocations),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def check(results: list[dict], count: int) -> None:
    assert len(results) == count
    for result in results:
        assert result["exception"] is None, result
        assert result["exit"] in DOCUMENTED, result
        assert result["seconds"] < SECONDS_PER_RUN, result


@pytest.fixture
def workspace(tmp_path):
    """A corpus, its fingerprints, clusters, gold pairs and an index, under ``tmp_path``."""
    write(tmp_path / "corpus/a.txt", words(1))
    write(tmp_path / "corpus/b.txt", words(1) + " end")
    write(tmp_path / "corpus/c.txt", words(2))
    write(tmp_path / "fp.jsonl", "".join(record_line(f"d{i}", value=i) + "\n" for i in range(4)))
    write(
        tmp_path / "clusters.jsonl",
        json.dumps(
            {
                "cluster": "0123456789abcdef",
                "size": 2,
                "representative": "corpus/a.txt",
                "max_distance": 1,
                "members": [{"id": "corpus/a.txt", "distance": 0}, {"id": "corpus/b.txt", "distance": 1}],
            }
        )
        + "\n",
    )
    write(tmp_path / "gold.tsv", "corpus/a.txt\tcorpus/b.txt\n")
    write(tmp_path / "spans.jsonl", "")
    from click.testing import CliRunner

    made = CliRunner().invoke(
        cli, ["index", "create", str(tmp_path / "idx"), "-k", "3", "--sketch", "0", "--tokenizer", "whitespace"]
    )
    assert made.exit_code == 0, made.output
    return tmp_path


def test_every_numeric_option_has_a_range_shown_in_help():
    for path, command in commands():
        for param in filter(numeric, command.params):
            assert isinstance(param.type, click.types._NumberRangeBase), (path, param.opts)
            assert param.type.min is not None and param.type.max is not None, (path, param.opts)


def test_every_numeric_option_takes_any_number(workspace):
    invocations = []
    for path, command in commands():
        assert " ".join(path) in BASE_ARGS, f"{' '.join(path)}: add its arguments to BASE_ARGS"
        for param in filter(numeric, command.params):
            edges = [str(param.type.min), str(param.type.max)]  # in range: these run
            for value in HOSTILE + edges:
                invocations.append([*path, *BASE_ARGS[" ".join(path)], param.opts[0], value])
    check(run_all(invocations, workspace), len(invocations))


def tokenizer_numbers():
    """``(tokenizer, option)`` for every numeric option of every built-in tokenizer."""
    from simdedup.tokenizers import BUILTIN, get_tokenizer

    for name in BUILTIN:
        tokenizer = get_tokenizer(name)
        for option, default in {**tokenizer.defaults, **tokenizer.optional}.items():
            if type(default) in (int, float):
                yield name, option


def test_every_numeric_tokenizer_option_takes_any_number(workspace):
    invocations = [
        ["fingerprint", "--tokenizer", name, "-O", f"{option}={value}", "corpus"]
        for name, option in tokenizer_numbers()
        for value in HOSTILE + ["1024", "1025"]
    ]
    assert invocations
    check(run_all(invocations, workspace), len(invocations))


def numeric_paths(value, path=()):
    """The paths of the numbers in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from numeric_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from numeric_paths(item, (*path, index))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def replaced(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


RECORD_NUMBERS = [10**30, 2**64, -(2**63) - 1, -1, 0, 1e308, math.inf, -math.inf, math.nan, 2**31, 4097]


def test_every_numeric_field_of_a_record_takes_any_number(workspace):
    """Fingerprint records for cluster, stats, convert and index add; cluster records for select
    and eval: each numeric field, at any depth, set to each hostile number."""
    from click.testing import CliRunner

    made = CliRunner().invoke(cli, ["fingerprint", str(workspace / "corpus")])
    good_record = json.loads(made.stdout.splitlines()[0])
    good_cluster = json.loads((workspace / "clusters.jsonl").read_text())
    invocations = []
    for kind, good, readers in [
        ("fp", good_record, [["cluster"], ["stats"], ["convert", "--to", "binary"], ["index", "add", "idx"]]),
        ("clusters", good_cluster, [["select"], ["eval", "--gold", "gold.tsv"]]),
    ]:
        paths = list(numeric_paths(good))
        assert paths
        for path in paths:
            for number in RECORD_NUMBERS:
                name = f"{kind}-{len(invocations)}.jsonl"
                (workspace / name).write_text(json.dumps(good) + "\n" + json.dumps(replaced(good, path, number)) + "\n")
                invocations += [[*reader, name] for reader in readers]
    check(run_all(invocations, workspace), len(invocations))


def test_a_bloom_filter_larger_than_the_machine_is_a_usage_error(workspace):
    """The issue's example: --bloom 1e14 asked for 327 TiB and ended in MemoryError (exit 70)."""
    results = run_all(
        [
            ["exact", "--bloom", "100000000000000", "corpus"],
            ["exact", "--bloom", "10000000000", "--error-rate", "1e-300", "corpus"],
            ["dedup", "--shingle", "1000000000000", "corpus"],
        ],
        workspace,
    )
    assert [r["exit"] for r in results] == [2, 2, 2]
