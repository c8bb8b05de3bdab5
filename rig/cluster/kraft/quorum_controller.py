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
from typing import Any

from rig.cluster.kraft.broker_heartbeat_manager import (
    BrokerHeartbeatManager,
)
from rig.cluster.kraft.cluster_control import (
    BrokerRegistration,
    ClusterControlManager,
    HeartbeatReply,
)
from rig.cluster.kraft.leader_balance import REASON as BALANCE
from rig.cluster.kraft.leader_balance import LeaderBalance
from rig.cluster.kraft.metadata_log import (
    BrokerRegistrationChangeRecord,
    MetadataLog,
    NoOpRecord,
    PartitionChangeRecord,
    RegisterBrokerRecord,
)
from rig.cluster.kraft.noop_records import NoOpRecords
from rig.cluster.kraft.partition_change_builder import NO_LEADER, PartitionRegistration
from rig.cluster.kraft.replication_control import (
    AlterPartitionRequest,
    Changed,
    ReplicationControlManager,
)
from rig.cluster.partition import TopicPartition
from rig.engine import Timer
from rig.events import names
from rig.protocol.errors import DUPLICATE_BROKER_REGISTRATION, NOT_CONTROLLER, STALE_BROKER_EPOCH

NODE = "controller"

__all__ = ["DUPLICATE_BROKER_REGISTRATION", "NODE", "NOT_CONTROLLER", "STALE_BROKER_EPOCH",
           "BrokerRegistration", "HeartbeatReply", "QuorumController"]


def _never(key: TopicPartition) -> bool:
    return False


class QuorumController(ClusterControlManager):
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
            # getTopicEffectiveMinIsr: min(min.insync.replicas, the replica count of the
            # topic's partition 0 as the registration holds it now)
            min_isr=lambda key: min(host.topics.min_isr(key),
                                    len(self.partitions[(key[0], 0)].replicas)),
            # Before 3.9 the controller never read unclean.leader.election.enable (KAFKA-12670)
            unclean=host.topics.unclean_election if config.kraft_unclean_election else _never,
            elr_enabled=config.eligible_leader_replicas_enable,
            bump_leader_epoch_on_shrink=config.leader_epoch_bump_on_shrink,
            fenced_last_known_leader=config.elect_fenced_last_known_leader)
        self.quorum_epoch = 1
        self._fence_timer: Timer | None = None
        # KIP-835 (3.3+): a NoOpRecord every metadata.max.idle.interval.ms while active.
        self.noop = NoOpRecords(self.sim, config.metadata_max_idle_interval_ms
                                if config.kraft_noop_records else None, self._write_noop)
        self.balance = LeaderBalance(self.sim, config.leader_imbalance_check_interval_ms
                                     if config.auto_leader_rebalance_enable else None,
                                     self._balance_leaders)

    @property
    def partitions(self) -> dict[TopicPartition, PartitionRegistration]:
        return self.replication.partitions

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
        self.balance.rebuild(self.partitions)
        self.active = active
        if not active:
            return
        self.emit(names.CONTROLLER_ELECTED, node=self.node, epoch=self.quorum_epoch,
                  quorum_epoch=self.quorum_epoch)
        self._reschedule_fencing()
        self.noop.schedule()
        self.balance.after_write()

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
        self.noop.schedule()
        self.balance.rebuild(partitions)
        self.balance.after_write()  # processBatchEndOffset reschedules the periodic tasks

    def renounce(self) -> None:
        """QuorumController.renounce: no longer the active controller; what it wrote but the
        quorum did not commit is not its state any more, and its answers are not sent."""
        self.active = False
        self._uncommitted = []
        if self._fence_timer is not None:
            self._fence_timer.cancel()
            self._fence_timer = None
        self.noop.cancel()
        self.balance.cancel()

    def _write_noop(self) -> None:
        """NoOpRecords' write event: one written like any record (replicated, committed,
        fetched by the brokers)."""
        self.metadata.append(NoOpRecord())
        self.metadata.appended()
        self._written()

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
            self.balance.replayed(key, new)
            emit(names.PARTITION_CHANGE, topic=key[0], partition=key[1], leader=new.leader,
                 isr=list(new.isr), elr=list(new.elr), last_known_elr=list(new.last_known_elr),
                 leader_epoch=new.leader_epoch, partition_epoch=new.partition_epoch,
                 leader_recovery_state=new.leader_recovery_state, replicas=list(new.replicas),
                 adding=list(new.adding), removing=list(new.removing), offset=offset,
                 reason=reason)
            # A replica a completed reassignment takes out of the set leaves the ISR with it:
            # that is no ISR shrink (no leader shrank it).
            removed = [b for b in old.isr if b not in new.isr and b in new.replicas]
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
                elif reason == BALANCE:
                    how = "preferred"
                else:
                    how = "unclean" if new.leader not in old.isr else "clean"
                emit(names.LEADER_ELECTED, topic=key[0], partition=key[1], leader=new.leader,
                     epoch=new.leader_epoch, isr=list(new.isr), previous=old.leader,
                     election=how, reason="reassignment" if old.removing and not new.removing
                     else reason)
            elif new.leader == NO_LEADER and old.leader != NO_LEADER:
                emit(names.PARTITION_OFFLINE, topic=key[0], partition=key[1],
                     isr=list(new.isr), reason=reason)

    def _change(self, work: Callable[[], Changed], reason: str) -> None:
        before = dict(self.partitions)
        self._commit(work(), before, reason)

    def _written(self) -> None:
        self.balance.after_write()

    def _balance_leaders(self, keys: list[TopicPartition], cap: int) -> int:
        """maybeBalancePartitionLeaders, a write event of the active controller."""
        before = dict(self.partitions)
        changed = self.replication.balance_partition_leaders(keys, cap)
        self._commit(changed, before, BALANCE)
        if changed:
            self.metadata.appended()
        return len(changed)

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
        self._written()

    def reassign(self, key: TopicPartition, target: tuple[int, ...]) -> int:
        """AlterPartitionReassignments for one partition (an operator's
        kafka-reassign-partitions --execute): the first PartitionChangeRecord of the
        reassignment (ReplicationControlManager.alterPartitionReassignments). Returns the error
        code; a controller that is not active answers NOT_CONTROLLER (the admin client would
        retry: not modelled)."""
        if not self.active:
            return NOT_CONTROLLER
        before = {key: self.partitions[key]} if key in self.partitions else {}
        error, new = self.replication.alter_partition_reassignment(key, target)
        if new is not None:
            self._commit([(key, new)], before, "reassignment")
            self.metadata.appended()
        self._written()
        return error

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
        self._written()
        self._when_committed(lambda: reply(error, part))
