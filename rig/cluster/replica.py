"""One partition on one broker: its log, high watermark, role and, as leader, its ISR.

The high-watermark rules (docs/kafka.md §8): a leader's HW is the smallest LEO among the ISR and the
followers caught up within the lag time, never goes backwards, and (3.7+) does not advance while
the ISR is smaller than min.insync.replicas. A follower's HW is min(leader's HW, own LEO).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from rig.cluster.log import Log
from rig.strategies.isr import FollowerProgress

TopicPartition = tuple[str, int]


@dataclass(frozen=True, eq=False)
class PendingIsr:
    """An ISR change a leader proposed and the controller has not yet answered (Kafka's
    PendingExpandIsr / PendingShrinkIsr; compared by identity, as Partition compares
    `isrState != proposedIsrState`). `expand` is the replica an AlterIsr expansion adds, which
    the maximal ISR counts at once (2.7+); None for a shrink, and for the ZooKeeper write of
    a leader before 2.7, which Kafka makes synchronously (no maximal ISR then)."""

    isr: tuple[int, ...]  # the ISR proposed
    expand: int | None = None


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
    # The ISR change in flight, if any (Partition.isrState: PendingExpandIsr / PendingShrinkIsr;
    # None is CommittedIsr): no other change is proposed until it is answered or a new leader
    # epoch replaces it.
    pending_isr: PendingIsr | None = None
    zk_version: int = 0  # the partition state version this leader last wrote or was told

    @property
    def isr_change_pending(self) -> bool:
        return self.pending_isr is not None

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR the HW and acks=all go by (IsrState.maximalIsr, KIP-497, IBP 2.7+): the
        committed ISR plus a replica whose expansion is in flight. A pending shrink still
        counts the replicas it removes, until the controller confirms it."""
        pending = self.pending_isr
        if pending is None or pending.expand is None:
            return self.isr
        return (*self.isr, pending.expand)

    @property
    def leo(self) -> int:
        return self.log.log_end_offset

    def follower(self, broker: int) -> FollowerProgress:
        """What this leader knows of follower `broker`'s progress (a fresh record at first)."""
        progress = self.followers.get(broker)
        if progress is None:
            progress = self.followers[broker] = FollowerProgress()
        return progress

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
                     hold_below_min_isr: bool,
                     eligible: Callable[[int, int], bool] | None = None) -> int:
        """The HW the leader may move to now (never lower than the current one). A caught-up
        follower outside the maximal ISR holds it back only if `eligible(follower, broker
        epoch of its latest fetch)` (KRaft 3.6+: Partition.maybeIncrementLeaderHW's
        shouldWaitForReplicaToJoinIsr asks isReplicaIsrEligible, KAFKA-15021); None: always."""
        if hold_below_min_isr and len(self.isr) < min_isr:
            return self.high_watermark
        lowest = self.log.log_end_offset
        maximal = self.maximal_isr
        for broker, progress in self.followers.items():
            leo = progress.log_end_offset
            if broker in maximal:
                leo = max(leo, 0)
            elif not (now_ms - progress.last_caught_up_ms <= lag_time_ms and leo >= 0 and (
                    eligible is None or eligible(broker, progress.broker_epoch))):
                continue  # neither in the ISR nor caught up (and eligible): holds nothing
            if leo < lowest:
                lowest = leo
        return max(self.high_watermark, lowest)
