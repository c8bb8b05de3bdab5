"""A parked fetch (Kafka's DelayedFetch): an operation watched in the fetch purgatory under its
client's slot, answered when an announced change brings enough, or moves a partition's end to
another segment than its fetch offset's, or when the broker is made follower of a partition it
reads, or when its max wait ends (docs/kafka.md §2–§3)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from rig.cluster.context import Process
from rig.cluster.fetch_progress import fetch_offset
from rig.cluster.messages import FetchRequestMsg
from rig.cluster.partition import TopicPartition
from rig.cluster.purgatory import Purgatory
from rig.cluster.read_replica import answers
from rig.cluster.replica import Replica
from rig.cluster.replica_manager import ReplicaManager, Slot
from rig.engine import Timer
from rig.protocol.errors import FENCED_LEADER_EPOCH
from rig.strategies.fetch_session import SessionContext


def _answered(replica_manager: ReplicaManager, slot: Slot, request: FetchRequestMsg,
              keys: Iterable[TopicPartition]) -> Iterator[tuple[TopicPartition, Replica, int]]:
    """(partition, replica, fetch offset) of each of `keys` this broker answers `request` for."""
    replicas = replica_manager.replicas
    for key in keys:
        replica = replicas.get(key)
        if replica is not None and answers(request, replica):
            yield key, replica, fetch_offset(replica_manager, request, replica, slot[0])


def fetch_segments(replica_manager: ReplicaManager, slot: Slot,
                   request: FetchRequestMsg) -> dict[TopicPartition, int]:
    """The segment (its base offset) of each fetch offset the fetch reads from this leader, as
    it is parked: Kafka's fetchPartitionStatus keeps each partition's startOffsetMetadata (the
    offset, its segment and position) for DelayedFetch to compare with the end later. Every
    partition of the fetch, caught up or not: an append may roll any of them."""
    return {key: replica.log.segment_of(offset).base_offset
            for key, replica, offset in _answered(replica_manager, slot, request,
                                                  request.partitions)
            if offset >= 0}  # (a consumer position not known yet)


class Server(Protocol):
    """What a parked fetch uses of its leader's fetch handling (rig.cluster.fetch_server)."""

    broker: Process
    replica_manager: ReplicaManager

    def readable(self, slot: Slot, request: FetchRequestMsg, enough: int) -> int: ...

    def complete(self, delayed: DelayedFetch) -> bool: ...


@dataclass(eq=False, slots=True)
class DelayedFetch:
    """A parked fetch, watched under its client's slot."""

    server: Server
    slot: Slot
    request: FetchRequestMsg
    context: SessionContext
    arrived_us: int
    incarnation: int  # the broker process's that parked it
    timer: Timer | None = None
    # Each partition's fetch offset's segment (its base offset) when it was parked: taken only
    # when min bytes can hold it back (above 1), for Case F (`on_newer_segment`).
    segments: dict[TopicPartition, int] | None = None

    def try_complete(self) -> bool:
        """Answer if what was just announced brings enough (DelayedFetch.tryComplete, Case H:
        the bytes readable from the fetch offsets, summed over the partitions, reach min
        bytes): a HW advance for a consumer, which reads below the HW; an append for a
        follower, which reads to the log end — at once when the append alone is enough
        (always, at replica.fetch.min.bytes' default of 1)."""
        announced = self.server.replica_manager.announced
        if announced is None:
            return False
        request = self.request
        min_bytes = request.min_bytes
        if request.fetcher.role == "consumer":
            ready = (min_bytes <= 1
                     or self.server.readable(self.slot, request, min_bytes) >= min_bytes
                     or self._on_newer_segment())
        else:  # (a fetch whose epoch went stale is completed: FencedLeaderEpochException)
            ready = (min_bytes <= announced
                     or (announced > 0
                         and (self.server.readable(self.slot, request, min_bytes) >= min_bytes
                              or self._on_newer_segment()))
                     or bool(self.server.replica_manager.fetch_epochs.fenced(self.slot, request)))
        return ready and self.server.complete(self)

    def _on_newer_segment(self) -> bool:
        """DelayedFetch.tryComplete's Case F: a partition whose end (the HW for a consumer, the
        log end for a follower) has moved off its fetch offset and into another segment than
        the one the fetch offset was in when the fetch was parked — the log rolled (or retention
        deleted that segment), or the leader truncated into an older one — completes the fetch
        at once, whatever min bytes says (it "is fetching older segments")."""
        segments = self.segments
        if not segments:
            return False
        consumer = self.request.fetcher.role == "consumer"
        for key, replica, offset in _answered(self.server.replica_manager, self.slot,
                                              self.request, segments):
            end = replica.high_watermark if consumer else replica.leo
            if end != offset and replica.log.segment_of(end).base_offset != segments[key]:
                return True
        return False

    def lost(self, key: TopicPartition) -> bool:
        """DelayedFetch.tryComplete's Case A (and E) for `key`, a partition it reads that this
        broker was just made follower of: the broker no longer answers the fetch for it
        (Partition.fetchOffsetSnapshot: NotLeaderOrFollowerException), or it fences the leader
        epoch the fetch sent for a partition (FencedLeaderEpochException, checked before the
        leader: Partition.getLocalLog); either completes the fetch at once (forceComplete)."""
        request = self.request
        replica_manager = self.server.replica_manager
        return (not answers(request, replica_manager.replicas.get(key))
                or any(error == FENCED_LEADER_EPOCH for error, _epoch in
                       replica_manager.fetch_epochs.fenced(self.slot, request).values()))

    def expire(self) -> None:
        self.server.complete(self)

    def max_wait_over(self) -> None:
        """Its max-wait timer fired: expire, unless the process that parked it died since."""
        if self.server.broker.incarnation == self.incarnation:
            self.expire()

    def cancel_timer(self) -> None:
        """Let go of the max-wait timer (its action refers back here): no cycle to collect."""
        timer, self.timer = self.timer, None
        if timer is not None:
            timer.cancel()


def complete_made_followers(purgatory: Purgatory[Slot, Any],
                            replica_manager: ReplicaManager) -> None:
    """After a batch of leadership changes (LeaderAndIsr: ReplicaManager.makeFollowers; KRaft:
    applyDelta → applyLocalFollowersDelta), completeDelayedFetchOrProduceRequests for each
    partition the batch made follower, in the batch's order: every fetch parked here reading
    it is asked to complete, and one the broker no longer answers for it (or fences) is
    answered now (`DelayedFetch.lost`: Case A), not at its max wait. Kafka completes once the
    whole batch is applied, not partition by partition. The fetches of one partition are asked
    client by client (its followers', then its consumers': `fetch_slots`), an order that does
    not depend on when a coasting client's fetch was parked again (rig.cluster.coast)."""
    keys = replica_manager.made_follower
    if not keys:
        return
    replica_manager.made_follower = {}
    if not replica_manager.broker.alive or not len(purgatory):
        return  # (a dead broker's purgatory died with it)
    replicas = replica_manager.replicas
    for key in keys:
        replica = replicas.get(key)
        if replica is None:
            continue
        for slot in replica_manager.fetch_slots(replica):
            for delayed in purgatory.watched(slot):
                if (isinstance(delayed, DelayedFetch) and key in delayed.request.partitions
                        and delayed.lost(key)):
                    delayed.server.complete(delayed)
