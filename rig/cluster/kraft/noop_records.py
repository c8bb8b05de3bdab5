"""The active KRaft controller's NoOpRecords (KIP-835, metadata version 3.3-IV0+):
QuorumController.maybeScheduleNextWriteNoOpRecord schedules a deferred write event
`metadata.max.idle.interval.ms` (500 ms) ahead when the controller claims leadership; the event
schedules the next one, then appends a NoOpRecord, written, replicated and fetched like any
record and applied as nothing. Renouncing cancels it (cancelNextWriteNoOpRecord). An interval
of 0 writes none (KafkaConfig.metadataMaxIdleIntervalNs is empty unless positive)."""

from __future__ import annotations

from collections.abc import Callable

from rig.engine import Simulation, Timer


class NoOpRecords:
    """The schedule of one controller's NoOpRecords; `write` appends one."""

    def __init__(self, sim: Simulation, interval_ms: int | None, write: Callable[[], None]):
        self.sim = sim
        self.interval_ms = interval_ms if interval_ms else None  # None or 0: none written
        self.write = write
        self._timer: Timer | None = None

    def schedule(self) -> None:
        """The next one, an interval from now, unless one is scheduled already."""
        if self.interval_ms is not None and self._timer is None:
            self._timer = self.sim.after(self.interval_ms * 1000, self._due)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _due(self) -> None:
        self._timer = None
        self.schedule()
        self.write()
