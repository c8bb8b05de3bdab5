"""When a client's poll loop wakes next (Kafka's NetworkClient.poll timeout: the least of the
times its parts ask for, a retried batch's backoff, the metadata refresh's).
"""

from __future__ import annotations

from collections.abc import Callable

from rig.engine import Simulation, Timer


class PollTimer:
    """One pending wake-up, at the earliest time asked for, that runs `action`."""

    def __init__(self, sim: Simulation, action: Callable[[], None]):
        self.sim = sim
        self.action = action
        self._pending: tuple[int, Timer] | None = None

    def wake_at(self, time_us: int) -> None:
        """Wake at `time_us`, unless a wake-up is due sooner already."""
        if self._pending is not None:
            if self._pending[0] <= time_us:
                return
            self._pending[1].cancel()
        self._pending = (time_us, self.sim.at(time_us, self._wake))

    def _wake(self) -> None:
        self._pending = None
        self.action()


__all__ = ["PollTimer"]
