"""The paths that keep memory bounded give what the one-shot paths give: segments written a
stretch of rows at a time (any stretch) are the same bytes, and clustering that gathers the
sketches of the units that may pair only gives the clusters of the run over every unit."""

from __future__ import annotations

import io
import os
from dataclasses import replace

import numpy as np
from helpers import make_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdedup import group, store
from simdedup.fingerprints import json_lines, load_fingerprints
from simdedup.options import ClusterOptions
from simdedup.store import segments


def _set(records):
    return load_fingerprints([("batch", io.BytesIO(json_lines(records)))])


def _files(directory) -> dict[str, bytes]:
    folder = os.path.join(directory, "segments")
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def _build(directory, records, bounds, k, replace_from, monkeypatch, chunk) -> list[dict[str, bytes]]:
    """An index made of the batches of ``records`` cut at ``bounds``, the last batch again with
    replaced fingerprints, then compacted; the segment files after each step."""
    monkeypatch.setattr(segments, "CHUNK_ROWS", chunk)
    batches = [records[a:b] for a, b in zip(bounds, bounds[1:])]
    store.create(str(directory), records[0].settings, ClusterOptions(k=k), fingerprints=_set(batches[0]))
    states = [_files(directory)]
    with store.Index(str(directory)) as index:
        for batch in batches[1:]:
            index.add(_set(batch), report=False)
            states.append(_files(directory))
        changed = make_records(replace_from, len(batches[-1]), records[0].bits, len(records[0].sketch or b""))
        renamed = [replace(r, id=old.id) for r, old in zip(changed, batches[-1])]
        index.add(_set(renamed), replace=True, report=False)
        states.append(_files(directory))
        index.compact()
        states.append(_files(directory))
    return states


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(2, 150),
    cuts=st.lists(st.floats(0, 1), max_size=3),
    bits=st.sampled_from([64, 128]),
    sketch=st.sampled_from([32, 0]),
    chunk=st.integers(1, 7),
)
def test_segments_written_in_stretches_are_the_same_bytes(
    tmp_path_factory, monkeypatch, seed, n, cuts, bits, sketch, chunk
):
    records = make_records(seed, n, bits, sketch)
    bounds = sorted({0, n, *(max(1, int(c * n)) for c in cuts)})
    k = 3 if bits == 64 else 6
    tmp = tmp_path_factory.mktemp("chunks")
    streamed = _build(tmp / "streamed", records, bounds, k, seed + 1, monkeypatch, chunk)
    whole = _build(tmp / "whole", records, bounds, k, seed + 1, monkeypatch, 10**9)
    assert streamed == whole


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(1, 200),
    bits=st.sampled_from([64, 64, 128]),
    linkage=st.sampled_from(["complete", "star", "single"]),
    singletons=st.booleans(),
    new_share=st.sampled_from([None, 0.3]),
)
def test_clusters_of_the_needed_units_are_those_of_every_unit(seed, n, bits, linkage, singletons, new_share):
    fingerprints = _set(make_records(seed, n, bits, 32))
    options = ClusterOptions(k=3 if bits == 64 else 6, linkage=linkage, singletons=singletons)
    new = None if new_share is None else np.random.default_rng(seed).random(n) < new_share
    runs = []
    for needed_only in (True, False):
        group.NEEDED_UNITS_ONLY = needed_only
        try:
            runs.append(group.cluster_fingerprints(fingerprints, options, new))
        finally:
            group.NEEDED_UNITS_ONLY = True
    assert runs[0] == runs[1]
