"""``simdedup`` in real shell pipelines: separate processes, pipes, xargs -P, a reader that quits."""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SIMDEDUP = Path(sys.executable).parent / "simdedup"
SIM = shlex.quote(str(SIMDEDUP))
BASH = shutil.which("bash")

pytestmark = [
    pytest.mark.skipif(not SIMDEDUP.exists(), reason=f"console script {SIMDEDUP} not installed"),
    pytest.mark.skipif(BASH is None, reason="bash not found"),
]


def sh(command: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``command`` with bash; output is bytes. The timeout finds a hang, not a slow machine
    (a loaded one took over a minute for 40 processes)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, shell=True, executable=BASH, cwd=cwd, capture_output=True, timeout=timeout, env=env)


def json_lines(data: bytes) -> list[dict]:
    text = data.decode("utf-8")
    assert text == "" or text.endswith("\n"), "output does not end with a newline"
    return [json.loads(line) for line in text.splitlines()]


def member_sets(clusters: list[dict]) -> set[tuple[str, ...]]:
    return {tuple(m["id"] for m in c["members"]) for c in clusters}


def words(seed: int, n: int = 300) -> str:
    r = random.Random(seed)
    return " ".join(f"w{r.randrange(5000)}" for _ in range(n))


def near_copy(text: str) -> str:
    tokens = text.split()
    tokens[len(tokens) // 2] = "changed"
    return " ".join(tokens)


@pytest.fixture
def dup_dir(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    base = words(1)
    (d / "base.txt").write_text(base)
    (d / "copy.txt").write_text(near_copy(base))
    for seed in range(2, 8):
        (d / f"other-{seed}.txt").write_text(words(seed))
    return d


def test_fingerprint_pipe_cluster(dup_dir, tmp_path):
    result = sh(f"{SIM} fingerprint docs | {SIM} cluster", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    clusters = json_lines(result.stdout)
    assert member_sets(clusters) == {("docs/base.txt", "docs/copy.txt")}
    assert {"cluster", "size", "representative", "max_distance", "min_resemblance_estimate", "members"} == set(
        clusters[0]
    )

    singletons = sh(f"{SIM} fingerprint --silent docs | {SIM} cluster --singletons -", cwd=tmp_path)
    assert singletons.returncode == 0
    ids = sorted(m["id"] for c in json_lines(singletons.stdout) for m in c["members"])
    assert ids == sorted(f"docs/{p.name}" for p in dup_dir.iterdir())


def test_separate_streams_and_exit_status_in_a_real_process(dup_dir, tmp_path):
    (dup_dir / "empty.txt").write_bytes(b"")
    result = sh(f"{SIM} fingerprint docs", cwd=tmp_path)
    assert result.returncode == 3
    records = json_lines(result.stdout)
    assert len(records) == 8
    assert "empty.txt" not in result.stdout.decode()
    err = result.stderr.decode().splitlines()
    assert len(err) == 2
    assert "docs/empty.txt" in err[0] and "empty file" in err[0]
    assert "skipped 1" in err[1]


def test_xargs_parallel_fingerprint_matches_single_process():
    examples = REPO / "examples"
    if not examples.is_dir():
        pytest.skip("no examples directory")
    parallel = sh(
        f"find examples -type f -print0 | xargs -0 -n 3 -P 2 {SIM} fingerprint --silent -j 1 | {SIM} cluster",
        cwd=REPO,
    )
    single = sh(f"{SIM} fingerprint --silent -j 1 examples | {SIM} cluster", cwd=REPO)
    assert parallel.returncode == 0, parallel.stderr
    assert single.returncode == 0, single.stderr
    parallel_clusters, single_clusters = json_lines(parallel.stdout), json_lines(single.stdout)
    assert single_clusters, "the examples hold near-duplicates"
    assert member_sets(parallel_clusters) == member_sets(single_clusters)
    # Clustering does not depend on input order, so even the bytes are the same.
    assert parallel.stdout == single.stdout
    for members in member_sets(single_clusters):
        assert all(m.startswith("examples/") for m in members)
        assert not {
            "examples/en/release-notes-tidewater-2-4.txt",
            "examples/en/release-notes-tidewater-3-0.txt",
        } <= set(members)


@pytest.fixture
def long_named_files(tmp_path):
    """200 small files whose ids are ~1 KB long, so 5 records exceed PIPE_BUF (4096 bytes)."""
    deep = Path("d", *(f"{c * 200}" for c in "abcde"))
    names = []
    for i in range(200):
        rel = deep / f"{i % 7}" / f"doc-{i:03d}.txt"
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"document number {i} with words {i * 3} {i * 5} and more text {i % 11}\n")
        names.append(str(rel))
    assert len(names[0]) > 1000
    return names


@pytest.mark.parametrize("sink", ["file", "pipe"])
def test_xargs_parallel_output_lines_are_whole(tmp_path, long_named_files, sink):
    out = tmp_path / "out.jsonl"
    redirect = f"> {out}" if sink == "file" else f"| cat > {out}"
    result = sh(f"find d -type f -print0 | xargs -0 -n 5 -P 2 {SIM} fingerprint --silent -j 1 {redirect}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    data = out.read_bytes()
    assert data.endswith(b"\n")
    records = [json.loads(line) for line in data.decode("utf-8").splitlines()]  # every line whole
    assert len(records) == 200
    assert sorted(r["id"] for r in records) == sorted(long_named_files)


def _random_fingerprints(path: Path, n: int) -> None:
    rng = random.Random(7)
    with open(path, "w") as handle:
        for i in range(n):
            handle.write(
                json.dumps(
                    {
                        "id": f"doc-{i:06d}",
                        "simhash": f"{rng.getrandbits(64):016x}",
                        "bits": 64,
                        "features": 10,
                        "bytes": 100,
                        "tokenizer": "whitespace",
                        "options": {"shingle": 1},
                        "hash": "xxh3",
                    }
                )
                + "\n"
            )


def _head_pipeline(command: str, cwd: Path) -> tuple[int, bytes, bytes]:
    err = cwd / "simdedup.err"
    result = sh(f'{command} 2> {err} | head -n 1; echo "${{PIPESTATUS[0]}}" >&2', cwd=cwd)
    return int(result.stderr.decode().split()[-1]), result.stdout, err.read_bytes()


def test_cluster_into_head_stops_quietly(tmp_path):
    _random_fingerprints(tmp_path / "big.jsonl", 50_000)
    status, out, err = _head_pipeline(f"{SIM} cluster --singletons big.jsonl", tmp_path)
    (first,) = json_lines(out)
    assert first["size"] == 1 and first["members"][0]["id"] == "doc-000000"
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err
    assert status == 1  # closed pipe: exit status 1, no message


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_fingerprint_into_head_stops_quietly(tmp_path, jobs):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(1500):  # ~250 KB of records: far more than a pipe holds
        (many / f"f{i:04d}.txt").write_text(f"file {i} has a few words {i * 13}\n")
    status, out, err = _head_pipeline(f"{SIM} fingerprint -j {jobs} many", tmp_path)
    (first,) = json_lines(out)
    assert first["id"] == "many/f0000.txt"
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err
    assert status == 1


def test_python_dash_m():
    result = subprocess.run([sys.executable, "-m", "simdedup", "--help"], capture_output=True, timeout=60, text=True)
    assert result.returncode == 0, result.stderr
    assert "Usage: simdedup" in result.stdout
    for command in ("fingerprint", "cluster", "dedup", "tokenizers"):
        assert command in result.stdout


def test_python_dash_m_runs_commands(dup_dir, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "simdedup", "dedup", "docs"], capture_output=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert member_sets(json_lines(result.stdout)) == {("docs/base.txt", "docs/copy.txt")}
