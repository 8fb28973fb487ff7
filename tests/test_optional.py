"""Optional packages (simdedup.optional): each one missing is one line naming its extra, whether
it is imported through ``need`` or slipped past it (the CLI's net); never exit 70."""

from __future__ import annotations

import sys

import pytest
from helpers import EXAMPLES, invoke

from simdedup import optional
from simdedup.errors import MissingPackage


@pytest.mark.parametrize("module", sorted(optional.EXTRAS))
def test_need_names_the_extra_of_every_optional_package(module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(MissingPackage) as raised:
        optional.need(module, "this option")
    assert str(raised.value) == f"this option needs {module}: pip install 'simdedup[{optional.EXTRAS[module]}]'"


def test_a_missing_dependency_of_an_extra_names_the_extra_asked_for(monkeypatch):
    """distributed installed without one of its own packages: the extra is still dask's."""
    error = ModuleNotFoundError("No module named 'tornado'", name="tornado")
    message = str(optional.missing(error, "--engine dask", "distributed"))
    assert message == "--engine dask needs tornado: pip install 'simdedup[dask]'"


@pytest.mark.parametrize("module", ["distributed", "fsspec", "pyarrow.parquet"])
def test_the_cli_names_the_extra_of_an_import_that_slipped_past_need(module, monkeypatch):
    """An optional package imported directly, deep in a command: one line, exit 1, not 70."""
    import simdedup.engines.commands as commands

    def unguarded(name, purpose):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.setattr(commands, "need", unguarded)
    result = invoke("dedup", "--engine", "dask", "-k", "3", EXAMPLES / "en")
    extra = optional.EXTRAS[module.split(".")[0]]
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: dedup needs {module.split('.')[0]}: pip install 'simdedup[{extra}]'"]
