"""simdedup select: the documents to drop (or keep) from clusters, by policy."""

from __future__ import annotations

import json
import os

from helpers import invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup.select import POLICIES, kept_member, selection

clusters_strategy = st.lists(
    st.lists(
        st.tuples(st.text("abcxyz", min_size=1, max_size=4), st.integers(0, 50)),
        min_size=2,
        max_size=6,
        unique_by=lambda t: t[0],
    ),
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(clusters_strategy, st.sampled_from(["representative", "first", "longest", "shortest"]))
def test_select_never_drops_a_whole_cluster(raw, policy):
    # a document is in one cluster: make ids distinct across clusters
    clusters = [
        ([{"id": f"{n}-{i}", "bytes": b} for i, b in members], f"{n}-{members[-1][0]}") for n, members in enumerate(raw)
    ]
    chosen = selection(clusters, policy)
    assert len(chosen.kept) == len(clusters) and chosen.held == []
    assert len(chosen.dropped) == sum(len(members) - 1 for members, _ in clusters)
    for (members, _), survivor in zip(clusters, chosen.kept):
        ids = {m["id"] for m in members}
        assert survivor in ids
        assert ids - set(chosen.dropped) == {survivor}  # every other member is dropped, the survivor not


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5, unique=True), max_size=6),
    st.sampled_from(["first", "longest", "shortest"]),
)
def test_select_never_drops_what_any_cluster_keeps(raw, policy):
    # ids repeated across cluster lines (concatenated or edited cluster files)
    clusters = [([{"id": i, "bytes": ord(i) % 3} for i in members], None) for members in raw]
    chosen = selection(clusters, policy)
    assert not set(chosen.dropped) & set(chosen.kept)
    for members, _ in clusters:
        assert {m["id"] for m in members} & set(chosen.kept)  # no cluster loses all its members
    assert len(chosen.dropped) == len(set(chosen.dropped))


def test_policies_on_a_hand_made_cluster(tmp_path):
    paths = []
    for i, (name, size) in enumerate((("b.txt", 30), ("a.txt", 10), ("c.txt", 30))):
        path = tmp_path / name
        path.write_text("x" * size)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
        paths.append(str(path))
    members = [{"id": p} for p in sorted(paths)]  # a.txt (10, t+1), b.txt (30, t+0), c.txt (30, t+2)
    name = {m["id"]: os.path.basename(m["id"]) for m in members}
    assert name[kept_member(members, "first")] == "a.txt"
    assert name[kept_member(members, "longest")] == "b.txt"  # tie with c.txt: smallest id
    assert name[kept_member(members, "shortest")] == "a.txt"
    assert name[kept_member(members, "newest")] == "c.txt"
    assert name[kept_member(members, "oldest")] == "b.txt"
    assert name[kept_member(members, "representative", members[2]["id"])] == "c.txt"
    assert set(POLICIES) == {"representative", "first", "longest", "shortest", "newest", "oldest"}


def test_select_cli(tmp_path):
    line = json.dumps(
        {"representative": "z", "members": [{"id": "x", "bytes": 5}, {"id": "y", "bytes": 9}, {"id": "z", "bytes": 1}]}
    )
    assert invoke("select", "--keep", "longest", input=line + "\n").stdout == "x\nz\n"
    assert invoke("select", "--keep", "longest", "--kept", input=line).stdout == "y\n"
    assert invoke("select", "--keep", "first", "-0", input=line).stdout == "y\0z\0"
    assert invoke("select", input=line).stdout == "x\ny\n"  # the representative stays by default
    bad = invoke("select", input="{}\n")
    assert bad.exit_code == 1 and "<stdin>:1:" in bad.stderr
    missing = invoke(
        "select", "--keep", "newest", input=json.dumps({"members": [{"id": str(tmp_path / "gone")}, {"id": "q"}]})
    )
    assert missing.exit_code == 1 and "cannot look at" in missing.stderr
