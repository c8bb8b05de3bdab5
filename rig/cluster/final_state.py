"""What the model hands the checks when the run is over: a read-only view of every partition's
replicas, and nothing that can change the model or write to its log."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from rig.cluster.log import Log
from rig.cluster.replica import Replica, Role, TopicPartition

Identity = tuple[int, int]  # a batch's (producer, first sequence)


class ReplicaView:
    """One replica at the end of the run, read only."""

    __slots__ = ("_log", "alive", "broker", "high_watermark", "leads", "log_start_offset")

    def __init__(self, replica: Replica, alive: bool):
        self._log: Log = replica.log
        self.broker = replica.broker
        self.alive = alive
        self.leads = replica.role is Role.LEADER
        self.high_watermark = replica.high_watermark
        self.log_start_offset = replica.log.log_start_offset

    def identity_at(self, offset: int) -> Identity | None:
        """The identity of the batch holding `offset`, or None (a gap, or not in the log)."""
        return self._log.identity_at(offset)

    def batches(self) -> Iterator[tuple[int, int, Identity]]:
        """(base offset, end offset, identity) of every batch, in offset order."""
        for batch in self._log.batches:
            yield batch.base_offset, batch.end_offset, batch.identity

    def removed(self, identity: Identity) -> bool:
        """Whether compaction removed the batch `identity` from this log (by policy)."""
        return identity in self._log.removed


@dataclass(frozen=True)
class PartitionView:
    leader: int  # as ZooKeeper last recorded it (-1: none)
    assignment: tuple[int, ...]
    replicas: Mapping[int, ReplicaView]  # broker → its replica

    def final_leader(self) -> ReplicaView | None:
        """The leader's replica if its broker is up and it leads; else None."""
        replica = self.replicas.get(self.leader)
        return replica if replica is not None and replica.alive and replica.leads else None


class _Partitions(Mapping[TopicPartition, PartitionView]):
    """Every partition, each view made when asked for (a large idle cluster has many)."""

    def __init__(self, keys: Mapping[TopicPartition, object],
                 make: Callable[[TopicPartition], PartitionView]):
        self._keys = keys
        self._make = make

    def __getitem__(self, key: TopicPartition) -> PartitionView:
        if key not in self._keys:
            raise KeyError(key)
        return self._make(key)

    def __iter__(self) -> Iterator[TopicPartition]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class FinalState:
    """The end of a run as the checks see it: `partitions`, key → PartitionView."""

    def __init__(self, keys: Mapping[TopicPartition, object],
                 make: Callable[[TopicPartition], PartitionView]):
        self.partitions: Mapping[TopicPartition, PartitionView] = _Partitions(keys, make)
