"""A consumer member's offset commits: find the group coordinator, commit, and fail over.

FindCoordinator goes to a live broker, which answers from its metadata cache with the leader of
the group's __consumer_offsets partition. Commits go there every auto.commit.interval.ms
(`commit: auto`) or after each poll that returned records (`commit: poll`), one at a time.
A connection reset, NOT_COORDINATOR or a timeout sends the member back to FindCoordinator.

When the coordinator it finds is a different broker from the one it had (a failover), the member
rejoins the group: rig models the rebalance that follows as every member fetching its committed
offsets from the new coordinator (OffsetFetch) and resuming from them, so the records it had
consumed past its last durable commit are read again — counted as duplicates. (Kafka's classic
protocol avoids that rebalance when members find the new coordinator within
session.timeout.ms; this is the case where they do not.)

A 2.1+ client (Fetch v9+ here) commits each offset with the leader epoch of the record before
it (OffsetCommit v6, KIP-320: the position's epoch), and a member resuming from a committed
offset takes that epoch as its position's (ConsumerCoordinator.refreshCommittedOffsetsIfNeeded
→ SubscriptionState.seekUnvalidated): a 2.3+ client validates it against the leader before it
fetches (rig.workload.offset_fetcher), so a commit whose records an unclean election truncated
is caught, not fetched past.
"""

from __future__ import annotations

from typing import Any, Protocol

from rig.cluster.offsets import Committed, handle_offset_commit, handle_offset_fetch
from rig.cluster.partition import TopicPartition
from rig.events import names
from rig.hashing import offsets_partition
from rig.workload.coordinator_wire import CoordinatorWire
from rig.workload.member import MemberState


class Member(MemberState, Protocol):
    """The consumer member a Committer commits for (rig.workload.consumer.ConsumerMember)."""

    assigned: list[TopicPartition]
    leader_epochs: dict[TopicPartition, int]
    offsets: Any  # rig.workload.offset_fetcher.OffsetFetcher

    def seek(self, key: TopicPartition) -> None: ...

COMMITS_EPOCH_FETCH_VERSION = 9  # a 2.1+ client: OffsetCommit v6+ carries the leader epoch


class Committer:
    def __init__(self, member: Member):
        self.member = member
        self.cluster = member.cluster
        self.group = member.spec.group
        self.node = member.node
        self.partition = offsets_partition(self.group,
                                           self.cluster.config.offsets_topic_num_partitions)
        self.coordinator = -1
        self.previous = -1
        self.finding = False
        self.in_flight = False
        self.again = False
        self.request = 0  # the current commit's number (a late answer is ignored)
        self.stopped = False  # as a client the cluster tells of connection resets
        # FindCoordinator, OffsetCommit and OffsetFetch at their bytes on the wire
        self.wire = CoordinatorWire(self.cluster.variant.kafka, member.client_id, self.group)

    # -- discovery ------------------------------------------------------------------------
    def start(self) -> None:
        self.cluster.clients.append(self)
        self.find()
        if self.member.spec.commit == "auto":
            self._every(self.member.spec.auto_commit_interval_ms)

    def _every(self, period_ms: int) -> None:
        def tick() -> None:
            self.commit()
            self.cluster.sim.after(period_ms * 1000, tick)

        self.cluster.sim.after(period_ms * 1000, tick)

    def _retry_find(self) -> None:
        self.finding = False
        self.cluster.sim.after(self.member.spec.retry_backoff_ms * 1000, self.find)

    def find(self) -> None:
        cluster = self.cluster
        if self.finding or self.coordinator >= 0:
            return
        live = cluster.live_brokers()
        if not live:
            self._retry_find()
            return
        self.finding = True
        source = live[0]
        key = ("__consumer_offsets", self.partition)

        def at_broker() -> None:
            leader = cluster.brokers[source].metadata_cache.leaders.get(key, -1)
            cluster.send(source, self.node, self.wire.find_response(leader), lambda: answer(leader))

        def answer(leader: int) -> None:
            # A dead coordinator refuses the connection at once: ask again after the backoff.
            if leader < 0 or not cluster.brokers[leader].alive:
                self._retry_find()
                return
            self.finding = False
            self.coordinator = leader
            cluster.log.emit(names.COORDINATOR_FOUND, group=self.group,
                             member=self.member.client_id, coordinator=leader,
                             offsets_partition=self.partition, previous=self.previous)
            changed = self.previous >= 0 and self.previous != leader
            self.previous = leader
            if changed:
                self._resume()

        cluster.send(self.node, source, self.wire.find_request(), at_broker)
        cluster.sim.after(self.member.spec.request_timeout_ms * 1000,
                          lambda: self._retry_find() if self.finding else None)

    def _lost(self) -> None:
        self.coordinator = -1
        self.in_flight = False
        self.find()

    def connection_reset(self, broker: int) -> None:
        if broker == self.coordinator:
            self._lost()

    # -- commits --------------------------------------------------------------------------
    def polled(self) -> None:
        if self.member.spec.commit == "poll":
            self.commit()

    def commit(self) -> None:
        member = self.member
        if self.coordinator < 0:
            self.find()
            return
        if self.in_flight:
            self.again = True
            return
        with_epoch = member.version >= COMMITS_EPOCH_FETCH_VERSION
        offsets = {key: (member.positions[key], _epoch(member, key) if with_epoch else -1)
                   for key in member.assigned if key in member.positions}
        if not offsets:
            return
        cluster = self.cluster
        coordinator = self.coordinator
        self.in_flight = True
        self.request += 1
        number = self.request
        size, answer_size = self.wire.commit(offsets)

        def at_coordinator() -> None:
            handle_offset_commit(cluster.brokers[coordinator], cluster.offset_store, self.group,
                                 offsets, lambda error: cluster.send(
                                     coordinator, self.node, answer_size,
                                     lambda: answered(error)))

        def answered(error: int) -> None:
            if number != self.request:
                return
            self.in_flight = False
            cluster.log.emit(names.OFFSETS_COMMIT, group=self.group, member=member.client_id,
                             coordinator=coordinator, offsets_partition=self.partition,
                             partitions=len(offsets), error_code=error)
            if error:
                self._lost()
                return
            if self.again:
                self.again = False
                self.commit()

        def timed_out() -> None:
            if number == self.request and self.in_flight:
                cluster.log.emit(names.OFFSETS_COMMIT, group=self.group,
                                 member=member.client_id, coordinator=coordinator,
                                 offsets_partition=self.partition, partitions=len(offsets),
                                 error_code=7)  # REQUEST_TIMED_OUT
                self._lost()

        cluster.send(self.node, coordinator, size, at_coordinator)
        cluster.sim.after(member.spec.request_timeout_ms * 1000, timed_out)

    # -- failover -------------------------------------------------------------------------
    def _resume(self) -> None:
        """Rejoin after a coordinator change: fetch the committed offsets and go back to them."""
        cluster = self.cluster
        coordinator = self.coordinator
        member = self.member

        def at_coordinator() -> None:
            error, committed = handle_offset_fetch(cluster.brokers[coordinator],
                                                   cluster.offset_store, self.group)
            cluster.send(coordinator, self.node, self.wire.fetch(member.assigned, not error)[1],
                         lambda: answered(error, committed))

        def answered(error: int, committed: dict[TopicPartition, Committed]) -> None:
            if error:
                self._lost()
                return
            for key in member.assigned:
                if key not in committed:
                    continue  # nothing committed yet: keep the position (auto.offset.reset)
                offset, epoch = committed[key]
                position = member.positions.get(key, 0)
                duplicates = max(0, position - offset)
                cluster.log.emit(names.CONSUMER_RESUME, group=self.group,
                                 member=member.client_id, topic=key[0], partition=key[1],
                                 committed=offset, position=position,
                                 duplicates=duplicates)
                member.positions[key] = offset
                member.offsets.resetting.pop(key, None)  # (a seek: no longer AWAIT_RESET)
                # seekUnvalidated: the committed epoch is the position's, validated against
                # the leader its metadata names next (none committed: fetched unvalidated).
                member.position_epochs[key] = epoch if epoch >= 0 else None
                if epoch >= 0:
                    member.leader_epochs.pop(key, None)
                member.seek(key)

        cluster.send(self.node, coordinator, self.wire.fetch(member.assigned)[0],
                     at_coordinator)


def _epoch(member: Member, key: TopicPartition) -> int:
    """The leader epoch a commit of `key`'s position carries: that of the record before it
    (the last batch read), −1 when none is known."""
    epoch = member.position_epochs.get(key)
    return -1 if epoch is None else epoch
