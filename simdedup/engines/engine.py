"""Running a stage's tasks: on Dask, on this machine's worker processes, or in this process. The
stages know nothing of any of them.

A task is a plain function over files and numpy arrays; the engine skips the tasks of a stage
whose completion marker exists (a rerun), runs the others, writes each one's marker when it has
succeeded, and reports progress on stderr: tasks done / total, rows and bytes.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..cli_options import message
from .workdir import DamagedTask, WorkDir, recording


@dataclass
class Task:
    name: str  # unique in its stage, and naming what it does (a rerun skips it by this name)
    function: Callable[..., dict]
    args: tuple


def run_task(work: WorkDir, stage: str, name: str, function: Callable[..., dict], *args: Any) -> dict:
    """Run a task; mark it done unless it reports an input error (``{"error": ...}``)."""
    with recording() as files:
        result = function(*args)
    if "error" not in result:
        work.mark_done(stage, name, result, files)
    return result


class Progress:
    """``simdedup: STAGE: done/total tasks, rows, bytes`` on stderr: redrawn on a terminal, one
    line at the end otherwise."""

    def __init__(self, stage: str, total: int, skipped: int, silent: bool):
        self.stage, self.total, self.skipped, self.silent = stage, total, skipped, silent
        self.done, self.rows, self.bytes = skipped, 0, 0
        self.start = time.perf_counter()
        self.live = not silent and sys.stderr.isatty()

    def add(self, result: dict) -> None:
        self.done += 1
        self.rows += int(result.get("count", 0))
        self.bytes += int(result.get("bytes", 0))
        if self.live:
            sys.stderr.write(f"\r{self.line()}")
            sys.stderr.flush()

    def line(self) -> str:
        skipped = f" ({self.skipped} done before)" if self.skipped else ""
        return (
            f"simdedup: {self.stage}: {self.done}/{self.total} tasks{skipped}, {self.rows:,} rows, "
            f"{_size(self.bytes)}, {time.perf_counter() - self.start:.1f} s"
        )

    def close(self) -> None:
        if self.silent:
            return
        sys.stderr.write(("\r" if self.live else "") + self.line() + "\n")
        sys.stderr.flush()


def _size(count: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000  # type: ignore[assignment]
    return ""


class Engine:
    """Runs in this process, task after task (the reference the Dask engine must equal)."""

    workers = 1

    def __init__(self, silent: bool = True):
        self.silent = silent

    def share(self, value: Any) -> Any:
        """``value`` as every task can take it (the Dask engine broadcasts it)."""
        return value

    def note(self, line: str) -> None:
        """A progress line of work done on the driver (not with ``silent``)."""
        if not self.silent:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def run(self, work: WorkDir, stage: str, tasks: list[Task]) -> list[dict]:
        """The results of ``tasks``, in their order; finished ones read from their markers."""
        finished = work.finished(stage)
        results: dict[str, dict] = {}
        for task in tasks:
            if task.name in finished:
                try:
                    results[task.name] = work.result(stage, task.name)
                except DamagedTask as exc:
                    message(f"simdedup: warning: {exc}: damaged; task {stage}/{task.name} run again")
        progress = Progress(stage, len(tasks), len(results), self.silent)
        for task, result in self._results(work, stage, [t for t in tasks if t.name not in results]):
            results[task.name] = result
            progress.add(result)
        progress.close()
        return [results[t.name] for t in tasks]

    def _results(self, work: WorkDir, stage: str, tasks: list[Task]) -> Any:
        for task in tasks:
            yield task, run_task(work, stage, task.name, task.function, *task.args)


class DaskEngine(Engine):
    """Tasks submitted to a ``distributed.Client``; a task whose worker dies is run again
    elsewhere (its outputs are written whole or not at all, so a second run is harmless)."""

    def __init__(self, client: Any, silent: bool = True):
        super().__init__(silent)
        self.client = client

    @property
    def workers(self) -> int:  # type: ignore[override]
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def share(self, value: Any) -> Any:
        return self.client.scatter(value, broadcast=True, hash=False)

    def _results(self, work: WorkDir, stage: str, tasks: list[Task]) -> Any:
        from distributed import as_completed

        if not tasks:
            return
        futures = {
            self.client.submit(
                run_task,
                work,
                stage,
                task.name,
                task.function,
                *task.args,
                pure=False,
                key=f"{stage}-{task.name}-{id(tasks)}",
                retries=1,
            ): task
            for task in tasks
        }
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            for future in futures:
                future.release()


class ProcessEngine(Engine):
    """Tasks on ``jobs`` worker processes of this machine (:mod:`simdedup.workers`, which
    leaves no worker behind): the stages of a Dask run without Dask, resumable through the work
    directory in the same way."""

    def __init__(self, jobs: int, silent: bool = True):
        super().__init__(silent)
        self.jobs = jobs

    @property
    def workers(self) -> int:  # type: ignore[override]
        return self.jobs

    def _results(self, work: WorkDir, stage: str, tasks: list[Task]) -> Any:
        if self.jobs == 1 or len(tasks) < 2:
            yield from super()._results(work, stage, tasks)
            return
        from ..workers import in_order

        yield from zip(tasks, in_order(tasks, min(self.jobs, len(tasks)), _run_in_worker, _enter_stage, (work, stage)))


_stage: tuple[WorkDir, str] | None = None  # a worker process's stage (set by _enter_stage)


def _enter_stage(work: WorkDir, stage: str) -> None:
    global _stage
    _stage = (work, stage)


def _run_in_worker(task: Task) -> dict:
    assert _stage is not None
    return run_task(*_stage, task.name, task.function, *task.args)
