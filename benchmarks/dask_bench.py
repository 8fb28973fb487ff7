"""--engine dask against -j 2 on this machine, side by side in one run (make bench-dask).

1. dedup of 10^6 generated documents (tests/distributed_corpus.py; 0.02% of them from one
   template): `simdedup dedup -j 2 -k 8` against `--engine dask --local 2`, and against the same
   stages on this machine's processes (`--engine stages -j 2`), same output checked.
2. cluster of 10^7 generated fingerprints (1% planted near copies), -k 3, both ways.
3. (first) the pair search's table work: the broadcast task as it was before it sorted packed
   keys (``TABLE_WORK_BEFORE``, from git) and now, on the same 10^7 fingerprints at k = 3 (and
   10^6 at k = 8), in alternating processes: row-tables per second on one core, peak RSS, same
   pairs checked.
   ``--table-work`` runs this part alone.
4. ``--dedup-only [N]``: part 1 alone, the two runs alternated N times (3), with the median of
   the ratio: the target is the Dask run within 1.3x of ``-j 2``.

For each: wall seconds, peak RSS of the largest process, the overhead of the engine, and per
stage of the distributed run the rows per second per worker core (two workers, one thread
each). Then the extrapolation to 10^9 documents from these rates. Corpora are kept in
benchmarks/.dask (about 1 GB).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".dask"
SIMDEDUP = [sys.executable, "-m", "simdedup"]
WORKERS = 2
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))


def corpus(documents: int) -> Path:
    from distributed_corpus import write_corpus

    folder = DATA / f"corpus-{documents}"
    done = folder / ".complete"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        write_corpus(folder, documents, seed=1, files=8, template_share=0.0002)
        done.touch()
    return folder


def fingerprints(count: int) -> Path:
    """``count`` 64-bit fingerprints in the binary form: random, 1% planted copies 2 bits away
    (the generator of ``speed.py``, kept in benchmarks/.corpus)."""
    from speed import binary_copy, make_fingerprints

    return binary_copy(make_fingerprints(count))


_WRAPPER = (
    "import resource, subprocess, sys; status = subprocess.run(sys.argv[1:]).returncode; "
    "print('peak-kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(status)"
)


def measure(argv: list[str], output: Path) -> dict:
    """Wall seconds, peak RSS (of the largest process of the run: ``RUSAGE_CHILDREN`` of a fresh
    wrapper process) and stderr of one run."""
    start = time.perf_counter()
    with open(output, "wb") as out:
        result = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], stdout=out, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode not in (0, 3):
        raise SystemExit(f"failed: {' '.join(argv)}\n{result.stderr}")
    peak = int(result.stderr.rsplit("peak-kb ", 1)[1])
    return {
        "seconds": round(seconds, 1),
        "peak_mb": round(peak / 1024),
        "stderr": result.stderr,
        "sha256": hashlib.sha256(output.read_bytes()).hexdigest(),
    }


_STAGE = re.compile(r"simdedup: ([a-z-]+): (\d+)/(\d+) tasks.*?, ([\d,]+) rows, ([\d.]+ [kMG]?B), ([\d.]+) s")
_DRIVER = re.compile(r"simdedup: ([a-z]+) \(driver\): .*?([\d.]+) s$", re.M)


def stages(stderr: str, documents: int) -> list[dict]:
    """Per stage: tasks, seconds, and documents per second per worker core (the stage's input
    is every document; its rows are what it wrote)."""
    out = []
    for name, done, total, rows, size, seconds in _STAGE.findall(stderr):
        seconds = float(seconds)
        out.append(
            {
                "stage": name,
                "tasks": int(total),
                "rows out": int(rows.replace(",", "")),
                "bytes out": size,
                "seconds": seconds,
                "docs/s per core": round(documents / seconds / WORKERS) if seconds else None,
            }
        )
    for name, seconds in _DRIVER.findall(stderr):  # one process: per core is per second
        seconds = float(seconds)
        out.append(
            {
                "stage": f"{name} (driver)",
                "seconds": seconds,
                "docs/s per core": round(documents / seconds) if seconds else None,
            }
        )
    return out


def compare(name: str, single: list[str], distributed: list[str], documents: int, engine: str = "dask") -> dict:
    work = DATA / f"work-{name}"
    shutil.rmtree(work, ignore_errors=True)
    one = measure(single, DATA / f"{name}.single")
    staged = measure(distributed + ["--work-dir", str(work)], DATA / f"{name}.{engine}")
    shutil.rmtree(work, ignore_errors=True)
    return {
        "job": name,
        "documents": documents,
        "-j 2 s": one["seconds"],
        f"{engine} s": staged["seconds"],
        "overhead": f"{staged['seconds'] / one['seconds'] - 1:+.0%}",
        "same output": one["sha256"] == staged["sha256"],
        "-j 2 peak MB": one["peak_mb"],
        f"{engine} peak MB": staged["peak_mb"],
        f"end to end docs/s per core ({engine})": round(documents / staged["seconds"] / WORKERS),
        "stages": stages(staged["stderr"], documents),
    }


def shuffle_bytes(n: int) -> dict:
    """Per k (64 bits): the tables the cost model picks for ``n`` fingerprints and the bytes one
    shuffle of the pair search moves (value and row, 16 bytes, per fingerprint per table); the
    broadcast mode moves the 8-byte column to each worker instead."""
    from simdedup.engines.pairs import plan_blocks, tables

    out = {"broadcast, per worker": f"{8 * n / 1e9:.0f} GB"}
    for k in (3, 4, 6, 8):
        blocks = plan_blocks(n, k, 64)
        count = len(tables(64, k, blocks))
        out[f"k={k}"] = f"{blocks} blocks, {count} tables, {16 * n * count / 1e12:.2f} TB"
    return out


#: the pair search's table work before this branch changed it (an argsort of the keys; a part of
#: a table chosen by a hash of the whole column's keys), measured beside the current one
TABLE_WORK_BEFORE = "084c7dd"


def column(count: int) -> Path:
    """``count`` random 64-bit fingerprints and 1% near copies 2 bits away, distinct and sorted
    (the pair search's input), as ``.npy``."""
    import numpy as np

    path = DATA / f"column-{count}.npy"
    if not path.exists():
        rng = np.random.default_rng(count)
        values = rng.integers(0, 2**64, size=count, dtype=np.uint64)
        copies = values[rng.integers(0, count, count // 100)]
        for _ in range(2):
            copies ^= np.uint64(1) << rng.integers(0, 64, len(copies)).astype(np.uint64)
        DATA.mkdir(parents=True, exist_ok=True)
        np.save(path, np.unique(np.concatenate([values, copies])).reshape(-1, 1))
    return path


def _tree(revision: str) -> Path:
    """The package as it was at ``revision``, whole (its pair stage imports its own modules of
    that time), extracted from git once under :data:`DATA`."""
    import io
    import tarfile

    tree = DATA / f"tree-{revision}"
    if not (tree / "simdedup").is_dir():
        archive = subprocess.run(
            ["git", "archive", revision, "simdedup"], cwd=HERE.parent, capture_output=True, check=True
        ).stdout
        partial = DATA / f"tree-{revision}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(partial, filter="data")
        partial.rename(tree)
    return tree


def _pairs_module():
    """The pair stage of the ``simdedup`` this process imports (``engines/`` was
    ``distributed/``; asked for by the folder it has, as the editable install's finder would
    answer for the other from the working tree)."""
    import importlib

    import simdedup

    package = "engines" if (Path(simdedup.__file__).parent / "engines").is_dir() else "distributed"
    return importlib.import_module(f"simdedup.{package}.pairs")


def table_job(path: str, k: int, parts: int) -> None:
    """One side of the table-work comparison, in its own process (``PYTHONPATH`` says which
    package): three tables of the column, each in ``parts`` broadcast tasks run one after the
    other; prints seconds, peak RSS and a digest of the pairs."""
    import resource

    import numpy as np

    pairs = _pairs_module()
    values = np.load(path)
    blocks = pairs.plan_blocks(len(values), k, 64)
    count = len(pairs.tables(64, k, blocks))
    chosen = sorted({0, count // 2, count - 1})
    digest = hashlib.sha256()
    pairs.broadcast_task(values[:1000], 64, k, blocks, 0, 0, 1)  # loads the kernels it uses, untimed
    start = time.perf_counter()
    codes = []
    for table in chosen:
        for part in range(parts):
            found = pairs.broadcast_task(values, 64, k, blocks, table, part, parts)
            left, right = (found.left, found.right) if hasattr(found, "left") else found
            codes.append(left * len(values) + right)
    seconds = time.perf_counter() - start
    digest.update(np.sort(np.concatenate(codes)).tobytes())
    print(
        json.dumps(
            {
                "seconds": seconds,
                "row-tables": len(values) * len(chosen),
                "tables": count,
                "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "pairs": digest.hexdigest(),
                "module": pairs.__file__,
            }
        )
    )


def table_work(count: int, k: int, parts_list: tuple[int, ...]) -> list[dict]:
    """Row-tables per second on one core of the broadcast task before (``TABLE_WORK_BEFORE``) and
    now, side by side (alternating processes) on the same column, for some parts a table."""
    path = column(count)
    rows = []
    for parts in parts_list:
        runs = {}
        for label, tree in (("before", _tree(TABLE_WORK_BEFORE)), ("now", HERE.parent)):
            argv = [sys.executable, __file__, "--table-job", str(path), str(k), str(parts)]
            env = dict(os.environ, PYTHONPATH=str(tree))
            done = subprocess.run(argv, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                raise SystemExit(f"the table job of {label} failed:\n{done.stderr[-3000:]}")
            runs[label] = json.loads(done.stdout)
            if not Path(runs[label]["module"]).is_relative_to(tree):
                raise SystemExit(f"the table job of {label} ran {runs[label]['module']}, not {tree}'s")
        rate = {label: run["row-tables"] / run["seconds"] for label, run in runs.items()}
        rows.append(
            {
                "k": k,
                "fingerprints": count,
                "tables": runs["now"]["tables"],
                "parts a table": parts,
                "before: row-tables/s per core": f"{rate['before']:.3g}",
                "now: row-tables/s per core": f"{rate['now']:.3g}",
                "speed-up": round(rate["now"] / rate["before"], 2),
                "peak MB before / now": f"{runs['before']['peak_mb']} / {runs['now']['peak_mb']}",
                "same pairs": runs["before"]["pairs"] == runs["now"]["pairs"],
            }
        )
    return rows


def dedup_repeated(times: int) -> int:
    """The dedup job of part 1, ``-j 2`` and ``--engine dask --local 2`` alternated ``times``
    times; the median of the per-round ratios, since this machine's speed moves between rounds."""
    documents = int(os.environ.get("DASK_BENCH_DOCUMENTS", 1_000_000))
    folder = corpus(documents)
    common = ["-k", "8", "--id-field", "id", str(folder)]
    rounds = [
        compare(
            "dedup",
            SIMDEDUP + ["dedup", "-j", str(WORKERS), *common],
            SIMDEDUP + ["dedup", "--engine", "dask", "--local", str(WORKERS), *common],
            documents,
        )
        for _ in range(times)
    ]
    ratios = sorted(r["dask s"] / r["-j 2 s"] for r in rounds)
    summary = {
        "rounds": [
            {k: r[k] for k in ("-j 2 s", "dask s", "same output", "-j 2 peak MB", "dask peak MB")} for r in rounds
        ],
        "median dask / -j 2": round(ratios[len(ratios) // 2], 2),
    }
    print(json.dumps(summary, indent=1))
    return 0 if all(r["same output"] for r in rounds) else 1


def main() -> int:
    if sys.argv[1:2] == ["--table-job"]:
        path, k, parts = sys.argv[2:5]
        table_job(path, int(k), int(parts))
        return 0
    if sys.argv[1:2] == ["--dedup-only"]:
        return dedup_repeated(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
    count = int(os.environ.get("DASK_BENCH_FINGERPRINTS", 10_000_000))
    # k = 3 as in the target; k = 8 at 10^6 is the shape of the dedup job's tables below
    work = table_work(count, 3, (1, 4, 16)) + table_work(count // 10, 8, (1,))
    print(json.dumps(work, indent=1))
    if sys.argv[1:2] == ["--table-work"]:
        return 0 if all(r["same pairs"] for r in work) else 1
    documents = int(os.environ.get("DASK_BENCH_DOCUMENTS", 1_000_000))
    folder = corpus(documents)
    rows = [
        compare(
            "dedup",
            SIMDEDUP + ["dedup", "-j", "2", "-k", "8", "--id-field", "id", str(folder)],
            SIMDEDUP
            + ["dedup", "--engine", "dask", "--local", str(WORKERS), "-k", "8", "--id-field", "id", str(folder)],
            documents,
        )
    ]
    rows.append(
        compare(
            "dedup",
            SIMDEDUP + ["dedup", "-j", "2", "-k", "8", "--id-field", "id", str(folder)],
            SIMDEDUP + ["dedup", "--engine", "stages", "-j", str(WORKERS), "-k", "8", "--id-field", "id", str(folder)],
            documents,
            engine="stages",
        )
    )
    path = fingerprints(count)
    rows.append(
        compare(
            "cluster",
            SIMDEDUP + ["cluster", "-k", "3", str(path)],
            SIMDEDUP + ["cluster", "--engine", "dask", "--local", str(WORKERS), "-k", "3", str(path)],
            count,
        )
    )
    print(json.dumps(rows, indent=1))
    dedup = rows[0]
    rate = {s["stage"]: s["docs/s per core"] for s in dedup["stages"]}
    core_hours = {stage: round(1e9 / r / 3600, 1) for stage, r in rate.items() if r}
    total = round(1e9 / dedup["end to end docs/s per core (dask)"] / 3600, 1)
    print(
        json.dumps(
            {
                "10^9 documents, core-hours by stage (from the dedup rates above)": core_hours,
                "10^9 documents, core-hours end to end": total,
                "shuffle of the pair search at 10^9 (16 bytes a row a table)": shuffle_bytes(10**9),
            },
            indent=1,
        )
    )
    return 0 if all(r["same output"] for r in rows) and all(r["same pairs"] for r in work) else 1


if __name__ == "__main__":
    raise SystemExit(main())
