"""The fetch-session cache's gauges a broker samples every second: sessions held, and the
partitions they cache if the cache says (a plugin's may not), emitted when they change."""

from __future__ import annotations

from typing import Any

from rig.cluster.context import NodeContext
from rig.events import names

SESSION_SAMPLE_MS = 1000  # how often the session-cache gauges are looked at


class SessionCacheGauges:
    def __init__(self, broker_id: int, ctx: NodeContext, cache: Any, slots: int):
        self.broker_id = broker_id
        self.ctx = ctx
        self.cache = cache
        self.slots = slots
        self._sample: tuple[int, int | None] = (0, 0)
        partitions = getattr(cache, "partitions_cached", None)  # optional: looked up once
        self._partitions = partitions if callable(partitions) else None

    def sample(self) -> None:
        """Emit the gauges when they changed since the last sample."""
        partitions = self._partitions
        sample = (self.cache.occupancy(), None if partitions is None else partitions())
        if sample != self._sample:
            self._sample = sample
            self.ctx.emit(names.SESSION_CACHE, broker=self.broker_id, sessions=sample[0],
                          partitions=sample[1], slots=self.slots)

    def report_lost_sessions(self) -> None:
        """After a crash the gauge drops to the emptied cache (clients learn it from error 70)."""
        if self._sample[0]:
            self.sample()
