"""No compiled kernel reads outside the bytes it is given. Each runs, in a child process, on
inputs flush against a page that cannot be read (tests/guarded_kernels.py): a read one byte past
an input's end, or before its start, is a SIGSEGV there. On an ordinary buffer such a read goes
unseen until an input happens to end where a mapping ends, and then the process dies.

``make fuzz`` runs further seeds for SIMDEDUP_FUZZ_SECONDS."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdedup.kernels import fastpath

GUARDED = Path(__file__).resolve().parent.parent / "guarded_kernels.py"
SEEDS = range(3)
CASES = 3000

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect through the C library: Linux"),
    pytest.mark.skipif(fastpath.Kernel.loaded() is None, reason="numba or the XXH3 symbol is not available"),
]


def _child(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GUARDED), *args], capture_output=True, text=True, timeout=300)


def _last_case(result: subprocess.CompletedProcess) -> str:
    lines = result.stdout.splitlines()
    return f"exit {result.returncode} in {lines[-1] if lines else 'start-up'}\n{result.stderr[-2000:]}"


def test_the_guard_page_kills_a_read_past_the_end():
    """The control: without it, a guard that failed to protect would pass every case."""
    result = _child("control")
    assert result.returncode == -signal.SIGSEGV, _last_case(result)
    assert "read the guard page" not in result.stdout


def test_a_short_token_at_a_documents_end_is_read_within_it():
    result = _child("edges")
    assert result.returncode == 0 and result.stdout.endswith("done\n"), _last_case(result)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_inputs_are_read_within_their_bytes(seed):
    """Words of every length, white space, other scripts, lone surrogates, texts cut inside a
    character, random bytes, fingerprint lines cut or damaged anywhere: batches of one to four
    documents, the last flush against the guard (or the first, after one)."""
    result = _child(str(seed), str(CASES))
    assert result.returncode == 0 and result.stdout.endswith("done\n"), _last_case(result)


@pytest.mark.skipif(not os.environ.get("SIMDEDUP_FUZZ_SECONDS"), reason="make fuzz: SIMDEDUP_FUZZ_SECONDS=N")
def test_further_seeds():
    deadline = time.monotonic() + float(os.environ["SIMDEDUP_FUZZ_SECONDS"])
    seed = int(os.environ.get("SIMDEDUP_FUZZ_SEED", "1000"))
    while time.monotonic() < deadline:
        result = _child(str(seed), str(CASES))
        assert result.returncode == 0 and result.stdout.endswith("done\n"), _last_case(result)
        seed += 1
