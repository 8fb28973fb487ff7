"""Stops by the user: Ctrl-C, SIGTERM and SIGHUP end a run wherever they land.

A Python signal handler runs in the main thread between two of its instructions, and raises
there: :class:`~simdedup.errors.Terminated` for SIGTERM and SIGHUP, ``KeyboardInterrupt``
for Ctrl-C. The run then ends as after an error (workers stopped, temporary output removed),
and :func:`main` ends the process by the signal itself. Two places would lose the stop:

- code that cannot raise: a ``__del__``, a weakref or garbage-collector callback, a
  generator's finalizer. Python prints the exception and drops it. :func:`_send_again` takes
  it there and sends the signal again, to land in the code that runs next;
- code that catches everything: a tokenizer plugin's bare ``except:``. The tokenizer guard asks
  :func:`raise_if_swallowed` after each call.

Once stopped, the run says so and nothing else: what the stop cut short and fails after it (a
finalizer, a thread, Dask's logs) prints no traceback.
"""

from __future__ import annotations

import _thread
import logging
import os
import signal
import sys
import threading
from typing import Any, Callable

from .errors import Terminated

_raised = 0  # stops raised by the handlers so far
_last_signal = 0
_in_flight: int | None = None  # a stop sent again whose handler has not run yet
_other_unraisable_hook = sys.unraisablehook
_other_thread_hook = threading.excepthook


def _terminate(signum: int, frame: Any) -> None:
    if _raise_here(signum, frame):
        signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once
        raise Terminated(signum)


def _interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C, as Python's own handler."""
    if _raise_here(signum, frame):
        raise KeyboardInterrupt


def _raise_here(signum: int, frame: Any) -> bool:
    global _raised, _last_signal, _in_flight
    if _inside_the_hook(frame):  # an exception here would be dropped too
        _send_soon(signum)
        return False
    _raised += 1
    _last_signal = signum
    _in_flight = None
    # Dask's scheduler (in this process with --local) logs the operations cut short as errors
    # with tracebacks while the cluster closes; the run was stopped on purpose, and says so.
    logging.disable(logging.CRITICAL)
    return True


def _send_again(unraisable: Any) -> None:
    """``sys.unraisablehook``: a stop raised where Python cannot raise is sent again."""
    exc = unraisable.exc_value
    if isinstance(exc, Terminated) and signal.getsignal(exc.signum) in (signal.SIG_DFL, _terminate):
        signum = exc.signum
        signal.signal(signum, _terminate)
    elif isinstance(exc, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is _interrupt:
        signum = signal.SIGINT
    else:
        if not _raised:  # once stopped, what the stop cut short fails quietly, as its logs do
            _other_unraisable_hook(unraisable)
        return
    _send_soon(signum)


def _thread_failed(args: Any) -> None:
    """``threading.excepthook``: once a run is stopped, a thread that fails because the stop cut
    its work short (a Dask client's event loop) prints no traceback."""
    if not _raised:
        _other_thread_hook(args)


def _inside_the_hook(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code is _send_again.__code__:
            return True
        frame = frame.f_back
    return False


def _send_soon(signum: int) -> None:
    """Send ``signum`` to the main thread from another thread: sent from the main thread
    itself, it would be handled at once, still inside the code that could not raise. Aimed at
    the main thread, it also wakes a wait there."""
    global _in_flight
    _in_flight = signum
    # The thread runs when the main thread lets go of the interpreter, mostly once out of the
    # hook; a handler that finds itself still inside sends it again.
    try:
        _thread.start_new_thread(_send_if_in_flight, (threading.main_thread().ident, signum))
    except RuntimeError:  # the interpreter is shutting down: main() ends by the signal
        pass


def _send_if_in_flight(thread: int, signum: int) -> None:
    if _in_flight == signum:  # not when raise_if_swallowed raised it meanwhile
        try:
            signal.pthread_kill(thread, signum)
        except OSError:  # the main thread is gone, and the process with it
            pass


def raised() -> int:
    """How many stops the handlers have raised so far: give it to :func:`raise_if_swallowed`."""
    return _raised


def raise_if_swallowed(before: int) -> None:
    """Raise the last stop again if one was raised since :func:`raised` gave ``before`` and
    the code that ran since returned normally: it swallowed the stop (or a finalizer did)."""
    global _in_flight
    if _raised == before:
        return
    _in_flight = None
    if _last_signal == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(_last_signal)


def main(run: Callable[[], Any]) -> None:
    """Run ``run()`` (a command line's main) with the stop handlers in place; a run ended by
    SIGTERM or SIGHUP then ends the process by that signal, as a shell or a supervisor expects."""
    global _other_unraisable_hook, _other_thread_hook
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:  # not when ignored, as under nohup
            signal.signal(signum, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    _other_unraisable_hook, sys.unraisablehook = sys.unraisablehook, _send_again
    _other_thread_hook, threading.excepthook = threading.excepthook, _thread_failed
    try:
        run()
    except Terminated as exc:
        signum = exc.signum
    except SystemExit:
        if _in_flight is None:
            raise
        signum = _in_flight  # the run ended before the stop sent again arrived
    else:
        return
    # Out of the handler the run's frames are gone, and its workers stopped with them.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
