"""Worker processes for ``-j N``: tasks handed out as workers free up, results given back in
task order.

Not ``concurrent.futures.ProcessPoolExecutor``: its manager and queue-feeder threads cost the
parent about 0.7 ms of CPU per task (a fifth of a second on 216 MB of text, taken from the two
cores the workers need), and ``multiprocessing.Pool`` waits forever for the task of a worker that
was killed. Here the parent alone talks to each worker over a socket pair, without threads:
frames of pickled data, written without blocking, so that neither side ever waits on the other
while both have something to send (a task of large in-memory texts one way, a large batch of
results the other).

No worker outlives the parent, however the parent ends: the parent stops its workers on its
way out (exceptions, Ctrl-C, and the CLI turns SIGTERM and SIGHUP into an exception); a worker
takes the end of its socket pair as the order to stop; and on Linux the kernel kills a worker
whose parent died (``PR_SET_PDEATHSIG``), even one busy in a long document, when the parent was
killed with SIGKILL (the OOM killer's signal) and had no way out.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import selectors
import signal
import socket
import traceback
from typing import Any, Callable, Iterable, Iterator

from .errors import SimdedupError

#: tasks handed to a worker ahead of its results, so that none waits for its next one
TASKS_AHEAD = 2
#: tasks done out of order that are held for the ones before them, per worker
HELD_PER_WORKER = 8
_HEADER = 8  # bytes of a frame's length, little-endian; length 0 tells a worker to stop
#: a frame larger than this is received into a buffer of its own (:meth:`_Worker.read`)
_FRAME_BYTES = 1 << 16


def in_order(
    tasks: Iterable[Any], jobs: int, work: Callable[[Any], Any], setup: Callable[..., None], state: tuple
) -> Iterator[Any]:
    """``work(task)`` of every task, in order, on ``jobs`` worker processes, each of which
    calls ``setup(*state)`` first (with fork, ``state`` is inherited rather than pickled).
    Tasks are taken from ``tasks`` only as workers free up, so the input is read as the
    work goes. An exception raised by ``work`` is raised here, in its task's place.

    Raises:
        SimdedupError: a worker process died (killed by a signal, e.g. for lack of memory).
    """
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    workers: list[_Worker] = []
    selector = selectors.DefaultSelector()
    finished = False
    try:
        for _ in range(jobs):
            # A worker starts with the parent's signal handlers (the CLI's turn SIGTERM into an
            # exception, which would end the worker with a traceback) until it sets its own, and
            # a signal to the parent must find it listed, to be stopped.
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            try:
                worker = _Worker(context, work, setup, state, [w.sock for w in workers])
                workers.append(worker)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            selector.register(worker.sock, selectors.EVENT_READ, worker)
            selector.register(worker.process.sentinel, selectors.EVENT_READ, worker)
        pending = iter(tasks)
        handed_out = given_back = 0
        done: dict[int, tuple[Any, BaseException | None]] = {}
        exhausted = False
        while True:
            for worker in workers:
                while (
                    not exhausted
                    and worker.outstanding < TASKS_AHEAD
                    and handed_out - given_back < HELD_PER_WORKER * jobs
                ):
                    task = next(pending, _END)
                    if task is _END:
                        exhausted = True
                        break
                    worker.hand_out(handed_out, task)
                    handed_out += 1
                selector.modify(
                    worker.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if worker.outgoing else 0), worker
                )
            yielded = given_back in done
            while given_back in done:
                result, error = done.pop(given_back)
                given_back += 1
                if error is not None:
                    raise error
                yield result
            if exhausted and given_back == handed_out:
                finished = True
                return
            if yielded:  # the held results made room: hand out more before waiting, or nothing may come
                continue
            for key, events in selector.select():
                worker = key.data
                if key.fileobj is not worker.sock:  # its sentinel: the process ended
                    raise SimdedupError("a worker process died (killed by a signal: out of memory?)")
                if events & selectors.EVENT_WRITE:
                    worker.write()
                if events & selectors.EVENT_READ:
                    for number, result, error in worker.read():
                        done[number] = (result, error)
    finally:
        selector.close()
        for worker in workers:
            worker.stop(finished)


_END = object()


class _RemoteTraceback(Exception):
    """Where an exception was raised in a worker process (shown as its cause)."""

    def __str__(self) -> str:
        return str(self.args[0])


class _Worker:
    """One worker process and the parent's end of its socket pair."""

    def __init__(
        self,
        context: Any,
        work: Callable[[Any], Any],
        setup: Callable[..., None],
        state: tuple,
        parent_ends: list[socket.socket],
    ):
        """``parent_ends``: the parent's ends of the other workers' socket pairs, which the new
        worker closes (inherited, they would keep those workers from seeing the parent go)."""
        self.sock, theirs = socket.socketpair()
        self.process = context.Process(
            target=_serve, daemon=True, args=(theirs, [*parent_ends, self.sock], os.getpid(), work, setup, state)
        )
        self.process.start()
        theirs.close()
        self.sock.setblocking(False)
        self.outgoing = bytearray()
        self.incoming = bytearray()
        self.frame: bytearray | None = None  # a large frame being received, ``filled`` bytes of it
        self.filled = 0
        self.outstanding = 0

    def hand_out(self, number: int, task: Any) -> None:
        data = pickle.dumps((number, task), pickle.HIGHEST_PROTOCOL)
        self.outgoing += len(data).to_bytes(_HEADER, "little")
        self.outgoing += data
        self.outstanding += 1
        self.write()

    def write(self) -> None:
        """Send what the socket takes now."""
        try:
            sent = self.sock.send(self.outgoing)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionError:  # the worker is gone: its sentinel says so
            sent = len(self.outgoing)
        del self.outgoing[:sent]

    def read(self) -> list[tuple[int, Any, BaseException | None]]:
        """The results that have arrived whole: ``(task number, result, exception)``.

        A large frame (a batch of texts) is received straight into a buffer of its own size
        (:attr:`frame`) and unpickled from there: its bytes are copied once on their way, not
        appended to the bytes received and then cut out of them."""
        frame = self.frame
        try:
            if frame is not None:
                with memoryview(frame) as view, view[self.filled :] as rest:
                    received = self.sock.recv_into(rest)
            else:
                data = self.sock.recv(1 << 20)
                received = len(data)
        except (BlockingIOError, InterruptedError):
            return []
        except ConnectionError:
            received = 0
        if not received:
            raise SimdedupError("a worker process died (killed by a signal: out of memory?)")
        if frame is not None:
            self.filled += received
            if self.filled < len(frame):
                return []
            self.frame = None
            return [self._result(frame)]
        self.incoming += data
        results = []
        while len(self.incoming) >= _HEADER:
            size = int.from_bytes(self.incoming[:_HEADER], "little")
            if len(self.incoming) < _HEADER + size:
                if size > _FRAME_BYTES:  # the rest goes straight into a frame of its own
                    self.frame = bytearray(size)
                    self.filled = len(self.incoming) - _HEADER
                    self.frame[: self.filled] = memoryview(self.incoming)[_HEADER:]
                    self.incoming.clear()
                break
            with memoryview(self.incoming) as view, view[_HEADER : _HEADER + size] as frame_view:
                results.append(self._result(frame_view))
            del self.incoming[: _HEADER + size]
        return results

    def _result(self, frame: bytes | bytearray | memoryview) -> tuple[int, Any, BaseException | None]:
        number, result, error = pickle.loads(frame)
        if error is not None:
            error, where = error
            error.__cause__ = _RemoteTraceback(where)
        self.outstanding -= 1
        return number, result, error

    def stop(self, finished: bool) -> None:
        """Let the worker end when its work is done; end it now otherwise."""
        if finished:
            try:
                self.sock.setblocking(True)
                self.sock.sendall(bytes(_HEADER))
            except OSError:
                pass
        else:
            self.process.kill()  # a worker has nothing to save: its results only go to the parent
        self.process.join()
        self.sock.close()


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _serve(
    sock: socket.socket,
    parent_ends: list[socket.socket],
    parent: int,
    work: Callable[[Any], Any],
    setup: Callable[..., None],
    state: tuple,
) -> None:
    """A worker process: ``work`` each task that comes, send back its result, until told to stop
    or the parent is gone."""
    _die_with(parent)
    for end in parent_ends:
        end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the workers
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if callable(signal.getsignal(signum)):  # the parent's handler; an ignored signal stays ignored
            signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    # A worker's results go to the parent over its socket: whatever else writes to its stdout
    # (a plugin's print, even from C) goes to stderr, not into the parent's output.
    os.dup2(2, 1)
    setup(*state)
    with sock:
        while (frame := _receive(sock)) is not None:
            number, task = pickle.loads(frame)
            try:
                reply = pickle.dumps((number, work(task), None), pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # an interrupt raised by a plugin too: the parent's to handle
                reply = pickle.dumps((number, None, _portable(exc)), pickle.HIGHEST_PROTOCOL)
            try:
                sock.sendall(len(reply).to_bytes(_HEADER, "little"))
                sock.sendall(reply)
            except OSError:  # the parent is gone
                return


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when its parent ends (Linux; elsewhere the end of the
    socket pair stops it once its task is done). Strictly, when the parent's thread that forked
    it ends: the one that first asked :func:`in_order` for a result."""
    try:
        prctl = ctypes.CDLL(None).prctl
        prctl(
            _PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)
        )
    except (OSError, AttributeError):  # no prctl here
        pass
    if os.getppid() != parent:  # the parent died before the request was made: nobody sends it
        os._exit(0)


def _receive(sock: socket.socket) -> bytearray | None:
    """The next frame, or None when told to stop or the parent is gone."""
    header = _exactly(sock, _HEADER)
    if header is None:
        return None
    size = int.from_bytes(header, "little")
    return _exactly(sock, size) if size else None


def _exactly(sock: socket.socket, size: int) -> bytearray | None:
    data = bytearray(size)
    view = memoryview(data)
    while view:
        try:
            got = sock.recv_into(view)
        except ConnectionError:
            got = 0
        if not got:
            return None
        view = view[got:]
    return data


def _portable(exc: BaseException) -> tuple[BaseException, str]:
    """An exception as it can travel to the parent, with the traceback of where it was raised."""
    where = "".join(traceback.format_exception(exc))
    try:
        pickle.loads(pickle.dumps(exc))
        return exc, where
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}"), where
