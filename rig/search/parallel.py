"""Running a variant's fuzz runs on every core, with results that do not depend on how many.

Run `i` is a pure function of (scenario, variant, bounds, session seed, i): it draws its schedule
and seed from `run_rng(seed, i)` wherever it runs. Results are folded in run-index order (a
small reorder buffer), so what a session reports depends only on which runs it did, and the
runs it did are always a prefix `0 … done-1`:

- `--runs N`: runs 0 … N-1;
- `--until-violation`: up to and including the first violating run (runs after it that
  happened to finish on another worker are dropped, so the answer is the same for any N);
- `--time-budget`: every run started before the budget ran out finishes, runs not started are
  cancelled, and results past the first gap are dropped; fuzz.json records `done`, which with
  the seed reproduces the session (`--runs done`). Ctrl-C stops a session the same way, and so
  does a worker that dies mid-run (stopped_by "worker-lost"; `rig fuzz` exits 2).

Workers are processes (`multiprocessing`, the forkserver start method where there is one, spawn
elsewhere): never fork a process that may run threads (a Spark driver's py4j threads, a test
runner's). Each worker loads and compiles the scenario once (CaseCompiler) and then only runs
cases; nothing in a run depends on the process (random streams are SHA-256 seeded, never
PYTHONHASHSEED). With one worker the runs go in this process, with no pool at all.
"""

from __future__ import annotations

import hashlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rig.engine.heap import COLLECTOR
from rig.search.bounds import FuzzBounds
from rig.search.cases import CaseResult, compiler
from rig.search.draw import draw_run
from rig.worker_processes import ignore_interrupts, worker_context

Progress = Callable[["Tally"], None]


@dataclass
class Tally:
    """What the runs 0 … done-1 found, folded in index order."""

    until_violation: bool = False
    done: int = 0
    events: int = 0
    simulated_ms: float = 0.0  # every run's simulated time, the quiesce after its duration included
    cpu_s: float = 0.0  # the runs' CPU time (in whichever process ran them)
    violating: list[CaseResult] = field(default_factory=list)
    unsettled: list[CaseResult] = field(default_factory=list)  # runs the quiesce left unsettled
    stopped_by: str = "runs"  # runs | violation | time-budget | interrupted | worker-lost
    _digest: Any = field(default_factory=hashlib.sha256)

    def add(self, result: CaseResult) -> bool:
        """Fold run `done`; True when the session is over (the first violation, if asked)."""
        if result.index != self.done:
            raise ValueError(f"run {result.index} folded after {self.done - 1}")
        self.done += 1
        self.events += result.events
        self.simulated_ms += result.simulated_ms
        self.cpu_s += result.cpu_s
        self._digest.update(f"{result.index} {result.events_sha256}\n".encode())
        if not result.settled:
            self.unsettled.append(result)
        if result.violated:
            self.violating.append(result)
            if self.until_violation:
                self.stopped_by = "violation"
                return True
        return False

    @property
    def found(self) -> CaseResult | None:
        return self.violating[0] if self.violating else None

    @property
    def runs_sha256(self) -> str:
        """A digest of every run's event-log digest, in run order: equal sessions, equal runs."""
        return str(self._digest.hexdigest())


@dataclass(frozen=True)
class Job:
    """One variant's fuzz session, as every worker receives it."""

    data: dict[str, Any]
    variant: str | None
    bounds: FuzzBounds
    seed: int


def run_one(job: Job, index: int) -> CaseResult:
    """Run `index` of `job`: draw its schedule and seed, simulate it, judge it."""
    faults, seed = draw_run(job.bounds, job.seed, index)
    return compiler(job.data, job.variant).run(faults, seed, index)


_job: Job | None = None


# The cycle collector during a fuzz session: every run has RUN_GC_THRESHOLD (rig.engine.heap)
# while it runs; the session also keeps it between runs, and freezes its set-up (imported
# modules, the compiled scenario: never garbage). With Python's default thresholds (700, 10, 10)
# a fuzz-replication run saw ~60 young, 5 middle and 0.5 full collections, 74 ms of its 361 ms
# of CPU (20 runs, one process); with these and the set-up frozen, 27 ms of 317 ms.


@contextmanager
def fuzz_gc() -> Iterator[None]:
    """Freeze what exists and raise the collector's thresholds; restore both afterwards (the
    process's collector, shared with any run on another thread: rig.engine.heap.COLLECTOR)."""
    COLLECTOR.hold()
    COLLECTOR.freeze()
    try:
        yield
    finally:
        COLLECTOR.thaw()
        COLLECTOR.release()


def _start_worker(job: Job) -> None:
    """A worker's set-up: ignore Ctrl-C (the parent stops the session), compile once, and the
    collector as `fuzz_gc` sets it, for the worker's life."""
    global _job
    ignore_interrupts()
    _job = job
    compiler(job.data, job.variant)
    COLLECTOR.hold()
    COLLECTOR.freeze()


def _work(index: int) -> CaseResult:
    assert _job is not None, "the worker was not started"
    return run_one(_job, index)


def _indices(first: int, end: int | None) -> Iterator[int]:
    index = first
    while end is None or index < end:
        yield index
        index += 1


def run_local(job: Job, runs: int | None, workers: int, tally: Tally,
              deadline: float | None = None, progress: Progress | None = None) -> Tally:
    """Runs 0 … runs-1 (None: until a violation or the deadline) on `workers` processes.

    `deadline` is a time.monotonic() value; `progress` is called after each folded run.
    """
    if workers <= 1:
        return _run_here(job, runs, tally, deadline, progress)
    pending: dict[Future[CaseResult], int] = {}
    ready: dict[int, CaseResult] = {}
    cut = runs  # no run at or past `cut` is started or folded
    next_index, stopping = 0, False

    def fold() -> None:
        while tally.done in ready and (cut is None or tally.done < cut):
            over = tally.add(ready.pop(tally.done))
            if progress is not None:
                progress(tally)
            if over:
                return

    with _terminate_as_interrupt(), ProcessPoolExecutor(
            workers, mp_context=worker_context("rig.search.parallel"),
            initializer=_start_worker, initargs=(job,)) as pool:
        try:
            while True:
                over = cut is not None and tally.done >= cut
                if not stopping and not over and deadline is not None and (
                        time.monotonic() >= deadline):
                    stopping, tally.stopped_by = True, "time-budget"
                    for future in pending:
                        future.cancel()  # runs not started yet; the running ones finish
                while (not stopping and len(pending) < 2 * workers
                       and (cut is None or next_index < cut)):
                    pending[pool.submit(_work, next_index)] = next_index
                    next_index += 1
                if not pending:
                    break
                timeout = (None if stopping or deadline is None
                           else max(0.0, deadline - time.monotonic()))
                finished, _ = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
                for future in finished:  # cancelled futures count as finished
                    index = pending.pop(future)
                    if future.cancelled():
                        continue
                    result = ready[index] = future.result()
                    if result.violated and tally.until_violation:
                        cut = index + 1 if cut is None else min(cut, index + 1)
                        for other, at in pending.items():
                            if at >= cut:
                                other.cancel()
                fold()
        except KeyboardInterrupt:
            if tally.stopped_by == "runs":
                tally.stopped_by = "interrupted"
            for future in pending:
                future.cancel()
            for future, index in pending.items():
                if not future.cancelled():
                    ready[index] = future.result()  # a run started finishes (workers ignore ^C)
            fold()
        except BrokenProcessPool:
            # A worker died mid-run (the out-of-memory killer's SIGKILL): its run is lost and
            # the pool with it. The runs before the first gap stand, as after an interrupt.
            tally.stopped_by = "worker-lost"
            for future, index in pending.items():
                if future.done() and not future.cancelled() and future.exception() is None:
                    ready[index] = future.result()
            fold()
    return tally


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a pooled session as Ctrl-C does (its runs so far kept, the workers shut
    down) instead of killing this process and leaving its workers behind."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(_signal: int, _frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _run_here(job: Job, runs: int | None, tally: Tally, deadline: float | None,
              progress: Progress | None) -> Tally:
    compiler(job.data, job.variant)
    with fuzz_gc():
        return _run_serially(job, runs, tally, deadline, progress)


def _run_serially(job: Job, runs: int | None, tally: Tally, deadline: float | None,
                  progress: Progress | None) -> Tally:
    try:
        for index in _indices(0, runs):
            if deadline is not None and time.monotonic() >= deadline:
                tally.stopped_by = "time-budget"
                break
            over = tally.add(run_one(job, index))
            if progress is not None:
                progress(tally)
            if over:
                break
    except KeyboardInterrupt:
        if tally.stopped_by == "runs":
            tally.stopped_by = "interrupted"
    return tally
