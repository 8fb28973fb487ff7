"""Issue 42, item 6: a warning about a row whose id ``--id-field`` gives named only the id (a URL
from crawled data), not where the row is. Every warning about a row names its ``FILE:LINE``
(with the id beside it): generated JSON-lines and CSV files with bad rows of every kind, read by
fingerprint (at -j 1 and 2), exact and dedup with -v (every warning said), and dedup on the
stages engine."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from simdedup.cli import cli

STAGES = ["dedup", "--engine", "stages", "-j", "1"]
GOOD = "words enough to make a fingerprint of this row"
#: a bad JSON line of each kind (None: not JSON)
BAD_LINES = [
    {"url": "http://x/{n}", "text": ""},  # no text
    {"url": "http://x/{n}", "text": "!!! ... ???"},  # no features
    {"text": GOOD},  # no id field
    {"url": 5.5, "text": GOOD},
    {"url": ["a"], "text": GOOD},
    {"url": "http://x/{n}", "text": 7},
    None,
]


def fill(value, n):
    if isinstance(value, dict):
        return {k: fill(v, n) for k, v in value.items()}
    return value.replace("{n}", str(n)) if isinstance(value, str) else value


@pytest.mark.parametrize("seed", range(5))
def test_every_warning_about_a_row_names_its_line(tmp_path, seed):
    rng = random.Random(seed)
    lines, bad = [], set()
    for number in range(1, rng.randint(6, 20)):
        if rng.random() < 0.5:
            kind = rng.choice(BAD_LINES)
            lines.append("not json {" if kind is None else json.dumps(fill(kind, number)))
            bad.add(number)
        else:
            lines.append(json.dumps({"url": f"http://good/{number}", "text": f"{GOOD} {number}"}))
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(lines) + "\n")
    table = tmp_path / "rows.csv"
    csv_bad = {n for n in range(2, 8) if rng.random() < 0.5}
    table.write_text("url,text\n" + "".join(f"http://c/{n},{'' if n in csv_bad else GOOD}\n" for n in range(2, 8)))
    for path, wanted in ((rows, bad), (table, {n - 1 for n in csv_bad})):
        runs = (["fingerprint", "-j", "1"], ["fingerprint", "-j", "2"], ["exact"], ["dedup", "-j", "1"], STAGES)
        for args in runs:
            if args[0] == "exact" and path == table:
                continue
            result = CliRunner().invoke(cli, [*args, "--silent", "-v", "--id-field", "url", str(path)])
            warned = [line for line in result.stderr.splitlines() if line.startswith("simdedup: warning: ")]
            found = set()
            for line in warned:
                if line.endswith(" more problems") or line.endswith(" more problem"):
                    continue  # the count of the rest (the stages engine)
                match = re.match(rf"simdedup: warning: {re.escape(str(path))}:(\d+)[: ]", line)
                assert match, (args, line)
                found.add(int(match.group(1)))
            # exact reads text only: a row without features is no problem of its; the stages
            # engine says the first few of a file's warnings and counts the rest
            assert found <= wanted and (found == wanted or args[0] == "exact" or args is STAGES), (args, result.stderr)
            assert found or not wanted or args[0] == "exact"
