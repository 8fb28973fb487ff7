"""The library as a user (or an engine) calls it: one call per command, stages as modules."""

from __future__ import annotations

import ast
import doctest
import importlib
import os
import pkgutil
from pathlib import Path

import pytest

import simdedup

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("module", ["simdedup", "simdedup.run"])
def test_docstring_examples_hold(module, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name examples/ from the repository's root
    failed, attempted = doctest.testmod(importlib.import_module(module), verbose=False)
    assert attempted > 0 and failed == 0


def test_top_level_calls_stay_functions_after_every_module_is_imported():
    """A module named like a top-level call would replace it as an attribute once imported."""
    for info in pkgutil.walk_packages(simdedup.__path__, "simdedup."):
        if not info.name.endswith("__main__") and not info.name.startswith("simdedup.kernels.source"):
            importlib.import_module(info.name)
    for name in ("fingerprint", "cluster", "dedup"):
        assert callable(getattr(simdedup, name)) and not isinstance(getattr(simdedup, name), type(simdedup)), name
    for name in simdedup.__all__:
        assert getattr(simdedup, name) is not None


def test_dedup_equals_fingerprint_then_cluster(monkeypatch):
    monkeypatch.chdir(ROOT)
    records = list(simdedup.fingerprint(["examples/en", "examples/zh"]))
    assert simdedup.cluster(records, k=10) == simdedup.dedup(["examples/en", "examples/zh"], k=10, verify="sketch")


def _module_imports(path: Path, package: str) -> set[str]:
    """The simdedup modules a module imports, at its top, inside functions (a lazy import is
    still a dependency) or for type checking (an annotation that names a module above is a
    circle to a reader and to a type checker). ``from . import x`` imports the module ``x``
    (and the package, already imported); ``from .p import x`` the package ``p`` and its module
    ``x`` when there is one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.ImportFrom) and sub.level:
                base = package.split(".")[: len(package.split(".")) - sub.level + 1]
                target = ".".join(base + ([sub.module] if sub.module else []))
                if sub.module:
                    found.add(target)
                found.update(f"{target}.{alias.name}" for alias in sub.names)
            elif isinstance(sub, ast.Import):
                found.update(alias.name for alias in sub.names if alias.name.startswith("simdedup"))
    return found


def test_the_import_graph_has_no_circle():
    """Data flows one way through the stages: no module imports one that imports it back."""
    modules = {}
    for path in (ROOT / "simdedup").rglob("*.py"):
        relative = path.relative_to(ROOT).with_suffix("")
        name = ".".join(relative.parts[:-1] if relative.name == "__init__" else relative.parts)
        package = name if relative.name == "__init__" else name.rsplit(".", 1)[0]
        modules[name] = path, package
    graph = {
        name: {m for m in _module_imports(path, package) if m in modules and m != name}
        for name, (path, package) in modules.items()
    }
    # a package's __init__ imports its modules: a module that imports the package (even for an
    # annotation) and is imported by one of them closes a circle through it
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                raise AssertionError(" -> ".join(trail[trail.index(target) :] + [target]))
            if target not in state:
                visit(target, trail + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert os.path.isdir(ROOT / "simdedup" / "read") and "simdedup.pipeline" not in modules


def test_library_calls_fail_with_simdedup_errors_and_take_method_names(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(simdedup.SimdedupError, match="cannot read missing.jsonl"):
        simdedup.cluster("missing.jsonl")
    with pytest.raises(simdedup.SimdedupError, match="k must be between"):
        simdedup.dedup("examples", k=99)
    with pytest.raises(simdedup.SimdedupError, match="unknown tokenizer"):
        simdedup.dedup("examples", tokenizer="nope")
    digests = list(simdedup.fingerprint("examples/en", "nilsimsa"))
    assert digests and {r.settings["method"] for r in digests} == {"nilsimsa"} and digests[0].bits == 256
