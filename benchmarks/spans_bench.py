#!/usr/bin/env python3
"""Repeated spans: a labelled dev set made from real text, span precision and recall, and speed
on the real corpora, simdedup's ``spans find`` beside datatrove's sentence dedup.

The dev sets (``benchmarks/.eval/spans-{en,zh}``, made again the same from the corpora of
``make corpora``, seeded): documents sampled from real-en (man pages, Debian docs) or real-zh,
into which real paragraphs are planted:

- boilerplate: paragraphs of documents left out of the sample, each put between two paragraphs
  of 10-20% of the documents;
- quoted passages: paragraphs of the sample copied into one to three other documents, lightly
  edited (a word, or two Chinese characters, changed; kept only where the copy still shares at
  least 0.85 of its shingles);
- natural repeats: paragraphs that repeat in the sampled documents already.

Gold: each copy but the first in the order of ids and offsets (of at least 10 words) is removed.
Scores are over the documents' characters that are not white space: precision is the share of
the removed characters that gold removes, recall the share of gold's removed characters that
are removed; a document a tool drops whole counts as all of its characters removed.

    python benchmarks/spans_bench.py                 # dev sets, scores and speed (installs .venv-bench-spans)
    python benchmarks/spans_bench.py --no-anchors    # simdedup alone
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simdedup.similarity import ExactIndex, KeptText  # noqa: E402
from simdedup.spans.units import normalized, units, weights  # noqa: E402

CORPUS = ROOT / "benchmarks" / ".corpus"
EVAL = ROOT / "benchmarks" / ".eval"
VENV = ROOT / ".venv-bench-spans"
SIMDEDUP = ROOT / ".venv" / "bin" / "simdedup"
ANCHORS = ["datatrove[processing]==0.10.1", "spacy", "orjson"]
SEED = 46


def _sample(corpus: str, count: int, r: random.Random) -> tuple[list[str], list[str]]:
    """Texts of ``count`` documents of 1-40 KB of the corpus, and of others to take paragraphs from."""
    files = sorted(p for p in (CORPUS / corpus).rglob("*") if p.is_file() and 1000 < p.stat().st_size < 40000)
    r.shuffle(files)
    texts = []
    for path in files:
        try:
            texts.append(path.read_text("utf-8"))
        except UnicodeDecodeError:
            continue
        if len(texts) == 2 * count:
            break
    return texts[:count], texts[count:]


def _paragraphs(text: str, minimum: int = 15) -> list[str]:
    spans = units(text, "paragraph")
    return [text[a:b] for (a, b), w in zip(spans, weights(text, spans)) if w >= minimum]


def _edited(paragraph: str, r: random.Random, chinese: bool) -> str | None:
    """The paragraph with a word (two characters of Chinese) changed, if it still shares 0.85
    of its shingles."""
    if chinese:
        at = r.randrange(len(paragraph) - 2)
        copy = paragraph[:at] + "改动" + paragraph[at + 2 :]
    else:
        words = paragraph.split(" ")
        at = r.randrange(len(words))
        words[at] = "changed"
        copy = " ".join(words)
    measured = ExactIndex([KeptText(paragraph), KeptText(copy)]).jaccard("grams", [0], [1])[0]
    return copy if measured >= 0.85 else None


def build(language: str, count: int) -> Path:
    """The dev set of ``language`` (en, zh): ``docs.jsonl`` and ``gold.jsonl``."""
    r = random.Random(f"{SEED}-{language}")
    chinese = language == "zh"
    texts, others = _sample("real-zh" if chinese else "real-en", count, r)
    documents = [text.split("\n\n") for text in texts]  # pieces between which paragraphs go
    boilerplate = [p for text in others for p in _paragraphs(text)][:200]
    for paragraph in r.sample(boilerplate, 5):
        for d in r.sample(range(count), r.randrange(count // 10, count // 5)):
            documents[d].insert(r.randrange(len(documents[d]) + 1), paragraph)
    quotable = [(d, p) for d, text in enumerate(texts) for p in _paragraphs(text)]
    for d, paragraph in r.sample(quotable, min(30, len(quotable))):
        for target in r.sample(range(count), r.randrange(1, 4)):
            copy = _edited(paragraph, r, chinese)
            if copy is not None and target != d:
                documents[target].insert(r.randrange(len(documents[target]) + 1), copy)
    out = EVAL / f"spans-{language}"
    out.mkdir(parents=True, exist_ok=True)
    final = {f"{language}-{d:04d}": "\n\n".join(pieces) for d, pieces in enumerate(documents)}
    with open(out / "docs.jsonl", "w", encoding="utf-8") as handle:
        for doc_id, text in final.items():
            handle.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    _gold(final, out / "gold.jsonl", chinese)
    return out


def _gold(final: dict[str, str], path: Path, chinese: bool) -> None:
    """Each paragraph (10 words or more) that repeats an earlier one, exactly or as a planted
    quote (shingles shared at 0.85 or more), in the order of ids and offsets."""
    seen: list[str] = []
    exact: set[str] = set()
    with open(path, "w", encoding="utf-8") as handle:
        for doc_id in sorted(final):
            text = final[doc_id]
            spans = units(text, "paragraph")
            removed = []
            for (a, b), w in zip(spans, weights(text, spans)):
                if w < 10:
                    continue
                key = normalized(text[a:b])
                if key in exact or _quotes(key, seen):
                    removed.append([a, b])
                else:
                    exact.add(key)
                    seen.append(key)
            handle.write(json.dumps({"id": doc_id, "removed": removed}) + "\n")


def _quotes(key: str, seen: list[str]) -> bool:
    """Whether ``key`` is a planted edited copy of one of ``seen`` (it shares a long stretch and
    0.85 of its shingles with it)."""
    head = key[: max(20, len(key) // 3)]
    tail = key[-max(20, len(key) // 3) :]
    for other in seen:
        if (head in other or tail in other) and abs(len(other) - len(key)) < 20:
            if ExactIndex([KeptText(key), KeptText(other)]).jaccard("grams", [0], [1])[0] >= 0.85:
                return True
    return False


def score(dev: Path, removed: dict[str, list[tuple[int, int]]], dropped: set[str]) -> tuple[float, float, float]:
    """Character precision, recall and F1 of ``removed`` (per document, character ranges) and
    the documents ``dropped`` whole, against the dev set's gold."""
    texts = {json.loads(line)["id"]: json.loads(line)["text"] for line in open(dev / "docs.jsonl", encoding="utf-8")}
    gold = {json.loads(line)["id"]: json.loads(line)["removed"] for line in open(dev / "gold.jsonl", encoding="utf-8")}
    both = predicted = expected = 0
    for doc_id, text in texts.items():
        visible = [k for k, c in enumerate(text) if not c.isspace()]
        mine = set(visible) if doc_id in dropped else _covered(removed.get(doc_id, []), visible)
        theirs = _covered(gold.get(doc_id, []), visible)
        both, predicted, expected = both + len(mine & theirs), predicted + len(mine), expected + len(theirs)
    precision = both / predicted if predicted else 1.0
    recall = both / expected if expected else 1.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _covered(ranges: list, visible: list[int]) -> set[int]:
    found: set[int] = set()
    for a, b in ranges:
        found.update(k for k in visible if a <= k < b)
    return found


def simdedup_removed(dev: Path, unit: str) -> dict[str, list[tuple[int, int]]]:
    """The spans simdedup finds in the dev set (every span, left whole or not)."""
    out = subprocess.run(
        [
            SIMDEDUP,
            "spans",
            "find",
            "--silent",
            "--unit",
            unit,
            "--id-field",
            "id",
            "--max-removed",
            "1",
            dev / "docs.jsonl",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {r["id"]: [(s["start_char"], s["end_char"]) for s in r["spans"]] for r in map(json.loads, out.splitlines())}


DATATROVE = """
import sys
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import SentenceDedupFilter, SentenceDedupSignature, SentenceFindDedups
from datatrove.pipeline.dedup.sentence_dedup import SentDedupConfig
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.typeshelper import Languages

if __name__ == "__main__":
    source, work, language, tasks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    config = SentDedupConfig()
    lang = Languages.english if language == "en" else "cmn"
    read = lambda: JsonlReader(source, text_key="text", id_key="id")
    LocalPipelineExecutor([read(), SentenceDedupSignature(f"{work}/sigs", config=config, finder_workers=1, language=lang)],
                          tasks=tasks, workers=tasks, logging_dir=f"{work}/logs1").run()
    LocalPipelineExecutor([SentenceFindDedups(f"{work}/sigs", f"{work}/dups", config=config)],
                          tasks=1, workers=1, logging_dir=f"{work}/logs2").run()
    LocalPipelineExecutor([read(), SentenceDedupFilter(f"{work}/dups", config=config, language=lang),
                           JsonlWriter(f"{work}/out", compression=None)],
                          tasks=tasks, workers=tasks, logging_dir=f"{work}/logs3").run()
"""


def datatrove(source: Path, work: Path, language: str, tasks: int = 2) -> float:
    """Run datatrove's sentence dedup (its three stages, ``tasks`` workers) on the JSON-lines
    files of ``source``; returns the seconds it took."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    script = work / "run.py"
    script.write_text(DATATROVE)
    start = time.perf_counter()
    subprocess.run(
        [VENV / "bin" / "python", script, source, work, language, str(tasks)], check=True, capture_output=True
    )
    return time.perf_counter() - start


def datatrove_removed(dev: Path, work: Path) -> tuple[dict[str, list[tuple[int, int]]], set[str]]:
    """What datatrove removed from each document of the dev set: the stretches of the original
    that its output lacks (matched word by word), and the documents it dropped."""
    texts = {json.loads(line)["id"]: json.loads(line)["text"] for line in open(dev / "docs.jsonl", encoding="utf-8")}
    kept = {}
    for path in (work / "out").glob("*.jsonl"):
        for line in open(path, encoding="utf-8"):
            record = json.loads(line)
            kept[record["id"]] = record["text"]
    removed = {}
    token = re.compile(r"\S")
    for doc_id, text in texts.items():
        if doc_id not in kept:
            continue
        a = [(m.start(), m.group()) for m in token.finditer(text)]
        b = [m.group() for m in token.finditer(kept[doc_id])]
        matcher = difflib.SequenceMatcher(None, [c for _, c in a], b, autojunk=False)
        gaps = []
        for tag, i1, i2, _, _ in matcher.get_opcodes():
            if tag in ("delete", "replace") and i2 > i1:
                gaps.append((a[i1][0], a[i2 - 1][0] + 1))
        removed[doc_id] = gaps
    return removed, set(texts) - set(kept)


def split_jsonl(path: Path, out: Path, parts: int = 2) -> Path:
    """``path`` as ``parts`` files (datatrove gives each worker a file)."""
    out.mkdir(parents=True, exist_ok=True)
    lines = path.read_text("utf-8").splitlines(keepends=True)
    size = -(-len(lines) // parts)
    for k in range(parts):
        (out / f"part-{k}.jsonl").write_text("".join(lines[k * size : (k + 1) * size]), "utf-8")
    return out


def corpus_jsonl(corpus: str, out: Path, limit_bytes: int | None = None) -> Path:
    """A real corpus as two JSON-lines files (id: its path), up to ``limit_bytes`` of text."""
    if (out / "part-1.jsonl").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    records, size = [], 0
    for path in sorted(p for p in (CORPUS / corpus).rglob("*") if p.is_file()):
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        records.append(json.dumps({"id": str(path.relative_to(CORPUS)), "text": text}, ensure_ascii=False) + "\n")
        size += len(text.encode())
        if limit_bytes and size >= limit_bytes:
            break
    half = len(records) // 2
    (out / "part-0.jsonl").write_text("".join(records[:half]), "utf-8")
    (out / "part-1.jsonl").write_text("".join(records[half:]), "utf-8")
    return out


def timed(command: list) -> tuple[float, int]:
    """Seconds and peak resident memory (KiB, of the largest process) of ``command``, which may
    exit 3 (some documents skipped: files that are not UTF-8)."""
    with tempfile.NamedTemporaryFile("r") as log:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-o", log.name, "-f", "%M", *map(str, command)], capture_output=True)
        if done.returncode not in (0, 3):
            raise subprocess.CalledProcessError(done.returncode, command, done.stdout, done.stderr)
        return time.perf_counter() - start, int(log.read().split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-anchors", action="store_true", help="simdedup alone")
    parser.add_argument(
        "--datatrove-mb", type=float, default=8.0, help="MB of each corpus datatrove's speed is measured on"
    )
    parser.add_argument("--speed-only", action="store_true", help="only the speed on the real corpora")
    arguments = parser.parse_args()
    anchors = not arguments.no_anchors
    if anchors and not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([VENV / "bin" / "pip", "install", "--quiet", *ANCHORS], check=True)
    print("## Span precision, recall and F1 on the dev sets (characters)\n")
    print("| set | tool | precision | recall | F1 |\n|---|---|---|---|---|")
    for language, count in () if arguments.speed_only else (("en", 400), ("zh", 300)):
        dev = build(language, count)
        for unit in ("paragraph", "sentence"):
            p, r, f = score(dev, simdedup_removed(dev, unit), set())
            print(f"| spans-{language} | simdedup spans find --unit {unit} | {p:.3f} | {r:.3f} | {f:.3f} |")
        if anchors:
            work = EVAL / f"datatrove-{language}"
            datatrove(split_jsonl(dev / "docs.jsonl", dev / "parts"), work, language)
            removed, dropped = datatrove_removed(dev, work)
            p, r, f = score(dev, removed, dropped)
            print(f"| spans-{language} | datatrove SentenceDedup | {p:.3f} | {r:.3f} | {f:.3f} |")
    print("\n## Speed on the real corpora, 2 workers (wall time; peak memory of the largest process)\n")
    print("| corpus | tool | MB | seconds | MB/s | peak MiB |\n|---|---|---|---|---|---|")
    for corpus, language in (("real-en", "en"), ("real-zh", "zh")):
        size = sum(p.stat().st_size for p in (CORPUS / corpus).rglob("*") if p.is_file()) / 1e6
        for args in ([], ["--exact-only"]):
            seconds, peak = timed(
                [SIMDEDUP, "spans", "find", "--silent", "-j", "2", *args, CORPUS / corpus, "-o", os.devnull, "--force"]
            )
            name = " ".join(["simdedup spans find", *args])
            print(f"| {corpus} | {name} | {size:.0f} | {seconds:.1f} | {size / seconds:.1f} | {peak / 1024:.0f} |")
        if anchors:
            part = corpus_jsonl(
                corpus, EVAL / f"{corpus}-{arguments.datatrove_mb:g}mb", int(arguments.datatrove_mb * 1e6)
            )
            mb = sum(p.stat().st_size for p in part.glob("*.jsonl")) / 1e6
            start = time.perf_counter()
            datatrove(part, EVAL / f"datatrove-speed-{language}", language)
            seconds = time.perf_counter() - start
            print(
                f"| {corpus} (first {mb:.0f} MB as JSON lines) | datatrove SentenceDedup | {mb:.0f} | {seconds:.1f} | {mb / seconds:.2f} | |"
            )


if __name__ == "__main__":
    main()
