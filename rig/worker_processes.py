"""Worker processes, as `rig run` (a scenario's variants) and `rig fuzz` (its runs) start them.

They come from multiprocessing's forkserver (spawn where there is none), never from a fork of
the parent, which may be running threads (a Spark driver's py4j threads, a test runner's).
Workers ignore Ctrl-C: the parent decides how a session stops and stops its workers itself.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import os
import signal

__all__ = ["all_cores", "ignore_interrupts", "worker_context"]


def all_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count): the
    default number of workers."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_context(preload: str) -> multiprocessing.context.BaseContext:
    """The start method for workers; the forkserver imports `preload` once, so each worker
    forked from it starts with that module (and what it imports) loaded."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([preload])
        return context
    return multiprocessing.get_context("spawn")


def ignore_interrupts() -> None:
    """In a worker: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
