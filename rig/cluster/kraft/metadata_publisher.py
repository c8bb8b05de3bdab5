"""A KRaft broker's metadata: the long-poll fetch of `__cluster_metadata` from the active
controller (or, in a quorum, as an observer of the Raft leader it knows), the records applied in
order to the broker's image, and the image published to its replicas (Kafka's MetadataLoader
and BrokerMetadataPublisher, ReplicaManager.applyDelta; docs/kafka.md §12). The module
docstring of broker_lifecycle describes the whole broker side."""

from __future__ import annotations

from typing import Any

from rig.cluster import replica_set
from rig.cluster.delayed_fetch import complete_made_followers
from rig.cluster.kraft.metadata_log import (
    FETCH_BYTES,
    RECORD_BYTES,
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    Record,
    RegisterBrokerRecord,
)
from rig.cluster.kraft.partition_change_builder import RECOVERING, PartitionRegistration
from rig.cluster.kraft.quorum_controller import NODE
from rig.cluster.kraft.quorum_state import REQUEST_TIMEOUT_MS
from rig.cluster.kraft.raft import RETRY_BACKOFF_BASE_MS, FetchReply
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER


class BrokerMetadataPublisher:
    """The broker's image of the metadata log and its publication (BrokerLifecycle adds the
    registration and the heartbeats)."""

    epoch: int  # the broker epoch of this process's registration (BrokerLifecycle)

    def __init__(self, plane: Any, broker: Any):
        self.plane = plane
        self.broker = broker
        self.applied = 0  # records [0, applied) are in the image
        self.image: dict[TopicPartition, PartitionRegistration] = {}
        self.epochs: dict[int, int] = {}
        self.fenced: set[int] = set()
        self.shutting_down: set[int] = set()
        self._published = -1  # the incarnation whose replicas the image was published to
        self._fetch_token = 0
        # The controller this broker talks to: node "controller", or in a quorum the Raft
        # leader it knows (None: none known), with its epoch and when it last answered a fetch.
        self.known: int | str | None = NODE
        self.known_epoch = 0
        self._answered_epoch = 0
        self._answered_at_us = 0

    # -- the broker's view of other brokers ----------------------------------------------------
    def ineligible(self, broker: int, fetched_epoch: int = -1) -> bool:
        """Not ISR-eligible in this broker's image (Partition.isReplicaIsrEligible, KIP-841):
        fenced, in controlled shutdown, not registered, or, from 3.5 (KAFKA-14617,
        isBrokerEpochIsrEligible), `fetched_epoch` (the broker epoch of the follower's latest
        fetch, Fetch v15's ReplicaState; -1 before v15, which passes) is not the registered
        one: the image has not yet seen a restarted broker's new registration, or the fetch
        came from the process before it."""
        return (broker in self.fenced or broker in self.shutting_down or broker not in self.epochs
                or fetched_epoch not in (-1, self.epochs[broker]))


    # -- the metadata log ----------------------------------------------------------------------
    def _fetch(self) -> None:
        plane, broker = self.plane, self.broker
        self._fetch_token += 1
        token, offset = self._fetch_token, self.applied
        if plane.quorum:
            self._fetch_from_quorum(token, offset)
            return

        def at_controller() -> None:
            plane.controller.metadata.fetch(offset, lambda start, records: plane.send(
                NODE, broker.id, FETCH_BYTES + RECORD_BYTES * len(records),
                lambda: answered(start, records)))

        def answered(start: int, records: tuple[Record, ...]) -> None:
            if token != self._fetch_token:
                return
            self._apply(start, records)
            self._fetch()

        def timed_out() -> None:
            if token == self._fetch_token:
                self._fetch()

        broker.schedule(REQUEST_TIMEOUT_MS * 1000, timed_out)
        plane.send(broker.id, NODE, FETCH_BYTES, at_controller)

    def _fetch_from_quorum(self, token: int, offset: int) -> None:
        """An observer's Fetch of the metadata partition (KafkaRaftClient, observer side)."""
        plane, broker = self.plane, self.broker
        node = self.known if self.known is not None else plane.any_voter(broker.id)

        def at_node() -> None:
            plane.raft_node(node).on_fetch(broker.id, 0, offset, 0, lambda reply: plane.send(
                node, broker.id, FETCH_BYTES + RECORD_BYTES * len(reply.records),
                lambda: answered(reply)), observer=True)

        def answered(reply: FetchReply) -> None:
            if token != self._fetch_token:
                return
            if reply.error:
                hint = reply.leader
                if hint is not None and hint != node and reply.epoch >= self.known_epoch:
                    self.known, self.known_epoch = hint, reply.epoch
                    self._fetch()
                    return
                self.known = None  # a live voter that knows no leader: ask again shortly
                broker.schedule(RETRY_BACKOFF_BASE_MS * 1000,
                                lambda: self._fetch() if token == self._fetch_token else None)
                return
            now = plane.sim.now_us
            if reply.epoch != self._answered_epoch:
                plane.log.emit(names.BROKER_METADATA_RESUMED, broker=broker.id, controller=node,
                               quorum_epoch=reply.epoch,
                               stale_ms=(now - self._answered_at_us) / 1000)
                self._answered_epoch = reply.epoch
            self.known, self.known_epoch = node, reply.epoch
            self._answered_at_us = now
            self._apply(reply.start, reply.records)
            self._fetch()

        def timed_out() -> None:
            if token == self._fetch_token:
                self.known = None
                plane.skip_voter(broker.id, node)
                self._fetch()

        broker.schedule(REQUEST_TIMEOUT_MS * 1000, timed_out)
        plane.send(broker.id, node, FETCH_BYTES, at_node)

    def _apply(self, start: int, records: tuple[Record, ...]) -> None:
        changed: dict[TopicPartition, None] = {}
        brokers_changed = False
        for record in records[self.applied - start:]:
            if isinstance(record, PartitionChangeRecord):
                self.image[record.key] = record.registration
                changed[record.key] = None
            elif isinstance(record, RegisterBrokerRecord):
                brokers_changed = True
                self.epochs[record.broker] = record.broker_epoch
                (self.fenced.add if record.fenced else self.fenced.discard)(record.broker)
                self.shutting_down.discard(record.broker)
            elif isinstance(record, BrokerRegistrationChangeRecord):
                brokers_changed = True
                if record.fenced is not None:
                    (self.fenced.add if record.fenced else self.fenced.discard)(record.broker)
                if record.in_controlled_shutdown:
                    self.shutting_down.add(record.broker)
        self.applied = max(self.applied, start + len(records))
        # KRaftMetadataCache.getAliveBrokerNode: registered and not fenced (KIP-951's endpoints);
        # again after a restart emptied the cache
        cache = self.broker.metadata_cache
        if brokers_changed or not cache.alive:
            cache.alive = frozenset(b for b in self.epochs if b not in self.fenced)
        if self.epoch < 0:
            return  # not registered yet: the replicas wait for the first publication
        if self._published != self.broker.incarnation:
            self._published = self.broker.incarnation
            changed = dict.fromkeys(self.image)
        self._publish(changed)

    def _publish(self, keys: dict[TopicPartition, None]) -> None:
        broker, image = self.broker, self.image
        if not keys:
            return
        broker.metadata_cache.update({k: image[k].leader for k in keys},
                                     {k: image[k].isr for k in keys},
                                     epochs={k: image[k].leader_epoch for k in keys})
        plane = self.plane
        for key in keys:
            part = image[key]
            replica = broker.replicas.get(key)
            if broker.id not in part.replicas:  # TopicDelta.localChanges: deletes
                if replica is not None:
                    replica_set.delete(plane.cluster, broker, replica)
                continue
            if replica is None:  # a reassignment added this broker
                replica = replica_set.create(plane.cluster, broker, key, part.replicas)
            self._publish_partition(replica, part)
        # ReplicaManager.applyLocalFollowersDelta: once the delta is applied, the fetches parked
        # on a partition made follower are completed (DelayedFetch Case A).
        complete_made_followers(broker.fetch_purgatory, broker.replica_manager)

    def _publish_partition(self, replica: Replica, part: PartitionRegistration) -> None:
        """ReplicaManager.applyDelta for one partition this broker holds."""
        broker = self.broker
        rm = broker.replica_manager
        if part.replicas != replica.assignment:
            replica_set.update_assignment(self.plane.cluster, broker, replica, part.replicas)
        if part.leader_epoch > replica.leader_epoch:
            if part.leader == broker.id:
                rm.become_leader(replica, part)
                if part.leader_recovery_state == RECOVERING:
                    self.plane.isr_writer.recover(broker, replica)
            elif part.leader >= 0:
                rm.become_follower(replica, part)
            else:
                self._lose_leader(replica, part)
            return
        if part.partition_epoch <= replica.zk_version:
            return
        replica.zk_version = part.partition_epoch
        if replica.role is not Role.LEADER:
            return
        # The same leader epoch, a newer partition epoch: the ISR changed (an AlterPartition
        # of this leader's, or the controller's fencing). The followers' caught-up times are
        # kept (makeLeader resets them only on a new leader epoch); from 3.6 a follower the
        # image no longer counts as ISR-eligible stops holding the HW back at every HW
        # computation (ReplicaManager.hw_eligible, set by BrokerLifecycle).
        rm.set_isr(replica, part.isr)
        replica.pending_isr = None
        rm.maybe_advance_hw(replica)

    def _lose_leader(self, replica: Replica, part: PartitionRegistration) -> None:
        """No leader at a new leader epoch: stop leading or following (makeFollower with no
        leader): waiting acks=all produces are answered NOT_LEADER_OR_FOLLOWER."""
        rm = self.broker.replica_manager
        rm.fetch_epochs.changed()
        rm.made_follower[replica.key] = None  # (makeFollower answers true: a new epoch)
        if replica.role is Role.LEADER:
            rm.produce_purgatory.abort(replica.key, NOT_LEADER_OR_FOLLOWER)
            rm.stopped_leading(replica)
            rm.hw_behind.pop(replica.key, None)
            rm.set_isr(replica, ())
            replica.followers.clear()
        elif replica.role is Role.FOLLOWER:
            rm.fetcher_manager.stop_fetching(replica)
        replica.role = Role.FOLLOWER
        replica.leader = -1
        replica.leader_epoch = part.leader_epoch
        replica.zk_version = part.partition_epoch
