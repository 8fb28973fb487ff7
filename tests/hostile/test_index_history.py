"""Class 11: what an index accumulates with its history is bounded. Many small adds leave
O(log N) segments (an add merges the newest ones into its own), and the index they make
answers as one made by a single add of the same fingerprints (metamorphic)."""

from __future__ import annotations

import io
import math

import numpy as np
from click.testing import CliRunner
from helpers import index_settings, make_records
from hypothesis import given
from hypothesis import strategies as st

from simdedup import store
from simdedup.cli import cli
from simdedup.fingerprints import json_lines, load_fingerprints
from simdedup.options import ClusterOptions
from simdedup.store.api import tail_to_merge


def _fingerprints(records) -> object:
    return load_fingerprints([("batch", io.BytesIO(json_lines(records)))])


def _listing(directory) -> list[bytes]:
    return [
        CliRunner().invoke(cli, ["index", "cluster", str(directory), *args]).stdout_bytes
        for args in (["--singletons", "--format", "members"], ["--linkage", "single"])
    ]


@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=300))
def test_tiers_keep_the_segment_count_logarithmic(batches):
    sizes: list[int] = []
    for rows in batches:
        taken = tail_to_merge(sizes, rows)
        sizes = sizes[: len(sizes) - taken] + [rows + sum(sizes[len(sizes) - taken :])]
        assert all(older > 2 * newer for older, newer in zip(sizes, sizes[1:]))
        assert len(sizes) <= math.log2(sum(sizes) / min(batches)) + 1


def test_200_adds_of_5_equal_one_add_of_1000(tmp_path):
    records = make_records(11, 1000)
    many, one = str(tmp_path / "many"), str(tmp_path / "one")
    for directory in (many, one):
        store.create(directory, index_settings(), ClusterOptions(k=3))
    with store.Index(many) as index:
        for start in range(0, 1000, 5):
            index.add(_fingerprints(records[start : start + 5]), report=False)
            documents = start + 5
            assert len(index._segments) <= math.log2(documents / 5) + 1
    with store.Index(one) as index:
        index.add(_fingerprints(records), report=False)
    figures = store.stats(many, verify=True)
    assert figures["segments"] <= math.log2(200) + 1 and figures["documents"] == 1000
    assert _listing(many) == _listing(one)
    with store.Index(many) as a, store.Index(one) as b:
        for record in records[::50]:
            assert a.query_record(record) == b.query_record(record)


def test_replaced_rows_go_with_the_merges(tmp_path):
    """Adds that replace ids: the rows they leave behind do not pile up either."""
    records = make_records(12, 200)
    directory = str(tmp_path / "idx")
    store.create(directory, index_settings(), ClusterOptions(k=3))
    rng = np.random.default_rng(0)
    with store.Index(directory) as index:
        index.add(_fingerprints(records), report=False)
        for _ in range(60):
            chosen = [records[i] for i in sorted(rng.choice(200, 5, replace=False))]
            for record in chosen:
                record.simhash ^= 1 << int(rng.integers(64))
            index.add(_fingerprints(chosen), replace=True, report=False)
    figures = store.stats(directory)
    assert figures["documents"] == 200 and figures["segments"] <= math.log2(500 / 5) + 1
    assert figures["rows"] - figures["documents"] == figures["removed"] <= 200
    fresh = str(tmp_path / "fresh")
    store.create(fresh, index_settings(), ClusterOptions(k=3), fingerprints=_fingerprints(records))
    assert _listing(directory) == _listing(fresh)
