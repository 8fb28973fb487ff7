"""Hostile cases for what simdedup reads and names: links, odd file names, drop lists.

Each runs the real command line in a shell, as a user would, and checks what happens to the
files: a drop list piped to ``rm`` must never remove the only real copy of a document.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simdedup.fingerprints import REPEATED_ID

BASH = shutil.which("bash")
SIMDEDUP = f"{sys.executable} -m simdedup"
TEXT = " ".join(f"token{i % 97} word{i % 13}" for i in range(400))
OTHER = " ".join(f"other{i % 89} thing{i % 7}" for i in range(400))


def sh(command: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        command.replace("simdedup", SIMDEDUP),
        shell=True,
        executable=BASH,
        cwd=cwd,
        capture_output=True,
        timeout=120,
        **kwargs,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def real_files(top: Path) -> dict[str, str]:
    """Contents reachable through the regular (not link) files under ``top``."""
    return {
        str(p.relative_to(top)): p.read_text() for p in sorted(top.rglob("*")) if p.is_file() and not p.is_symlink()
    }


# --- links -----------------------------------------------------------------------------------


@pytest.mark.parametrize("link_name", ["a-link.txt", "z-link.txt", "sub/link.txt"])
@pytest.mark.parametrize("policy", ["representative", "first", "longest", "shortest", "newest", "oldest"])
def test_dropping_a_cluster_never_deletes_the_target_of_a_kept_link(tmp_path, link_name, policy):
    write(tmp_path / "d/doc.txt", TEXT)
    write(tmp_path / "d/other.txt", OTHER)
    link = tmp_path / "d" / link_name
    link.parent.mkdir(exist_ok=True)
    os.symlink(os.path.relpath(tmp_path / "d/doc.txt", link.parent), link)
    before = real_files(tmp_path / "d")
    result = sh(f"simdedup dedup --singletons d | simdedup select -0 --keep {policy} | xargs -0 -r rm --", tmp_path)
    assert result.returncode == 0, result.stderr
    assert real_files(tmp_path / "d") == before  # nothing had a second real copy: nothing removed


def test_a_link_is_read_once_and_reported(tmp_path):
    write(tmp_path / "d/doc.txt", TEXT)
    os.symlink("doc.txt", tmp_path / "d/a-link.txt")
    os.link(tmp_path / "d/doc.txt", tmp_path / "d/hard.txt")
    result = sh("simdedup fingerprint -v d", tmp_path)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["d/doc.txt"]
    err = result.stderr.decode()
    assert "d/a-link.txt: a symbolic link to" in err and "d/hard.txt: the same file" in err
    assert "2 names lead to a file read under another name" in err


def test_a_link_whose_target_is_outside_the_corpus_is_read_under_its_name(tmp_path):
    write(tmp_path / "outside/doc.txt", TEXT)
    write(tmp_path / "d/copy.txt", TEXT)
    os.symlink("../outside/doc.txt", tmp_path / "d/link.txt")
    result = sh("simdedup fingerprint d", tmp_path)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["d/copy.txt", "d/link.txt"]


def test_select_holds_back_a_target_when_clusters_come_from_separate_runs(tmp_path):
    # xargs -P batches fingerprint a link and its target in different processes, so both are
    # documents; select itself must still keep the real file.
    write(tmp_path / "d/doc.txt", TEXT)
    os.symlink("doc.txt", tmp_path / "d/a-link.txt")
    result = sh(
        "(simdedup fingerprint d/a-link.txt; simdedup fingerprint d/doc.txt) | simdedup cluster "
        "| simdedup select -0 | xargs -0 -r rm --",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "d/doc.txt").read_text() == TEXT
    assert b"not listed" in result.stderr


def test_select_never_drops_a_document_another_cluster_line_keeps(tmp_path):
    lines = [
        {"representative": "a", "members": [{"id": "a"}, {"id": "b"}]},
        {"representative": "b", "members": [{"id": "b"}, {"id": "c"}]},
    ]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = sh("simdedup select c.jsonl", tmp_path)
    assert result.returncode == 0
    assert result.stdout == b"c\n"
    assert b"b: not listed: kept by another cluster" in result.stderr


def test_select_refuses_a_representative_that_is_not_a_member(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"representative": "zz", "members": [{"id": "a"}, {"id": "b"}]}\n')
    result = sh("simdedup select c.jsonl", tmp_path)
    assert result.returncode == 1
    assert result.stdout == b""
    assert result.stderr.decode().strip() == "Error: c.jsonl:1: the representative 'zz' is not a member"


@pytest.mark.parametrize("line", [b"\xff\xfe{}\n", b"[" * 100_000 + b"\n", b'{"members": 5}\n'])
def test_select_bad_cluster_lines_are_one_line_errors(tmp_path, line):
    (tmp_path / "c.jsonl").write_bytes(line)
    result = sh("simdedup select c.jsonl", tmp_path)
    assert result.returncode == 1
    assert result.stderr.decode().startswith("Error: c.jsonl:1: ") and result.stderr.count(b"\n") == 1


def test_select_refuses_ids_its_separator_cannot_carry(tmp_path):
    cluster = {"representative": "a", "members": [{"id": "a"}, {"id": "b\nc"}]}
    (tmp_path / "c.jsonl").write_text(json.dumps(cluster) + "\n")
    refused = sh("simdedup select c.jsonl", tmp_path)
    assert refused.returncode == 1 and refused.stdout == b"" and b"use -0" in refused.stderr
    assert sh("simdedup select -0 c.jsonl", tmp_path).stdout == b"b\nc\0"


# --- the run's own output ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "simdedup fingerprint -o fp.jsonl .",
        "simdedup fingerprint . > fp.jsonl",
        "simdedup fingerprint . >> fp.jsonl",
        "simdedup exact . > fp.jsonl",
    ],
)
def test_the_output_being_written_is_not_read_as_a_document(tmp_path, command):
    write(tmp_path / "doc.txt", TEXT)
    result = sh(command, tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"fp.jsonl" not in (tmp_path / "fp.jsonl").read_bytes()
    assert b"fp.jsonl" not in result.stderr and b".simdedup-" not in result.stderr


# --- names ------------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_survives_the_whole_pipeline(tmp_path):
    odd = os.fsencode(tmp_path / "d") + b"/caf\xe9 \xff.txt"
    os.makedirs(tmp_path / "d")
    with open(odd, "w") as handle:
        handle.write(TEXT)
    write(tmp_path / "d/plain.txt", TEXT)
    fingerprints = sh("simdedup fingerprint d | tee fp.jsonl", tmp_path)
    assert fingerprints.returncode == 0, fingerprints.stderr
    fingerprints.stdout.decode("utf-8")  # valid UTF-8 JSON
    ids = [json.loads(line)["id"] for line in fingerprints.stdout.splitlines()]
    assert os.fsencode(ids[0]) == b"d/caf\xe9 \xff.txt"
    dropped = sh("simdedup cluster fp.jsonl | simdedup select --keep longest -0 --kept", tmp_path)
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout in (b"d/caf\xe9 \xff.txt\0", b"d/plain.txt\0")
    assert os.path.exists(tmp_path / os.fsdecode(dropped.stdout[:-1]))


def test_ids_with_lone_surrogates_are_written_as_json_escapes(tmp_path):
    docs = [{"id": "a\ud800b", "text": TEXT}, {"id": "c\udfffd", "text": TEXT}]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    result = sh("simdedup dedup --id-field id docs.jsonl", tmp_path)
    assert result.returncode == 0, result.stderr
    cluster = json.loads(result.stdout.decode("utf-8"))
    assert [m["id"] for m in cluster["members"]] == ["a\ud800b", "c\udfffd"]


@pytest.mark.parametrize("name", ["bad\x1b]0;owned\x07.txt", "two\nlines.txt", "rtl\u202etxt.exe", "bell\x07.txt"])
def test_warnings_never_carry_control_characters(tmp_path, name):
    write(tmp_path / "d/good.txt", TEXT)
    (tmp_path / "d" / name).write_bytes(b"\0binary")
    result = sh("simdedup fingerprint d", tmp_path)
    assert result.returncode == 3
    err = result.stderr.decode()
    assert err.isprintable() or all(line.isprintable() for line in err.splitlines())
    assert len(err.splitlines()) == 2  # the warning and the summary, however the name is made


def test_an_id_cannot_forge_a_warning_line(tmp_path):
    docs = ['{"id": "x\\nsimdedup: warning: forged", "text": 5}', '{"id": "\\u001b[2Jclear", "text": 5}']
    (tmp_path / "docs.jsonl").write_text("\n".join(docs) + "\n")
    result = sh("simdedup fingerprint --id-field id docs.jsonl", tmp_path)
    err = result.stderr.decode()
    assert "\x1b" not in err and "\nsimdedup: warning: forged" not in err


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "simdedup"]


def _can_run_as_nobody() -> bool:
    """Root ignores permission bits, so an unreadable file needs another user, who must be able
    to reach this checkout (a clone inside a private temporary directory is out of reach)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    return subprocess.run([*AS_NOBODY, "--version"], capture_output=True, cwd="/").returncode == 0


@pytest.mark.skipif(not _can_run_as_nobody(), reason="needs root, setpriv, and a checkout another user can read")
def test_an_unreadable_file_named_on_the_command_line_is_skipped_not_fatal(tmp_path):
    tmp_path.chmod(0o755)
    write(tmp_path / "a.txt", TEXT)
    write(tmp_path / "b.txt", OTHER).chmod(0)
    result = subprocess.run(
        [*AS_NOBODY, "fingerprint", "b.txt", "a.txt"],
        cwd=tmp_path,
        capture_output=True,
        timeout=600,  # a hang guard: a loaded machine takes its time
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert result.returncode == 3, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a.txt"]
    assert b"b.txt: cannot read: Permission denied" in result.stderr


def test_two_documents_under_one_id_are_never_dropped_unseen(tmp_path):
    # Line 3 shares line 2's id but not its text: it was never compared, so neither the clusters
    # nor the kept lines may decide for it by that id.
    docs = [{"id": "a", "text": TEXT}, {"id": "b", "text": TEXT + " more"}, {"id": "b", "text": OTHER}]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    result = sh("simdedup dedup --id-field id --unique-out kept.jsonl docs.jsonl", tmp_path)
    assert result.returncode == 1
    assert b"b: the id of more than one line" in result.stderr
    assert not (tmp_path / "kept.jsonl").exists()
    clusters = sh("simdedup dedup --id-field id docs.jsonl", tmp_path)
    assert clusters.returncode == 3  # the second document is reported as left out
    assert f"b: {REPEATED_ID}".encode() in clusters.stderr
