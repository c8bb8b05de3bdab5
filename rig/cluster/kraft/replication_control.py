"""The active controller's partition state and the changes it makes to it (Kafka's
ReplicationControlManager): fencing, unfencing, controlled and unclean shutdown, the leaders'
AlterPartition requests, and partition reassignments (AlterPartitionReassignments, KIP-455).
Every change goes through PartitionChangeBuilder (`change`); what this returns are the
partitions' new registrations, which the QuorumController appends to the metadata log as
PartitionChangeRecords.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from rig.cluster.kraft.partition_change_builder import (
    NO_LEADER,
    RECOVERING,
    Change,
    PartitionRegistration,
    change,
    reassignment_replicas,
)
from rig.cluster.partition import TopicPartition
from rig.protocol.errors import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REPLICA_ASSIGNMENT,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    NEW_LEADER_ELECTED,
    NONE,
    NOT_CONTROLLER,
    STALE_BROKER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
)

Changed = list[tuple[TopicPartition, PartitionRegistration]]


@dataclass(frozen=True)
class AlterPartitionRequest:
    """One partition of an AlterPartition request (v3: the ISR with broker epochs, KIP-903)."""

    key: TopicPartition
    broker: int  # the leader that asks
    broker_epoch: int
    leader_epoch: int
    partition_epoch: int
    new_isr: tuple[int, ...]
    isr_epochs: tuple[int, ...] = ()  # each new ISR member's broker epoch, as the leader saw it
    leader_recovery_state: str = "RECOVERED"


class ReplicationControlManager:
    def __init__(self, *, acceptable: Callable[[int], bool],
                 broker_epoch: Callable[[int], int | None],
                 ineligible: Callable[[int], str | None],
                 min_isr: Callable[[TopicPartition], int],
                 unclean: Callable[[TopicPartition], bool], elr_enabled: bool,
                 bump_leader_epoch_on_shrink: bool, fenced_last_known_leader: bool = False):
        self.partitions: dict[TopicPartition, PartitionRegistration] = {}
        self.acceptable = acceptable  # isActive: registered, unfenced, not shutting down
        self.broker_epoch = broker_epoch  # the registered epoch, None if not registered
        self.ineligible = ineligible  # why a replica may not join an ISR, or None
        self.min_isr = min_isr  # the topic's effective min ISR: min(min.insync.replicas, RF)
        self.unclean = unclean
        self.elr_enabled = elr_enabled
        self.bump_leader_epoch_on_shrink = bump_leader_epoch_on_shrink  # metadata version < 3.6
        self.fenced_last_known_leader = fenced_last_known_leader  # before 4.1 (KAFKA-19522)

    def _build(self, key: TopicPartition, request: Change,
               acceptable: Callable[[int], bool] | None = None,
               topic_election: bool = True) -> PartitionRegistration | None:
        """A PartitionChangeBuilder for `key`; with `topic_election` its election is UNCLEAN
        where the topic allows it (every caller but changePartitionReassignment sets that)."""
        part = self.partitions[key]
        if topic_election and self.unclean(key) and request.election == "online":
            request = replace(request, election="unclean")
        return change(part, request, acceptable=acceptable or self.acceptable,
                      min_isr=self.min_isr(key), elr_enabled=self.elr_enabled,
                      bump_leader_epoch_on_shrink=self.bump_leader_epoch_on_shrink,
                      fenced_last_known_leader=self.fenced_last_known_leader)

    def _leader_and_isr_updates(self, keys: Iterable[TopicPartition], remove: int = NO_LEADER,
                                unclean_shutdown: int = NO_LEADER) -> Changed:
        """generateLeaderAndIsrUpdates: each partition without `remove` (and the broker that
        shut down uncleanly) in its ISR, a leader elected where the current one may no longer
        lead."""
        out: Changed = []
        gone = {remove, unclean_shutdown}

        def acceptable(r: int) -> bool:
            return r != remove and self.acceptable(r)

        for key in keys:
            part = self.partitions[key]
            request = Change(tuple(r for r in part.isr if r not in gone),
                             unclean_shutdown=(unclean_shutdown,)
                             if unclean_shutdown != NO_LEADER else ())
            new = self._build(key, request, acceptable)
            if new is not None:
                self.partitions[key] = new
                out.append((key, new))
        return out

    def _with_in_isr(self, broker: int) -> list[TopicPartition]:
        return [k for k, p in self.partitions.items() if broker in p.isr]

    def handle_broker_fenced(self, broker: int) -> Changed:
        """handleBrokerFenced: out of every ISR, its leaderships moved."""
        return self._leader_and_isr_updates(self._with_in_isr(broker), remove=broker)

    def handle_broker_unfenced(self, broker: int) -> Changed:
        """handleBrokerUnfenced: elect where no leader is (partitionsWithNoLeader)."""
        return self._leader_and_isr_updates(
            [k for k, p in self.partitions.items() if p.leader == NO_LEADER])

    def handle_broker_in_controlled_shutdown(self, broker: int) -> Changed:
        """handleBrokerInControlledShutdown: like fencing, while it still runs."""
        return self._leader_and_isr_updates(self._with_in_isr(broker), remove=broker)

    def handle_broker_unclean_shutdown(self, broker: int) -> Changed:
        """handleBrokerUncleanShutdown (KIP-966): out of every ISR and ELR it is in."""
        changed = self._leader_and_isr_updates(self._with_in_isr(broker),
                                               unclean_shutdown=broker)
        in_elr = [k for k, p in self.partitions.items() if broker in p.elr]
        return changed + self._leader_and_isr_updates(in_elr, unclean_shutdown=broker)

    def balance_partition_leaders(self, keys: Iterable[TopicPartition], cap: int) -> Changed:
        """maybeTriggerLeaderChangeForPartitionsWithoutPreferredLeader: a PREFERRED election
        (the topic's unclean setting plays no part) for each of `keys`, up to `cap` changes."""
        out: Changed = []
        for key in keys:
            if len(out) >= cap:
                break
            new = self._build(key, Change(election="preferred"), topic_election=False)
            if new is not None:
                self.partitions[key] = new
                out.append((key, new))
        return out

    def clear_elrs(self, topic: str | None) -> Changed:
        """replay(ClearElrRecord) → removeTopicElrs, for one topic or (None) every topic: each
        partition with an ELR or a last known ELR loses both. PartitionRegistration.merge
        bumps the partition epoch; the leader, its epoch and the ISR stay."""
        out: Changed = []
        for key, part in self.partitions.items():
            if (topic is None or key[0] == topic) and (part.elr or part.last_known_elr):
                new = replace(part, elr=(), last_known_elr=(),
                              partition_epoch=part.partition_epoch + 1)
                self.partitions[key] = new
                out.append((key, new))
        return out

    def alter_partition(self, request: AlterPartitionRequest,
                        ) -> tuple[int, PartitionRegistration | None]:
        """ReplicationControlManager.alterPartition for one partition: (error code, the
        partition as it now is). Validation as validateAlterPartitionData, in its order."""
        if self.broker_epoch(request.broker) != request.broker_epoch:
            return STALE_BROKER_EPOCH, None  # checkBrokerEpoch, for the whole request
        part = self.partitions.get(request.key)
        if part is None:
            return INVALID_REQUEST, None
        if (request.leader_epoch > part.leader_epoch
                or request.partition_epoch > part.partition_epoch):
            return NOT_CONTROLLER, None
        if request.leader_epoch < part.leader_epoch:
            return FENCED_LEADER_EPOCH, None
        if request.broker != part.leader:
            return INVALID_REQUEST, None
        if request.partition_epoch < part.partition_epoch:
            return INVALID_UPDATE_VERSION, None
        new_isr = request.new_isr
        if (any(r not in part.replicas for r in new_isr) or len(set(new_isr)) != len(new_isr)
                or part.leader not in new_isr):
            return INVALID_REQUEST, None
        if request.leader_recovery_state == RECOVERING and len(new_isr) > 1:
            return INVALID_REQUEST, None
        if part.leader_recovery_state != RECOVERING and request.leader_recovery_state == RECOVERING:
            return INVALID_REQUEST, None
        for i, replica in enumerate(new_isr):
            # ineligibleReplicasForIsr; KIP-903: a member whose broker epoch the leader saw is
            # not the registered one (it restarted since) is ineligible too.
            stale = (i < len(request.isr_epochs) and request.isr_epochs[i] >= 0
                     and self.broker_epoch(replica) != request.isr_epochs[i])
            if stale or self.ineligible(replica) is not None:
                return INELIGIBLE_REPLICA, None
        new = self._build(request.key, Change(new_isr,
                                              recovery_state=request.leader_recovery_state))
        if new is not None:
            self.partitions[request.key] = new
            if new.leader != request.broker:
                # The change completed a reassignment that took the requester out of the
                # replica set (completeReassignmentIfNeeded, then tryElection over the target):
                # the record is written and the leader is told NEW_LEADER_ELECTED (request
                # version > 1; FENCED_LEADER_EPOCH for v0–1, which no KRaft broker rig models
                # sends), so that it waits for the metadata (ReplicationControlManager
                # .alterPartition, "change.leader() != request.brokerId()").
                return NEW_LEADER_ELECTED, new
        return NONE, self.partitions[request.key]

    def alter_partition_reassignment(self, key: TopicPartition, target: tuple[int, ...],
                                     ) -> tuple[int, PartitionRegistration | None]:
        """alterPartitionReassignment → changePartitionReassignment for one partition: (error,
        the new registration, None when nothing changes). The target is checked as
        validateManualPartitionAssignment checks it (not empty, every broker registered, none
        twice; its length need not be the replication factor). The first step is one
        PartitionChangeRecord: the replicas become the target followed by the removing ones,
        with `adding` and `removing` set; it elects no new leader and, as no replica leaves the
        set, bumps no leader epoch. If the ISR already holds the whole target (a reorder), the
        same build completes it at once."""
        part = self.partitions.get(key)
        if part is None:
            return UNKNOWN_TOPIC_OR_PARTITION, None
        if (not target or len(set(target)) != len(target)
                or any(self.broker_epoch(b) is None for b in target)):
            return INVALID_REPLICA_ASSIGNMENT, None
        replicas, adding, removing = reassignment_replicas(part.replicas, target)
        # Only what differs is set; an empty `adding` or `removing` leaves the partition's own
        # (a reassignment replacing one in progress keeps the older list, as Kafka does).
        new = self._build(key, Change(
            target_replicas=replicas if replicas != part.replicas else None,
            target_adding=adding or None, target_removing=removing or None),
            topic_election=False)
        if new is not None:
            self.partitions[key] = new
        return NONE, new
