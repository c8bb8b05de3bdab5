"""The ISR Protocol: judges followers from what the leader records of their fetches.

The leader calls `on_fetch` while handling a follower's fetch (to decide expansion) and
`out_of_sync` from its periodic `isr-expiration` task every `check_interval_ms` (to decide
shrinking). The leader itself is always in the ISR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol


@dataclass(slots=True)
class FollowerProgress:
    """The leader's record of one follower of one partition."""

    log_end_offset: int = -1  # the last fetch offset it sent (−1: none since leadership began)
    last_caught_up_ms: float = 0.0  # lastCaughtUpTimeMs
    last_fetch_ms: float = 0.0
    last_fetch_leader_leo: int = 0  # the leader's LEO when it handled the previous fetch


class IsrStrategy(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]

    def check_interval_ms(self, lag_time_ms: int) -> int: ...

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        """Update `progress` for a fetch at `fetch_offset` (before the leader reads)."""
        ...

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool: ...

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool: ...
