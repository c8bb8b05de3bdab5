"""The KRaft controller's preferred-leader balancing (`auto.leader.rebalance.enable`, default
true): QuorumController.maybeScheduleNextBalancePartitionLeaders and ReplicationControlManager
.maybeBalancePartitionLeaders.

Unlike the ZooKeeper-era task (rig.cluster.rebalance), there is no per-broker threshold
(`leader.imbalance.per.broker.percentage` is not read): every partition whose leader is not its
preferred replica (the first of its replicas: PartitionRegistration.hasPreferredLeader, so a
leaderless one too) is imbalanced, a set kept as each PartitionChangeRecord is applied. After
every controller write event (a heartbeat, a registration, an AlterPartition, a fencing check…)
and when a controller becomes active, if some partition is imbalanced and no run is scheduled,
one is scheduled `leader.imbalance.check.interval.seconds` (300 s) later — or 10 ms later
when the last run stopped at its cap of 1,000 elections (MAX_ELECTIONS_PER_IMBALANCE). A run
holds a PREFERRED election for each imbalanced partition (PartitionChangeBuilder
.electPreferredLeader: the preferred replica if it is in the ISR and unfenced, else the leader
stays), writes the records and, being a write event itself, schedules the next run if some
partition is still imbalanced. A controller that resigns cancels its run. Kafka walks the
imbalanced set in hash order; rig walks it by (topic, partition).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rig.cluster.kraft.partition_change_builder import PartitionRegistration
from rig.cluster.partition import TopicPartition
from rig.engine import Timer

MAX_ELECTIONS_PER_IMBALANCE = 1_000  # QuorumController
IMMEDIATELY_MS = 10  # "delays them by a small amount of time"
REASON = "auto-leader-rebalance"  # the reason its leader.elected events give (as ZooKeeper's)


class LeaderBalance:
    """One controller's balancing; `run(keys, cap)` holds the PREFERRED elections of `keys`,
    changing at most `cap` partitions, as a write event, and returns how many it changed."""

    def __init__(self, sim: Any, interval_ms: int | None,
                 run: Callable[[list[TopicPartition], int], int]):
        self.sim = sim
        self.interval_ms = interval_ms  # None: auto.leader.rebalance.enable false
        self._run = run
        self.imbalanced: set[TopicPartition] = set()
        self._immediately = False  # the last run met the cap (ImbalanceSchedule.IMMEDIATELY)
        self._timer: Timer | None = None

    def replayed(self, key: TopicPartition, part: PartitionRegistration) -> None:
        """A PartitionChangeRecord (or PartitionRecord) applied to `key`."""
        if part.replicas and part.leader == part.replicas[0]:
            self.imbalanced.discard(key)
        else:
            self.imbalanced.add(key)

    def rebuild(self, partitions: dict[TopicPartition, PartitionRegistration]) -> None:
        self.imbalanced.clear()
        for key, part in partitions.items():
            self.replayed(key, part)

    def after_write(self) -> None:
        """maybeScheduleNextBalancePartitionLeaders, after a write event."""
        if self._timer is not None or self.interval_ms is None or not self.imbalanced:
            return
        delay_ms = IMMEDIATELY_MS if self._immediately else self.interval_ms
        self._timer = self.sim.after(delay_ms * 1000, self._balance)

    def cancel(self) -> None:
        """cancelMaybeBalancePartitionLeaders (renounce)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._immediately = False

    def _balance(self) -> None:
        self._timer = None
        changed = self._run(sorted(self.imbalanced), MAX_ELECTIONS_PER_IMBALANCE)
        self._immediately = changed >= MAX_ELECTIONS_PER_IMBALANCE
        self.after_write()
