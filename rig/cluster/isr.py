"""A leader's two ISR tasks: shrinking the ISR of partitions whose followers fell behind, and
announcing the ISR changes it wrote (Kafka's ReplicaManager isr-expiration and
isr-change-propagation tasks, Partition.maybeShrinkIsr; docs/kafka.md §10)."""

from __future__ import annotations

from rig.cluster.context import NodeContext, Process
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
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
        """The `isr-expiration` task (Partition.maybeShrinkIsr on every partition led here).
        A follower behind the leader's LEO and not caught up for the lag time is out of sync;
        the partitions pending for some follower are those candidates. Before Kafka 2.1
        (KAFKA-7152) a follower whose LEO equals the leader's is out of sync as well once it
        has not fetched for the lag time (a dead fetcher on an idle partition): the partitions
        of every follower slot silent that long are candidates too (`_silent_slots`)."""
        broker = self.broker
        replica_manager = self.replica_manager
        isr_strategy = self.ctx.strategies.isr
        now = broker.now_ms
        lag = broker.config.replica_lag_time_max_ms
        behind: dict[TopicPartition, None] = {}
        for slot, keys in replica_manager.pending.items():
            if isinstance(slot[0], int):
                behind.update(keys)
        # A strategy that never evicts a caught-up follower (2.1+) finds every candidate among
        # the pending ones: a dead follower's slot then costs no walk over every partition.
        # A plugin that does not say is asked about the silent slots' partitions too.
        silent = (self._silent_slots(now, lag)
                  if getattr(isr_strategy, "evicts_caught_up", True) else {})
        if silent:
            for key, replica in replica_manager.replicas.items():
                if (replica.role is Role.LEADER
                        and any(follower in replica.isr for follower in
                                silent.get(replica.fetcher_slot, ()))):
                    behind[key] = None
        for key in behind:
            replica = replica_manager.replicas[key]
            if replica.role is not Role.LEADER or replica.isr_change_pending:
                continue
            out = [b for b in replica.isr if b != broker.id and isr_strategy.out_of_sync(
                self._progress(replica, b), replica.leo, now, lag)]
            if out:
                self.ctx.isr_writer.change_isr(broker, replica,
                                               tuple(b for b in replica.isr if b not in out),
                                               shrink=out)

    def _silent_slots(self, now_ms: float, lag_ms: int) -> dict[int, tuple[int, ...]]:
        """Fetcher slot → the followers whose fetcher of that slot last fetched here over the
        lag time ago. A slot with a fetch parked or held in closed form (rig.cluster.coast)
        in the fetch purgatory is fetching now."""
        purgatory = self.replica_manager.fetch_purgatory
        silent: dict[int, tuple[int, ...]] = {}
        for slot, seen in self.replica_manager.last_fetch_ms.items():
            follower, fetcher = slot
            if (isinstance(follower, int) and now_ms - seen > lag_ms
                    and slot not in purgatory):
                silent[fetcher] = (*silent.get(fetcher, ()), follower)
        return silent

    def _progress(self, replica: Replica, follower: int) -> FollowerProgress:
        """The follower's progress as Kafka would hold it: one not pending on `replica` was
        caught up as of its last fetch, which the fetch path records lazily (as the append
        path does, ReplicaManager.append)."""
        progress = replica.follower(follower)
        slot = (follower, replica.fetcher_slot)
        rm = self.replica_manager
        if progress.log_end_offset != replica.leo or replica.key in rm.pending.get(slot, {}):
            return progress  # behind: its fetches have recorded everything already
        seen = rm.last_fetch_ms.get(slot)
        # Idle rounds held in closed form (rig.cluster.coast) record their fetches on waking:
        # ask the coast when its last request arrived.
        for waiting in rm.fetch_purgatory.watched(slot):
            arrival = getattr(waiting, "last_arrival_ms", None)
            at = arrival() if arrival is not None else None
            if at is not None and (seen is None or at > seen):
                seen = at
        if seen is not None:
            progress.record_caught_up_fetch(seen, replica.leo)
        return progress
