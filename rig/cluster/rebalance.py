"""Preferred leader election: the ZooKeeper-era controller's auto-leader-rebalance task.

As Kafka's KafkaController.checkAndTriggerAutoLeaderRebalance: partitions are grouped by their
preferred replica (the first of the assignment); for each broker, the imbalance is the share of
the partitions it is preferred for that it does not lead (offline ones count). When that share
is strictly greater than `leader.imbalance.per.broker.percentage` / 100, each of those
partitions whose preferred replica is live and in the ISR is moved to it
(PreferredReplicaPartitionLeaderElectionStrategy: same ISR, leader epoch + 1). The task first
runs 5 s after a controller takes office, then every `leader.imbalance.check.interval.seconds`
(the task itself: rig.cluster.controller.AutoLeaderRebalance).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rig.cluster.replica import TopicPartition
from rig.cluster.zookeeper import PartitionState


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
