"""``simdedup spans report`` in Debian's chromium: every span marked where it is, beside the
copy it repeats; ids and texts that look like markup stay text."""

from __future__ import annotations

import json

from helpers import write
from test_report_browser import Page, browser  # noqa: F401 (the fixture)

HOSTILE = '<img src=x onerror="document.title=1"></script><script>document.title=2</script>'


def test_spans_are_marked_with_their_copies(run, tmp_path, browser):  # noqa: F811
    paragraph = "A paragraph repeated across documents, long enough to count, with ten words or more in it."
    lines = [
        {"id": "a", "text": f"First.\n\n{paragraph}\n\nKept {HOSTILE}.\n"},
        {"id": HOSTILE, "text": f"Second.\n\n{paragraph}\n\n中文段落。{paragraph}\n"},
    ]
    write(tmp_path / "d.jsonl", "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    spans = run(["spans", "find", "--silent", "--id-field", "id", "--max-removed", "1", tmp_path / "d.jsonl"])
    write(tmp_path / "spans.jsonl", spans.stdout)
    out = tmp_path / "review.html"
    result = run(
        ["spans", "report", "--spans", tmp_path / "spans.jsonl", "--id-field", "id", tmp_path / "d.jsonl", "-o", out]
    )
    assert result.exit_code == 0, result.stderr
    assert b"<script>document.title" not in out.read_bytes()
    page = Page(browser, out, tmp_path)
    marks = page.page.locator("#document-detail mark")
    assert marks.count() == 1  # the repeated paragraph; the one after 中文段落。 is part of a longer paragraph
    assert marks.first.text_content() == paragraph
    # "<img ..." sorts before "a": its copy is the first, kept; a's repeats it, its id shown as text
    assert page.page.locator("#document-detail h3").text_content() == "a"
    assert page.page.locator(".span-note .id").first.text_content() == HOSTILE
    assert page.page.title() == "simdedup spans report"
    assert page.errors == []
