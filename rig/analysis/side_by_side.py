"""Side by side: an analysis' stages, and a stage's own Spark jobs, on threads.

A stage's wall time is mostly waiting: on Spark's jobs (planned on the driver, run on local[2]'s
two task threads), on py4j round trips, on pyarrow (which releases the GIL). So stages run a few
at a time, and a stage may run its independent jobs at once (`side_by_side`). Results are merged
in a fixed order, so summary.json comes out as a one-by-one run would write it (issue 19).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["STAGE_THREADS", "VariantEntries", "run_side_by_side", "side_by_side"]

# What a stage adds to summary.json: {variant: {key: value}}, merged into `variants.<name>`.
VariantEntries = dict[str, dict[str, Any]]


def merge(into: VariantEntries, entries: VariantEntries) -> None:
    """Add a stage's entries to those merged so far (a later stage's key wins)."""
    for name, extra in entries.items():
        into.setdefault(name, {}).update(extra)


def side_by_side(*jobs: Callable[[], Any]) -> tuple[Any, ...]:
    """Run `jobs` on threads of their own; their results in order, or the first one's error
    (in order) once all have ended. For a stage's independent Spark jobs: each mostly waits on
    the JVM."""
    with ThreadPoolExecutor(len(jobs), thread_name_prefix="rig-job") as pool:
        futures = [pool.submit(job) for job in jobs]
    return tuple(future.result() for future in futures)


# How many stages run at once: three cut the million-record analysis from 17-18 s to 12-13 s on
# this 2-core machine; two and four measured the same within noise.
STAGE_THREADS = 3


def run_side_by_side(stages: Sequence[tuple[str, Callable[[], VariantEntries]]],
                     times: dict[str, float], *, say: Callable[[str], None] | None,
                     begin: Callable[[str], None] | None) -> VariantEntries:
    """Run the (name, job) stages on STAGE_THREADS threads; merge what they add in the stages'
    order, so summary.json's keys come out as a one-by-one run would write them, and note each
    one's own wall time in `times` (in the stages' order too). Stages are independent: each
    reads the event table and writes its own metric tables (their `writes` are disjoint).
    A line per stage is said as it ends (in the order they end); a failed stage's error is
    raised once the stages already running have ended, and no stage starts after it."""
    running: list[str] = []
    lock = threading.Lock()
    failed = threading.Event()

    def one(name: str, job: Callable[[], VariantEntries]) -> VariantEntries:
        with lock:
            if failed.is_set():
                return {}  # an earlier stage failed: its error is what the caller gets
            running.append(name)
            if begin is not None:
                begin(", ".join(running))
        started = time.perf_counter()
        try:
            return job()
        except BaseException:
            failed.set()
            raise
        finally:
            took = time.perf_counter() - started
            with lock:
                running.remove(name)
                times[name] = took
                if say is not None:
                    say(f"  {name}: {took:.2f} s")
                if begin is not None and running:
                    begin(", ".join(running))

    merged: VariantEntries = {}
    with ThreadPoolExecutor(STAGE_THREADS, thread_name_prefix="rig-stage") as pool:
        futures = [pool.submit(one, name, job) for name, job in stages]
        try:
            for future in futures:
                merge(merged, future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    ended = dict(times)
    times.clear()
    times.update((name, ended[name]) for name, _ in stages if name in ended)
    return merged
