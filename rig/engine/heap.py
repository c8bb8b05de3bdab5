"""Python's cycle collector and a large model that lives exactly as long as its run.

Setting up a large cluster allocates millions of objects (replicas, logs, fetch states) that all
live until the run ends. The cycle collector, started by allocation counts, walks every object
of the generations it collects: during set-up it finds nothing to free yet costs more than the
set-up itself, and every full collection during the run walks the whole model again. So a large
model is built with the collector paused, then frozen (gc.freeze: left out of all later
collections) until the run ends, when it is unfrozen and collected like any other garbage.

The collector never changes what a run does (the model has no finalizers and no weak
references), only how long it takes.
"""

from __future__ import annotations

import gc
from types import TracebackType

# Below this many replicas a model's set-up is too small for the collector to matter, and runs
# (the test suite makes hundreds) keep the collector's default behaviour.
LARGE_MODEL_REPLICAS = 10_000


class LongLivedModel:
    """`with LongLivedModel(replicas) as heap:` build the model, call `heap.built()`, run.

    For a large model: a full collection first (an earlier run's model, garbage since that run
    ended, goes before the next one is built), the collector paused during set-up, and the
    model frozen from `built()` until the block ends. A small model changes nothing."""

    def __init__(self, replicas: int):
        self.large = replicas >= LARGE_MODEL_REPLICAS
        self._was_enabled = gc.isenabled()
        self._frozen = False

    def __enter__(self) -> LongLivedModel:
        if self.large:
            gc.collect()
            gc.disable()
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
        if self.large:
            self._restore()

    def _restore(self) -> None:
        if self._was_enabled:
            gc.enable()
