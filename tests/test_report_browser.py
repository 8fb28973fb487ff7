"""simdedup report in a real browser: Debian's chromium, driven by Playwright.

The tests build reports from the examples and from a generated hostile corpus and look at
them as a person would: the clusters listed, the edited words marked, filters and search, the
downloaded drop list (byte for byte ``select``'s), no console error and no injected script run.
Screenshots of the overview and of one cluster go to the test's directory and to
/tmp/report-shots/.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import REPO, words, write

from simdedup.cli import cli

CHROMIUM = os.environ.get("SIMDEDUP_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path("/tmp/report-shots")


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(
            f"{reason}: the report's browser tests need it in CI (.ci/run installs chromium "
            f"with apt-get; `make test` installs playwright)"
        )
    pytest.skip(f"{reason}: the report's browser tests cannot run (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the Python package playwright is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"no chromium at {CHROMIUM}")
    with sync_playwright() as playwright:
        # Debian's chromium, never a browser of Playwright's own (none can be downloaded)
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Page:
    """A report opened in a fresh browser context, its console errors and page errors kept."""

    def __init__(self, browser, path: Path, downloads: Path):
        self.context = browser.new_context(accept_downloads=True, viewport={"width": 1300, "height": 1000})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith(("file:", "blob:", "data:"))
                else self.errors.append(f"network request: {r.url}")
            ),
        )
        self.downloads = downloads
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=15_000)

    def rows(self) -> list[list[str]]:
        return self.page.eval_on_selector_all(
            "#cluster-rows tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )

    def set(self, selector: str, value) -> None:
        if isinstance(value, bool):
            self.page.set_checked(selector, value)
        elif self.page.eval_on_selector(selector, "e => e.tagName") == "SELECT":
            self.page.select_option(selector, value)
        else:
            self.page.fill(selector, str(value))

    def download(self, button: str) -> bytes:
        with self.page.expect_download() as info:
            self.page.click(button)
        target = self.downloads / info.value.suggested_filename
        info.value.save_as(target)
        return target.read_bytes()

    def pwned(self) -> bool:
        return self.page.evaluate("typeof window.pwned !== 'undefined'")

    def close(self) -> None:
        self.context.close()


def simdedup(*args) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout_bytes, result.stderr


def report_of(tmp_path: Path, clusters: Path, *options) -> Path:
    out = tmp_path / "report.html"
    code, _, err = simdedup("report", clusters, "-o", out, *options)
    assert code == 0, err
    return out


def shoot(page: Page, tmp_path: Path, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for folder in (tmp_path, SHOTS):
        page.page.evaluate("window.scrollTo(0, 0)")
        page.page.screenshot(path=str(folder / f"{name}-overview.png"))
        page.page.locator("#cluster-detail").screenshot(path=str(folder / f"{name}-cluster.png"))


def test_the_examples_report_shows_clusters_marks_edits_and_exports_selects_list(browser, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # ids as the README shows them: examples/en/...
    clusters = tmp_path / "clusters.jsonl"
    # the five groups of examples/GROUPS.md, the Chinese edits among them (below 0.8 by default)
    options = ("--similarity", "combined", "--min-resemblance", "0.75")
    code, _, err = simdedup("dedup", "--silent", *options, "examples/en", "examples/zh", "-o", clusters)
    assert code == 0, err
    records = [json.loads(line) for line in clusters.read_text().split("\n") if line]
    assert len(records) == 5
    out = report_of(tmp_path, clusters, "--documents", "examples")
    page = Page(browser, out, tmp_path)
    try:
        rows = page.rows()
        assert [r[4] for r in rows] == [r["representative"] for r in records]
        assert [int(r[1]) for r in rows] == [r["size"] for r in records]
        shoot(page, tmp_path, "examples")

        # the edited words of each English cluster are marked on both sides
        bicycle = next(i for i, r in enumerate(rows) if "bicycle" in r[4])
        page.page.click(f"#cluster-rows tr:nth-child({bicycle + 1})")
        marked = page.page.eval_on_selector_all("#cluster-detail mark", "ms => ms.map(m => m.textContent)")
        assert {"noticeably", "noticably", "thoroughly", "throughly"} <= set(marked)
        assert "Looking" not in marked  # the shared passages are not

        # Chinese is compared character by character: a mark never spans a whole sentence
        tea = next(i for i, r in enumerate(rows) if "tea-making" in r[4])
        page.page.click(f"#cluster-rows tr:nth-child({tea + 1})")
        marked = page.page.eval_on_selector_all(".side-by-side .text", "ts => ts.map(t => t.textContent)")
        assert all(marked)

        # sorting and filters
        page.set("#sort", "lowest")
        lowest = sorted(r["min_resemblance"] for r in records)
        assert [float(r[2]) for r in page.rows()] == lowest
        page.set("#sort", "size")
        assert int(page.rows()[0][1]) == max(r["size"] for r in records)
        page.set("#near-only", True)
        near = [r for r in records if abs(r["min_resemblance"] - 0.8) <= 0.03]
        assert sorted(float(r[2]) for r in page.rows()) == sorted(r["min_resemblance"] for r in near)
        page.set("#near-only", False)
        page.set("#min-size", 3)
        assert [int(r[1]) for r in page.rows()] == [r["size"] for r in records if r["size"] >= 3]
        page.set("#min-size", 2)
        page.set("#search", "city-park.txt")
        assert [r[4] for r in page.rows()] == ["examples/zh/city-park-copy.txt"]
        page.set("#search", "")

        # the downloaded drop list is select's, newline- and NUL-separated
        assert page.download("#download-lines") == simdedup("select", clusters)[1]
        assert page.download("#download-nul") == simdedup("select", "-0", clusters)[1]

        # a drop unticked leaves the list; a keep ticked joins it
        page.set("#sort", "order")
        page.page.click("#cluster-rows tr:nth-child(1)")
        boxes = page.page.locator("#cluster-detail input[type=checkbox]")
        boxes.nth(1).uncheck()
        dropped = simdedup("select", clusters)[1].decode().splitlines()
        listed = page.download("#download-lines").decode().splitlines()
        assert listed == dropped[1:]
        # the cluster's last kept member cannot be dropped too: one member of a cluster stays
        page.page.locator("#cluster-detail input[type=checkbox]").nth(1).check()
        page.page.locator("#cluster-detail input[type=checkbox]").nth(0).click()
        assert not page.page.locator("#cluster-detail input[type=checkbox]").nth(0).is_checked()
        assert page.page.text_content("#decision-message")
        page.page.click("#reset-decisions")
        assert page.download("#download-lines") == simdedup("select", clusters)[1]
        assert page.errors == []
    finally:
        page.close()


PAYLOADS = [
    "<script>window.pwned=1</script>",
    "</script><script>window.pwned=2</script>",
    '</textarea><img src=x onerror="window.pwned=3">',
    "<svg onload=window.pwned=4>",
    '<a href="javascript:window.pwned=5">click</a>',
    "javascript:window.pwned=6",
    "<!-- <script>",
    "{{DATA}} {{SCRIPT}} {{POLICY}}",
    "\u2028\u2029",
    "\u202eevil\u202c \u2066x\u2069",
    "\x00\x01\x1b[31m",
    "&lt;script&gt;window.pwned=7&lt;/script&gt;",
    '"};window.pwned=8;//',
    "\ud83d\ude00 emoji before a mark",
]

HOSTILE_NAMES = [
    "<img src=x onerror=window.pwned=9>.txt",
    "javascript:window.pwned=10.txt",
    "a\u202ereversed.txt",
    "<script>window.pwned=11<.txt",
]


def hostile_corpus(root: Path, seed: int) -> list[str]:
    """Near-duplicate pairs whose texts and ids carry the payloads: JSON lines with HTML-like
    ids, files with such names and one whose name is not UTF-8. Returns the paths to read."""
    rng = random.Random(seed)
    lines = []
    for n in range(12):
        base = words(seed * 100 + n, 120).split()
        for piece in rng.sample(PAYLOADS, 4):
            base.insert(rng.randrange(len(base)), piece)
        copy = list(base)
        copy[rng.randrange(len(copy))] = rng.choice(PAYLOADS)
        pair_ids = [
            rng.choice(PAYLOADS).replace("\x00", "") + f" {n}",
            f"{rng.choice(PAYLOADS)}#{n}b".replace("\x00", ""),
        ]
        lines += [
            json.dumps({"id": pair_ids[0], "text": " ".join(base)}),
            json.dumps({"id": pair_ids[1], "text": " ".join(copy)}),
        ]
    write(root / "rows.jsonl", "\n".join(lines) + "\n")
    files = root / "files"
    for n, name in enumerate(HOSTILE_NAMES):
        text = words(seed * 1000 + n, 150) + " " + rng.choice(PAYLOADS)
        write(files / f"{n}-orig.txt", text)
        write(files / name, text + " one more")
    raw = words(seed * 1000 + 99, 150)
    (files / "plain.txt").write_text(raw)
    Path(os.fsdecode(os.fsencode(files) + b"/\xff\xfe-not-utf8.txt")).write_text(raw + " changed")
    return [str(root / "rows.jsonl"), str(files)]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_hostile_corpus_renders_as_text_and_runs_nothing(browser, tmp_path, monkeypatch, seed):
    monkeypatch.chdir(tmp_path)
    paths = hostile_corpus(Path("corpus"), seed)
    code, _, err = simdedup(
        "dedup", "--silent", "--id-field", "id", *paths, "-o", "clusters.jsonl", "--report", "dedup.html"
    )
    assert code == 0, err
    clusters = tmp_path / "clusters.jsonl"
    records = [json.loads(line) for line in clusters.read_text().split("\n") if line]
    assert len(records) >= 12
    member_ids = {m["id"] for r in records for m in r["members"]}
    assert any("\udcff" in i for i in member_ids) and any("<img" in i for i in member_ids)
    out = report_of(tmp_path, clusters, "--documents", paths[0], "--documents", paths[1], "--id-field", "id")
    for report in (out, tmp_path / "dedup.html"):
        page = Page(browser, report, tmp_path)
        try:
            assert len(page.rows()) == len(records)
            shown, hrefs = set(), []
            for n in range(len(records)):
                page.page.click(f"#cluster-rows tr:nth-child({n + 1})")
                shown.add(page.page.text_content("#cluster-detail"))
                hrefs += page.page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
            text = "".join(shown)
            for payload in (
                "<script>window.pwned=1</script>",
                "<img src=x onerror=window.pwned=9>.txt",
                "{{DATA}} {{SCRIPT}}",
                "&lt;script&gt;",
            ):
                assert payload in text
            assert "\u202e" not in text and "U+202E" in text  # a bidi override is shown, not obeyed
            assert hrefs and all(h.startswith(("./", "../")) and ":" not in h for h in hrefs)
            if report == out:
                shoot(page, tmp_path, f"hostile-{seed}")
            assert page.download("#download-nul") == simdedup("select", "-0", clusters)[1]
            assert not page.pwned()
            assert page.errors == []
        finally:
            page.close()


def test_the_pairs_kept_apart_are_listed_and_open_their_clusters(browser, tmp_path):
    """Three copies where complete linkage keeps a verified pair apart (b with a, c alone):
    the page lists the pair, the pair across that failed, and opens either cluster."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(5000)]
    base = [rng.choice(vocabulary) for _ in range(400)]
    changed = list(base)
    for i in range(7, 400, 30):
        changed[i] = rng.choice(vocabulary)
    docs = tmp_path / "docs"
    write(docs / "b.txt", " ".join(base))
    write(docs / "a.txt", " ".join(base + [rng.choice(vocabulary) for _ in range(40)]))
    write(docs / "c.txt", " ".join(changed))
    clusters = tmp_path / "clusters.jsonl"
    code, _, err = simdedup("dedup", "--silent", "--singletons", docs, "-o", clusters)
    assert code == 0, err
    page = Page(browser, report_of(tmp_path, clusters, "--documents", docs), tmp_path)
    try:
        assert page.page.is_visible("#apart")
        rows = page.page.eval_on_selector_all(
            "#apart-rows tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
        assert len(rows) == 1
        a, cluster_a, b, cluster_b, score, failing, failing_score = rows[0]
        assert (a, b) == (str(docs / "b.txt"), str(docs / "c.txt")) and float(score) >= 0.8 > float(failing_score)
        assert str(docs / "a.txt") in failing and str(docs / "c.txt") in failing
        page.page.click("#apart-rows tr:nth-child(1) td:nth-child(4) button")
        assert page.page.inner_text("#cluster-detail h3").startswith(f"Cluster {cluster_b.lstrip('#')}:")
        assert _in_view(page.page, "#cluster-detail h3")  # brought up from the list below
        assert not page.errors, page.errors
    finally:
        page.close()


def _in_view(page, selector: str) -> bool:
    return page.evaluate(
        """s => { const r = document.querySelector(s).getBoundingClientRect();
                  return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0; }""",
        selector,
    )


@pytest.mark.parametrize("viewport", [(1300, 1000), (900, 800)], ids=["beside", "below"])
def test_a_cluster_clicked_anywhere_in_the_list_shows_its_detail_in_view(browser, tmp_path, viewport):
    """Beside the list on a wide window (it stays in view as the list scrolls), below it on a
    narrow one (scrolled to): the opened cluster is seen without looking for it (issue 43)."""
    rng = random.Random(len(viewport))
    rows = []
    for n in range(60):
        text = words(4000 + n, 150)
        rows += [{"id": f"doc-{n:02d}", "text": text}, {"id": f"doc-{n:02d}-copy", "text": text + " more"}]
    write(tmp_path / "rows.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    clusters = tmp_path / "clusters.jsonl"
    assert simdedup("dedup", "--silent", "--id-field", "id", tmp_path / "rows.jsonl", "-o", clusters)[0] == 0
    out = report_of(tmp_path, clusters, "--documents", tmp_path / "rows.jsonl", "--id-field", "id")
    page = Page(browser, out, tmp_path)
    try:
        page.page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        assert len(page.rows()) == 60
        for n in [rng.randrange(30, 60), rng.randrange(0, 10), 59]:
            page.page.click(f"#cluster-rows tr:nth-child({n + 1})")
            heading = page.page.inner_text("#cluster-detail h3")
            assert heading.startswith(f"Cluster {n + 1}:"), heading
            assert _in_view(page.page, "#cluster-detail h3"), (viewport, n)
            assert _in_view(page.page, "#cluster-detail .side-by-side h4") or viewport[0] < 1000
        SHOTS.mkdir(parents=True, exist_ok=True)
        for folder in (tmp_path, SHOTS):
            page.page.screenshot(path=str(folder / f"clicked-{viewport[0]}.png"))
        assert page.errors == []
    finally:
        page.close()


def test_a_large_cluster_is_shown_compactly_and_compares_the_member_most_in_need(browser, tmp_path):
    """A cluster of 160 members: one row per distinct text, the least resemblant first, 25 a
    page; a row of copies opens to its members; the member beside the representative is the
    least resemblant, never one of the copies."""
    rng = random.Random(8)
    base = words(77, 300).split()
    docs = tmp_path / "docs"
    for n in range(110):
        write(docs / f"copy-{n:03d}.txt", " ".join(base))
    for n in range(45):
        edited = list(base)
        for _ in range(1 + n % 3):
            edited[rng.randrange(len(edited))] = f"edit{rng.randrange(10**6)}"
        write(docs / f"edit-{n:03d}.txt", " ".join(edited))
        if n % 9 == 0:
            write(docs / f"edit-{n:03d}-again.txt", " ".join(edited))
    clusters = tmp_path / "clusters.jsonl"
    assert simdedup("dedup", "--silent", docs, "-o", clusters)[0] == 0
    (record,) = [json.loads(line) for line in clusters.read_text().splitlines()]
    assert record["size"] == 160
    scores = {m["id"]: m["resemblance"] for m in record["members"]}
    least = min(scores.values())
    page = Page(browser, report_of(tmp_path, clusters, "--documents", docs), tmp_path)
    try:
        page.page.click("#cluster-rows tr:nth-child(1)")
        detail = page.page.locator("#cluster-detail")
        assert "160 members, 46 distinct texts" in detail.inner_text()
        member_rows = page.page.locator("#cluster-detail table.members tr:not(:first-child)")
        assert member_rows.count() == 25  # a page of distinct texts, not 160 rows
        first_score = float(member_rows.nth(0).locator("td").nth(4).inner_text())
        assert first_score == least
        compared = page.page.inner_text(".side-by-side > div:nth-child(2) h4")
        assert scores[compared.split(": ", 1)[1]] == least and "copy-" not in compared
        page.page.click("#cluster-detail .group-next")
        assert "texts 26\u201346 of 46" in detail.inner_text()
        copies = page.page.locator("#cluster-detail tr.group", has_text="the representative's")
        assert "\u00d7110" in copies.inner_text()
        copies.locator("button").click()
        assert page.page.locator("#cluster-detail tr.in-group").count() == 101  # 100 shown, and a line
        assert page.page.locator("#cluster-detail tr.in-group input[type=checkbox]").count() == 100
        SHOTS.mkdir(parents=True, exist_ok=True)
        for folder in (tmp_path, SHOTS):
            page.page.screenshot(path=str(folder / "large-cluster.png"))
        # a decision in the open group is a decision: the drop list follows it
        dropped = page.page.locator("#cluster-detail tr.in-group input[type=checkbox]:checked")
        before = dropped.count()
        dropped.first.click()  # the row is drawn again: count, not follow the box
        assert dropped.count() == before - 1
        assert "changed by you" in page.page.inner_text("#decision-summary")
        assert page.errors == []
    finally:
        page.close()
