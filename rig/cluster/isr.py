"""A leader's two ISR tasks: shrinking the ISR of partitions whose followers fell behind, and
announcing the ISR changes it wrote (Kafka's ReplicaManager isr-expiration and
isr-change-propagation tasks, Partition.maybeShrinkIsr; docs/kafka.md §10)."""

from __future__ import annotations

from rig.cluster.context import NodeContext, Process
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Role
from rig.cluster.replica_manager import ReplicaManager
from rig.strategies.isr import FollowerProgress

# ReplicaManager's isr-change-propagation task: period, and the two throttle bounds.
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 2500
ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000  # no change for this long: announce
ISR_CHANGE_PROPAGATION_MAX_DELAY_MS = 60_000  # last announcement this old: announce anyway


class IsrTasks:
    def __init__(self, broker: Process, ctx: NodeContext, replica_manager: ReplicaManager):
        self.broker = broker
        self.ctx = ctx
        self.replica_manager = replica_manager
        # ISR changes this leader wrote and has not yet announced (ReplicaManager.isrChangeSet).
        self.change_set: dict[TopicPartition, None] = {}
        self.last_change_ms = 0.0
        self.last_propagation_ms = 0.0

    def start(self, now_ms: float) -> None:
        """A new process starts with an empty change set and both clocks at its start."""
        self.change_set.clear()
        self.last_change_ms = self.last_propagation_ms = now_ms

    def reset(self) -> None:
        self.change_set.clear()  # in memory only: a crash loses unannounced changes

    def record_change(self, key: TopicPartition) -> None:
        """This leader wrote a new ISR for `key` to ZooKeeper (ReplicaManager.recordIsrChange)."""
        self.change_set[key] = None
        self.last_change_ms = self.broker.now_ms

    def maybe_propagate(self) -> None:
        """The `isr-change-propagation` task (every 2.5 s): announce the recorded changes when
        there are some and either none came in the last 5 s or the last announcement is over
        60 s old (ReplicaManager.maybePropagateIsrChanges; both comparisons strict)."""
        now = self.broker.now_ms
        if self.change_set and (
                self.last_change_ms + ISR_CHANGE_PROPAGATION_BLACKOUT_MS < now
                or self.last_propagation_ms + ISR_CHANGE_PROPAGATION_MAX_DELAY_MS < now):
            self.ctx.isr_writer.propagate_isr_changes(self.broker, tuple(self.change_set))
            self.change_set.clear()
            self.last_propagation_ms = now

    def expire(self) -> None:
        """Only a follower that is behind can be out of sync (Kafka: LEOs differ and not caught
        up for the lag time): the partitions pending for some follower are the candidates."""
        broker = self.broker
        replica_manager = self.replica_manager
        isr_strategy = self.ctx.strategies.isr
        now = broker.now_ms
        lag = broker.config.replica_lag_time_max_ms
        behind: dict[TopicPartition, None] = {}
        for slot, keys in replica_manager.pending.items():
            if isinstance(slot[0], int):
                behind.update(keys)
        for key in behind:
            replica = replica_manager.replicas[key]
            if replica.role is not Role.LEADER or replica.isr_change_pending:
                continue
            out = [b for b in replica.isr if b != broker.id and isr_strategy.out_of_sync(
                replica.followers.setdefault(b, FollowerProgress()), replica.leo, now, lag)]
            if out:
                self.ctx.isr_writer.change_isr(broker, replica,
                                               tuple(b for b in replica.isr if b not in out),
                                               shrink=out)
