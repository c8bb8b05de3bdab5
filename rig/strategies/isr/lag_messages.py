"""`replica.lag.max.messages` (Kafka 0.8, removed in 0.9 by KIP-16): out of the ISR when more
than that many messages behind the leader, or when stuck; back in at the high watermark.

Kafka 0.8's Partition.getOutOfSyncReplicas has two rules:
- slow: the follower's LEO (its last fetch offset) is known and the leader's LEO is more than
  `replica_lag_max_messages` ahead of it;
- stuck: its LEO has not been updated (no fetch arrived) for `replica.lag.time.max.ms`. 0.8.0–0.8.1
  apply this only to a follower that is behind the leader (`stuck_only_behind`, the default;
  an idle partition's silent follower waits for the next record to be judged); 0.8.2 dropped
  that condition (Partition.getOutOfSyncReplicas: `candidateReplicas.filter(r => (now -
  r.logEndOffsetUpdateTimeMs) > keepInSyncTimeMs)`), so there a silent follower at the leader's
  log end is stuck too: the 0.8.2 profile runs with `stuck_only_behind: false`.
The leader's HW is the minimum LEO over the ISR (0.8 had no lastCaughtUpTimeMs, so a caught-up
follower outside the ISR does not count). A follower that keeps fetching but makes no progress
is never stuck, so under low throughput it stays in the ISR however old its data: the pathology
KIP-16 removed. The `isr-expiration` task
ran every `replica.lag.time.max.ms` (not lag/2, which came later).
"""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.isr.base import FollowerProgress

DEFAULT_MAX_MESSAGES = 4000  # replica.lag.max.messages
NEVER = float("-inf")  # lastCaughtUpTimeMs: no such thing in 0.8


class LagMessages:
    name: ClassVar[str] = "lag-messages"
    description: ClassVar[str] = ("Out of sync when more than replica.lag.max.messages behind "
                                  "(4000) or no fetch for replica.lag.time.max.ms (Kafka 0.8)")

    def __init__(self, replica_lag_max_messages: int = DEFAULT_MAX_MESSAGES,
                 stuck_only_behind: bool = True):
        if (not isinstance(replica_lag_max_messages, int)
                or isinstance(replica_lag_max_messages, bool) or replica_lag_max_messages < 0):
            raise ValueError("replica_lag_max_messages must be an integer ≥ 0 (got "
                             f"{replica_lag_max_messages!r})")
        if not isinstance(stuck_only_behind, bool):
            raise ValueError(f"stuck_only_behind must be true or false (got "
                             f"{stuck_only_behind!r})")
        self.max_messages = replica_lag_max_messages
        self.stuck_only_behind = stuck_only_behind

    def check_interval_ms(self, lag_time_ms: int) -> int:
        return max(1, lag_time_ms)

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        # logEndOffsetUpdateTimeMs: every fetch updates it, whatever its offset. 0.8 had no
        # lastCaughtUpTimeMs (KIP-16 brought it): it is left alone, so a follower outside the
        # ISR never holds the high watermark back, and the HW is the minimum over the ISR, as
        # in 0.8. A follower that was shrunk rejoins once it reaches the leader's HW.
        progress.last_caught_up_ms = NEVER
        progress.log_end_offset = fetch_offset
        progress.last_fetch_leader_leo = leader_leo
        progress.last_fetch_ms = now_ms

    def on_failed_read(self, progress: FollowerProgress, now_ms: float) -> None:
        """0.8.2 recorded a failed read's unknown offset like any other (KafkaApis
        recordFollowerLogEndOffsets → Replica.logEndOffset_=, which stamps the update time):
        the follower is not stuck, and with an unknown LEO not slow either."""
        progress.log_end_offset = -1
        progress.last_fetch_ms = now_ms

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        behind = progress.log_end_offset < leader_leo
        slow = (progress.log_end_offset >= 0
                and leader_leo - progress.log_end_offset > self.max_messages)
        stuck = ((behind or not self.stuck_only_behind)
                 and now_ms - progress.last_fetch_ms > lag_time_ms)
        return slow or stuck

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool:
        return (progress.log_end_offset >= high_watermark
                and progress.log_end_offset >= epoch_start_offset)
