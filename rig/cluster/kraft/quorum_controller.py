"""A KRaft controller (Kafka's QuorumController with ClusterControlManager): broker
registrations, heartbeats and fencing, AlterPartition, and the metadata log it appends to
(docs/kafka.md §12). Requests reach it over rig's transport as messages to its node ("controller"
when the variant has one controller, else its id); it answers them the same way.

In a quorum (cluster.controllers) only the Raft leader's controller is active. It becomes so
(`claim`, QuorumController.claim) once its Raft epoch's first record is committed, with its
state rebuilt from the committed log and a fresh session for every registered broker
(ClusterControlManager.activate → BrokerHeartbeatManager.touch with the time now: a failover
fences nobody); it stops (`renounce`) when it stops leading, dropping what was not committed.
A request to a controller that is not active is answered NOT_CONTROLLER, and an active one
answers a request only once the records it wrote are committed (ControllerWriteEvent waits
for its offset in the purgatory).

Fencing follows QuorumController.rescheduleMaybeFenceStaleBrokers: the check is scheduled for
the moment the oldest unfenced session runs out (last contact + `broker.session.timeout.ms`),
fences that one broker (ReplicationControlManager.maybeFenceOneStaleBroker) and reschedules at
once, so brokers that went silent together are fenced one check each.
"""

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
    PartitionChangeRecord,
    RegisterBrokerRecord,
)
from rig.cluster.kraft.partition_change_builder import NO_LEADER, PartitionRegistration
from rig.cluster.kraft.replication_control import (
    AlterPartitionRequest,
    Changed,
    ReplicationControlManager,
)
from rig.cluster.partition import TopicPartition
from rig.engine import Timer
from rig.events import names

NODE = "controller"
DUPLICATE_BROKER_REGISTRATION = 101
STALE_BROKER_EPOCH = 77
NOT_CONTROLLER = 41


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


class QuorumController:
    """`host` is the KRaft control plane: variant, sim, log, brokers, assignment, topics.
    `node` is this controller's network node; `metadata` its copy of the metadata log."""

    def __init__(self, host: Any, node: int | str = NODE, metadata: MetadataLog | None = None):
        self.host = host
        config = host.variant.config
        self.sim = host.sim
        self.emit = host.log.emit
        self.node = node
        self.metadata = metadata if metadata is not None else MetadataLog(host.sim)
        self.active = not self.metadata.quorum  # one controller: always the active one
        self._uncommitted: list[tuple[int, Callable[[], None]]] = []  # replies awaiting commit
        self.heartbeats = BrokerHeartbeatManager(config.broker_session_timeout_ms)
        self.registrations: dict[int, BrokerRegistration] = {}
        self.replication = ReplicationControlManager(
            acceptable=self.is_active, broker_epoch=self._epoch_of, ineligible=self._ineligible,
            min_isr=lambda key: min(host.topics.min_isr(key), len(host.assignment(key))),
            unclean=host.topics.unclean_election,
            elr_enabled=config.eligible_leader_replicas_enable,
            bump_leader_epoch_on_shrink=config.leader_epoch_bump_on_shrink,
            fenced_last_known_leader=config.elect_fenced_last_known_leader)
        self.quorum_epoch = 1
        self._fence_timer: Timer | None = None

    @property
    def partitions(self) -> dict[TopicPartition, PartitionRegistration]:
        return self.replication.partitions

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

    # -- start ---------------------------------------------------------------------------------
    def start_running(self, brokers: list[int], active: bool = True) -> None:
        """A running cluster: every broker registered and unfenced, every partition in the log
        (the records of its past, applied by every broker). In a quorum every controller holds
        these records; the `active` one logs its election and runs the sessions."""
        now = self.sim.now_us
        for broker in brokers:
            epoch = self.metadata.append(RegisterBrokerRecord(broker, self.metadata.end_offset,
                                                              fenced=False))
            self.registrations[broker] = BrokerRegistration(epoch, 0, fenced=False)
            self.heartbeats.register(broker, epoch, False, now)
        for key, part in self.partitions.items():
            self.metadata.append(PartitionChangeRecord(key, part))
        self.active = active
        if not active:
            return
        self.emit(names.CONTROLLER_ELECTED, node=self.node, epoch=self.quorum_epoch,
                  quorum_epoch=self.quorum_epoch)
        self._reschedule_fencing()

    # -- failover (a quorum only) --------------------------------------------------------------
    def claim(self, quorum_epoch: int) -> None:
        """QuorumController.claim: the Raft leader's first record of its epoch is committed,
        so the log it replays is all committed. Its state is the log's (the standby replays
        committed records as they come; rig replays them here), and every registered broker
        gets a fresh session (ClusterControlManager.activate)."""
        self.active = True
        self.quorum_epoch = quorum_epoch
        registrations: dict[int, BrokerRegistration] = {}
        partitions: dict[TopicPartition, PartitionRegistration] = {}
        for record in self.metadata.records[:self.metadata.hw]:
            if isinstance(record, RegisterBrokerRecord):
                registrations[record.broker] = BrokerRegistration(
                    record.broker_epoch, record.incarnation, record.fenced)
            elif isinstance(record, BrokerRegistrationChangeRecord):
                registration = registrations[record.broker]
                if record.fenced is not None:
                    registration.fenced = record.fenced
                    if record.fenced:
                        registration.in_controlled_shutdown = False
                if record.in_controlled_shutdown is not None:
                    registration.in_controlled_shutdown = record.in_controlled_shutdown
            elif isinstance(record, PartitionChangeRecord):
                partitions[record.key] = record.registration
        self.registrations = registrations
        self.replication.partitions = partitions
        now = self.sim.now_us
        self.heartbeats = BrokerHeartbeatManager(self.host.variant.config
                                                 .broker_session_timeout_ms)
        for broker, registration in sorted(registrations.items()):
            self.heartbeats.register(broker, registration.epoch, registration.fenced, now)
        self._reschedule_fencing()

    def renounce(self) -> None:
        """QuorumController.renounce: no longer the active controller; what it wrote but the
        quorum did not commit is not its state any more, and its answers are not sent."""
        self.active = False
        self._uncommitted = []
        if self._fence_timer is not None:
            self._fence_timer.cancel()
            self._fence_timer = None

    def committed(self) -> None:
        """The quorum's HW moved: send the answers whose records it now covers."""
        hw = self.metadata.hw
        while self._uncommitted and self._uncommitted[0][0] <= hw:
            _, answer = self._uncommitted.pop(0)
            answer()

    def _when_committed(self, answer: Callable[[], None]) -> None:
        """Answer once everything appended so far is committed (one controller: now)."""
        end = self.metadata.end_offset
        if end <= self.metadata.hw or not self.metadata.quorum:
            answer()
        else:
            self._uncommitted.append((end, answer))

    # -- appending -----------------------------------------------------------------------------
    def _commit(self, changed: Changed, before: dict[TopicPartition, PartitionRegistration],
                reason: str) -> None:
        """Append a PartitionChangeRecord for each change and log it; the leader and ISR events
        of the ZooKeeper era are logged beside it (the analysis reads those)."""
        emit = self.emit
        for key, new in changed:
            old = before[key]
            offset = self.metadata.append(PartitionChangeRecord(key, new))
            emit(names.PARTITION_CHANGE, topic=key[0], partition=key[1], leader=new.leader,
                 isr=list(new.isr), elr=list(new.elr), last_known_elr=list(new.last_known_elr),
                 leader_epoch=new.leader_epoch, partition_epoch=new.partition_epoch,
                 leader_recovery_state=new.leader_recovery_state, offset=offset, reason=reason)
            removed = [b for b in old.isr if b not in new.isr]
            added = [b for b in new.isr if b not in old.isr]
            by = "leader" if reason == "alter-partition" else "controller"
            if removed and new.leader == old.leader:
                emit(names.ISR_SHRINK, topic=key[0], partition=key[1], leader=new.leader,
                     isr=list(new.isr), removed=removed, by=by)
            if added and new.leader == old.leader and reason == "alter-partition":
                emit(names.ISR_EXPAND, topic=key[0], partition=key[1], leader=new.leader,
                     isr=list(new.isr), added=added)
            if new.leader != old.leader and new.leader != NO_LEADER:
                if old.isr == () and old.elr == () and old.last_known_elr == (new.leader,):
                    how = "last-known-leader"
                elif new.leader in old.elr and new.leader not in old.isr:
                    how = "elr"
                else:
                    how = "unclean" if new.leader not in old.isr else "clean"
                emit(names.LEADER_ELECTED, topic=key[0], partition=key[1], leader=new.leader,
                     epoch=new.leader_epoch, isr=list(new.isr), previous=old.leader,
                     election=how, reason=reason)
            elif new.leader == NO_LEADER and old.leader != NO_LEADER:
                emit(names.PARTITION_OFFLINE, topic=key[0], partition=key[1],
                     isr=list(new.isr), reason=reason)

    def _change(self, work: Callable[[], Changed], reason: str) -> None:
        before = dict(self.partitions)
        self._commit(work(), before, reason)

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
        leads = any(p.leader == broker for p in self.partitions.values())
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
        answer = HeartbeatReply(0, metadata_offset >= registration.epoch,
                                nxt in (FENCED, SHUTDOWN_NOW), nxt == CONTROLLED_SHUTDOWN,
                                nxt == SHUTDOWN_NOW)
        self._when_committed(lambda: reply(answer))

    def min_isr_altered(self, topic: str | None) -> None:
        """IncrementalAlterConfigs of min.insync.replicas (a topic's, or the cluster default
        when `topic` is None). With ELR on, ConfigurationControlManager
        .createClearElrRecordsAsNeeded adds a ClearElrRecord to the ConfigRecord's batch, even
        when the value is unchanged (KIP-966, KAFKA-16540, Kafka 4.0): the ELR was chosen under
        the old min ISR, and a member of it may miss what a smaller ISR commits under the new
        one. ReplicationControlManager.replay(ClearElrRecord) merges each such partition with a
        change of empty ELR and last known ELR; rig appends that change itself."""
        if not self.active or not self.replication.elr_enabled:
            return
        self._change(lambda: self.replication.clear_elrs(topic), "min-isr-change")
        self.metadata.appended()

    def alter_partition(self, request: AlterPartitionRequest,
                        reply: Callable[[int, PartitionRegistration | None], None]) -> None:
        if not self.active:
            reply(NOT_CONTROLLER, None)
            return
        before = dict(self.partitions)
        error, part = self.replication.alter_partition(request)
        if part is not None and part != before.get(request.key):
            self._commit([(request.key, part)], before, "alter-partition")
            self.metadata.appended()
        self._when_committed(lambda: reply(error, part))
