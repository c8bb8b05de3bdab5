"""`replica.lag.time.max.ms` as Kafka 0.9 to 2.0 apply it: out of the ISR after not being caught
up for the lag time, whatever the follower's log end offset.

Partition.getOutOfSyncReplicas before KAFKA-7152 (fixed in 2.1) filtered the ISR on
`now - lastCaughtUpTimeMs > maxLagMs` alone, so a follower whose fetcher died on an idle
partition (its LEO still equal to the leader's) is evicted by the leader after the lag time.
From 2.1 (`lag-time`) the leader keeps it, and only the controller removes it, once the
broker's ZooKeeper session expires (docs/kafka.md §11).
"""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.isr.base import FollowerProgress
from rig.strategies.isr.lag_time import LagTime


class LagTimeOnly(LagTime):
    """Caught-up bookkeeping and rejoining as in `lag-time`; only the eviction rule differs."""

    name: ClassVar[str] = "lag-time-only"
    description: ClassVar[str] = ("Out of sync when not caught up for replica.lag.time.max.ms, "
                                  "even at the leader's log end (Kafka 0.9–2.0, before "
                                  "KAFKA-7152)")
    evicts_caught_up: ClassVar[bool] = True

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        return now_ms - progress.last_caught_up_ms > lag_time_ms
