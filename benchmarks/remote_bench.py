"""Fingerprinting from an S3-compatible server on this machine beside the same files on disk.

The server is moto's (tests/s3_server.py: a Python process on 127.0.0.1, without TLS), so its
own cost per request is in the S3 numbers: a real store has more latency per request and more
bandwidth. Three corpora, each read both ways by `simdedup fingerprint -j 2`, same output
checked (ids aside):

- many small files: 3,000 texts of 1-8 kB (latency-bound: fetched 64 at once; the server's
  own pace, measured by the upload, is printed beside);
- compressed JSON lines: 4 objects of 16 MB of text each, gzip (streamed in 4 MB ranges);
- Parquet: 4 shards of 20,000 rows (row groups read in ranges).

For each: MB/s (bytes as stored) from disk and from the server, and their ratio. Corpora are
kept in benchmarks/.remote.

    python benchmarks/remote_bench.py
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".remote"
sys.path.insert(0, str(HERE.parent / "tests"))

from s3_server import S3Server  # noqa: E402

BUCKET = "bench"
JOBS = "2"


def _words(rng: random.Random, count: int) -> str:
    return " ".join(f"w{rng.randrange(20000)}" for _ in range(count))


def _build(folder: Path) -> None:
    rng = random.Random(1)
    for i in range(3000):
        path = folder / "small" / f"d{i // 200:02d}" / f"{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_words(rng, rng.randrange(150, 1200)))
    (folder / "jsonl").mkdir(parents=True, exist_ok=True)
    for shard in range(4):
        lines = [json.dumps({"id": f"j{shard}-{n}", "text": _words(rng, 300)}) for n in range(9000)]
        (folder / "jsonl" / f"rows-{shard}.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), 6))
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "parquet").mkdir(parents=True, exist_ok=True)
    for shard in range(4):
        texts = [_words(rng, 200) for _ in range(20000)]
        pq.write_table(
            pa.table({"id": [f"p{shard}-{n}" for n in range(20000)], "text": texts}),
            folder / "parquet" / f"shard-{shard}.parquet",
            row_group_size=5000,
        )


def corpus() -> Path:
    folder = DATA / "corpus"
    done = folder / ".complete"
    if not done.exists():
        _build(folder)
        done.touch()
    return folder


def stored_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.name != ".complete")


def fingerprint(target: str, env: dict, extra: list[str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "simdedup", "fingerprint", "--silent", "-j", JOBS, *extra, target],
        capture_output=True,
        env=env,
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{target}: exit {result.returncode}: {result.stderr.decode()[-500:]}")
    return seconds, result.stdout


def main() -> None:
    folder = corpus()
    server = S3Server().start()
    try:
        server.client().create_bucket(Bucket=BUCKET)
        started = time.perf_counter()
        server.upload_tree(BUCKET, "corpus/small", folder / "small")
        uploads = 3000 / (time.perf_counter() - started)
        for kind in ("jsonl", "parquet"):
            server.upload_tree(BUCKET, f"corpus/{kind}", folder / kind)
        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": server.key,
            "AWS_SECRET_ACCESS_KEY": server.secret,
            "PYTHONPATH": str(HERE.parent),
        }
        options = ["--storage-option", f"endpoint_url={server.endpoint}"]
        print(f"fingerprint -j {JOBS}: local files against moto's S3 server on 127.0.0.1 (MB/s of stored bytes)")
        print(f"(the server's own pace: {uploads:.0f} small objects uploaded per second by 8 client threads)")
        print(f"{'corpus':<10} {'MB':>7} {'disk MB/s':>10} {'S3 MB/s':>9} {'S3/disk':>8}")
        for kind in ("small", "jsonl", "parquet"):
            size = stored_bytes(folder / kind)
            disk_seconds, disk_out = fingerprint(str(folder / kind), env, [])
            s3_seconds, s3_out = fingerprint(f"s3://{BUCKET}/corpus/{kind}", env, options)
            same = s3_out.replace(f"s3://{BUCKET}/corpus/{kind}".encode(), str(folder / kind).encode()) == disk_out
            if not same:
                raise SystemExit(f"{kind}: the records from S3 differ from those of the files on disk")
            disk_rate, s3_rate = size / disk_seconds / 1e6, size / s3_seconds / 1e6
            print(f"{kind:<10} {size / 1e6:>7.1f} {disk_rate:>10.1f} {s3_rate:>9.1f} {s3_rate / disk_rate:>8.2f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
