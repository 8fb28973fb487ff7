#!/usr/bin/env python3
"""The persistent index at scale (``make bench``): create, add, query, cluster, bytes on disk.

Fingerprints are generated (random 64-bit values and 128-byte sketches, a tenth of them planted
near-duplicates of earlier ones: two bits flipped, four sketch bytes changed), in the binary
form, with the settings of ``simdedup fingerprint``'s defaults. The batch added holds new
documents, near-duplicates of indexed ones, and the fingerprints of generated texts that the
query step then looks up (each query text is one of them with a word changed).

Rows, each a fresh process (wall seconds, peak RSS), side by side in one run:
- ``cluster -k 3`` over the N fingerprints, and ``index create --from`` on the same file;
- ``index add`` of the batch (and of a tenth of it) to the index of N, and of the batch to an
  index of N / 10: the cost follows the batch, not the index;
- ``index query``: one document fingerprinted and looked up, in a warm process (the median of
  200 queries through the Python API), and one CLI run;
- ``index cluster`` and ``index compact``; bytes on disk per document;
- the peak RSS of ``cluster``, ``index create``, ``index cluster`` and ``index compact`` beside
  the bound they are held to (:data:`MEMORY_BOUND_MB`, 4 GB at 10^7, in proportion below);
- history: the 1,000th add of 5 documents beside the first, and a query after 1,000 such adds
  beside one after the first and one on the same documents added at once (warm, Python API):
  what accumulates with the adds is merged as they go, so neither cost grows with history.

    python benchmarks/index_bench.py                      # N = 10^7, batch 10^5
    python benchmarks/index_bench.py --size 1e6 --work /tmp/idx-bench
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIMDEDUP = str(Path(sys.executable).parent / "simdedup")
K = 3
#: the peak RSS the four whole-index steps are held to at 10^7 fingerprints
MEMORY_BOUND_MB = 4000
VOCABULARY = [f"w{i}" for i in range(20000)]

_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "wb"), stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - start, "rss_mb": usage.ru_maxrss / 1024, "status": done.returncode}))
"""


def measure(argv: list[str]) -> dict:
    """Wall seconds and peak RSS of one run of a command in a fresh process."""
    for arg in argv:  # inputs in the page cache
        if os.path.isfile(arg):
            with open(arg, "rb") as handle:
                while handle.read(1 << 24):
                    pass
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, os.devnull, *argv], capture_output=True, text=True, check=True
    )
    figures = json.loads(result.stdout)
    if figures["status"] != 0:
        raise SystemExit(f"benchmark job failed: {' '.join(argv)}")
    return figures


def texts(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(VOCABULARY, int(rng.integers(150, 400)))) for _ in range(count)]


def generate(folder: Path, size: int, batch: int, queries: int) -> tuple[dict[str, Path], list[str]]:
    """The files of the N fingerprints (``main``), its first tenth (``head``), the batch and its
    first tenth and the rest; and the query texts. Files are kept between runs."""
    from simdedup.fingerprints.binary import BLOCK_RECORDS, encode_columns
    from simdedup.fingerprints.record import FingerprintRecord
    from simdedup.methods import SimhashMethod
    from simdedup.tokenizers import get_tokenizer

    files = {name: folder / f"{name}-{size}-{batch}.sdfp" for name in ("main", "head", "batch", "tenth", "rest")}
    fingerprinter = SimhashMethod(get_tokenizer("words"))
    documents = texts(queries, 7)
    if all(path.exists() for path in files.values()):
        return files, documents
    settings = fingerprinter.settings
    template = FingerprintRecord("", 0, 64, 0, settings, 0, bytes(settings["sketch"]))
    rng = np.random.default_rng(size)
    total = size + batch
    values = rng.integers(0, 1 << 62, total, dtype=np.int64).astype(np.uint64) * np.uint64(4) + rng.integers(
        0, 4, total
    ).astype(np.uint64)
    sketches = rng.integers(0, 256, (total, settings["sketch"]), dtype=np.uint8)
    planted = np.flatnonzero(rng.random(total) < 0.1)
    planted = planted[planted > 0]
    origin = (rng.random(len(planted)) * planted).astype(np.int64)
    values[planted] = values[origin]
    sketches[planted] = sketches[origin]
    for _ in range(2):
        values[planted] ^= np.uint64(1) << rng.integers(0, 64, len(planted)).astype(np.uint64)
    for _ in range(4):
        sketches[planted, rng.integers(0, settings["sketch"], len(planted))] = rng.integers(
            0, 256, len(planted), dtype=np.uint8
        )
    features = rng.integers(20, 500, total)
    query_records = [fingerprinter.fingerprint_text(f"text{i:05d}", text) for i, text in enumerate(documents)]
    for i, record in enumerate(query_records):  # the texts' fingerprints go in with the batch
        at = size + i
        values[at] = record.simhash
        sketches[at] = np.frombuffer(record.sketch, dtype=np.uint8)
        features[at] = record.features
    ids = [f"doc{i:09d}" for i in range(total)]
    ids[size : size + queries] = [r.id for r in query_records]

    def write(path: Path, start: int, stop: int) -> None:
        with open(path, "wb") as out:
            for first in range(start, stop, BLOCK_RECORDS):
                last = min(stop, first + BLOCK_RECORDS)
                out.write(
                    encode_columns(
                        template,
                        ids[first:last],
                        values[first:last].reshape(-1, 1),
                        features[first:last],
                        features[first:last] * 6,
                        sketches[first:last],
                    )
                )

    for name, (start, stop) in {
        "main": (0, size),
        "head": (0, size // 10),
        "batch": (size, total),
        "tenth": (size, size + batch // 10),
        "rest": (size + batch // 10, total),
    }.items():
        write(files[name], start, stop)
    return files, documents


def warm_queries(index_dir: Path, documents: list[str]) -> dict:
    """Median and 95th percentile of fingerprint + lookup of one document in an open index."""
    from simdedup.store.api import Index, fingerprinter_for

    rng = np.random.default_rng(3)
    with Index(str(index_dir)) as index:
        fingerprinter = fingerprinter_for(index.settings)
        seconds, found = [], 0
        for round_ in range(2):  # the first round warms the pages and the code
            for number, text in enumerate(documents):
                words = text.split()
                words[int(rng.integers(len(words)))] = "changed"
                start = time.perf_counter()
                matches = index.query_record(fingerprinter.fingerprint_text("query", " ".join(words)))
                took = time.perf_counter() - start
                if round_:
                    seconds.append(took)
                    found += any(m.id == f"text{number:05d}" for m in matches)
    return {
        "median_ms": 1000 * float(np.median(seconds)),
        "p95_ms": 1000 * float(np.percentile(seconds, 95)),
        "queries": len(seconds),
        "found_their_text": found,
    }


def history(work: Path, adds: int = 1000, batch: int = 5) -> list[tuple[str, dict]]:
    """Rows: the cost of small adds and of queries as the adds pile up (see the module)."""
    from simdedup.fingerprints import FingerprintSet, json_lines, load_fingerprints
    from simdedup.methods import SimhashMethod
    from simdedup.options import ClusterOptions
    from simdedup.store.api import Index, create
    from simdedup.tokenizers import get_tokenizer

    fingerprinter = SimhashMethod(get_tokenizer("words"))
    records = [fingerprinter.fingerprint_text(f"h{n:06d}", text) for n, text in enumerate(texts(adds * batch, 11))]

    def batch_of(chosen: list) -> FingerprintSet:
        return load_fingerprints([("batch", io.BytesIO(json_lines(chosen)))])

    def query_ms(index: Index) -> float:
        seconds = []
        for record in records[:: max(1, len(records) // 200)][:200]:
            start = time.perf_counter()
            index.query_record(record)
            seconds.append(time.perf_counter() - start)
        return 1000 * float(np.median(seconds))

    many, once = work / "idx-history", work / "idx-once"
    for folder in (many, once):
        shutil.rmtree(folder, ignore_errors=True)
        create(str(folder), fingerprinter.settings, ClusterOptions(k=K))
    add_ms, rows = [], []
    with Index(str(many)) as index:
        for number in range(adds):
            chosen = batch_of(records[number * batch : (number + 1) * batch])
            start = time.perf_counter()
            index.add(chosen, report=False)
            add_ms.append(1000 * (time.perf_counter() - start))
            if number == 0:
                after_one = query_ms(index)
        rows.append(
            (
                f"index add of {batch} documents: the 1st, the {adds:,}th (median of the last 10), the slowest",
                {
                    "first_ms": round(add_ms[0], 2),
                    f"add_{adds}_ms": round(float(np.median(add_ms[-10:])), 2),
                    "slowest_ms": round(max(add_ms), 2),
                    "mean_ms": round(float(np.mean(add_ms)), 2),
                    "segments": len(index._segments),
                },
            )
        )
        after_many = query_ms(index)
    with Index(str(once)) as index:
        index.add(batch_of(records), report=False)
        at_once = query_ms(index)
    rows.append(
        (
            f"index query, warm: after 1 add, after {adds:,} adds, after 1 add of the same {adds * batch:,}",
            {
                "after_1_add_ms": round(after_one, 2),
                f"after_{adds}_adds_ms": round(after_many, 2),
                "one_add_of_all_ms": round(at_once, 2),
            },
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=float, default=1e7, help="fingerprints in the index")
    parser.add_argument("--batch", type=float, default=1e5, help="fingerprints added")
    parser.add_argument("--work", type=Path, help="folder for the generated files and indexes [a temporary one]")
    parser.add_argument("--history-only", action="store_true", help="only the rows of small adds piling up")
    args = parser.parse_args()
    size, batch = int(args.size), int(args.batch)
    work = args.work or Path(tempfile.mkdtemp(prefix="simdedup-index-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.history_only:
        for name, figures in history(work):
            print(json.dumps({"step": name, **figures}))
        return
    started = time.perf_counter()
    files, documents = generate(work, size, batch, 200)
    print(f"generated {size:,} + {batch:,} fingerprints in {work} ({time.perf_counter() - started:.0f} s)")
    rows = []

    def row(name: str, figures: dict, **extra) -> None:
        rows.append({"step": name, **figures, **extra})
        print(json.dumps(rows[-1]))

    index = work / "idx"
    small = work / "idx-small"
    for folder in (index, small):
        shutil.rmtree(folder, ignore_errors=True)
    cluster = measure([SIMDEDUP, "cluster", "-k", str(K), str(files["main"])])
    row(f"cluster -k {K} ({size:,})", cluster)
    create = measure([SIMDEDUP, "index", "create", str(index), "-k", str(K), "--from", str(files["main"])])
    row(f"index create --from ({size:,})", create, ratio_to_cluster=round(create["seconds"] / cluster["seconds"], 2))
    stats = json.loads(
        subprocess.run(
            [SIMDEDUP, "index", "stats", "--json", str(index)], capture_output=True, check=True, text=True
        ).stdout
    )
    row("bytes on disk per document", {"bytes_per_document": stats["bytes_per_document"], "bytes": stats["bytes"]})
    # an index of N / 10 takes the batch; the index of N takes a tenth of it, then the rest
    subprocess.run(
        [SIMDEDUP, "index", "create", str(small), "-k", str(K), "--from", str(files["head"])],
        check=True,
        capture_output=True,
    )
    row(f"index add {batch:,} to {size // 10:,}", measure([SIMDEDUP, "index", "add", str(small), str(files["batch"])]))
    row(f"index add {batch // 10:,} to {size:,}", measure([SIMDEDUP, "index", "add", str(index), str(files["tenth"])]))
    row(
        f"index add {batch - batch // 10:,} to {size + batch // 10:,}",
        measure([SIMDEDUP, "index", "add", str(index), str(files["rest"])]),
    )
    row(f"index query, warm, at {size + batch:,} (k = {K})", warm_queries(index, documents))
    query_file = work / "query.txt"
    query_file.write_text(documents[0])
    row(
        "index query, one CLI run (start-up included)",
        measure([SIMDEDUP, "index", "query", str(index), str(query_file)]),
    )
    row(f"index cluster ({size + batch:,})", measure([SIMDEDUP, "index", "cluster", str(index)]))
    row("index compact", measure([SIMDEDUP, "index", "compact", str(index)]))
    bound = MEMORY_BOUND_MB * size / 10**7
    peaks = {
        name: round(next(r["rss_mb"] for r in rows if r["step"].startswith(name)))
        for name in ("cluster -k", "index create", "index cluster", "index compact")
    }
    row(
        f"peak RSS MB of the four whole-index steps, bound {bound:,.0f} MB",
        {**peaks, "bound_mb": round(bound), "within": all(peak <= bound for peak in peaks.values())},
    )
    stats = json.loads(
        subprocess.run(
            [SIMDEDUP, "index", "stats", "--json", str(index)], capture_output=True, check=True, text=True
        ).stdout
    )
    row("bytes on disk per document, compacted", {"bytes_per_document": stats["bytes_per_document"]})
    for name, figures in history(work):
        row(name, figures)
    if args.work is None:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
