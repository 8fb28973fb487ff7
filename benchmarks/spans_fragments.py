#!/usr/bin/env python3
"""What ``spans find`` removes from the real corpora, checked by rules of its own (not the
units'): spans that are a heading (no lower-case letter, at most 6 words; a Chinese or Japanese
character is half a word), a list bullet (a bullet and at most 6 words) or a wrapped-line
fragment (starting at a line whose line before, as indented or more, goes on into it, or
ending at a line that the next one, as indented, continues: a letter, digit or comma before a
lower-case letter; Chinese or Japanese on both sides of the break).

    python benchmarks/spans_fragments.py             # counts and samples, each unit kind
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simdedup.read import open_document  # noqa: E402
from simdedup.spans.collect import WHOLE_BYTES, text_of  # noqa: E402

CORPUS = ROOT / "benchmarks" / ".corpus"
SIMDEDUP = ROOT / ".venv" / "bin" / "simdedup"
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
GOES_ON = re.compile(r"[\w,，、]$")
WORD = re.compile(r"\w+")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _line_before(text: str, at: int) -> str | None:
    """The line before the one ``at`` starts, when that line may go on into it (None when
    ``at`` does not start a line, a blank line or nothing comes before, or the line before is
    more indented: ``at`` starts the next item of a list whose last item ends there)."""
    start = text.rfind("\n", 0, at)
    if text[start + 1 : at].strip() or start < 0:
        return None
    previous = text[text.rfind("\n", 0, start) + 1 : start]
    if not previous.strip() or _indent(previous) > at - start - 1:
        return None
    return previous.rstrip()


def _line_after(text: str, at: int) -> str | None:
    """The line after the one ``at`` ends, when it goes on at the same indentation as the line
    ``at`` is on (a deeper one is an item's definition, a shallower one the next item)."""
    end = text.find("\n", at)
    if end < 0 or text[at:end].strip():
        return None
    line = text[text.rfind("\n", 0, at) + 1 : end]
    following = text[end + 1 : (text.find("\n", end + 1) + 1 or len(text) + 1) - 1]
    if not following.strip() or _indent(following) != _indent(line):
        return None
    return following.strip()


def _continues(last: str, first: str) -> bool:
    return bool(GOES_ON.search(last)) and (first.islower() or bool(CJK.match(first) and CJK.match(last[-1])))


def kind(text: str, start: int, end: int) -> str | None:
    piece = text[start:end]
    cjk = len(CJK.findall(piece))
    words = len(WORD.findall(CJK.sub(" ", piece))) + cjk / 2  # a Chinese or Japanese character: half a word
    if words <= 6 and not any(c.islower() for c in piece) and any(c.isupper() for c in piece):
        return "heading"
    if re.match(r"[•·*\-–—]\s", piece) and words <= 6:
        return "bullet"
    before, after = _line_before(text, start), _line_after(text, end)
    if before is not None and _continues(before, piece[0]):
        return "fragment"
    if after is not None and _continues(piece, after[0]):
        return "fragment"
    return None


def main() -> None:
    random.seed(46)
    for corpus in ("real-en", "real-zh"):
        for unit in ("paragraph", "line", "sentence"):
            out = subprocess.run(
                [SIMDEDUP, "spans", "find", "--silent", "-j", "2", "--unit", unit, CORPUS / corpus],
                capture_output=True,
                text=True,
            ).stdout
            counts = {"heading": 0, "bullet": 0, "fragment": 0}
            samples: dict[str, list[str]] = {k: [] for k in counts}
            total = 0
            for record in map(json.loads, out.splitlines()):
                text = text_of(open_document(record["id"], "utf-8", WHOLE_BYTES))  # as spans read it
                for span in record["spans"]:
                    total += 1
                    found = kind(text, span["start_char"], span["end_char"])
                    if found:
                        counts[found] += 1
                        if len(samples[found]) < 3:
                            samples[found].append(repr(text[span["start_char"] : span["end_char"]][:80]))
            print(f"{corpus} {unit}: {total} spans; " + ", ".join(f"{k} {v}" for k, v in counts.items()))
            for k, v in samples.items():
                for sample in v:
                    print(f"    {k}: {sample}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
