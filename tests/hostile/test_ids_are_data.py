"""Class 9: an id is whatever string the input carries. Generated ids (any code point, NUL, lone
surrogates as JSON's \\ud800 carries them, newlines, empty, very long) go through fingerprint
records, cluster, select, and the index (create --from, add, cluster, query): each comes out
unchanged, or the command refuses with one line before it writes anything.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from helpers import make_records
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simdedup import store
from simdedup.cli import cli
from simdedup.fingerprints import FingerprintRecord, json_lines

IDS = st.one_of(
    st.text(st.characters(blacklist_categories=()), max_size=12),  # surrogates included
    st.sampled_from(["", "a\x00b", "a\x00c", "\x00", "\ud800", "x\ud800\x00", "line\nbreak", "\r", "é" * 5000]),
)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def refused(result) -> bool:
    """A refusal: exit 1, 2 or 3, one line, nothing on stdout."""
    lines = [line for line in result.stderr.split("\n") if line and not line.startswith("simdedup: warning:")]
    return result.exit_code in (1, 2, 3) and len(lines) == 1 and result.stdout == "" and "a bug" not in result.stderr


def member_ids(text: str) -> list[str]:
    return sorted(json.loads(line)["id"] for line in text.split("\n") if line)  # not splitlines: U+0085


def records_with(ids: list[str], seed: int) -> list[FingerprintRecord]:
    """Records carrying ``ids``; every other one an exact copy of the one before (so that ids
    meet in clusters, where they are compared and chosen among)."""
    records = make_records(seed, len(ids))
    for number, (record, doc_id) in enumerate(zip(records, ids)):
        record.id = doc_id
        if number % 2:
            record.simhash, record.sketch, record.features = records[number - 1].simhash, records[number - 1].sketch, 20
    return records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(IDS, min_size=1, max_size=8, unique=True), seed=st.integers(0, 1000))
@example(ids=["a\x00b", "a\x00c"], seed=0)  # issue 33: cut at the NUL, they collided in the index
def test_ids_round_trip_or_are_refused(tmp_path_factory, ids, seed):
    tmp = tmp_path_factory.mktemp("ids")
    records = records_with(ids, seed)
    fingerprints = tmp / "fp.jsonl"
    fingerprints.write_bytes(json_lines(records))

    clustered = run("cluster", "-k", 3, "--singletons", "--format", "members", fingerprints)
    assert clustered.exit_code == 0, clustered.output
    assert member_ids(clustered.stdout) == sorted(ids)

    clusters = tmp / "clusters.jsonl"
    clusters.write_text(run("cluster", "-k", 3, fingerprints).stdout)
    selected = run("select", "--kept", "-0", clusters)
    if selected.exit_code == 0:
        assert set(selected.stdout.split("\0")[:-1]) <= set(ids)
    else:
        assert refused(selected), selected.output

    created = run("index", "create", tmp / "idx", "-k", 3, "--from", fingerprints)
    if created.exit_code != 0:
        assert refused(created), created.output
        assert not (tmp / "idx").exists()
        return
    listed = run("index", "cluster", tmp / "idx", "--singletons", "--format", "members")
    assert listed.stdout == clustered.stdout
    with store.Index(str(tmp / "idx")) as index:
        for record in records:
            assert record.id in {match.id for match in index.query_record(record)}

    # the same ids added to an index that holds others: no id meets another
    shutil.copytree(tmp / "idx", tmp / "other")
    shutil.rmtree(tmp / "idx")
    first = run(
        "index", "create", tmp / "idx", "-k", 3, "--from", _write(tmp / "x.jsonl", make_records(seed, 10, prefix="x"))
    )
    assert first.exit_code == 0
    added = run("index", "add", tmp / "idx", fingerprints)
    assert added.exit_code == 0, added.output
    listed = run("index", "cluster", tmp / "idx", "--singletons", "--format", "members")
    assert member_ids(listed.stdout) == sorted(ids + [f"x{i:05d}" for i in range(10)])
    # --replace replaces each id's own fingerprint, no other's
    again = run("index", "add", tmp / "idx", fingerprints, "--replace")
    assert again.exit_code == 0, again.output
    assert "added %d documents (%d replaced)" % (len(ids), len(ids)) in again.stderr
    assert run("index", "cluster", tmp / "idx", "--singletons", "--format", "members").stdout == listed.stdout


def _write(path: Path, records: list[FingerprintRecord]) -> Path:
    path.write_bytes(json_lines(records))
    return path
