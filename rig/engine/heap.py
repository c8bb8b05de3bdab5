"""Python's cycle collector and a large model that lives exactly as long as its run.

Setting up a large cluster allocates millions of objects (replicas, logs, fetch states) that all
live until the run ends. The cycle collector, started by allocation counts, walks every object
of the generations it collects: during set-up it finds nothing to free yet costs more than the
set-up itself, and every full collection during the run walks the whole model again. So a large
model is built with the collector paused, then frozen (gc.freeze: left out of all later
collections) until the run ends, when it is unfrozen and collected like any other garbage.

Whatever its size, a run allocates short-lived objects by the million (messages, timers, event
dicts): it runs with the young generation collected every RUN_GC_THRESHOLD[0] allocations
instead of every 700, which cuts the collections' cost several-fold (the million-record
benchmark: 0.60 of 9.0 CPU s → 0.16) and keeps what they free bounded.

The collector never changes what a run does (the model has no finalizers and no weak
references), only how long it takes.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

# Below this many replicas a model's set-up is too small for the collector to matter, and runs
# (the test suite makes hundreds) are neither collected first, paused nor frozen.
LARGE_MODEL_REPLICAS = 10_000

# The collector's thresholds while a model runs: a young collection every 50,000 allocations
# (Python's default: 700), a middle one every 20 of those, a full one every 5 middle ones at
# most (Python also waits until a quarter of the oldest generation is new). The million-record
# benchmark's run (v6) saw 494 young, 45 middle and 4 full collections, 0.60 s of 9.0 CPU s,
# with the defaults; 5 young and 1 full, 0.16 s, with these.
RUN_GC_THRESHOLD = (50_000, 20, 5)


class _Collector:
    """The process's one cycle collector, which every model running in the process shares.

    Its settings belong to the process, not to a thread, and a process may run several models
    at once (two `rig run`s on threads of one process, a library caller): each holder saving and
    restoring the settings itself let one that started second and ended last leave the run's
    thresholds behind for good. So the first holder in saves the caller's settings and the last
    one out gives them back; the collector stays paused while any large model is being built,
    and what was frozen stays frozen until every holder that froze is done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._building = 0
        self._frozen = 0
        self._threshold = gc.get_threshold()
        self._enabled = True

    def hold(self) -> None:
        """A run starts: RUN_GC_THRESHOLD until the last run holding the collector ends."""
        with self._lock:
            if self._holders == 0:
                self._threshold, self._enabled = gc.get_threshold(), gc.isenabled()
            self._holders += 1
            gc.set_threshold(*RUN_GC_THRESHOLD)

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                gc.set_threshold(*self._threshold)
            self._enable_unless_building()

    def pause(self) -> None:
        """A large model's set-up starts: an earlier run's garbage goes first, then no
        collections until every model being built is built."""
        with self._lock:
            gc.collect()
            gc.disable()
            self._building += 1

    def resume(self) -> None:
        with self._lock:
            self._building -= 1
            self._enable_unless_building()

    def freeze(self) -> None:
        """What exists now lives until the holder that froze it thaws it."""
        with self._lock:
            gc.freeze()
            self._frozen += 1

    def thaw(self) -> None:
        with self._lock:
            self._frozen -= 1
            if self._frozen == 0:
                gc.unfreeze()

    def _enable_unless_building(self) -> None:
        if self._building == 0 and self._enabled:
            gc.enable()


COLLECTOR = _Collector()


class LongLivedModel:
    """`with LongLivedModel(replicas) as heap:` build the model, call `heap.built()`, run.

    For every model, the collector's thresholds are RUN_GC_THRESHOLD until the block ends (until
    the last block ends, when models run on several threads: the collector is the process's).
    For a large model also: a full collection first (an earlier run's model, garbage since that
    run ended, goes before the next one is built), the collector paused during set-up, and the
    model frozen from `built()` until the block ends; a small model is neither collected first,
    paused nor frozen."""

    def __init__(self, replicas: int):
        self.large = replicas >= LARGE_MODEL_REPLICAS
        self._building = False
        self._frozen = False

    def __enter__(self) -> LongLivedModel:
        COLLECTOR.hold()
        if self.large:
            COLLECTOR.pause()
            self._building = True
        return self

    def built(self) -> None:
        """Set-up is done: what exists now lives until the run ends."""
        if self._building:
            COLLECTOR.freeze()
            self._frozen = True
            self._building = False
            COLLECTOR.resume()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._frozen:
            COLLECTOR.thaw()
            self._frozen = False
        if self._building:
            self._building = False
            COLLECTOR.resume()
        COLLECTOR.release()
