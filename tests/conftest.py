import os
import signal

import pytest
from click.testing import CliRunner
from helpers import WALK_ORDER, Run, near_copy, words, write
from hypothesis import settings

from simdedup.cli import cli

# Tests never load tokenizer plugins that happen to be installed on the machine.
os.environ["SIMDEDUP_LOAD_PLUGINS"] = ""

# In CI the property tests draw the same examples on every run (a red CI names a case that
# reproduces); on a developer's machine they explore new ones each time.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


class Hung(Exception):
    """A test ran out of time. Not an OSError (as TimeoutError is), which code under test may
    take for a closed pipe or socket and carry on."""


@pytest.fixture
def alarm():
    """Fail instead of hanging for ever: a FIFO opened by mistake blocks, processes that wait on
    each other deadlock."""

    def on_alarm(signum, frame):
        raise Hung("the test hung")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def run():
    """Invoke the CLI in-process; returns a :class:`Run`."""

    def _run(args, input=None, catch=True) -> Run:
        result = CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=catch)
        return Run(result.exit_code, result.stdout, result.stderr, result.exception)

    return _run


@pytest.fixture
def small_corpus(tmp_path, monkeypatch):
    """A small tree under tmp_path/corpus; cwd is tmp_path so ids are relative paths."""
    monkeypatch.chdir(tmp_path)
    texts = {}
    for i, name in enumerate(reversed(WALK_ORDER)):  # created out of order
        texts[name] = f"Document {i} says\nhello   World {i * 7} ünï 中文\n"
        write(tmp_path / name, texts[name])
    return texts


@pytest.fixture
def dup_corpus(tmp_path, monkeypatch):
    """Near-duplicate pairs and unrelated documents; returns the expected groups of ids."""
    monkeypatch.chdir(tmp_path)
    base, other = words(1), words(2)
    write(tmp_path / "dups/base.txt", base)
    write(tmp_path / "dups/copy.txt", near_copy(base))
    write(tmp_path / "dups/exact.txt", base)
    write(tmp_path / "dups/other.txt", other)
    write(tmp_path / "dups/other-copy.txt", near_copy(other))
    for seed in range(3, 8):
        write(tmp_path / f"dups/unrelated-{seed}.txt", words(seed))
    return {
        ("dups/base.txt", "dups/copy.txt", "dups/exact.txt"),
        ("dups/other-copy.txt", "dups/other.txt"),
    }


@pytest.fixture
def good_pair(tmp_path, monkeypatch):
    """Two good documents under tmp_path/corpus; cwd is tmp_path."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "corpus/good-1.txt", "the first good document")
    write(tmp_path / "corpus/good-2.txt", "the second good document")
    return tmp_path / "corpus"


#: cases that take over 15 s on a loaded 2-core machine: they run in make large (-m slow), to
#: keep make test near its five minutes; each is one case of a class make test keeps
SLOW_CASES = {
    "tests/test_distributed.py::test_dedup_of_100000_documents_is_the_one_process_output[complete-64-8]",
    "tests/test_remote.py::test_thousands_of_objects",
    "tests/test_remote.py::test_server_stopped_mid_read",
    "tests/hostile/test_locales.py::test_every_locale_gives_the_same_output[1]",
    "tests/test_pipes.py::test_xargs_parallel_output_lines_are_whole[file]",
    "tests/test_cmd_spans.py::test_strip_removes_whole_units_only",
    "tests/test_fastpath.py::test_numba_functions_compiled_after_a_kernel_still_run",
    "tests/hostile/test_caches.py::test_a_damaged_kernel_cache_file_is_made_again[0-fastpath-truncate]",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in SLOW_CASES:
            item.add_marker(pytest.mark.slow)
