"""KRaft's replica placement (Kafka's StripedReplicaPlacer, the controller's since 2.8), exactly.

Racks are visited round robin from a rotating start, and brokers within a rack round robin from a
random offset; unfenced brokers come first, fenced ones only once a rack has no unfenced broker
left for the partition, and a fenced broker is never the leader. After as many partitions as
there are unfenced brokers, racks and brokers are reshuffled. Every random draw is made, in
Kafka's order, from the `rng` argument: `rng.randrange(n)` where Kafka calls
`Random.nextInt(n)`, so a `random.Random` that answers like `java.util.Random` reproduces
Kafka's assignments number for number (tests/strategies/test_kraft_placement.py does).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar, TypeVar

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies.placement.base import PlacementError

T = TypeVar("T")


def java_string_hash(text: str) -> int:
    """`String.hashCode()` as an unsigned 32-bit int (over UTF-16 code units, as Java does)."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def hashmap_order(keys: Sequence[str | None]) -> list[str | None]:
    """The order a fresh `java.util.HashMap<Optional<String>, _>` iterates `keys` inserted in
    this order (None is Optional.empty()).

    Kafka initialises and shuffles the racks in this order, so it decides which rack consumes
    which random draw. Iteration goes by bucket, and by insertion within a bucket; the table has
    16 buckets and doubles whenever it is more than 3/4 full. (Java turns a bucket holding 8 or
    more keys into a tree; with the few racks of a cluster that does not happen.)
    """
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str | None) -> int:
        h = 0 if key is None else java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)  # sorted() is stable: insertion order within a bucket


def _rack_order(rack: str | None) -> tuple[bool, bytes]:
    # OptionalStringComparator: the empty rack first, then String.compareTo (UTF-16 code units).
    return (rack is not None, (rack or "").encode("utf-16-be"))


def java_shuffle(items: list[T], rng: random.Random) -> None:
    """`Collections.shuffle(list, random)` for a RandomAccess list, draw for draw."""
    for i in range(len(items), 1, -1):
        j = rng.randrange(i)
        items[i - 1], items[j] = items[j], items[i - 1]


class _BrokerList:
    """StripedReplicaPlacer.BrokerList: yields each broker at most once per iteration epoch,
    from an offset that advances by one every new epoch."""

    __slots__ = ("brokers", "epoch", "index", "offset")

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int | None:
        n = len(self.brokers)
        if n == 0:
            return None
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % n
        if self.index >= n:
            return None
        broker = self.brokers[(self.index + self.offset) % n]
        self.index += 1
        return broker


class _Rack:
    __slots__ = ("fenced", "unfenced")

    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def next(self, epoch: int) -> int | None:
        broker = self.unfenced.next(epoch)
        return broker if broker is not None else self.fenced.next(epoch)


def _check(replication_factor: int, total: int, unfenced: int) -> None:
    # Kafka's messages, in the order StripedReplicaPlacer.place checks them.
    if replication_factor <= 0:
        raise PlacementError(f"Invalid replication factor {replication_factor}: the replication "
                             "factor must be positive.")
    if unfenced == 0:
        raise PlacementError("All brokers are currently fenced.")
    if replication_factor > total:
        raise PlacementError(f"The target replication factor of {replication_factor} cannot be "
                             f"reached because only {total} broker(s) are registered.")


class RackList:
    """StripedReplicaPlacer.RackList: the state of placing one topic's partitions."""

    def __init__(self, rng: random.Random, brokers: Sequence[BrokerSpec]):
        self.rng = rng
        self.racks: dict[str | None, _Rack] = {}
        # Kafka iterates the registered brokers by id; that order only matters for racks whose
        # names share a hash bucket.
        for broker in sorted(brokers, key=lambda b: b.id):
            rack = self.racks.setdefault(broker.rack, _Rack())
            (rack.fenced if broker.fenced else rack.unfenced).brokers.append(broker.id)
        self._hash_order = hashmap_order(list(self.racks))
        for name in self._hash_order:
            self.racks[name].fenced.initialize(rng)
            self.racks[name].unfenced.initialize(rng)
        self.names: list[str | None] = sorted(self.racks, key=_rack_order)
        self.total = len(brokers)
        self.unfenced = sum(len(r.unfenced.brokers) for r in self.racks.values())
        self.epoch = 0
        self.offset = rng.randrange(len(self.names)) if self.names else 0

    def shuffle(self) -> None:
        java_shuffle(self.names, self.rng)
        for name in self._hash_order:
            java_shuffle(self.racks[name].fenced.brokers, self.rng)
            java_shuffle(self.racks[name].unfenced.brokers, self.rng)

    def place(self, replication_factor: int) -> list[int]:
        """One partition's replicas: the leader from the first rack with an unfenced broker
        left, then one broker per rack in turn (unfenced before fenced)."""
        _check(replication_factor, self.total, self.unfenced)
        # After as many partitions as unfenced brokers, reshuffle to avoid repeating the same
        # pattern; never with one unfenced broker, which would loop forever.
        if self.epoch == self.unfenced and self.unfenced > 1:
            self.shuffle()
            self.epoch = 0
        racks = len(self.names)
        if self.offset == racks:
            self.offset = 0
        first = self.offset
        while True:
            leader = self.racks[self.names[first]].unfenced.next(self.epoch)
            if leader is not None:
                break
            first = (first + 1) % racks
        replicas = [leader]
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result: int | None = None
            misses = 0
            while result is None:
                if rack_index == first:
                    first = -1  # the leader's rack is skipped once, on the first pass
                else:
                    result = self.racks[self.names[rack_index]].next(self.epoch)
                    misses += 1
                    if result is None and misses > 2 * racks:
                        # Every rack is exhausted for this epoch; Kafka would spin here forever.
                        raise PlacementError(
                            f"no broker left for replica {len(replicas) + 1} of "
                            f"{replication_factor} (StripedReplicaPlacer would not terminate)")
                rack_index = (rack_index + 1) % racks
            replicas.append(result)
        self.epoch += 1
        self.offset += 1
        return replicas


def striped_assignment(brokers: Sequence[BrokerSpec], partitions: int, replication_factor: int,
                       rng: random.Random) -> list[tuple[int, ...]]:
    """The replica lists StripedReplicaPlacer.place gives a new topic."""
    if partitions <= 0:
        # ReplicationControlManager refuses this before it asks the placer.
        raise PlacementError("Number of partitions was set to an invalid non-positive value.")
    racks = RackList(rng, brokers)  # Kafka draws the offsets before it checks anything
    _check(replication_factor, racks.total, racks.unfenced)
    return [tuple(racks.place(replication_factor)) for _ in range(partitions)]


class KraftStripedPlacement:
    """KRaft's StripedReplicaPlacer: rack striping, unfenced first, fenced never leaders."""

    name: ClassVar[str] = "kraft-striped"
    description: ClassVar[str] = ("KRaft's StripedReplicaPlacer: racks round robin from a "
                                  "rotating start; fenced brokers last and never leaders")
    api_version: ClassVar[int] = 1

    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec,
               rng: random.Random) -> list[tuple[int, ...]]:
        return striped_assignment(brokers, topic.partitions, topic.replication_factor, rng)
