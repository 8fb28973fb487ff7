import os
import signal

import pytest

# Tests never load tokenizer plugins that happen to be installed on the machine.
os.environ["SIMDEDUP_LOAD_PLUGINS"] = ""


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
