"""simdedup.workers: results in task order, large data both ways, errors and dead workers."""

import itertools
import os
import signal
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdedup import workers
from simdedup.errors import SimdedupError

_state: dict = {}


def _setup(offset: int) -> None:
    _state["offset"] = offset


def _add_offset(task):
    number, pause = task
    time.sleep(pause)
    return number + _state["offset"], os.getpid()


def _echo_big(task: bytes) -> bytes:
    return task * 2


def _arrays(task: tuple[int, int]) -> dict:
    """Arrays of a seeded size: contiguous ones travel beside the pickle, a strided one in it."""
    seed, size = task
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**63, size=size, dtype=np.uint64)
    return {
        "values": values,
        "empty": values[:0],
        "strided": values[::3],
        "matrix": rng.integers(0, 255, size=(size % 7, 5), dtype=np.uint8),
        "counts": values.astype(np.uint32),
        "text": bytes([seed % 256]) * (size % 1000),
    }


def _write_shared(task: tuple[str, int, int, int]) -> int:
    """Write bytes of a seeded pattern to a part of the parent's shared memory."""
    path, nbytes, start, end = task
    memory = workers.map_shared(path, nbytes)
    memory[start:end] = bytes((start + i) % 251 for i in range(end - start))
    memory.close()
    return os.getpid()


def _fail_on_seven(task: int) -> int:
    if task == 7:
        raise ValueError("seven is not welcome")
    return task


class _Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(a)
        self.b = b


def _raise_unpicklable(task: int) -> int:
    raise _Unpicklable("odd", "one")


def _die_on_five(task: int) -> int:
    if task == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


def test_a_slow_task_does_not_stall_the_others():
    """One worker is held by a slow task while the other runs ahead until the results held for
    it fill the window. When the slow one ends, its results and the next one's may be read at
    once, leaving no task out: more must then be handed out before waiting again (the run used
    to wait for results of tasks never handed out). How the two results arrive is up to the
    scheduler, so the case is tried a few times."""
    for slow in (0, 1, 0, 1, 0, 1):
        tasks = [(n, 0.15 if n == slow else 0.0) for n in range(3 * workers.HELD_PER_WORKER * 2 + 5)]
        results: list = []
        thread = threading.Thread(
            target=lambda: results.extend(workers.in_order(iter(tasks), 2, _add_offset, _setup, (0,))), daemon=True
        )
        thread.start()
        thread.join(30)
        assert not thread.is_alive(), "the run stalled"
        assert [value for value, _ in results] == [n for n, _ in tasks]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0, 0.001, 0.01]), max_size=40), st.integers(1, 3))
def test_results_come_in_task_order_whatever_the_timing(pauses, jobs):
    tasks = list(enumerate(pauses))
    results = list(workers.in_order(iter(tasks), jobs, _add_offset, _setup, (100,)))
    assert [value for value, _ in results] == [number + 100 for number, _ in tasks]
    if len(tasks) > 3 * jobs and jobs > 1:
        assert len({pid for _, pid in results}) > 1  # the work was shared


def test_large_tasks_and_results_at_once_do_not_deadlock(alarm):
    """Tasks and results far larger than a socket's buffer, several in flight per worker."""
    tasks = [bytes([i]) * (3 << 20) for i in range(8)]
    results = list(workers.in_order(iter(tasks), 2, _echo_big, _setup, (0,)))
    assert results == [task * 2 for task in tasks]


def test_results_small_and_large_mixed_come_back_whole(alarm):
    """Replies below, at and around the socket's buffer, one after another in any order: each
    comes back whole and in its place."""
    import random

    r = random.Random(4)
    sizes = [0, 1, 100, 1 << 15] + [(1 << 16) + d for d in (-200, -1, 0, 1, 200)] + [1 << 20, 3 << 20]
    tasks = [bytes([n % 251]) * (r.choice(sizes) // 2) for n in range(60)]
    results = list(workers.in_order(iter(tasks), 2, _echo_big, _setup, (0,)))
    assert results == [task * 2 for task in tasks]


def test_an_error_is_raised_in_its_place_with_where_it_happened(alarm):
    got = []
    with pytest.raises(ValueError, match="seven is not welcome") as raised:
        for result in workers.in_order(iter(range(20)), 2, _fail_on_seven, _setup, (0,)):
            got.append(result)
    assert got == list(range(7))
    assert "_fail_on_seven" in str(raised.value.__cause__)


def test_an_exception_that_cannot_travel_is_named(alarm):
    with pytest.raises(RuntimeError, match="_Unpicklable: odd"):
        list(workers.in_order(iter(range(3)), 2, _raise_unpicklable, _setup, (0,)))


def test_a_killed_worker_stops_the_run(alarm):
    got = []
    with pytest.raises(SimdedupError, match="worker process died"):
        for result in workers.in_order(iter(range(50)), 2, _die_on_five, _setup, (0,)):
            got.append(result)
    assert got == list(range(len(got))) and len(got) <= 5


def test_stopping_early_ends_the_workers(alarm):
    results = workers.in_order(iter([(i, 0.0) for i in range(100)]), 2, _add_offset, _setup, (0,))
    first, pid = next(results)
    assert first == 0
    results.close()
    time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _sockets(pid: int) -> set[str]:
    sockets = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:"):
            sockets.add(link)
    return sockets


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_worker_holds_no_end_of_the_parents_socket_pairs(alarm):
    """Else it would never see the end of its own pair when the parent goes."""
    before = _sockets(os.getpid())
    results = workers.in_order(iter([(i, 0.01) for i in range(60)]), 3, _add_offset, _setup, (0,))
    pids = {pid for _, pid in itertools.islice(results, 30)}
    parents = _sockets(os.getpid()) - before
    assert len(pids) == 3 and len(parents) == 3
    for pid in pids:
        assert not _sockets(pid) & parents
    results.close()


def test_replies_holding_arrays_come_back_equal_in_any_size(alarm):
    """Numpy arrays travel as out-of-band buffers, received straight into the arrays' memory:
    sizes from none to several megabytes, empty and strided arrays among them, mixed with
    bytes; each reply whole, in task order, equal to what the worker made."""
    import random

    r = random.Random(7)
    tasks = [(seed, r.choice([0, 1, 3, 1000, (1 << 13) + 1, 1 << 17, 1 << 19])) for seed in range(40)]
    pool = workers.Pool(2, _arrays, _setup, (0,))
    try:
        results = list(pool.in_order(iter(tasks)))
        again = pool.each([tasks[0], tasks[-1]])
    finally:
        pool.close()
    for task, result in zip([*tasks, tasks[0], tasks[-1]], [*results, *again]):
        expected = _arrays(task)
        assert result.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, np.ndarray):
                assert result[key].dtype == value.dtype and np.array_equal(result[key], value)
            else:
                assert result[key] == value


def test_a_worker_that_dies_in_a_round_of_its_own_is_an_error_not_a_hang(alarm):
    """A pool's second round (each worker its own task, as dedup asks the workers that keep the
    texts for their sets): a worker killed meanwhile ends the round with an error; the pool
    then closes without waiting on it."""
    pool = workers.Pool(2, _die_on_five, _setup, (0,))
    try:
        assert list(pool.in_order(iter(range(4)))) == [0, 1, 2, 3]
        with pytest.raises(SimdedupError, match="worker process died"):
            pool.each([1, 5])
    finally:
        pool.close()
    assert all(not w.process.is_alive() for w in pool.workers) and pool.workers == []


def test_workers_write_shared_memory_that_the_parent_then_reads(alarm):
    """Each worker writes its half of the parent's shared memory (an anonymous file the worker
    opens by its path); the parent maps it and reads both halves."""
    nbytes = 3 << 20
    shared = workers.SharedMemory.create(nbytes)
    if shared is None:
        pytest.skip("no shared memory here")
    pool = workers.Pool(2, _write_shared, _setup, (0,))
    try:
        pids = pool.each([(shared.path, nbytes, 0, nbytes // 2), (shared.path, nbytes, nbytes // 2, nbytes)])
    finally:
        pool.close()
    memory = shared.map()
    shared.close()
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert memory[:] == bytes(i % 251 for i in range(nbytes))
    assert workers.SharedMemory.create(0) is None


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_records_and_text_handles_cross_a_pipe_whole(data):
    """What workers send back most, a record per document with its text's handle, pickles to an
    equal object whatever its fields hold: every field (found from the dataclass, so a field
    added later is covered) set to a value of its own."""
    import dataclasses
    import pickle

    from simdedup.fingerprints import FingerprintRecord
    from simdedup.similarity import HeldText

    anything = st.one_of(
        st.none(),
        st.integers(-(2**130), 2**130),
        st.text(),
        st.binary(),
        st.dictionaries(st.text(max_size=5), st.integers()),
    )
    held = HeldText(*(data.draw(st.integers(-(2**70), 2**70)) for _ in dataclasses.fields(HeldText)))
    values = {f.name: data.draw(anything) for f in dataclasses.fields(FingerprintRecord)}
    values["exact"] = data.draw(st.sampled_from([held, None]))
    record = FingerprintRecord(**values)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        again = pickle.loads(pickle.dumps(record, protocol))
        assert type(again) is FingerprintRecord and again.__dict__ == record.__dict__
        assert pickle.loads(pickle.dumps(held, protocol)) == held


def _end_on_three(task: tuple[int, str]) -> int:
    number, how = task
    if number == 3:
        kind, _, value = how.partition(":")
        if kind == "exit":
            os._exit(int(value))
        os.kill(os.getpid(), getattr(signal, value))
    return number


@pytest.mark.parametrize(
    "how, said",
    [
        ("exit:5", "exited with status 5"),  # issue 42: said "killed by a signal: out of memory?"
        ("exit:0", "exited with status 0"),
        ("exit:137", "exited with status 137"),
        ("signal:SIGKILL", "killed by SIGKILL: the system's out-of-memory killer sends it"),
        ("signal:SIGUSR1", "killed by SIGUSR1)"),
        ("signal:SIGTERM", "killed by SIGTERM)"),
    ],
)
def test_a_dead_worker_is_reported_by_how_it_ended(alarm, how, said):
    with pytest.raises(SimdedupError, match="worker process died") as raised:
        list(workers.in_order(iter([(i, how) for i in range(8)]), 2, _end_on_three, _setup, (0,)))
    assert said in str(raised.value) and "\n" not in str(raised.value)
    if how.startswith("exit"):
        assert "signal" not in str(raised.value) and "memory" not in str(raised.value)
