"""Kafka's own placement (ZooKeeper-era AdminUtils.assignReplicasToBrokers), exactly.

Rack-unaware when no broker has a rack, rack-aware when all do; a start index and the initial
follower shift are drawn from the placement stream unless a fixed `start_index` is given. A
fenced broker (a KRaft notion) counts as not registered, as a dead broker did for ZooKeeper.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement.base import PlacementError


def rack_alternated(brokers: Sequence[BrokerSpec]) -> list[int]:
    """Racks sorted by name, ids sorted within a rack, one broker from each rack in turn."""
    by_rack: dict[str, list[int]] = {}
    for broker in brokers:
        by_rack.setdefault(broker.rack or "", []).append(broker.id)
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack)]
    result: list[int] = []
    depth = 0
    while len(result) < len(brokers):
        result.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return result


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def start_and_shift(brokers: int, rng: random.Random,
                    start_index: int | None = None) -> tuple[int, int]:
    """(start index, first replica shift) as AdminUtils.assignReplicasToBrokersRackUnaware
    takes them: both `fixedStartIndex` when it is >= 0, else `rand.nextInt(brokers)` each, the
    start index first."""
    if start_index is not None and start_index >= 0:
        return start_index, start_index
    first = rng.randrange(brokers)
    return first, rng.randrange(brokers)


def kafka_assignment(brokers: Sequence[BrokerSpec], partitions: int, replication_factor: int,
                     rng: random.Random, start_index: int | None = None,
                     start_partition: int = 0) -> list[tuple[int, ...]]:
    """The replica lists AdminUtils gives, for partitions start_partition.. onwards."""
    if partitions <= 0:
        raise PlacementError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise PlacementError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise PlacementError(f"Replication factor: {replication_factor} larger than available "
                             f"brokers: {len(brokers)}.")
    racked = [b for b in brokers if b.rack is not None]
    if racked and len(racked) != len(brokers):
        raise PlacementError("Not all brokers have rack information for replica rack aware "
                             "assignment.")
    if racked:
        order = rack_alternated(brokers)
        rack_of = {b.id: b.rack for b in brokers}
    else:
        order = sorted(b.id for b in brokers)
        rack_of = {}
    n = len(order)
    first_index, shift = start_and_shift(n, rng, start_index)
    racks = len(set(rack_of.values()))
    result = []
    for partition in range(max(0, start_partition), max(0, start_partition) + partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        leader_index = (partition + first_index) % n
        replicas = [order[leader_index]]
        if not racked:
            replicas += [order[_replica_index(leader_index, shift, j, n)]
                         for j in range(replication_factor - 1)]
        else:
            used_racks = {rack_of[replicas[0]]}
            used = {replicas[0]}
            k = 0
            while len(replicas) < replication_factor:
                candidate = order[_replica_index(leader_index, shift * racks, k, n)]
                k += 1
                rack_ok = rack_of[candidate] not in used_racks or len(used_racks) == racks
                broker_ok = candidate not in used or len(used) == n
                if rack_ok and broker_ok:
                    replicas.append(candidate)
                    used_racks.add(rack_of[candidate])
                    used.add(candidate)
        result.append(tuple(replicas))
    return result


class KafkaPlacement:
    """AdminUtils placement: round-robin leaders, shifted followers, rack-aware if racked."""

    name: ClassVar[str] = "kafka"
    description: ClassVar[str] = ("Kafka's AdminUtils: round-robin leaders with a shifting "
                                  "follower offset; rack-alternated when brokers have racks")
    api_version: ClassVar[int] = 1

    def __init__(self, start_index: int | None = None, start_partition: int = 0,
                 rack_aware: bool = True):
        self.start_index = start_index
        self.start_partition = start_partition
        # kafka-topics --disable-rack-aware (RackAwareMode.Disabled): racks are ignored.
        self.rack_aware = rack_aware

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        # AdminUtils only sees the brokers registered in ZooKeeper: a fenced one is left out.
        live = [b for b in brokers if not b.fenced]
        if not self.rack_aware:
            live = [replace(b, rack=None) for b in live]
        return kafka_assignment(live, topic.partitions, topic.replication_factor, rng,
                                self.start_index, self.start_partition)
