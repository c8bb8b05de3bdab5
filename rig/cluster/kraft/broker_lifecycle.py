"""A KRaft broker's side of the control plane (Kafka's BrokerLifecycleManager, the Raft
client's fetch of `__cluster_metadata`, and the metadata publisher's ReplicaManager.applyDelta;
docs/kafka.md §12). The registration, heartbeats and controlled shutdown are here; the metadata
fetch and its publication are in metadata_publisher (BrokerMetadataPublisher).

- One communication at a time: a registration until one is accepted, then heartbeats, each
  sent through the broker's "heartbeat" channel to the controller it knows
  (rig.cluster.kraft.controller_nodes; NOT_CONTROLLER or a dropped connection send it again to
  the controller the broker knows then). The next is scheduled from the answer: a heartbeat
  `broker.heartbeat.interval.ms` after a successful one (10 ms while STARTING; 50 ms after
  the first answer to a controlled shutdown), a heartbeat at once after the registration;
  after an error, or a request the channel gave up, the resend backoff: 100 ms doubling per
  failure in a row up to broker.session.timeout.ms, ±2 % (resendExponentialBackoff). The
  channel gives a request up broker.session.timeout.ms / 2 after it was sent, each attempt
  waiting as long at most (3.4+, KAFKA-14392; 3.3: the full session timeout, an attempt
  waiting controller.socket.timeout.ms, 30 s). Something asked of it at once while a request
  is in flight goes when its answer comes (3.8+, KAFKA-15950: rig so in every release; before,
  a second request queued in the channel behind the first). Until 2026-11-30 rig sent a
  heartbeat every interval whatever was in flight, and dropped one that met a cut.
- Registration: a new process registers (a new broker epoch); a refusal (its old session is
  still valid) is a failure like any other.
- Heartbeats: STARTING (wants to stay fenced) until the controller says it has caught up with
  its own registration record, then RECOVERY (asks to be unfenced: rig's broker is ready at
  once), then RUNNING.
- Controlled shutdown: a heartbeat at once asking to shut down, then until the controller,
  having moved the broker's leaderships, answers shouldShutDown.
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

from rig.backoff import ExponentialBackoff
from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.cluster.kraft.controller_nodes import controller_channel
from rig.cluster.kraft.lifecycle_wire import (
    broker_heartbeat_bytes,
    broker_heartbeat_response_bytes,
    broker_registration_bytes,
    broker_registration_response_bytes,
)
from rig.cluster.kraft.metadata_publisher import BrokerMetadataPublisher
from rig.cluster.kraft.quorum_controller import HeartbeatReply

STARTING_HEARTBEAT_MS = 10  # BrokerLifecycleManager: "so that ... we start up a bit quicker"
FIRST_BACKOFF_MS = 100  # resendExponentialBackoff: 100 ms, doubling, up to the session timeout
RESEND_JITTER = 0.02  # … drawn ±2 %
CONTROLLED_SHUTDOWN_FIRST_RETRY_MS = 50  # BrokerLifecycleManager: "a little bit sooner"


class BrokerLifecycle(BrokerMetadataPublisher):
    """One broker's registration, heartbeats and controlled shutdown; its metadata fetches
    and published image are BrokerMetadataPublisher's."""

    def __init__(self, plane: Any, broker: Any):
        super().__init__(plane, broker)
        self.epoch = -1  # the broker epoch of this process's registration
        self.clean_epoch = -1  # the epoch a controlled shutdown left on disk (-1: none)
        self.state = "RUNNING"
        self._stop: Callable[[bool], None] | None = None  # what ends a controlled shutdown
        self._shutdown_answered = False
        config = broker.config
        self._resend = ExponentialBackoff(FIRST_BACKOFF_MS, config.broker_session_timeout_ms,
                                          plane.streams.get(f"kraft/lifecycle/{broker.id}"),
                                          jitter=RESEND_JITTER)
        self._channel: BrokerToControllerChannel | None = None
        self._next = 0  # the communication scheduled (a later scheduling replaces it)
        self._in_flight = False  # communicationInFlight
        self._immediate = False  # nextSchedulingShouldBeImmediate
        self._failed = 0  # failedAttempts: failures in a row
        # KRaft 3.6+ (KAFKA-15021, the release whose controller stops bumping the leader epoch
        # on a shrink): every HW computation asks the full isReplicaIsrEligible of a caught-up
        # follower outside the ISR, with the broker epoch of its latest fetch.
        if not config.leader_epoch_bump_on_shrink:
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
        self._new_process()
        self._schedule(self.broker.config.broker_heartbeat_interval_ms)
        self._fetch()

    def restart(self) -> None:
        """A new process: it registers, fetches from where its local metadata log ends."""
        self.epoch = self.broker.broker_epoch = -1
        self.state = "REGISTERING"
        self._new_process()
        self._register()
        self._fetch()

    def begin_controlled_shutdown(self, stop: Callable[[bool], None]) -> None:
        """BrokerLifecycleManager.beginControlledShutdown: heartbeat at once asking to shut
        down; once the controller answers shouldShutDown, write the clean-shutdown epoch and
        `stop` the process (the next registration then reports a clean shutdown); `stop(False)`
        for a broker not yet RUNNING, which skips the controlled shutdown."""
        if self.state == "PENDING_CONTROLLED_SHUTDOWN":
            return
        if self.state != "RUNNING":
            # BeginControlledShutdownEvent: a broker not yet RUNNING skips it ("Skipping
            # controlled shutdown because we are in state …") and shuts down; BrokerServer's
            # shutdown still closes the logs with this process's broker epoch
            # (LogManager.shutdown(brokerEpoch)). rig before 2026-11-30 never stopped it.
            self.clean_epoch = self.epoch
            stop(False)
            return
        self.state = "PENDING_CONTROLLED_SHUTDOWN"
        self._stop = stop
        self._shutdown_answered = False
        self._schedule(0)

    # -- one communication at a time -----------------------------------------------------------
    def _new_process(self) -> None:
        """The process's own channel ("heartbeat", BrokerServer), and nothing in flight. 3.4+
        (KAFKA-14392): a request is given up after half the session timeout, an attempt
        waiting no longer; 3.3: after the session timeout, once its attempt has waited
        controller.socket.timeout.ms."""
        config = self.broker.config
        retry, attempt = config.broker_session_timeout_ms, config.controller_socket_timeout_ms
        if config.heartbeat_retry_timeout_half_session:
            retry //= 2
            attempt = min(attempt, retry)
        self._channel = controller_channel(self.plane, self.broker, "heartbeat", retry, attempt)
        self._in_flight = self._immediate = False
        self._failed = 0

    def _schedule(self, delay_ms: int) -> None:
        """scheduleNextCommunication: replaces the one scheduled (a deferred event's tag)."""
        if self._immediate:
            delay_ms = 0
        self._immediate = False
        self._next += 1
        token = self._next
        self.broker.schedule(delay_ms * 1000, lambda: self._communicate(token))

    def _communicate(self, token: int) -> None:
        """CommunicationEvent."""
        if token != self._next:
            return
        if self._in_flight:  # it goes as soon as the answer is in
            self._immediate = True
        elif self.epoch >= 0:
            self._heartbeat()
        else:
            self._register()

    def _succeeded(self, delay_ms: int) -> None:
        self._failed = 0
        self._schedule(delay_ms)

    def _failure(self) -> None:
        """scheduleNextCommunicationAfterFailure: an error, or a request given up."""
        delay_ms = self._resend.backoff_ms(self._failed)
        self._failed += 1
        self._immediate = False
        self._schedule(delay_ms)

    def _send(self, nbytes: int, at_controller: Callable[..., None],
              answered: Callable[..., None]) -> None:
        channel = self._channel
        assert channel is not None
        self._in_flight = True

        def timed_out() -> None:
            self._in_flight = False
            self._failure()

        def done(top: int, result: Any) -> None:
            self._in_flight = False
            answered(result)

        channel.send(nbytes, at_controller, done, timed_out)

    # -- registration --------------------------------------------------------------------------
    def _register(self) -> None:
        plane, broker = self.plane, self.broker
        incarnation, clean_epoch = broker.incarnation, self.clean_epoch
        answer_bytes = broker_registration_response_bytes(plane.variant)

        def at_controller(node: Any, reply: Callable[[int, int, Any], None]) -> None:
            plane.at_controller(node).register(
                broker.id, incarnation, clean_epoch,
                lambda error, epoch: reply(error, answer_bytes, (error, epoch)))

        def answered(result: tuple[int, int]) -> None:
            error, epoch = result
            if error:
                self._failure()
                return
            self.epoch = self.broker.broker_epoch = epoch
            self.clean_epoch = -1  # the clean-shutdown file is read once, at start
            self.state = "STARTING"
            self._succeeded(0)  # a heartbeat at once

        self._send(broker_registration_bytes(plane.variant, broker), at_controller, answered)

    # -- heartbeats ----------------------------------------------------------------------------
    def _heartbeat(self) -> None:
        plane, broker = self.plane, self.broker
        epoch, offset = self.epoch, self.applied - 1
        want_fence = self.state == "STARTING"
        want_shutdown = self.state == "PENDING_CONTROLLED_SHUTDOWN"
        answer_bytes = broker_heartbeat_response_bytes(plane.variant)

        def at_controller(node: Any, reply: Callable[[int, int, Any], None]) -> None:
            plane.at_controller(node).heartbeat(
                broker.id, epoch, offset, want_fence, want_shutdown,
                lambda answer: reply(answer.error, answer_bytes, answer))

        def answered(reply: HeartbeatReply) -> None:
            if reply.error:
                self._failure()
                return
            interval = broker.config.broker_heartbeat_interval_ms
            if self.state == "STARTING":
                if reply.caught_up:
                    self.state = "RECOVERY"
                self._succeeded(STARTING_HEARTBEAT_MS)
            elif self.state == "RECOVERY":
                if not reply.fenced:
                    self.state = "RUNNING"
                self._succeeded(interval)
            elif self.state == "PENDING_CONTROLLED_SHUTDOWN":
                if reply.should_shut_down and self._stop is not None:
                    self.clean_epoch = self.epoch  # the clean-shutdown file
                    self._stop(True)
                    return
                self._succeeded(interval if self._shutdown_answered
                                else CONTROLLED_SHUTDOWN_FIRST_RETRY_MS)
                self._shutdown_answered = True
            else:
                self._succeeded(interval)

        self._send(broker_heartbeat_bytes(plane.variant, broker), at_controller, answered)
