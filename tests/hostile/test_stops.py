"""A stop (SIGTERM, SIGHUP, Ctrl-C) is never lost, wherever in the run it lands.

Python runs a signal's handler in the main thread wherever that thread is. Inside a ``__del__``,
a weakref or garbage-collector callback, or a generator's finalizer, the handler's exception
cannot propagate: Python prints it ("Exception ignored in ...") and the run goes on, to exit 0
with its whole output, as if never stopped. Where the run is at that moment is anybody's code
(here a tokenizer plugin's, in CI Python's own import machinery). A plugin's bare ``except:``
swallows the stop too, or replaces it with an error of its own (which, raised in a finalizer,
Python would print: once stopped, the run prints nothing but that it stopped).

The plugin below sends the signal from inside a chain of such places, nested in any order, on
one document of a run; sometimes it then spends a while in finalizers, so that the stop sent
again lands in one too. The run must end as stopped: no output, no traceback, and for SIGTERM
and SIGHUP death by that signal.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers import FUZZ_ONLY, fuzz_folders, install_plugin, words

#: places where Python cannot raise, as the plugin builds them around what runs inside; and a
#: plugin's code that catches everything, and that replaces what it caught
PLACES = ["del", "weakref", "gc-callback", "generator", "cycle", "bare-except", "replaced"]
#: places made by a collection of the garbage, which does not start inside another: one a chain
COLLECTED = {"gc-callback", "cycle"}
SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]

PLUGIN = """
import gc, os, signal, time, weakref
from simdedup.tokenizers import Tokenizer

SIGNUM = int(os.environ["STOP_SIGNAL"])
CHAIN = [place for place in os.environ["STOP_CHAIN"].split(",") if place]
SWAMP = float(os.environ["STOP_SWAMP"])
sent = False


def busy():
    return sum(len(str(i)) for i in range(200))


class Finalized:
    def __init__(self, inside):
        self.inside = inside

    def __del__(self):
        if hasattr(self, "inside"):  # a stop may land in __init__, before it is set
            self.inside()


def inside(place, then):
    if place == "del":
        Finalized(then)
    elif place == "weakref":
        target = Finalized(busy)
        ref = weakref.ref(target, lambda ref: then())
        del target
    elif place == "gc-callback":
        def callback(phase, info):
            if phase == "start" and callback in gc.callbacks:
                gc.callbacks.remove(callback)
                then()
        gc.callbacks.append(callback)
        gc.collect()
    elif place == "generator":
        def generator():
            try:
                yield 1
            finally:
                then()
        started = generator()
        next(started)
        del started
    elif place == "cycle":
        node = Finalized(then)
        node.cycle = node
        del node
        gc.collect()
    elif place == "bare-except":
        try:
            then()
        except:  # noqa: E722
            pass
    elif place == "replaced":
        try:
            then()
        except BaseException:
            raise ValueError("something else")


def stop():
    global sent
    sent = True
    os.kill(os.getpid(), SIGNUM)  # handled at once: inside the innermost place
    busy()


def chained(places):
    if not places:
        return stop()
    return inside(places[0], lambda: chained(places[1:]))


def swamp(seconds):
    # nearly all of this time is spent in finalizers, where a stop sent again lands too
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        Finalized(lambda: [busy() for _ in range(20)])


class Hostile(Tokenizer):
    name = "hostile"
    description = "sends a signal from where Python cannot raise"
    stopped = False

    def tokens(self, text):
        if self.stopped:
            time.sleep(0.1)  # the documents after the stop take long enough for it to be seen
        if "stop-here" in text:
            chained(CHAIN)
            if not sent:
                os.write(2, b"the plugin sent no stop\\n")
            swamp(SWAMP)
            self.stopped = True
        return text.split()
"""


def _corpus(root: Path, seed: int) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for i in range(12):
        text = words(seed * 100 + i, 80) + (" stop-here" if i == 3 else "")
        (docs / f"d{i:02d}.txt").write_text(text, encoding="utf-8")
    return docs


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _case(root: Path, signum: int, chain: list[str], swamp: float, command: str) -> None:
    env = install_plugin(root, PLUGIN)
    env.update(STOP_SIGNAL=str(int(signum)), STOP_CHAIN=",".join(chain), STOP_SWAMP=str(swamp))
    docs = _corpus(root, len(chain))
    out = root / "out.jsonl"
    argv = [sys.executable, "-m", "simdedup", command, "-j", "1", "--tokenizer", "hostile", "-o", str(out), str(docs)]
    # as from a terminal: a process started with SIGINT ignored (a pytest-xdist worker's child, a
    # background job) keeps ignoring it, as Python and shells mean it to
    result = subprocess.run(
        argv, cwd=root, env=env, capture_output=True, text=True, timeout=120, preexec_fn=_interruptible
    )
    context = f"{signum!r} inside {' > '.join(chain) or 'the tokenizer'}, then {swamp} s in finalizers\n{result.stderr[-3000:]}"
    assert "the plugin sent no stop" not in result.stderr, context
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, context
    if signum == signal.SIGINT:  # as Ctrl-C anywhere in the run
        assert result.returncode == 1 and result.stderr.endswith("Aborted!\n"), context
    else:
        assert result.returncode == -signum, context
    assert not out.exists(), context
    assert [p.name for p in root.iterdir() if p.name.startswith(".simdedup-")] == [], context


def _run_all(tmp_path: Path, cases: list[tuple[int, list[str], float, str]]) -> None:
    """The cases, two at a time: each is a process that mostly waits to start."""
    roots = []
    for number in range(len(cases)):
        roots.append(tmp_path / f"case{number}")
        roots[-1].mkdir()
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(_case, root, *case) for root, case in zip(roots, cases)]:
            done.result()


def test_a_stop_inside_each_place_python_cannot_raise(tmp_path):
    """Each place alone; and none, the stop landing in the tokenizer's own code."""
    chains = [[place] for place in PLACES] + [[]]
    _run_all(tmp_path, [(signum, chain, 0.0, "fingerprint") for chain in chains for signum in SIGNALS])


def _generated(seed: int, count: int) -> list[tuple[int, list[str], float, str]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        chain = [rng.choice(PLACES) for _ in range(rng.randint(1, 4))]
        collected = [i for i, place in enumerate(chain) if place in COLLECTED]
        for i in collected[1:]:
            chain[i] = rng.choice(sorted(set(PLACES) - COLLECTED))
        swamp = rng.choice([0.0, 0.0, 0.3, 1.0])
        cases.append((rng.choice(SIGNALS), chain, swamp, rng.choice(["fingerprint", "dedup"])))
    return cases


@pytest.mark.parametrize("seed", [1, 2])
def test_a_stop_inside_generated_chains_of_such_places(tmp_path, seed):
    _run_all(tmp_path, _generated(seed, 6))


@FUZZ_ONLY
def test_a_stop_inside_chains_of_such_places_fuzzed(tmp_path):
    for folder, seed in fuzz_folders(tmp_path):
        _run_all(folder, _generated(seed, 4))
