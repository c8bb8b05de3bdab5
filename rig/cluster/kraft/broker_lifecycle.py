"""A KRaft broker's side of the control plane (Kafka's BrokerLifecycleManager, the Raft
client's fetch of `__cluster_metadata`, and the metadata publisher's ReplicaManager.applyDelta;
docs/kafka.md §12). The registration, heartbeats and controlled shutdown are here; the metadata
fetch and its publication are in metadata_publisher (BrokerMetadataPublisher).

- Registration: a new process registers (a new broker epoch); a refusal (its old session is
  still valid) is retried with BrokerLifecycleManager's backoff (resendExponentialBackoff):
  100 ms, doubling, at most broker.session.timeout.ms (rig leaves out its 2 % jitter; until
  2026-11-30 rig capped it at half the session timeout, which no release does).
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
- The wire: registrations, heartbeats and their answers go at their exact bytes, the release's
  BrokerRegistration and BrokerHeartbeat versions (rig.cluster.kraft.lifecycle_wire).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rig.cluster.kraft.lifecycle_wire import (
    broker_heartbeat_bytes,
    broker_heartbeat_response_bytes,
    broker_registration_bytes,
    broker_registration_response_bytes,
)
from rig.cluster.kraft.metadata_publisher import REQUEST_TIMEOUT_MS, BrokerMetadataPublisher
from rig.cluster.kraft.quorum_controller import HeartbeatReply

STARTING_HEARTBEAT_MS = 10  # BrokerLifecycleManager: "so that ... we start up a bit quicker"
FIRST_BACKOFF_MS = 100
CONTROLLED_SHUTDOWN_FIRST_RETRY_MS = 50  # BrokerLifecycleManager: "a little bit sooner"


class BrokerLifecycle(BrokerMetadataPublisher):
    """One broker's registration, heartbeats and controlled shutdown; its metadata fetches
    and published image are BrokerMetadataPublisher's."""

    def __init__(self, plane: Any, broker: Any):
        super().__init__(plane, broker)
        self.epoch = -1  # the broker epoch of this process's registration
        self.clean_epoch = -1  # the epoch a controlled shutdown left on disk (-1: none)
        self.state = "RUNNING"
        self._heartbeat_token = 0
        self._stop: Callable[[], None] | None = None  # what ends a controlled shutdown
        self._shutdown_answered = False
        self._register_token = 0
        # KRaft 3.6+ (KAFKA-15021, the release whose controller stops bumping the leader epoch
        # on a shrink): every HW computation asks the full isReplicaIsrEligible of a caught-up
        # follower outside the ISR, with the broker epoch of its latest fetch.
        if not broker.config.leader_epoch_bump_on_shrink:
            broker.replica_manager.hw_eligible = lambda b, epoch: not self.ineligible(b, epoch)


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
        cap = broker.config.broker_session_timeout_ms

        def again() -> None:
            if token == self._register_token and self.epoch < 0:
                self._register(min(2 * backoff_ms, cap))

        if node is None:  # no controller known yet (a quorum between leaders)
            broker.schedule(backoff_ms * 1000, again)
            return

        def at_controller() -> None:
            plane.at_controller(node).register(
                broker.id, incarnation, self.clean_epoch, lambda error, epoch: plane.send(
                    node, broker.id, broker_registration_response_bytes(plane.variant),
                    lambda: answered(error, epoch), reliable=True))

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
        plane.send(broker.id, node, broker_registration_bytes(plane.variant, broker),
                   at_controller, reliable=True)

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
                lambda reply: plane.send(node, broker.id,
                                         broker_heartbeat_response_bytes(plane.variant),
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

        plane.send(broker.id, node, broker_heartbeat_bytes(plane.variant, broker), at_controller)
