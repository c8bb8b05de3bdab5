"""`replica.lag.time.max.ms` (Kafka 0.9+): out of the ISR after not being caught up for the lag
time; back in when a fetch reaches the high watermark and the current epoch's start (2.1+)."""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.isr.base import FollowerProgress


class LagTime:
    """`kafka_4485` (KAFKA-4485, Kafka 0.10.2; on by default): a fetch that reaches the LEO the
    leader had at the previous fetch counts as caught up, and the `isr-expiration` task runs
    every lag/2. Off, as in 0.9–0.10.1: only a fetch at the leader's LEO catches up, and the
    task runs every lag (ReplicaManager.startup, `period = config.replicaLagTimeMaxMs`)."""

    name: ClassVar[str] = "lag-time"
    description: ClassVar[str] = ("Out of sync when not caught up for replica.lag.time.max.ms "
                                  "(checked every lag/2); rejoin at the high watermark")
    # Whether a follower at the leader's log end that has stopped fetching can be out of sync
    # (rig.cluster.isr looks at the partitions of silent fetchers only when it can).
    evicts_caught_up: ClassVar[bool] = False

    def __init__(self, kafka_4485: bool = True):
        if not isinstance(kafka_4485, bool):
            raise ValueError(f"kafka_4485 must be true or false (got {kafka_4485!r})")
        self.kafka_4485 = kafka_4485

    def check_interval_ms(self, lag_time_ms: int) -> int:
        return max(1, lag_time_ms // 2 if self.kafka_4485 else lag_time_ms)

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        # Caught up: the fetch reached the leader's LEO now, or the LEO the leader had at the
        # previous fetch (0.10.2+), which keeps a steadily fetching follower caught up under load.
        if fetch_offset >= leader_leo:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, now_ms)
        elif self.kafka_4485 and fetch_offset >= progress.last_fetch_leader_leo:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.log_end_offset = fetch_offset
        progress.last_fetch_leader_leo = leader_leo
        progress.last_fetch_ms = now_ms

    def on_failed_read(self, progress: FollowerProgress, now_ms: float) -> None:
        """Before 2.4 (KAFKA-8400) a read that failed reached Replica.updateLogReadResult as it
        was, its offset, the leader's LEO and its fetch time all -1: the follower's log end
        offset becomes unknown (so it holds the HW, cannot rejoin, and from 2.1 is no longer
        "at the leader's LEO" for the shrink), its caught-up time stays (max with -1), and from
        0.10.2 its next fetch cannot count as caught up by the LEO the leader had at this one."""
        progress.log_end_offset = -1
        if self.kafka_4485:  # 0.9–0.10.1 kept nothing else of a fetch (isReadFromLogEnd false)
            progress.last_fetch_leader_leo = -1
            progress.last_fetch_ms = -1.0

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        return (progress.log_end_offset != leader_leo
                and now_ms - progress.last_caught_up_ms > lag_time_ms)

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool:
        return (progress.log_end_offset >= high_watermark
                and progress.log_end_offset >= epoch_start_offset)
