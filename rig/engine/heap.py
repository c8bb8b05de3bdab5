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


class LongLivedModel:
    """`with LongLivedModel(replicas) as heap:` build the model, call `heap.built()`, run.

    For every model, the collector's thresholds are RUN_GC_THRESHOLD until the block ends.
    For a large model also: a full collection first (an earlier run's model, garbage since that
    run ended, goes before the next one is built), the collector paused during set-up, and the
    model frozen from `built()` until the block ends; a small model is neither collected first,
    paused nor frozen."""

    def __init__(self, replicas: int):
        self.large = replicas >= LARGE_MODEL_REPLICAS
        self._was_enabled = gc.isenabled()
        self._threshold = gc.get_threshold()
        self._frozen = False

    def __enter__(self) -> LongLivedModel:
        if self.large:
            gc.collect()
            gc.disable()
        gc.set_threshold(*RUN_GC_THRESHOLD)
        return self

    def built(self) -> None:
        """Set-up is done: what exists now lives until the run ends."""
        if self.large:
            gc.freeze()
            self._frozen = True
            self._restore()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._frozen:
            gc.unfreeze()
            self._frozen = False
        gc.set_threshold(*self._threshold)
        if self.large:
            self._restore()

    def _restore(self) -> None:
        if self._was_enabled:
            gc.enable()
