"""A KRaft broker's side of the control plane (Kafka's BrokerLifecycleManager, the Raft
client's fetch of `__cluster_metadata`, and the metadata publisher's ReplicaManager.applyDelta;
docs/kafka.md §12).

- Registration: a new process registers (a new broker epoch); a refusal (its old session is
  still valid) is retried with BrokerLifecycleManager's backoff: 100 ms, doubling, at most half
  the session timeout (rig leaves out its 2 % jitter).
- Heartbeats: STARTING (wants to stay fenced) every 10 ms until the controller says it has
  caught up with its own registration record, then RECOVERY (asks to be unfenced), then
  RUNNING every `broker.heartbeat.interval.ms`.
- Controlled shutdown: heartbeats asking to shut down (the first retry after 50 ms) until the
  controller, having moved the broker's leaderships, answers shouldShutDown.
- Metadata: a long-poll fetch from the broker's offset; the records are applied in order to
  the broker's image, then published: a new leader epoch makes the replica leader or follower,
  a new partition epoch alone changes the leader's ISR. A broker's metadata is as fresh as its
  last fetch.
- A quorum (cluster.controllers): the broker is an observer of the Raft quorum. It fetches from
  the leader it knows; a voter that is not the leader answers NOT_LEADER_OR_FOLLOWER with the
  leader it knows, and a fetch that goes unanswered for the request timeout makes the broker
  forget its leader and ask another voter (KafkaRaftClient's observer:
  maybeSendAnyVoterFetch; rig skips the voter that just failed, as the connection backoff of
  Kafka's NetworkClient does). Heartbeats, registrations and AlterPartition go to that leader
  (RaftControllerNodeProvider); meanwhile the broker keeps its last metadata, and the first
  answer of a new leader logs how stale it was (`broker.metadata_resumed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rig.cluster.kraft.metadata_log import (
    FETCH_BYTES,
    FETCH_MAX_WAIT_MS,
    RECORD_BYTES,
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    Record,
    RegisterBrokerRecord,
)
from rig.cluster.kraft.partition_change_builder import RECOVERING, PartitionRegistration
from rig.cluster.kraft.quorum_controller import NODE, HeartbeatReply
from rig.cluster.kraft.raft import RETRY_BACKOFF_BASE_MS, FetchReply
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.strategies.isr import FollowerProgress
from rig.strategies.isr.base import NEVER_CAUGHT_UP

MESSAGE_BYTES = 100
REQUEST_TIMEOUT_MS = 2000  # controller.quorum.request.timeout.ms
STARTING_HEARTBEAT_MS = 10  # BrokerLifecycleManager: "so that ... we start up a bit quicker"
FIRST_BACKOFF_MS = 100
CONTROLLED_SHUTDOWN_FIRST_RETRY_MS = 50  # BrokerLifecycleManager: "a little bit sooner"


class BrokerLifecycle:
    """One broker's registration, heartbeats, metadata fetches and published image."""

    def __init__(self, plane: Any, broker: Any):
        self.plane = plane
        self.broker = broker
        self.epoch = -1  # the broker epoch of this process's registration
        self.clean_epoch = -1  # the epoch a controlled shutdown left on disk (-1: none)
        self.state = "RUNNING"
        self.applied = 0  # records [0, applied) are in the image
        self.image: dict[TopicPartition, PartitionRegistration] = {}
        self.epochs: dict[int, int] = {}
        self.fenced: set[int] = set()
        self.shutting_down: set[int] = set()
        self._published = -1  # the incarnation whose replicas the image was published to
        self._heartbeat_token = 0
        self._fetch_token = 0
        self._stop: Callable[[], None] | None = None  # what ends a controlled shutdown
        self._shutdown_answered = False
        # The controller this broker talks to: node "controller", or in a quorum the Raft
        # leader it knows (None: none known), with its epoch and when it last answered a fetch.
        self.known: int | str | None = NODE
        self.known_epoch = 0
        self._answered_epoch = 0
        self._answered_at_us = 0
        self._register_token = 0

    # -- the broker's view of other brokers ----------------------------------------------------
    def ineligible(self, broker: int) -> bool:
        """Not ISR-eligible in this broker's image (Partition.isReplicaIsrEligible, KIP-841)."""
        return broker in self.fenced or broker in self.shutting_down or broker not in self.epochs

    # -- start ---------------------------------------------------------------------------------
    def start_running(self, epoch: int) -> None:
        controller = self.plane.controller
        self.known = controller.node
        self.known_epoch = self._answered_epoch = controller.quorum_epoch
        self._answered_at_us = self.plane.sim.now_us
        self.epoch = self.broker.broker_epoch = epoch
        self.state = "RUNNING"
        self.applied = controller.metadata.end_offset
        self.image = dict(controller.partitions)
        self.epochs = {b: r.epoch for b, r in controller.registrations.items()}
        self._published = self.broker.incarnation
        self._schedule_heartbeat(self.broker.config.broker_heartbeat_interval_ms)
        self._fetch()

    def restart(self) -> None:
        """A new process: it registers, fetches from where its local metadata log ends."""
        self.epoch = self.broker.broker_epoch = -1
        self.state = "REGISTERING"
        self._register(FIRST_BACKOFF_MS)
        self._fetch()

    def begin_controlled_shutdown(self, stop: Callable[[], None]) -> None:
        """BrokerLifecycleManager.beginControlledShutdown: heartbeat at once asking to shut
        down; once the controller answers shouldShutDown, write the clean-shutdown epoch and
        `stop` the process (the next registration then reports a clean shutdown)."""
        if self.epoch < 0 or self.state == "PENDING_CONTROLLED_SHUTDOWN":
            return
        self.state = "PENDING_CONTROLLED_SHUTDOWN"
        self._stop = stop
        self._shutdown_answered = False
        self._heartbeat()

    # -- registration --------------------------------------------------------------------------
    def _register(self, backoff_ms: int) -> None:
        plane, broker = self.plane, self.broker
        incarnation = broker.incarnation
        node = self.known
        self._register_token += 1
        token = self._register_token
        cap = broker.config.broker_session_timeout_ms // 2

        def again() -> None:
            if token == self._register_token and self.epoch < 0:
                self._register(min(2 * backoff_ms, cap))

        if node is None:  # no controller known yet (a quorum between leaders)
            broker.schedule(backoff_ms * 1000, again)
            return

        def at_controller() -> None:
            plane.at_controller(node).register(
                broker.id, incarnation, self.clean_epoch, lambda error, epoch: plane.send(
                    node, broker.id, MESSAGE_BYTES, lambda: answered(error, epoch),
                    reliable=True))

        def answered(error: int, epoch: int) -> None:
            if plane.quorum and token != self._register_token:
                return  # an answer after the timeout: the request was sent again
            if error:
                self._register_token += 1
                broker.schedule(backoff_ms * 1000,
                                lambda: self._register(min(2 * backoff_ms, cap)))
                return
            self.epoch = self.broker.broker_epoch = epoch
            self.clean_epoch = -1  # the clean-shutdown file is read once, at start
            self.state = "STARTING"
            self._heartbeat()

        if plane.quorum:  # the controller may die with the request: ask again after a while
            broker.schedule(REQUEST_TIMEOUT_MS * 1000, again)
        plane.send(broker.id, node, MESSAGE_BYTES, at_controller, reliable=True)

    # -- heartbeats ----------------------------------------------------------------------------
    def _schedule_heartbeat(self, delay_ms: int) -> None:
        self._heartbeat_token += 1
        token = self._heartbeat_token
        self.broker.schedule(delay_ms * 1000,
                             lambda: self._heartbeat() if token == self._heartbeat_token else None)

    def _heartbeat(self) -> None:
        plane, broker = self.plane, self.broker
        epoch, offset = self.epoch, self.applied - 1
        want_fence = self.state == "STARTING"
        want_shutdown = self.state == "PENDING_CONTROLLED_SHUTDOWN"
        interval = broker.config.broker_heartbeat_interval_ms
        self._schedule_heartbeat(interval)  # a lost request or reply: the next one goes anyway
        node = self.known
        if node is None:
            return  # no controller known: the next heartbeat tries again

        def at_controller() -> None:
            plane.at_controller(node).heartbeat(
                broker.id, epoch, offset, want_fence, want_shutdown,
                lambda reply: plane.send(node, broker.id, MESSAGE_BYTES,
                                         lambda: answered(reply)))

        def answered(reply: HeartbeatReply) -> None:
            if reply.error or epoch != self.epoch:
                return
            if self.state == "STARTING":
                if reply.caught_up:
                    self.state = "RECOVERY"
                self._schedule_heartbeat(STARTING_HEARTBEAT_MS)
            elif self.state == "RECOVERY" and not reply.fenced:
                self.state = "RUNNING"
            elif self.state == "PENDING_CONTROLLED_SHUTDOWN":
                if reply.should_shut_down and self._stop is not None:
                    self.clean_epoch = self.epoch  # the clean-shutdown file
                    self._stop()
                    return
                if not self._shutdown_answered:  # the first answer: ask again sooner
                    self._schedule_heartbeat(CONTROLLED_SHUTDOWN_FIRST_RETRY_MS)
                self._shutdown_answered = True

        plane.send(broker.id, node, MESSAGE_BYTES, at_controller)

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

        broker.schedule((FETCH_MAX_WAIT_MS + REQUEST_TIMEOUT_MS) * 1000, timed_out)
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

        broker.schedule((FETCH_MAX_WAIT_MS + REQUEST_TIMEOUT_MS) * 1000, timed_out)
        plane.send(broker.id, node, FETCH_BYTES, at_node)

    def _apply(self, start: int, records: tuple[Record, ...]) -> None:
        changed: dict[TopicPartition, None] = {}
        for record in records[self.applied - start:]:
            if isinstance(record, PartitionChangeRecord):
                self.image[record.key] = record.registration
                changed[record.key] = None
            elif isinstance(record, RegisterBrokerRecord):
                self.epochs[record.broker] = record.broker_epoch
                (self.fenced.add if record.fenced else self.fenced.discard)(record.broker)
                self.shutting_down.discard(record.broker)
            elif isinstance(record, BrokerRegistrationChangeRecord):
                if record.fenced is not None:
                    (self.fenced.add if record.fenced else self.fenced.discard)(record.broker)
                if record.in_controlled_shutdown:
                    self.shutting_down.add(record.broker)
        self.applied = max(self.applied, start + len(records))
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
                                     {k: image[k].isr for k in keys})
        for key in keys:
            replica = broker.replicas.get(key)
            if replica is not None:
                self._publish_partition(replica, image[key])

    def _publish_partition(self, replica: Replica, part: PartitionRegistration) -> None:
        """ReplicaManager.applyDelta for one partition this broker holds."""
        broker = self.broker
        rm = broker.replica_manager
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
        # of this leader's, or the controller's fencing). A follower the image no longer
        # counts as ISR-eligible stops holding the HW back (maybeIncrementLeaderHW asks
        # isReplicaIsrEligible); the caught-up time of the others is kept (makeLeader resets
        # it only on a new leader epoch).
        rm.set_isr(replica, part.isr)
        replica.isr_change_pending = False
        now = broker.now_ms
        for follower in replica.assignment:
            if follower != broker.id and follower not in part.isr and self.ineligible(follower):
                replica.followers.setdefault(follower, FollowerProgress()).reset_caught_up(
                    replica.leo, now, NEVER_CAUGHT_UP)
        rm.maybe_advance_hw(replica)

    def _lose_leader(self, replica: Replica, part: PartitionRegistration) -> None:
        """No leader at a new leader epoch: stop leading or following (makeFollower with no
        leader): waiting acks=all produces are answered NOT_LEADER_OR_FOLLOWER."""
        rm = self.broker.replica_manager
        if replica.role is Role.LEADER:
            rm.produce_purgatory.abort(replica.key, NOT_LEADER_OR_FOLLOWER)
            rm.hw_behind.pop(replica.key, None)
            rm.set_isr(replica, ())
            replica.followers.clear()
        elif replica.role is Role.FOLLOWER:
            rm.fetcher_manager.stop_fetching(replica)
        replica.role = Role.FOLLOWER
        replica.leader = -1
        replica.leader_epoch = part.leader_epoch
        replica.zk_version = part.partition_epoch
