#!/usr/bin/env python3
"""The review report at scale: seconds to build it, its size, and the time until it is usable
in headless Chromium (Debian's, driven by Playwright).

The corpus is the real-text English corpus of ``make bench`` (``benchmarks/.corpus/real-en``,
built by ``make corpora``) when it is there, else a generated one of 20,000 documents, a third
of them near-duplicates of another.

    python benchmarks/report_bench.py [--documents 20000] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REAL_EN = HERE / ".corpus" / "real-en"


def generated_corpus(folder: Path, count: int) -> Path:
    rng = random.Random(30)
    vocabulary = [f"w{i}" for i in range(20_000)]
    originals = count * 2 // 3
    texts = []
    for n in range(count):
        if n < originals:
            words = rng.choices(vocabulary, k=rng.randrange(80, 1500))
        else:  # a near-duplicate: a few words changed, some appended
            words = list(texts[rng.randrange(originals)].split())
            for _ in range(rng.randrange(1, 6)):
                words[rng.randrange(len(words))] = rng.choice(vocabulary)
            words += rng.choices(vocabulary, k=rng.randrange(0, 8))
        texts.append(" ".join(words))
        path = folder / f"d{n // 1000:02d}" / f"doc-{n:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts[-1])
    return folder


def simdedup(*args: str) -> float:
    start = time.perf_counter()
    status = subprocess.run([sys.executable, "-m", "simdedup", *args]).returncode
    if status not in (0, 3):  # 3: some documents skipped (real-en holds a few empty files)
        raise SystemExit(f"simdedup {args[0]} exited {status}")
    return time.perf_counter() - start


def time_until_usable(page_path: Path, chromium: str) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        start = time.perf_counter()
        page.goto(page_path.as_uri(), timeout=300_000)
        page.wait_for_selector("body[data-ready=true]", timeout=300_000)
        ready = time.perf_counter() - start
        start = time.perf_counter()
        page.select_option("#sort", "near")  # re-sort every cluster, then open the first
        page.click("#cluster-rows tr:nth-child(1)")
        page.wait_for_selector("#cluster-detail .text")
        sort_and_open = time.perf_counter() - start
        browser.close()
    return {"seconds_until_usable": round(ready, 2), "seconds_to_sort_and_open_a_cluster": round(sort_and_open, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000, help="size of the generated corpus")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp)
        corpus = (
            REAL_EN
            if (REAL_EN.parent / "real-en.complete").exists()
            else generated_corpus(work / "corpus", args.documents)
        )
        clusters = work / "clusters.jsonl"
        dedup_seconds = simdedup("dedup", "--silent", str(corpus), "-o", str(clusters))
        page = work / "report.html"
        report_seconds = simdedup("report", str(clusters), "-o", str(page))
        lines = clusters.read_text(encoding="utf-8").splitlines()
        result = {
            "corpus": "real-en" if corpus == REAL_EN else f"generated ({args.documents} documents)",
            "clusters": len(lines),
            "members": sum(json.loads(line)["size"] for line in lines),
            "dedup_seconds": round(dedup_seconds, 2),
            "report_seconds": round(report_seconds, 2),
            "report_bytes": page.stat().st_size,
            **time_until_usable(page, args.chromium),
        }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
