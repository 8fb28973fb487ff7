#!/usr/bin/env python3
"""Speed and memory of simdedup beside the tools users would otherwise run (``make bench``).

Everything is measured in one run on this machine, so compare the ratios, not the absolute
figures. First the corpora of real text (``benchmarks/corpora.py``: English man pages, package
documentation and sources; Chinese news, reviews and documentation; Chinese translations of
program documentation), where the kernel's output is also compared with the Python path's;
then corpora generated deterministically under ``benchmarks/.corpus`` for the scaling curves
(English-like text from a Zipf vocabulary; Chinese-like text from the words of jieba's own
dictionary), with near-duplicate copies mixed in. Anchors run in their own virtualenvs,
created on first use:

- ``.venv-bench-a``: PyPI ``simhash`` 2.1.2 (fed token lists: its text path crashes under numpy 2),
  ``datasketch``, ``rensa``, ``jieba``;
- ``.venv-bench-b``: ``simhash-pybind`` (it installs a package also named ``simhash``) and ``xxhash``.

Every job is a separate process; wall time includes start-up; "CPU s" is the user and system
time of its processes (on a shared machine it moves less than wall time); peak RSS is the job's
own. A job under 20 s runs three times and its median run counts. Before every run its input is read once,
so that it finds it in the page cache.

    python benchmarks/speed.py             # real corpora; sizes 24, 72, 216 MB (-j 2 also at 648 MB); 10^5, 10^6 fingerprints
    python benchmarks/speed.py --large     # also 10^7 fingerprints
    python benchmarks/speed.py --real-only # the real corpora alone
    python benchmarks/speed.py --jieba     # the jieba rows of the real Chinese corpora alone
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from corpora import CORPUS, check_pins, real_corpus, summary  # noqa: E402

SIMDEDUP = [str(Path(sys.executable).parent / "simdedup")]
VENV_A, VENV_B = ROOT / ".venv-bench-a", ROOT / ".venv-bench-b"
ANCHORS_A = ["simhash==2.1.2", "datasketch", "rensa", "jieba"]
ANCHORS_B = ["simhash-pybind", "xxhash"]
MB = 1e6


# --- corpora --------------------------------------------------------------------------------


def _english_vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    words = sorted(
        {"".join(rng.choices(letters, weights=range(26, 0, -1), k=rng.randint(1, 10))) for _ in range(30000)}
    )
    rng.shuffle(words)
    return words, [1 / (rank + 1) for rank in range(len(words))]


def _chinese_vocabulary() -> tuple[list[str], list[float]]:
    import jieba

    words, weights = [], []
    with open(Path(jieba.__file__).parent / "dict.txt", encoding="utf-8") as handle:
        for line in handle:
            word, freq, *_ = line.split()
            words.append(word)
            weights.append(float(freq))
    return words, weights


def make_corpus(kind: str, megabytes: int) -> Path:
    """A folder of documents, about ``megabytes`` of text, 10% of them near copies of others."""
    folder = CORPUS / f"{kind}-{megabytes}mb"
    complete = CORPUS / f"{kind}-{megabytes}mb.complete"
    if complete.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"{kind}-{megabytes}")
    words, weights = _english_vocabulary(rng) if kind == "en" else _chinese_vocabulary()
    joiner = " " if kind == "en" else ""
    stop = "." if kind == "en" else "。"
    size, number, previous = 0, 0, []
    while size < megabytes * MB:
        if previous and rng.random() < 0.1:
            tokens = list(rng.choice(previous))
            for _ in range(max(1, len(tokens) // 50)):  # a 2% edit
                tokens[rng.randrange(len(tokens))] = rng.choices(words, weights)[0]
        else:
            tokens = rng.choices(words, weights, k=rng.randint(200, 3000) if kind == "en" else rng.randint(300, 2000))
            previous = (previous + [tokens])[-50:]
        sentences = [joiner.join(tokens[i : i + 14]) + stop for i in range(0, len(tokens), 14)]
        text = "\n".join(textwrap.wrap(" ".join(sentences), 78)) if kind == "en" else "\n".join(sentences)
        path = folder / f"doc{number:06d}.txt"
        path.write_text(text + "\n", encoding="utf-8")
        size += path.stat().st_size
        number += 1
    complete.touch()
    return folder


def make_fingerprints(count: int) -> Path:
    """``count`` fingerprint lines: random 64-bit values with 1% planted near copies."""
    path = CORPUS / f"fingerprints-{count}.jsonl"
    if path.exists():
        return path
    CORPUS.mkdir(parents=True, exist_ok=True)
    rng = random.Random(count)
    with open(path, "w") as out:
        values = []
        for i in range(count):
            if values and rng.random() < 0.01:
                value = rng.choice(values) ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64))
            else:
                value = rng.getrandbits(64)
                if len(values) < 10000:
                    values.append(value)
            out.write(f'{{"id":"d{i:08d}","simhash":"{value:016x}","bits":64,"features":100}}\n')
    return path


def make_planted(count: int, share: float = 0.1, group: int = 10) -> tuple[Path, Path]:
    """``count`` records as ``fingerprint`` writes them (with 128-byte sketches), ``share`` of
    them in planted groups of ``group`` near copies (each within 2 bits of its group's base value
    and with up to 10 of its base sketch's bins changed); and the same records in the spelling of
    ``jq`` and pandas (keys sorted, spaces after the separators)."""
    from simdedup.sketch import encode

    canonical = CORPUS / f"planted-{count}.jsonl"
    spelled = CORPUS / f"planted-{count}-jq.jsonl"
    if canonical.exists() and spelled.exists():
        return canonical, spelled
    CORPUS.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(count)
    values = rng.integers(0, 2**63, count, dtype=np.int64).astype(np.uint64) * np.uint64(2) + rng.integers(
        0, 2, count, dtype=np.int64
    ).astype(np.uint64)
    sketches = rng.integers(0, 256, (count, 128), dtype=np.uint8)
    planted = int(count * share) // group * group
    members = rng.permutation(count)[:planted].reshape(-1, group)
    for rows in members:
        base, base_sketch = values[rows[0]], sketches[rows[0]]
        for row in rows:
            flips = rng.integers(0, 64, 2)
            values[row] = base ^ (np.uint64(1) << np.uint64(flips[0])) ^ (np.uint64(1) << np.uint64(flips[1]))
            sketch = base_sketch.copy()
            changed = rng.integers(0, 128, rng.integers(0, 11))
            sketch[changed] = rng.integers(0, 256, len(changed), dtype=np.uint8)
            sketches[row] = sketch
    settings = {
        "method": "simhash",
        "tokenizer": "words",
        "options": {"shingle": 1},
        "hash": "xxh3",
        "weighting": "binary",
    }
    tail = json.dumps(settings, separators=(",", ":"))[1:-1]
    with open(canonical, "w") as out, open(spelled, "w") as other:
        for i, (value, sketch) in enumerate(zip(values.tolist(), sketches)):
            text = encode(sketch.tobytes())
            out.write(
                f'{{"id":"d{i:08d}","simhash":"{value:016x}","bits":64,"features":100,"bytes":800,'
                f'{tail},"sketch":"{text}"}}\n'
            )
            other.write(
                json.dumps(
                    {
                        "id": f"d{i:08d}",
                        "simhash": f"{value:016x}",
                        "bits": 64,
                        "features": 100,
                        "bytes": 800,
                        **settings,
                        "sketch": text,
                    },
                    sort_keys=True,
                )
                + "\n"
            )
    return canonical, spelled


def binary_copy(path: Path) -> Path:
    """The same fingerprints in simdedup's compact binary form (``simdedup convert``)."""
    binary = path.with_suffix(".sdfp")
    if not binary.exists():
        subprocess.run(SIMDEDUP + ["convert", "--to", "binary", "-o", str(binary), str(path)], check=True)
    return binary


# --- running jobs ---------------------------------------------------------------------------

_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "wb"), stderr=subprocess.DEVNULL)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "status": done.returncode}))
"""


REPEAT_UNDER = 20.0  # seconds: a job this short runs three times and its median counts


def _warm(argv: list[str]) -> None:
    """Read what a command will read (folders, listed files, files), so that every run finds
    its input in the page cache: this host's page cache is reclaimed often, and a run that
    reads from disk says nothing about the tool."""
    paths: list[Path] = []
    for arg in argv:
        path = Path(arg)
        try:
            if path.is_dir():
                paths += [Path(top, name) for top, _, names in os.walk(path) for name in names]
            elif path.suffix == ".list" and path.is_file():
                paths += [Path(line) for line in path.read_text().splitlines()]
            elif path.is_file() and "bin" not in path.parts:
                paths.append(path)
        except OSError:  # not a path (a script given with -c)
            continue
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def measure(argv: list[str], output: str = os.devnull) -> dict:
    """Wall seconds and peak RSS of a command, run in a fresh process with its input in the
    page cache: one run, or the median of three when it is short (the machines are noisy,
    and short jobs the most)."""
    runs = []
    while len(runs) < (3 if runs and runs[0]["seconds"] < REPEAT_UNDER else 1):
        _warm(argv)
        result = subprocess.run(
            [sys.executable, "-c", _MEASURE, output, *argv], capture_output=True, text=True, check=True
        )
        runs.append(json.loads(result.stdout))
        if runs[-1]["status"] not in (0, 3):
            raise SystemExit(f"benchmark job failed: {' '.join(argv)}")
    return sorted(runs, key=lambda figures: figures["seconds"])[len(runs) // 2]


def tree_peak_mb(argv: list[str]) -> float:
    """Peak memory of a command and every process it starts, in MB: their proportional set
    sizes summed (shared pages counted once), sampled every 10 ms in a run not timed (the
    sampling costs CPU). ``measure``'s peak RSS is its largest single process's, which says
    nothing of the workers of ``-j N``."""
    import time

    def pss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as lines:
                return next((int(line.split()[1]) for line in lines if line.startswith("Pss:")), 0)
        except OSError:
            return 0

    def tree(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as found:
                children = [int(c) for c in found.read().split()]
        except OSError:
            return [pid]
        return [pid, *(p for child in children for p in tree(child))]

    _warm(argv)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        peak = max(peak, sum(pss(pid) for pid in tree(process.pid)))
        time.sleep(0.01)
    return peak / 1024


def compile_bytecode() -> None:
    """Compile simdedup's modules, as pip does on install (and as the anchors' are): an
    editable install under ``PYTHONDONTWRITEBYTECODE`` would compile them on every start."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "simdedup")], check=True)


def ensure_venv(venv: Path, packages: list[str]) -> str:
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        print(f"installing anchors into {venv.name}: {', '.join(packages)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *packages], check=True)
        (venv / ".installed").touch()
    return str(python)


def file_list(folder: Path) -> Path:
    listing = folder.with_suffix(".list")
    listing.write_text("".join(f"{p}\n" for p in sorted(folder.glob("*.txt"))))
    return listing


def utf8_file_list(folder: Path) -> Path:
    """The documents of a folder (at any depth) that are UTF-8, which every tool can read:
    the anchors read files as UTF-8 and would stop at the others."""
    listing = folder.with_suffix(".list")
    paths = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        paths.append(f"{path}\n")
    listing.write_text("".join(paths))
    return listing


def fingerprint_of(target: Path, out: str, *options: str, jobs: int = 1) -> list[str]:
    """The ``fingerprint`` command for a folder, or for the files listed in a ``.list`` (paths on stdin)."""
    command = SIMDEDUP + ["fingerprint", "--silent", "-j", str(jobs), *options, "-o", out, "--force"]
    if target.suffix != ".list":
        return command + [str(target)]
    return ["sh", "-c", " ".join(command) + ' - < "$1"', "sh", str(target)]


def parallel_jobs(folder: Path, out: str) -> tuple[dict, dict, dict]:
    """``fingerprint`` of a folder (or a ``.list`` of files) with defaults on one process, with
    ``-j 2``, and as two independent processes at once, each given every other file (paths on
    stdin). The last is what two cores give with nothing shared: its start-up paid on both cores
    at once and no hand-out, so it is the ceiling for ``-j 2``."""
    one = measure(fingerprint_of(folder, out))
    two = measure(fingerprint_of(folder, out, jobs=2))
    paths = (folder if folder.suffix == ".list" else file_list(folder)).read_text().splitlines(keepends=True)
    halves = [folder.with_suffix(f".half{i}.list") for i in (1, 2)]
    for i, half in enumerate(halves):
        half.write_text("".join(paths[i::2]))
    command = " ".join(SIMDEDUP) + " fingerprint --silent -j 1 -o {out}{i} --force - < {half}"
    script = " & ".join(command.format(out=out, i=i, half=half) for i, half in enumerate(halves)) + "; wait"
    ceiling = measure(["sh", "-c", script, "sh", *map(str, halves)])
    return one, two, ceiling


ANCHOR_SCRIPTS = {
    "floor": "for p in files: open(p, encoding='utf-8').read().split()",
    "pypi-simhash": "from simhash import Simhash\nfor p in files: Simhash(open(p, encoding='utf-8').read().split())",
    "pybind-xxh3": "import simhash, xxhash\nh = xxhash.xxh3_64_intdigest\n"
    "for p in files: simhash.compute([h(t.encode()) for t in open(p, encoding='utf-8').read().split()])",
    "extract-tags": "import jieba, jieba.analyse, logging\njieba.setLogLevel(logging.ERROR)\n"
    "for p in files: jieba.analyse.extract_tags(open(p, encoding='utf-8').read(), topK=20, withWeight=True)",
    "pypi-index": "import json\nfrom simhash import Simhash, SimhashIndex\n"
    "objs = [(json.loads(l)['id'], Simhash(int(json.loads(l)['simhash'], 16))) for l in open(files[0])]\n"
    "index = SimhashIndex(objs, k=3)\nfor key, s in objs: index.get_near_dups(s)",
    "pybind-find-all": "import json, simhash\nvalues = [int(json.loads(l)['simhash'], 16) for l in open(files[0])]\n"
    "simhash.find_all(values, 6, 3)",
    "rensa": """
from rensa import RMinHash, RMinHashLSH
lsh, hashes = RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16), []
for i, p in enumerate(files):
    words = open(p, encoding='utf-8').read().split()
    m = RMinHash(num_perm=128, seed=1)
    m.update([' '.join(words[j:j + 3]) for j in range(max(1, len(words) - 2))])
    lsh.insert(i, m)
    hashes.append(m)
parent = list(range(len(files)))
def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]; x = parent[x]
    return x
for i, m in enumerate(hashes):
    for j in lsh.query(m):
        if j != i and m.jaccard(hashes[j]) >= 0.8:
            parent[find(i)] = find(j)
""",
}


def anchor(python: str, name: str, listing: Path) -> dict:
    script = "import sys\nfiles = [l.rstrip('\\n') for l in open(sys.argv[1])]\n" + ANCHOR_SCRIPTS[name]
    return measure([python, "-c", script, str(listing)])


def near_pairs_in_process(path: Path) -> dict:
    """The pair search alone, on the fingerprints as one array (read from the binary form
    without their ids, so that peak RSS is the search's)."""
    code = f"""
import json, resource, time
import numpy as np
from simdedup.fingerprints.binary import read_blocks
from simdedup.pairs import near_pairs
with open({str(binary_copy(path))!r}, 'rb') as handle:
    fps = np.concatenate([block.values for block in read_blocks(handle, 'f')])
start = time.perf_counter()
near_pairs(fps, 3)
print(json.dumps({{"seconds": time.perf_counter() - start, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


# --- report ---------------------------------------------------------------------------------


TABLE_HEAD = (
    "| job | tool | s | CPU s | MB/s | docs/s | peak RSS MB | simdedup speed-up |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- |"
)


def row(
    job: str,
    tool: str,
    figures: dict,
    megabytes: float | None = None,
    docs: int | None = None,
    baseline: dict | None = None,
) -> str:
    rate = f"{megabytes / figures['seconds']:.1f}" if megabytes else ""
    per_doc = f"{docs / figures['seconds']:,.0f}" if docs else ""
    ratio = f"{baseline['seconds'] / figures['seconds']:.2f}x" if baseline else ""
    cpu = f"{figures['cpu']:.2f}" if "cpu" in figures else ""
    return (
        f"| {job} | {tool} | {figures['seconds']:.2f} | {cpu} | {rate} | {per_doc} | {figures['rss_mb']:.0f} | "
        f"{ratio} |"
    )


def same_output_on_both_paths(folder: Path, *options: str) -> str:
    """Whether the kernel's records of a folder's documents are the Python path's, byte for byte."""
    outputs = []
    for fast in ("1", "0"):
        out = str(CORPUS / f"out-fastpath-{fast}.jsonl")
        subprocess.run(
            fingerprint_of(folder, out, *options),
            env={**os.environ, "SIMDEDUP_FASTPATH": fast},
            stderr=subprocess.DEVNULL,
        )
        outputs.append(Path(out).read_bytes())
    same = "identical" if outputs[0] == outputs[1] else "DIFFERENT"
    records = outputs[0].count(b"\n")
    return f"{same} ({records:,} records)"


def real_rows(python_a: str, python_b: str, out: str) -> None:
    """The real corpora: the targets' rows, and both paths compared on every corpus."""
    listings = {}
    for name in ("real-en", "real-zh", "real-mixed"):
        real_corpus(name)
        print(summary(name))
        listings[name] = utf8_file_list(CORPUS / name)
    for difference in check_pins():
        print(f"corpora: differs from corpora.sha256: {difference}")
    print()
    for name in listings:
        jieba = [["--tokenizer", "jieba"]] if name != "real-en" else []  # its Python path: jieba cutting
        for options in ([], ["--tokenizer", "whitespace", "--sketch", "0"], ["--shingle", "3"], *jieba):
            print(
                f"- {name}, `fingerprint {' '.join(options) or '(defaults)'}`: kernel and Python path "
                f"{same_output_on_both_paths(CORPUS / name, *options)}"
            )
    print("\n" + TABLE_HEAD)
    listing = listings["real-en"]
    paths = listing.read_text().splitlines()
    docs, mb = len(paths), sum(os.path.getsize(p) for p in paths) / MB
    job = f"fingerprint real-en {mb:.0f} MB"
    base = {
        name: anchor(py, name, listing)
        for name, py in (("floor", python_a), ("pypi-simhash", python_a), ("pybind-xxh3", python_b))
    }
    plain = measure(fingerprint_of(listing, out, "--tokenizer", "whitespace", "--sketch", "0"))
    default, two, ceiling = parallel_jobs(listing, out)
    print(row(job, "read + split (floor)", base["floor"], mb, docs))
    print(row(job, "PyPI simhash 2.1.2", base["pypi-simhash"], mb, docs))
    print(row(job, "simhash-pybind + xxh3", base["pybind-xxh3"], mb, docs))
    for label, figures in (("simdedup whitespace, no sketch", plain), ("simdedup defaults (words + sketch)", default)):
        print(row(job, label, figures, mb, docs, base["pypi-simhash"]))
        print(row(job, f"{label}: speed-up over simhash-pybind", figures, mb, docs, base["pybind-xxh3"]))
    print(row(job, "simdedup defaults, -j 2", two, mb, docs, default))
    print(row(job, "two processes on halves (-j 2 ceiling)", ceiling, mb, docs, default))
    subprocess.run(fingerprint_of(listing, out), check=False)  # the records cluster reads
    clustered = measure(SIMDEDUP + ["cluster", "-o", os.devnull, "--force", out])
    print(row(f"cluster real-en ({docs:,} records)", "simdedup cluster (CLI, JSON lines)", clustered, docs=docs))
    rensa = anchor(python_a, "rensa", listing)
    print(row(f"dedup real-en {mb:.0f} MB", "rensa MinHash-LSH (3-shingles, 128 perms)", rensa, mb, docs))
    for jobs in (1, 2):
        command = " ".join(SIMDEDUP) + f' dedup --silent -j {jobs} -o /dev/null - < "$1"'
        dedup = measure(["sh", "-c", command, "sh", str(listing)])
        print(row(f"dedup real-en {mb:.0f} MB", f"simdedup dedup defaults, -j {jobs}", dedup, mb, docs, rensa))
        if jobs > 1:  # the workers keep the texts: the peak of all the processes
            whole = dict(dedup, rss_mb=tree_peak_mb(["sh", "-c", command, "sh", str(listing)]))
            label = f"simdedup dedup defaults, -j {jobs} (peak MB: all its processes)"
            print(row(f"dedup real-en {mb:.0f} MB", label, whole, mb, docs, rensa))
    for name in ("real-zh", "real-mixed"):
        listing = listings[name]
        paths = listing.read_text().splitlines()
        docs, mb = len(paths), sum(os.path.getsize(p) for p in paths) / MB
        job = f"fingerprint {name} {mb:.0f} MB"
        print(row(job, "read + split (floor)", anchor(python_a, "floor", listing), mb, docs))
        print(row(job, "simdedup defaults (words + sketch)", measure(fingerprint_of(listing, out)), mb, docs))
        command = " ".join(SIMDEDUP) + ' dedup --silent -j 1 -o /dev/null - < "$1"'
        dedup = measure(["sh", "-c", command, "sh", str(listing)])
        print(row(f"dedup {name} {mb:.0f} MB", "simdedup dedup defaults, -j 1", dedup, mb, docs))
    jieba_rows(python_a, out, listings)
    print()


def jieba_rows(python_a: str, out: str, listings: dict[str, Path]) -> None:
    """jieba's TF-IDF keywords on the Chinese corpora: the jieba tokenizer (its kernels) against
    ``extract_tags`` itself, and ``jieba-fast`` beside them; then the start-up of one file."""
    for name in ("real-zh", "real-mixed"):
        listing = listings[name]
        paths = listing.read_text().splitlines()
        docs, mb = len(paths), sum(os.path.getsize(p) for p in paths) / MB
        job = f"fingerprint {name} {mb:.0f} MB"
        tags = anchor(python_a, "extract-tags", listing)
        print(row(job, "jieba extract_tags", tags, mb, docs))
        for tokenizer, jobs in (("jieba", 1), ("jieba", 2), ("jieba-fast", 1)):
            ours = measure(fingerprint_of(listing, out, "--tokenizer", tokenizer, jobs=jobs))
            label = f"simdedup --tokenizer {tokenizer}" + (f", -j {jobs}" if jobs > 1 else "")
            print(row(job, label, ours, mb, docs, tags))
    one = ROOT / "examples/zh" / sorted(os.listdir(ROOT / "examples/zh"))[0]
    for tokenizer in ("words", "jieba"):
        print(
            row(
                "start-up",
                f"simdedup fingerprint --tokenizer {tokenizer} (one file)",
                measure(SIMDEDUP + ["fingerprint", "--tokenizer", tokenizer, str(one)]),
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real-only", action="store_true", help="the real corpora alone")
    parser.add_argument("--sizes", default="24,72,216", help="English corpus sizes in MB")
    parser.add_argument(
        "--jobs-size",
        type=int,
        default=648,
        help="English corpus size in MB for -j 2 alone, where start-up weighs little (0: none)",
    )
    parser.add_argument("--zh", type=int, default=8, help="Chinese corpus size in MB")
    parser.add_argument("--large", action="store_true", help="also cluster 10^7 fingerprints")
    parser.add_argument("--jieba", action="store_true", help="the jieba rows of the real Chinese corpora alone")
    args = parser.parse_args()
    compile_bytecode()
    python_a = ensure_venv(VENV_A, ANCHORS_A)
    if args.jieba:
        for name in ("real-zh", "real-mixed"):
            real_corpus(name)
        print(TABLE_HEAD)
        jieba_rows(
            python_a,
            str(CORPUS / "out.jsonl"),
            {name: utf8_file_list(CORPUS / name) for name in ("real-zh", "real-mixed")},
        )
        return 0
    python_b = ensure_venv(VENV_B, ANCHORS_B)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}\n")
    out = str(CORPUS / "out.jsonl")
    real_rows(python_a, python_b, out)
    if args.real_only:
        return 0
    print(TABLE_HEAD)
    for size in sizes:
        folder = make_corpus("en", size)
        listing = file_list(folder)
        docs = len(listing.read_text().splitlines())
        mb = sum(p.stat().st_size for p in folder.glob("*.txt")) / MB
        job = f"fingerprint en {mb:.0f} MB"
        base = {
            name: anchor(py, name, listing)
            for name, py in (("floor", python_a), ("pypi-simhash", python_a), ("pybind-xxh3", python_b))
        }
        plain = measure(
            SIMDEDUP
            + [
                "fingerprint",
                "--silent",
                "-j",
                "1",
                "--tokenizer",
                "whitespace",
                "--sketch",
                "0",
                "-o",
                out,
                "--force",
                str(folder),
            ]
        )
        default, two, ceiling = parallel_jobs(folder, out)
        print(row(job, "read + split (floor)", base["floor"], mb, docs))
        print(row(job, "PyPI simhash 2.1.2", base["pypi-simhash"], mb, docs))
        print(row(job, "simhash-pybind + xxh3", base["pybind-xxh3"], mb, docs))
        print(row(job, "simdedup whitespace, no sketch", plain, mb, docs, base["pypi-simhash"]))
        print(row(job, "simdedup defaults (words + sketch)", default, mb, docs, base["pypi-simhash"]))
        print(row(job, "simdedup defaults, -j 2", two, mb, docs, default))
        print(row(job, "two processes on halves (-j 2 ceiling)", ceiling, mb, docs, default))
    if args.jobs_size:
        folder = make_corpus("en", args.jobs_size)
        docs = len(file_list(folder).read_text().splitlines())
        mb = sum(p.stat().st_size for p in folder.glob("*.txt")) / MB
        job = f"fingerprint en {mb:.0f} MB"
        default, two, ceiling = parallel_jobs(folder, out)
        print(row(job, "simdedup defaults (words + sketch)", default, mb, docs))
        print(row(job, "simdedup defaults, -j 2", two, mb, docs, default))
        print(row(job, "two processes on halves (-j 2 ceiling)", ceiling, mb, docs, default))
    zh = make_corpus("zh", args.zh)
    listing = file_list(zh)
    docs = len(listing.read_text().splitlines())
    mb = sum(p.stat().st_size for p in zh.glob("*.txt")) / MB
    job = f"fingerprint zh {mb:.0f} MB"
    tags = anchor(python_a, "extract-tags", listing)
    print(row(job, "jieba extract_tags", tags, mb, docs))
    for tokenizer, jobs in (("jieba", 1), ("jieba", 2), ("jieba-fast", 1), ("jieba-fast", 2)):
        ours = measure(
            SIMDEDUP
            + ["fingerprint", "--silent", "-j", str(jobs), "--tokenizer", tokenizer, "-o", out, "--force", str(zh)]
        )
        print(
            row(job, f"simdedup --tokenizer {tokenizer}" + (f", -j {jobs}" if jobs > 1 else ""), ours, mb, docs, tags)
        )
    for count in [10**5, 10**6] + ([10**7] if args.large else []):
        path = make_fingerprints(count)
        listing = CORPUS / "fp.list"
        listing.write_text(f"{path}\n")
        job = f"cluster k=3, {count:,} fingerprints"
        cli = measure(SIMDEDUP + ["cluster", "-k", "3", str(path)])
        cli_binary = measure(SIMDEDUP + ["cluster", "-k", "3", str(binary_copy(path))])
        library = near_pairs_in_process(path)
        pybind = anchor(python_b, "pybind-find-all", listing)
        print(row(job, "simhash-pybind find_all", pybind, docs=count))
        if count <= 10**5:
            print(row(job, "PyPI SimhashIndex", anchor(python_a, "pypi-index", listing), docs=count))
        print(row(job, "simdedup cluster (CLI, JSON lines)", cli, docs=count, baseline=pybind))
        print(row(job, "simdedup cluster (CLI, binary form)", cli_binary, docs=count, baseline=pybind))
        print(row(job, "simdedup near_pairs (library, search only)", library, docs=count, baseline=pybind))
    canonical, spelled = make_planted(10**6)
    job = "cluster k=3, 10^6 fingerprints with sketches, 10% in planted groups"
    plain = measure(SIMDEDUP + ["cluster", "-k", "3", str(canonical)])
    print(row(job, "simdedup cluster (CLI, canonical JSON lines)", plain, docs=10**6))
    print(
        row(
            job,
            "simdedup cluster (CLI, jq spelling; speed-up is canonical's)",
            measure(SIMDEDUP + ["cluster", "-k", "3", str(spelled)]),
            docs=10**6,
            baseline=plain,
        )
    )
    folder = make_corpus("en", sizes[-1])
    listing = file_list(folder)
    docs = len(listing.read_text().splitlines())
    mb = sum(p.stat().st_size for p in folder.glob("*.txt")) / MB
    rensa = anchor(python_a, "rensa", listing)
    print(row(f"dedup en {mb:.0f} MB", "rensa MinHash-LSH (3-shingles, 128 perms)", rensa, mb, docs))
    for jobs in (1, 2):
        dedup = measure(SIMDEDUP + ["dedup", "--silent", "-j", str(jobs), str(folder)])
        print(row(f"dedup en {mb:.0f} MB", f"simdedup dedup defaults, -j {jobs}", dedup, mb, docs, rensa))
    startup = measure(SIMDEDUP + ["--help"])
    one = measure(SIMDEDUP + ["fingerprint", str(ROOT / "examples/en/lighthouses.txt")])
    print(row("start-up", "simdedup --help", startup))
    print(row("start-up", "simdedup fingerprint (one file)", one))
    return 0


if __name__ == "__main__":
    sys.exit(main())
