"""With stderr on a terminal (a progress bar is shown) the output is the same as without one:
every document once, in the same order, at any -j."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest


def _run_on_a_terminal(args: list[str], cwd: Path) -> tuple[bytes, bytes]:
    """stdout of ``python -m simdedup ARGS`` with stderr on a pseudo-terminal, and what the
    terminal showed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # rows, columns
    process = subprocess.Popen(
        [sys.executable, "-m", "simdedup", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    out, shown = bytearray(), bytearray()
    try:
        readers = [process.stdout.fileno(), master]
        while readers:
            for fd in select.select(readers, [], [], 60)[0]:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:  # the terminal's other side is closed
                    data = b""
                if not data:
                    readers.remove(fd)
                else:
                    (shown if fd == master else out).extend(data)
        assert process.wait(timeout=60) == 0
    finally:
        os.close(master)
        process.stdout.close()
    return bytes(out), bytes(shown)


def _run_plain(args: list[str], cwd: Path) -> bytes:
    return subprocess.run(
        [sys.executable, "-m", "simdedup", *args], cwd=cwd, capture_output=True, check=True, timeout=60
    ).stdout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for i in range(40):
        words = " ".join(f"w{(i * 7919 + j * 104729) % 3001}" for j in range(80))
        (folder / f"doc-{i:02d}.txt").write_text(words)
    return folder


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
def test_fingerprint_on_a_terminal_outputs_each_document_once(jobs, corpus, tmp_path):
    out, shown = _run_on_a_terminal(["fingerprint", "-j", jobs, str(corpus)], tmp_path)
    assert b"fingerprint" in shown and b"warning" not in shown  # the progress bar, and no warning
    ids = [json.loads(line)["id"] for line in out.splitlines()]
    assert ids == [str(corpus / f"doc-{i:02d}.txt") for i in range(40)]
    assert out == _run_plain(["fingerprint", "-j", "1", str(corpus)], tmp_path)


def test_dedup_on_a_terminal_sees_each_document_once(corpus, tmp_path):
    for i in range(3):  # three copies of one document: one cluster of exactly four members
        (tmp_path / f"copy-{i}.txt").write_text((corpus / "doc-05.txt").read_text())
    args = ["dedup", "-j", "2", "--singletons", str(corpus), *(str(tmp_path / f"copy-{i}.txt") for i in range(3))]
    out, shown = _run_on_a_terminal(args, tmp_path)
    assert b"fingerprint" in shown and b"warning" not in shown
    members = [m["id"] for line in out.splitlines() for m in json.loads(line)["members"]]
    assert len(members) == len(set(members)) == 43
    assert out == _run_plain(args, tmp_path)
