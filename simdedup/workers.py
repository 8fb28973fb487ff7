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
import itertools
import mmap
import multiprocessing
import os
import pickle
import selectors
import signal
import socket
import traceback
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .errors import SimdedupError
from .limits import BASE_OPEN_FILES, ensure_open_files

#: tasks handed to a worker ahead of its results, so that none waits for its next one
TASKS_AHEAD = 2
#: tasks done out of order that are held for the ones before them, per worker
HELD_PER_WORKER = 8
_HEADER = 8  # bytes of a task's length, little-endian; length 0 tells a worker to stop
_REPLY_HEAD = 16  # a reply's pickle size and number of out-of-band buffers, little-endian


def in_order(
    tasks: Iterable[Any], jobs: int, work: Callable[[Any], Any], setup: Callable[..., None], state: tuple
) -> Iterator[Any]:
    """``work(task)`` of every task, in order, on ``jobs`` worker processes, each of which
    calls ``setup(*state)`` first (with fork, ``state`` is inherited rather than pickled).
    Tasks are taken from ``tasks`` only as workers free up, so the input is read as the
    work goes. An exception raised by ``work`` is raised here, in its task's place.

    Raises:
        SimdedupError: a worker process died (its exit status, or the signal that killed it).
    """
    pending = iter(tasks)
    first = list(itertools.islice(pending, jobs))  # no more workers than tasks (-j 512, three batches)
    if not first:
        return
    pool = Pool(len(first), work, setup, state)
    try:
        yield from pool.in_order(itertools.chain(first, pending))
    finally:
        pool.close()


class Pool:
    """``jobs`` worker processes that stay for more than one round of tasks: :meth:`in_order`
    hands tasks to whichever worker frees up; :meth:`each` gives each worker a task of its
    own (one that reads what an earlier task left in that worker). :meth:`close` ends them,
    finished or not; a pool that is not closed ends its workers when the parent ends."""

    def __init__(self, jobs: int, work: Callable[[Any], Any], setup: Callable[..., None], state: tuple):
        ensure_open_files(BASE_OPEN_FILES + OPEN_FILES_PER_WORKER * jobs, f"-j {jobs}")
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self.finished = False
        try:
            for _ in range(jobs):
                # A worker starts with the parent's signal handlers (the CLI's turn SIGTERM into an
                # exception, which would end the worker with a traceback) until it sets its own, and
                # a signal to the parent must find it listed, to be stopped.
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
                try:
                    worker = _Worker(context, work, setup, state, [w.sock for w in self.workers])
                    self.workers.append(worker)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                self.selector.register(worker.sock, selectors.EVENT_READ, worker)
                self.selector.register(worker.process.sentinel, selectors.EVENT_READ, worker)
        except BaseException:
            self.close()
            raise

    @property
    def pids(self) -> list[int]:
        """The workers' process ids, in order."""
        return [w.process.pid for w in self.workers]  # type: ignore[misc]

    def in_order(self, tasks: Iterable[Any]) -> Iterator[Any]:
        """``work(task)`` of every task, in task order (see :func:`in_order`). The pool stays
        open after the last; an exception leaves the workers in an unknown state: close it."""
        workers, jobs = self.workers, len(self.workers)
        self.finished = False
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
                self._listen(worker)
            yielded = given_back in done
            while given_back in done:
                result, error = done.pop(given_back)
                given_back += 1
                if error is not None:
                    raise error
                yield result
            if exhausted and given_back == handed_out:
                self.finished = True
                return
            if yielded:  # the held results made room: hand out more before waiting, or nothing may come
                continue
            self._receive(done)

    def each(self, tasks: list[Any]) -> list[Any]:
        """``work(tasks[i])`` on worker ``i``, for every worker at once; the results in order."""
        if len(tasks) != len(self.workers):
            raise ValueError("one task for each worker")
        self.finished = False
        for number, (worker, task) in enumerate(zip(self.workers, tasks)):
            worker.hand_out(number, task)
            self._listen(worker)
        done: dict[int, tuple[Any, BaseException | None]] = {}
        while len(done) < len(tasks):
            self._receive(done)
            for worker in self.workers:
                self._listen(worker)
        results = []
        for number in range(len(tasks)):
            result, error = done[number]
            if error is not None:
                raise error
            results.append(result)
        self.finished = True
        return results

    def _listen(self, worker: "_Worker") -> None:
        """Wait for the worker's results, and for room to send it more when something waits."""
        self.selector.modify(
            worker.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if worker.outgoing else 0), worker
        )

    def _receive(self, done: dict[int, tuple[Any, BaseException | None]]) -> None:
        """Send and receive what the sockets take now; the results that arrived whole go to ``done``."""
        for key, events in self.selector.select():
            worker = key.data
            if key.fileobj is not worker.sock:  # its sentinel: the process ended
                raise worker.died()
            if events & selectors.EVENT_WRITE:
                worker.write()
            if events & selectors.EVENT_READ:
                for number, result, error in worker.read():
                    done[number] = (result, error)

    def release(self) -> None:
        """Tell the workers to end, their work done, without waiting for them (:meth:`close` does)."""
        for worker in self.workers:
            worker.release()

    def close(self) -> None:
        """End the workers: once their work is done when the last round finished, now otherwise."""
        self.selector.close()
        for worker in self.workers:
            worker.stop(self.finished)
        self.workers = []


_END = object()


class SharedMemory:
    """Memory the parent and its workers map together (Linux): an anonymous file (``memfd``),
    which a worker opens by its path under ``/proc`` and the parent maps once they wrote it.
    Nothing outlives the processes that map it. :meth:`create` gives None where there is none."""

    def __init__(self, fd: int, nbytes: int):
        self.fd, self.nbytes = fd, nbytes
        self.path = f"/proc/{os.getpid()}/fd/{fd}"

    @classmethod
    def create(cls, nbytes: int) -> "SharedMemory | None":
        if nbytes <= 0 or not hasattr(os, "memfd_create"):
            return None
        try:
            fd = os.memfd_create("simdedup", getattr(os, "MFD_CLOEXEC", 0))
        except OSError:
            return None
        shared = cls(fd, nbytes)
        try:
            os.ftruncate(fd, nbytes)
            os.close(os.open(shared.path, os.O_RDWR))  # as a worker will open it
        except OSError:
            shared.close()
            return None
        return shared

    def map(self) -> mmap.mmap:
        """The memory, mapped here with its pages (the workers wrote them all)."""
        return mmap.mmap(self.fd, self.nbytes, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))

    def close(self) -> None:
        """Let go of the file (a mapping keeps its memory)."""
        os.close(self.fd)


def map_shared(path: str, nbytes: int) -> mmap.mmap:
    """In a worker: the parent's :class:`SharedMemory` at ``path``, mapped to write."""
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED)
    finally:
        os.close(fd)


class _RemoteTraceback(Exception):
    """Where an exception was raised in a worker process (shown as its cause)."""

    def __str__(self) -> str:
        return str(self.args[0])


def death_cause(exitcode: int | None) -> str:
    """How a process ended, in words, from its ``exitcode`` (negative: the signal's number)."""
    if exitcode is None:
        return "its connection closed while it ran"
    if exitcode >= 0:
        return f"exited with status {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    hint = ": the system's out-of-memory killer sends it" if -exitcode == signal.SIGKILL else ""
    return f"killed by {name}{hint}"


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
        self.piece: bytearray | np.ndarray = bytearray(_REPLY_HEAD)  # what is being received, ``filled`` bytes of it
        self.filled = 0
        self.parts: list[np.ndarray] | None = None  # a reply's pickle and buffers, once its head is in
        self.part = 0
        self.pickle_size = 0
        self.outstanding = 0
        self.released = False  # told to end

    def died(self) -> SimdedupError:
        """The one-line error for this worker's end, with its exit status or the signal that
        ended it (SIGKILL, which the kernel's OOM killer sends, named as such)."""
        self.process.join(1)  # its socket closes as it exits: the status follows at once
        return SimdedupError(f"a worker process died ({death_cause(self.process.exitcode)})")

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

        A result comes in pieces (:func:`_reply`): a head with the sizes of the others, its
        pickle, then the pickle's out-of-band buffers (the data of numpy arrays). Each piece is
        received straight into memory of its own size, a buffer into the memory its array then
        uses: the bytes are copied once on their way, not gathered and cut out again."""
        results: list[tuple[int, Any, BaseException | None]] = []
        while True:
            while self.filled == len(self.piece):
                self._next_piece(results)
            try:
                with memoryview(self.piece) as view, view[self.filled :] as rest:
                    received = self.sock.recv_into(rest)
            except (BlockingIOError, InterruptedError):
                return results
            except ConnectionError:
                received = 0
            if not received:
                raise self.died()
            self.filled += received

    def _next_piece(self, results: list[tuple[int, Any, BaseException | None]]) -> None:
        """Take the piece received whole and make room for the next one."""
        self.filled = 0
        if self.parts is None and len(self.piece) == _REPLY_HEAD:  # the head: the pickle's size, the buffers' count
            self.pickle_size = int.from_bytes(self.piece[:8], "little")
            self.piece = bytearray(8 * int.from_bytes(self.piece[8:], "little"))
            self.parts = []
            return
        if not self.parts:  # the buffers' sizes: room for the pickle and each buffer, untouched until written
            sizes = [
                self.pickle_size,
                *(int.from_bytes(self.piece[i : i + 8], "little") for i in range(0, len(self.piece), 8)),
            ]
            self.parts = [np.empty(size, dtype=np.uint8) for size in sizes]
            self.part = 0
            self.piece = self.parts[0]
            return
        self.part += 1
        if self.part < len(self.parts):
            self.piece = self.parts[self.part]
            return
        pickled, *buffers = self.parts
        results.append(self._result(pickled, buffers))
        self.parts, self.piece = None, bytearray(_REPLY_HEAD)

    def _result(self, pickled: np.ndarray, buffers: list[np.ndarray]) -> tuple[int, Any, BaseException | None]:
        number, result, error = pickle.loads(pickled, buffers=buffers)
        if error is not None:
            error, where = error
            error.__cause__ = _RemoteTraceback(where)
        self.outstanding -= 1
        return number, result, error

    def release(self) -> None:
        """Tell the worker to end once its work is done."""
        if self.released:
            return
        self.released = True
        try:
            self.sock.setblocking(True)
            self.sock.sendall(bytes(_HEADER))
        except OSError:
            pass

    def stop(self, finished: bool) -> None:
        """Let the worker end when its work is done; end it now otherwise."""
        if finished:
            self.release()
        else:
            self.process.kill()  # a worker has nothing to save: its results only go to the parent
        self.process.join()
        self.sock.close()


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: what the parent holds for each worker: its socket, its sentinel, a pipe while it starts
OPEN_FILES_PER_WORKER = 4
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
                pieces = _reply(number, work(task), None)
            except BaseException as exc:  # an interrupt raised by a plugin too: the parent's to handle
                pieces = _reply(number, None, _portable(exc))
            try:
                for piece in pieces:
                    sock.sendall(piece)
            except OSError:  # the parent is gone
                return


def _reply(number: int, result: Any, error: Any) -> list[bytes | memoryview]:
    """A result as it is sent (:meth:`_Worker.read`): a head (the pickle's size, the number of
    out-of-band buffers and the size of each), the pickle (protocol 5), and the buffers, which
    are the memory of the result's numpy arrays, not copies of it."""
    buffers: list[pickle.PickleBuffer] = []
    pickled = pickle.dumps((number, result, error), 5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    head = b"".join(n.to_bytes(8, "little") for n in (len(pickled), len(raws), *(raw.nbytes for raw in raws)))
    return [head, pickled, *raws]


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
