"""Preferred leader election: the ZooKeeper-era controller's auto-leader-rebalance task.

As Kafka's KafkaController.checkAndTriggerAutoLeaderRebalance: partitions are grouped by their
preferred replica (the first of the assignment); for each broker, the imbalance is the share of
the partitions it is preferred for that it does not lead (offline ones count). When that share
is strictly greater than `leader.imbalance.per.broker.percentage` / 100, each of those
partitions whose preferred replica is live and in the ISR is moved to it
(PreferredReplicaPartitionLeaderElectionStrategy: same ISR, leader epoch + 1). The task first
runs 5 s after a controller takes office, then every `leader.imbalance.check.interval.seconds`
(the task itself: AutoLeaderRebalance below).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from rig.cluster.replica import TopicPartition
from rig.cluster.zookeeper import PartitionState
from rig.events import names

FIRST_CHECK_MS = 5_000  # KafkaController.onControllerFailover schedules the first run at 5 s


def imbalance_by_broker(assignments: Mapping[TopicPartition, Sequence[int]],
                        leaders: Mapping[TopicPartition, int]
                        ) -> dict[int, tuple[list[TopicPartition], int]]:
    """Per preferred broker: (partitions it does not lead, partitions it is preferred for)."""
    out: dict[int, tuple[list[TopicPartition], int]] = {}
    for key in sorted(assignments):
        preferred = assignments[key][0]
        not_led, total = out.get(preferred, ([], 0))
        if leaders.get(key) != preferred:
            not_led.append(key)
        out[preferred] = (not_led, total + 1)
    return out


def partitions_to_move(assignments: Mapping[TopicPartition, Sequence[int]],
                       states: Mapping[TopicPartition, PartitionState], live: Collection[int],
                       percentage: int) -> list[TopicPartition]:
    """The partitions one check moves back to their preferred replica, in (topic, partition)
    order: those of brokers whose imbalance exceeds `percentage`, whose preferred replica is
    live and in the ISR."""
    leaders = {key: state.leader for key, state in states.items()}
    moves: list[TopicPartition] = []
    for broker, (not_led, total) in sorted(imbalance_by_broker(assignments, leaders).items()):
        # Kafka compares doubles: ratio > percentage / 100. Integers avoid float surprises
        # (3 / 30 is exactly 10 % and must not trigger).
        if len(not_led) * 100 > percentage * total:
            moves.extend(key for key in not_led
                         if broker in live and broker in states[key].isr)
    return sorted(moves)


class RebalancingController(Protocol):
    """What the task uses of its controller (rig.cluster.controller.Controller)."""

    cluster: Any  # rig.cluster.controller.ControllerHost
    broker: int
    active: bool
    live: set[int]

    @property
    def electable(self) -> set[int]: ...

    def write_state(self, key: TopicPartition, state: PartitionState) -> None: ...

    def send_leader_and_isr(self, states: dict[TopicPartition, PartitionState],
                            brokers: set[int]) -> None: ...

    def update_metadata(self, keys: Iterable[TopicPartition] | None = None) -> None: ...


class AutoLeaderRebalance:
    """The controller's periodic task; it dies with the controller that scheduled it."""

    def __init__(self, controller: RebalancingController):
        self.controller = controller
        cluster = controller.cluster
        config = cluster.variant.broker_config(controller.broker)
        self.enabled = config.auto_leader_rebalance_enable
        self.interval_ms = config.leader_imbalance_check_interval_ms
        self.percentage = config.leader_imbalance_per_broker_percentage
        self._preferred_as_of = -1  # ZooKeeper's write count when all were on preferred
        if self.enabled:
            cluster.sim.after(FIRST_CHECK_MS * 1000, self._tick)

    def _tick(self) -> None:
        controller = self.controller
        cluster = controller.cluster
        if not controller.active or cluster.controller is not controller:
            return  # resigned: the next controller runs its own task
        broker = cluster.brokers[controller.broker]
        if not broker.alive:
            return  # the process is gone; a new controller will be elected
        if broker.stalled:
            cluster.after_stall(broker.id, self._tick)  # the paused scheduler runs it late
            return
        self.check()
        cluster.sim.after(self.interval_ms * 1000, self._tick)

    def check(self) -> list[TopicPartition]:
        """One run of checkAndTriggerAutoLeaderRebalance; returns the partitions moved."""
        controller = self.controller
        cluster = controller.cluster
        zk = cluster.zk
        if zk.state_writes == self._preferred_as_of:
            return []  # no leader changed since every partition was on its preferred replica
        if all(state.leader == cluster.assignment(key)[0] for key, state in zk.partitions.items()):
            self._preferred_as_of = zk.state_writes
            return []  # nothing is imbalanced
        assignments = {key: cluster.assignment(key) for key in zk.partitions}
        moves = partitions_to_move(assignments, zk.partitions, controller.electable,
                                   self.percentage)
        for key in moves:
            state = zk.partitions[key]
            leader = assignments[key][0]
            new = PartitionState(leader, state.leader_epoch + 1, state.isr, state.version + 1)
            controller.write_state(key, new)
            cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1],
                             leader=leader, epoch=new.leader_epoch, isr=list(new.isr),
                             previous=state.leader, election="preferred",
                             reason="auto-leader-rebalance")
        if moves:
            controller.send_leader_and_isr({k: zk.partitions[k] for k in moves},
                                            controller.live)
            controller.update_metadata()
        return moves
