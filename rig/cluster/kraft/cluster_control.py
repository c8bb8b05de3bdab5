"""The KRaft controller's brokers (Kafka's ClusterControlManager with its BrokerHeartbeatManager,
and the heartbeat handling and fencing ReplicationControlManager.processBrokerHeartbeat and
maybeFenceOneStaleBroker do): registrations and their broker epochs, heartbeats, one stale
broker fenced per check. QuorumController (quorum_controller.py) combines it with the
partitions and the metadata log; its module docstring describes the whole controller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rig.cluster.kraft.broker_heartbeat_manager import (
    CONTROLLED_SHUTDOWN,
    FENCED,
    SHUTDOWN_NOW,
    UNFENCED,
    BrokerHeartbeatManager,
)
from rig.cluster.kraft.metadata_log import (
    BrokerRegistrationChangeRecord,
    MetadataLog,
    RegisterBrokerRecord,
)
from rig.cluster.kraft.replication_control import Changed, ReplicationControlManager
from rig.engine import Timer
from rig.events import names
from rig.protocol.errors import DUPLICATE_BROKER_REGISTRATION, NOT_CONTROLLER, STALE_BROKER_EPOCH


@dataclass
class BrokerRegistration:
    """ClusterControlManager's BrokerRegistration (in the metadata log)."""

    epoch: int
    incarnation: int
    fenced: bool
    in_controlled_shutdown: bool = False


@dataclass(frozen=True)
class HeartbeatReply:
    error: int
    caught_up: bool = False
    fenced: bool = True
    in_controlled_shutdown: bool = False
    should_shut_down: bool = False


class ClusterControlManager:
    """Brokers as the active controller knows them; QuorumController supplies the metadata
    log, the partition changes (`_change`) and the commit-then-answer rule
    (`_when_committed`)."""

    sim: Any
    emit: Callable[..., None]
    active: bool
    metadata: MetadataLog
    heartbeats: BrokerHeartbeatManager
    registrations: dict[int, BrokerRegistration]
    replication: ReplicationControlManager
    _fence_timer: Timer | None

    def _change(self, work: Callable[[], Changed], reason: str) -> None:
        raise NotImplementedError  # QuorumController

    def _when_committed(self, answer: Callable[[], None]) -> None:
        raise NotImplementedError  # QuorumController

    def _written(self) -> None:
        """A write event ended (QuorumController schedules what follows one)."""
        raise NotImplementedError  # QuorumController

    # -- ClusterControlManager -----------------------------------------------------------------
    def is_active(self, broker: int) -> bool:
        r = self.registrations.get(broker)
        return r is not None and not r.fenced and not r.in_controlled_shutdown

    def _epoch_of(self, broker: int) -> int | None:
        r = self.registrations.get(broker)
        return r.epoch if r is not None else None

    def _ineligible(self, broker: int) -> str | None:
        r = self.registrations.get(broker)
        if r is None:
            return "not registered"
        if r.in_controlled_shutdown:
            return "shutting down"
        return "fenced" if r.fenced else None

    # -- fencing -------------------------------------------------------------------------------
    def _reschedule_fencing(self) -> None:
        if self._fence_timer is not None:
            self._fence_timer.cancel()
            self._fence_timer = None
        at = self.heartbeats.next_check_time_us()
        if at is not None:
            self._fence_timer = self.sim.at(max(at, self.sim.now_us), self._maybe_fence_one)

    def _maybe_fence_one(self) -> None:
        self._fence_timer = None
        broker = self.heartbeats.find_one_stale_broker(self.sim.now_us)
        if broker is not None:
            self._fence(broker, "session-timeout")
            self.metadata.appended()
        self._reschedule_fencing()
        self._written()

    def _fence(self, broker: int, reason: str) -> None:
        """handleBrokerFenced, then the BrokerRegistrationChangeRecord that fences it."""
        state = self.heartbeats.brokers[broker]
        registration = self.registrations[broker]
        self._change(lambda: self.replication.handle_broker_fenced(broker), "broker-fenced")
        registration.fenced = True
        registration.in_controlled_shutdown = False
        self.metadata.append(BrokerRegistrationChangeRecord(broker, registration.epoch,
                                                            fenced=True))
        self.heartbeats.fence(broker)
        self.emit(names.BROKER_FENCED, broker=broker, broker_epoch=registration.epoch,
                  reason=reason, last_contact_ms=state.last_contact_us / 1000)

    # -- requests ------------------------------------------------------------------------------
    def register(self, broker: int, incarnation: int, previous_epoch: int,
                 reply: Callable[[int, int], None]) -> None:
        """BrokerRegistration: (error, broker epoch). A new process (incarnation) of a broker
        whose session is still valid is refused (DuplicateBrokerRegistrationException)."""
        if not self.active:
            reply(NOT_CONTROLLER, -1)
            return
        now = self.sim.now_us
        existing = self.registrations.get(broker)
        if (existing is not None and existing.incarnation != incarnation
                and self.heartbeats.has_valid_session(broker, existing.epoch, now)):
            reply(DUPLICATE_BROKER_REGISTRATION, -1)
            return
        epoch = self.metadata.append(RegisterBrokerRecord(broker, self.metadata.end_offset,
                                                          incarnation=incarnation))
        self.registrations[broker] = BrokerRegistration(epoch, incarnation, fenced=True)
        self.heartbeats.register(broker, epoch, True, now)
        # KIP-966: a broker that did not shut down cleanly (its previous epoch is not the one
        # registered) leaves every ISR and ELR (QuorumController.registerBroker →
        # ReplicationControlManager.handleBrokerUncleanShutdown).
        unclean = existing is not None and previous_epoch != existing.epoch
        self.emit(names.BROKER_REGISTERED, broker=broker, broker_epoch=epoch,
                  incarnation=incarnation, unclean_shutdown=unclean)
        if unclean and self.replication.elr_enabled:
            self._change(lambda: self.replication.handle_broker_unclean_shutdown(broker),
                         "unclean-shutdown")
        self.metadata.appended()
        self._reschedule_fencing()
        self._written()
        self._when_committed(lambda: reply(0, epoch))

    def heartbeat(self, broker: int, epoch: int, metadata_offset: int, want_fence: bool,
                  want_shutdown: bool, reply: Callable[[HeartbeatReply], None]) -> None:
        """BrokerHeartbeat (processBrokerHeartbeat)."""
        if not self.active:
            reply(HeartbeatReply(NOT_CONTROLLER))
            return
        registration = self.registrations.get(broker)
        if registration is None or registration.epoch != epoch:
            reply(HeartbeatReply(STALE_BROKER_EPOCH))
            return
        heartbeats = self.heartbeats
        heartbeats.touch(broker, metadata_offset, self.sim.now_us)
        state = heartbeats.brokers[broker]
        current = (CONTROLLED_SHUTDOWN if state.shutting_down else
                   FENCED if state.fenced else UNFENCED)
        leads = any(p.leader == broker for p in self.replication.partitions.values())
        nxt = heartbeats.next_state(broker, want_fence, want_shutdown, metadata_offset,
                                    registration.epoch, leads)
        if current == FENCED and nxt == UNFENCED:
            registration.fenced = False
            state.fenced = False
            self.metadata.append(BrokerRegistrationChangeRecord(broker, epoch, fenced=False))
            self.emit(names.BROKER_UNFENCED, broker=broker, broker_epoch=epoch,
                      metadata_offset=metadata_offset)
            self._change(lambda: self.replication.handle_broker_unfenced(broker),
                         "broker-unfenced")
        elif current == UNFENCED and nxt == CONTROLLED_SHUTDOWN:
            registration.in_controlled_shutdown = True
            self.metadata.append(BrokerRegistrationChangeRecord(
                broker, epoch, in_controlled_shutdown=True))
            self._change(lambda: self.replication.handle_broker_in_controlled_shutdown(broker),
                         "controlled-shutdown")
            state.controlled_shutdown_offset = self.metadata.end_offset - 1
        elif current != FENCED and nxt in (FENCED, SHUTDOWN_NOW):
            # processBrokerHeartbeat: FENCED and SHUTDOWN_NOW both go through
            # handleBrokerFenced (a broker done with its controlled shutdown leaves too)
            self._fence(broker, "controlled-shutdown" if nxt == SHUTDOWN_NOW else "requested")
        self.metadata.appended()
        self._reschedule_fencing()
        self._written()
        answer = HeartbeatReply(0, metadata_offset >= registration.epoch,
                                nxt in (FENCED, SHUTDOWN_NOW), nxt == CONTROLLED_SHUTDOWN,
                                nxt == SHUTDOWN_NOW)
        self._when_committed(lambda: reply(answer))
