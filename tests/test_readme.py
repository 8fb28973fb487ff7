"""The README's commands, run as a user would run them.

Every ``console``, ``sh`` and ``python`` block of README.md runs, in README order, in one
directory that holds a copy of ``examples/`` and small stand-ins for the inputs the README names
but does not make (``STAND_INS``). A ``$ command`` followed by lines must print exactly those
lines; every command must exit 0. A block preceded by ``<!-- not run: REASON -->`` is left out;
such marks are few and say why. ``python`` blocks written as ``>>>`` sessions run as doctests.
"""

from __future__ import annotations

import doctest
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO

README = REPO / "README.md"
EXAMPLES = REPO / "examples"
#: a fenced block, with the mark that leaves it out, if any
_BLOCK = re.compile(r"^(?:<!-- not run: (?P<why>[^>]+?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)
#: programs the README uses that a fresh machine may lack (only python3 and make must exist)
OPTIONAL_PROGRAMS = ("jq", "sqlite3")
#: words of a diary of past work, which the user documentation must not hold
DIARY = re.compile(r"\bsessions?\b|\bissue \d|\bbefore this\b|\bthis (?:session|period)\b", re.I)


@dataclass
class Block:
    line: int  # where its fence opens in README.md
    lang: str
    body: str
    not_run: str | None


def readme_blocks(path: Path = README) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(text.count("\n", 0, m.start("lang")) + 1, m["lang"], m["body"], m["why"]) for m in _BLOCK.finditer(text)
    ]


def commands(block: Block) -> list[tuple[str, list[str] | None]]:
    """``(command, expected stdout lines or None)`` in order: ``$`` lines and the lines under
    them in a console block; each line (joined at ``\\``) of an sh block, comments left out."""
    lines = block.body.replace("\\\n", " ").splitlines()
    if block.lang == "sh":
        return [(line, None) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    found: list[tuple[str, list[str] | None]] = []
    for line in lines:
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            assert found, f"README.md:{block.line}: output before any $ command"
            found[-1][1].append(line)  # type: ignore[union-attr]
    return [(command, output or None) for command, output in found]


def _dump(target: Path) -> None:
    """A JSON-lines dump with the fields the pipeline example names (``text``, ``url``)."""
    lines = [
        json.dumps(
            {"url": f"https://example.org/{p.parent.name}/{p.stem}", "text": p.read_text("utf-8")}, ensure_ascii=False
        )
        for p in sorted(EXAMPLES.glob("*/*.txt"))
    ]
    with gzip.open(target, "wt", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def _corpus(target: Path) -> None:
    """A directory of text files."""
    for path in EXAMPLES.glob("*/*.txt"):
        (target / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target / path.parent.name / path.name)


#: inputs the README's commands read without making them, made small here
STAND_INS = {"dump.jsonl.gz": _dump, "corpus": _corpus}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A directory like a checkout's (``examples/`` and the stand-ins), and an environment whose
    ``simdedup`` is this checkout's run by this Python."""
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(EXAMPLES, root / "examples")
    for name, make in STAND_INS.items():
        make(root / name)
    bin_dir = tmp_path_factory.mktemp("bin")
    launcher = bin_dir / "simdedup"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m simdedup "$@"\n')
    launcher.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    env.pop("SIMDEDUP_DEBUG", None)
    return root, env


def run_shell(command: str, root: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def test_every_command_of_the_readme_runs_and_prints_what_it_shows(workspace, monkeypatch):
    root, env = workspace
    failures, not_here = [], []
    for block in readme_blocks():
        if block.not_run:
            continue
        if block.lang == "python":
            failures += _run_python(block, root, monkeypatch)
            continue
        assert block.lang in ("sh", "console"), f"README.md:{block.line}: a ```{block.lang} block, not run"
        for command, expected in commands(block):
            missing = [p for p in OPTIONAL_PROGRAMS if re.search(rf"\b{p}\b", command) and not shutil.which(p)]
            if missing:
                not_here.append(f"{command} (needs {', '.join(missing)})")
                continue
            done = run_shell(command, root, env)
            where = f"README.md:{block.line}: {command}"
            if done.returncode != 0:
                failures.append(f"{where}\n  exit {done.returncode}: {done.stderr.strip()[-2000:]}")
            elif expected is not None and done.stdout.splitlines() != expected:
                failures.append(f"{where}\n  printed:\n{done.stdout}  the README shows:\n" + "\n".join(expected))
    assert not failures, "\n\n".join(failures)
    if not_here:
        pytest.skip("not run, a program is missing: " + "; ".join(not_here))


def _run_python(block: Block, root: Path, monkeypatch, path: Path = README) -> list[str]:
    """A ``>>>`` block as a doctest; other code is run, and the tokenizer it defines must work."""
    monkeypatch.chdir(root)
    name = path.relative_to(REPO).as_posix()
    if ">>>" in block.body:
        test = doctest.DocTestParser().get_doctest(block.body, {}, name, str(path), block.line)
        output: list[str] = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=output.append)
        return [f"{name}:{block.line}: doctest\n" + "".join(output)] if runner.failures else []
    namespace: dict = {}
    exec(compile(block.body, f"{name}:{block.line}", "exec"), namespace)
    from simdedup.tokenizers import Tokenizer

    tokenizers = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, Tokenizer) and v.name]
    assert tokenizers, f"{name}:{block.line}: a python block that is neither a session nor a tokenizer"
    return [
        f"{name}:{block.line}: tokenizer {t.name} makes no features"
        for t in tokenizers
        if not t().text_features("The plugin works.")
    ]


def test_the_extending_guides_python_runs(workspace, monkeypatch):
    guide = REPO / "docs" / "extending.md"
    blocks = [b for b in readme_blocks(guide) if b.lang == "python" and not b.not_run]
    assert len(blocks) >= 2  # the tokenizer and the method spec
    failures = [f for b in blocks for f in _run_python(b, workspace[0], monkeypatch, guide)]
    assert not failures, "\n\n".join(failures)


def test_make_demo_prints_the_quick_starts_clusters(workspace):
    """The first screen's promise: `make demo` runs the main job on the bundled examples and
    prints what the quick start shows; `make test` runs the test suite."""
    root, env = workspace
    recipes = _make_recipes()
    demo = recipes["demo"].replace("$(BIN)/", "")
    shown = next(
        expected
        for block in readme_blocks()
        if not block.not_run and block.lang == "console"
        for command, expected in commands(block)
        if command == "simdedup cluster fingerprints.jsonl"
    )
    done = run_shell(demo, root, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == shown
    assert re.search(r"-m pytest\b", recipes["test"])


def _make_recipes() -> dict[str, str]:
    """Each Makefile target's recipe lines, joined."""
    recipes: dict[str, list[str]] = {}
    target = None
    for line in (REPO / "Makefile").read_text().splitlines():
        if match := re.match(r"^([a-z-]+):", line):
            target = match[1]
            recipes[target] = []
        elif line.startswith("\t") and target:
            recipes[target].append(line.strip())
    return {name: "\n".join(lines) for name, lines in recipes.items()}


def test_blocks_left_out_are_few_and_say_why():
    left_out = [b for b in readme_blocks() if b.not_run]
    assert len(left_out) <= 5, [b.line for b in left_out]
    assert all(len(b.not_run.split()) >= 3 for b in left_out)
    shown = [b for b in readme_blocks() if not b.not_run]
    assert len(shown) >= 8  # the parser finds the blocks at all


def test_stand_ins_are_inputs_the_readme_names():
    text = README.read_text(encoding="utf-8")
    for name in STAND_INS:
        assert re.search(rf"(?<![\w/.-]){re.escape(name)}\b", text), f"{name} is no longer in the README"


def test_the_readmes_links_lead_to_files_and_headings():
    for path in ["README.md", "CHANGELOG.md", *(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#([\w-]+))?\)", (REPO / path).read_text(encoding="utf-8")):
            linked = (REPO / path).parent / target[0]
            assert linked.is_file(), f"{path} links to {target[0]}"
            if target[1]:
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w -]", "", h).strip().lower().replace(" ", "-") for h in headings}
                assert target[1] in slugs, f"{path} links to {target[0]}#{target[1]}"


@pytest.mark.parametrize(
    "path", ["README.md", "CHANGELOG.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))]
)
def test_the_user_documentation_holds_no_diary(path):
    text = (REPO / path).read_text(encoding="utf-8")
    found = [m.group(0) for m in DIARY.finditer(text)]
    assert not found, found


def test_the_readme_stays_short():
    """For users, under 500 lines: measurements go to docs/performance.md, design notes and the
    rules in full to docs/, history to CHANGELOG.md."""
    assert README.read_text(encoding="utf-8").count("\n") < 500
