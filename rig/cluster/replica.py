"""One partition on one broker: its log, high watermark, role and, as leader, its ISR.

The high-watermark rules (docs/kafka.md §8): a leader's HW is the smallest LEO among the ISR and the
followers caught up within the lag time, never goes backwards, and (3.7+) does not advance while
the ISR is smaller than min.insync.replicas. A follower's HW is min(leader's HW, own LEO).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rig.cluster.log import Log
from rig.strategies.isr import FollowerProgress

TopicPartition = tuple[str, int]


class Role(enum.Enum):
    NONE = "none"  # not yet told by the controller (after a restart), or deleted
    LEADER = "leader"
    FOLLOWER = "follower"


@dataclass(eq=False)
class Replica:
    key: TopicPartition
    broker: int
    assignment: tuple[int, ...]
    log: Log
    fetcher_slot: int  # which of a follower's fetchers serves this partition
    high_watermark: int = 0
    checkpointed_hw: int = 0
    role: Role = Role.NONE
    leader: int = -1
    leader_epoch: int = -1
    # Leader only:
    isr: tuple[int, ...] = ()
    followers: dict[int, FollowerProgress] = field(default_factory=dict)
    isr_change_pending: bool = False  # an ISR write to ZooKeeper is in flight
    zk_version: int = 0  # the partition state version this leader last wrote or was told

    @property
    def leo(self) -> int:
        return self.log.log_end_offset

    def restart(self, power_loss: bool) -> int:
        """Its process died: it keeps what is on disk (with `power_loss`, less the unflushed
        records, whose count it returns) and no role; its HW is the checkpointed one, never
        above the log end."""
        lost = self.log.lose_unflushed() if power_loss else 0
        self.role = Role.NONE
        self.isr = ()
        self.followers.clear()
        self.high_watermark = min(self.checkpointed_hw, self.leo)
        self.leader_epoch = -1
        return lost

    def epoch_start_offset(self) -> int:
        """Where the current leader epoch began in this log (for ISR rejoin, 2.1+)."""
        for epoch, start in reversed(self.log.epochs):
            if epoch <= self.leader_epoch:
                return start
        return 0

    def candidate_hw(self, now_ms: float, lag_time_ms: int, min_isr: int,
                     hold_below_min_isr: bool) -> int:
        """The HW the leader may move to now (never lower than the current one)."""
        if hold_below_min_isr and len(self.isr) < min_isr:
            return self.high_watermark
        leos = [self.leo]
        for broker, progress in self.followers.items():
            caught_up = now_ms - progress.last_caught_up_ms <= lag_time_ms
            if broker in self.isr or (caught_up and progress.log_end_offset >= 0):
                leos.append(max(progress.log_end_offset, 0) if broker in self.isr
                            else progress.log_end_offset)
        return max(self.high_watermark, min(leos))
