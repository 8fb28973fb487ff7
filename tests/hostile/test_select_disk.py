"""Class 10 of issue 33: decisions are made against the disk.

Cluster lines are written at one time and acted on later. Between the two a member may be
deleted, renamed, replaced by a directory, a FIFO or a dangling link, or turn out to be another
member under another name (a hard or symbolic link, ``d/./x`` for ``d/x``). A seeded generator
builds such trees; ``select`` (every policy, ``-0``, ``--kept``) and ``dedup --unique-out DIR``
are then checked against the real disk: every dropped path has a kept member of its cluster
that is a readable regular file now and another file, and after the drop list is removed every
content that was on disk still is.
"""

from __future__ import annotations

import json
import os
import random
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers import invoke

from simdedup.group import Cluster
from simdedup.select import POLICIES
from simdedup.unique import KeptFiles, kept_ids

#: what becomes of a member after it was clustered; the last three are other names of a member
FATES = ("present", "present", "deleted", "directory", "fifo", "dangling", "symlink", "hardlink", "spelling")
OWN = {"present", "deleted", "directory", "fifo", "dangling"}  # members with a file of their own at first


@dataclass
class Tree:
    """A generated tree: the cluster lines (ids relative to the tree) and the members of each."""

    clusters: list[dict] = field(default_factory=list)
    fates: dict[str, str] = field(default_factory=dict)


def spelled(path: str, rng: random.Random) -> str:
    """Another spelling of ``path`` (relative, ``cN/name``)."""
    folder, name = path.split("/")
    return rng.choice([f"./{path}", f"{folder}/./{name}", f"{folder}//{name}", f"{folder}/../{folder}/{name}"])


def build(root: Path, seed: int) -> Tree:
    """Clusters of 2 to 5 members over ``root``, each member given a random fate after clustering."""
    rng = random.Random(seed)
    tree = Tree()
    later = []  # what happens after clustering, done once every file exists
    for c in range(rng.randint(1, 4)):
        (root / f"c{c}").mkdir()
        content = f"content of cluster {c} ({seed})\n" * rng.randint(1, 4)
        ids: list[str] = []
        for m in range(rng.randint(2, 5)):
            fate = rng.choice(FATES) if m else rng.choice(sorted(OWN))
            own = [i for i in ids if tree.fates[i] in OWN]
            if fate in OWN:
                doc_id = f"c{c}/m{m}.txt"
                (root / doc_id).write_text(content)
                when = 1_000_000 + rng.randrange(100)
                os.utime(root / doc_id, (when, when))
                later.append((doc_id, fate))
            else:
                target = rng.choice(own)
                if fate == "spelling":
                    doc_id = spelled(target, rng)
                else:
                    doc_id = f"c{c}/m{m}.txt"
                    if fate == "symlink":
                        os.symlink(rng.choice([os.path.basename(target), str(root / target)]), root / doc_id)
                    else:
                        os.link(root / target, root / doc_id)
            ids.append(doc_id)
            tree.fates[doc_id] = fate
        members = [{"id": i, "distance": rng.randrange(8)} for i in sorted(ids)]
        if rng.random() < 0.5:
            for member in members:
                member["bytes"] = rng.randrange(1, 50)
        tree.clusters.append({"representative": rng.choice(ids), "members": members})
    for doc_id, fate in later:
        path = root / doc_id
        if fate != "present":
            path.unlink()
        if fate == "directory":
            path.mkdir()
            (path / "inside.txt").write_text(f"not a member ({seed} {doc_id})\n")
        elif fate == "fifo":
            os.mkfifo(path)
        elif fate == "dangling":
            os.symlink("nowhere/" + path.name, path)
    return tree


def regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and os.access(path, os.R_OK)
    except OSError:
        return False


def contents(root: Path) -> set[bytes]:
    """Every content held by a regular file under ``root``."""
    found = set()
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                found.add(path.read_bytes())
    return found


def check_against_disk(root: Path, tree: Tree, dropped: list[str], kept: list[str]) -> None:
    """The invariant, on the disk as it is: then the drop list is removed, losing no content."""
    assert not set(dropped) & set(kept)
    for cluster in tree.clusters:
        ids = [m["id"] for m in cluster["members"]]
        survivors = [root / i for i in ids if i in kept and regular(root / i)]
        for doc_id in set(ids) & set(dropped):
            path = root / doc_id
            assert not path.is_dir(), f"{doc_id} is a directory now ({tree.fates})"
            if not os.path.lexists(path):
                continue
            assert any(not os.path.samefile(k, path) for k in survivors), (
                f"{doc_id} dropped with no other kept file ({cluster}, {tree.fates})"
            )
        if not any(regular(root / i) for i in ids):
            assert not set(ids) & set(dropped)
    before = contents(root)
    for doc_id in dropped:
        os.unlink(root / doc_id)
    assert contents(root) >= before


def select(root: Path, *args: str, lines: str):
    result = invoke("select", *args, input=lines)
    assert result.exit_code in (0, 3), (result.exit_code, result.stderr, result.exception)
    return result


@pytest.mark.parametrize("seed", range(24))
def test_select_decides_against_the_disk(tmp_path, monkeypatch, seed):
    for policy in POLICIES:
        root = tmp_path / policy
        root.mkdir()
        tree = build(root, seed)
        monkeypatch.chdir(root)
        lines = "".join(json.dumps(c) + "\n" for c in tree.clusters)
        dropped = select(root, "--keep", policy, lines=lines)
        nul = select(root, "--keep", policy, "-0", lines=lines)
        kept = select(root, "--keep", policy, "--kept", "-0", lines=lines)
        assert nul.stdout.split("\0") == dropped.stdout.split("\n")
        assert kept.exit_code == dropped.exit_code
        if any(not any(regular(root / m["id"]) for m in c["members"]) for c in tree.clusters):
            assert dropped.exit_code == 3  # a cluster with nothing left to keep is reported
        check_against_disk(root, tree, dropped.stdout.splitlines(), kept.stdout.split("\0")[:-1])


@pytest.mark.parametrize("seed", range(24))
def test_unique_out_copies_a_member_that_is_still_there(tmp_path, monkeypatch, seed):
    """``--unique-out DIR`` chooses what it copies by the same rule: when a cluster's
    representative is gone, another member is copied, never none."""
    root = tmp_path / "tree"
    root.mkdir()
    tree = build(root, seed)
    monkeypatch.chdir(root)
    ids = sorted({m["id"] for c in tree.clusters for m in c["members"]})
    clusters = [
        Cluster(
            members=tuple(ids.index(m["id"]) for m in c["members"]),
            representative=ids.index(c["representative"]),
            distances=tuple(m["distance"] for m in c["members"]),
        )
        for c in tree.clusters
    ]
    kept = kept_ids(clusters, ids, files=True)
    for cluster in tree.clusters:
        members = [m["id"] for m in cluster["members"]]
        if any(regular(root / i) for i in members):
            assert any(i in kept.kept and regular(root / i) for i in members)
        else:
            assert members[0] in kept.lost  # the run fails rather than copy none of it
    if kept.lost:
        return
    KeptFiles(str(tmp_path / "out"), False).write(ids, set(ids) - set(kept.kept), [], ids)
    assert contents(tmp_path / "out") == {(root / i).read_bytes() for i in kept.kept}
    for cluster in tree.clusters:
        held = {(root / m["id"]).read_bytes() for m in cluster["members"] if regular(root / m["id"])}
        assert held <= contents(tmp_path / "out")


def test_select_keeps_another_member_when_the_kept_one_is_gone(tmp_path, monkeypatch):
    """The issue's example: the representative was deleted after clustering."""
    monkeypatch.chdir(tmp_path)
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("same\n")
    line = json.dumps(
        {
            "representative": "a.txt",
            "members": [{"id": "a.txt", "distance": 0}, {"id": "b.txt", "distance": 3}, {"id": "c.txt", "distance": 1}],
        }
    )
    os.unlink("a.txt")
    result = invoke("select", input=line)
    assert result.exit_code == 3
    assert result.stdout == "b.txt\n"  # c.txt, nearest the gone representative, is kept
    assert invoke("select", "--kept", input=line).stdout == "c.txt\n"
    os.unlink("c.txt")
    assert invoke("select", input=line).stdout == ""  # b.txt is the last copy
    os.unlink("b.txt")
    os.mkdir("b.txt")
    assert (invoke("select", input=line).exit_code, invoke("select", input=line).stdout) == (3, "")
    os.rmdir("b.txt")  # nothing left on disk: the ids are names, and newest needs files
    gone = invoke("select", "--keep", "newest", input=line)
    assert gone.exit_code == 1 and gone.stdout == ""


def test_ids_that_name_nothing_on_disk_are_decided_as_names(tmp_path, monkeypatch):
    """JSON-lines ids (FILE:LINE, --id-field values, URLs) name no file: nothing on disk can be
    removed through them, so they are chosen among by their ids alone, as before."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs.jsonl").write_text("{}\n{}\n")
    line = json.dumps(
        {
            "representative": "docs.jsonl:2",
            "members": [
                {"id": "docs.jsonl:1", "bytes": 9},
                {"id": "docs.jsonl:2", "bytes": 3},
                {"id": "https://x.example/a"},
            ],
        }
    )
    result = invoke("select", input=line)
    assert (result.exit_code, result.stdout) == (0, "docs.jsonl:1\nhttps://x.example/a\n")
