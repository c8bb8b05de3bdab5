"""A ZooKeeper-era controller's partition reassignments (KIP-455, Kafka 2.4–3.9): Kafka's
KafkaController.onPartitionReassignment and what drives it.

With RS the assignment, ORS its origin, TRS the target, AR = TRS − ORS and RR = ORS − TRS
(ReplicaAssignment.reassignTo: RS is TRS followed by the rest of ORS):

- U: the controller writes RS, AR and RR to /brokers/topics (`zk.partition_assignment`); a
  reassignment that replaces one in progress stops the replicas the new one no longer names.
- A (the ISR does not hold TRS yet): bump the leader epoch and send LeaderAndIsr with RS to
  every replica of RS (the brokers of AR create the partition, empty, and follow the leader
  from offset 0), then LeaderAndIsr to each of AR again (NewReplica).
- B (the ISR holds TRS): RS becomes TRS; a leader not in TRS, or not online, gives way to the
  first replica of TRS online and in the ISR (ReassignPartitionLeaderElectionStrategy; logged
  as leader.elected with reason "reassignment"), otherwise the leader epoch is bumped; each
  replica of RR goes OfflineReplica (StopReplica, out of the ISR with a new epoch, LeaderAndIsr
  to the rest) and is deleted (StopReplica with delete = true); TRS is written to
  /brokers/topics and UpdateMetadata goes to every live broker.

Phase B runs when the ISR grows to hold TRS: the controller checks after every AlterIsr it
accepts (IBP 2.7+), on a change of the partition's /state znode it watches (before IBP 2.7,
PartitionReassignmentIsrChangeHandler), and on ISR change notifications. A new controller
resumes every reassignment in progress from ZooKeeper (initializePartitionReassignments); a
broker that starts resumes those whose target names it (onBrokerStartup).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rig.cluster.controller_wire import stop_replica_bytes, stop_replica_response_bytes
from rig.cluster.partition import TopicPartition
from rig.cluster.replica_state_machine import replicas_offline
from rig.cluster.zookeeper import PartitionState, ReplicaAssignment
from rig.events import names
from rig.protocol.errors import (
    INVALID_REPLICA_ASSIGNMENT,
    NONE,
    NOT_CONTROLLER,
    UNKNOWN_TOPIC_OR_PARTITION,
)


class PartitionReassignments:
    """The reassignments one controller drives; `controller` is rig.cluster.controller.Controller
    (its `partitionsBeingReassigned`: rebuilt from ZooKeeper when it is elected)."""

    def __init__(self, controller: Any):
        self.controller = controller
        zk = controller.cluster.zk
        self.in_progress: set[TopicPartition] = {
            key for key, assignment in zk.assignments.items() if assignment.being_reassigned}

    # -- what starts, completes and resumes a reassignment -------------------------------------
    def alter(self, key: TopicPartition, target: tuple[int, ...]) -> int:
        """AlterPartitionReassignments for one partition (processApiPartitionReassignment):
        the error code; NONE once the reassignment is under way."""
        controller = self.controller
        zk = controller.cluster.zk
        if not controller.active:
            return NOT_CONTROLLER
        # validateReplicas: not empty, no broker twice, none negative, every added one live;
        # then maybeTriggerPartitionReassignment: the partition must exist.
        if not target or len(set(target)) != len(target) or min(target) < 0:
            return INVALID_REPLICA_ASSIGNMENT
        if key not in zk.partitions:
            return UNKNOWN_TOPIC_OR_PARTITION
        assignment = zk.full_assignment(key).reassign_to(target)
        if not set(assignment.adding) <= controller.electable:
            return INVALID_REPLICA_ASSIGNMENT
        self.reassign(key, assignment)
        return NONE

    def isr_changed(self, keys: Iterable[TopicPartition]) -> None:
        """The ISR of `keys` changed (an AlterIsr accepted, the /state watch, a notification):
        maybeCompleteReassignment for those being reassigned."""
        if not self.controller.active:
            return
        zk = self.controller.cluster.zk
        for key in keys:
            if key in self.in_progress:
                assignment = zk.full_assignment(key)
                if self._complete(key, assignment):
                    self.reassign(key, assignment)

    def resume(self, which: Callable[[ReplicaAssignment], bool] | None = None) -> None:
        """maybeResumeReassignments: run each reassignment in progress again (`which`: only
        those it accepts)."""
        zk = self.controller.cluster.zk
        for key in sorted(self.in_progress):
            assignment = zk.full_assignment(key)
            if which is None or which(assignment):
                self.reassign(key, assignment)

    # -- KafkaController.onPartitionReassignment -----------------------------------------------
    def reassign(self, key: TopicPartition, assignment: ReplicaAssignment) -> None:
        controller = self.controller
        zk = controller.cluster.zk
        self._update_current(key, assignment)
        if not self._complete(key, assignment):
            self._bump_epoch(key, assignment.replicas)  # A1
            for replica in assignment.adding:  # A2: NewReplica
                self._leader_and_isr(key, {replica}, assignment.replicas)
            return
        target = assignment.target  # B1, B2
        self._move_leader(key, target)  # B3
        self._stop_removed(key, assignment.removing, target)  # B4, B5
        zk.write_assignment(key, ReplicaAssignment(target))  # B6
        self.in_progress.discard(key)  # B7
        zk.reassignment_watches.discard(key)
        controller.update_metadata([key])  # B8

    def _update_current(self, key: TopicPartition, assignment: ReplicaAssignment) -> None:
        """updateCurrentReassignment: write the new assignment (U1, U2), stop the replicas a
        replaced reassignment was adding that this one does not name (U3), and watch /state
        when the leaders write the ISR themselves (before IBP 2.7)."""
        controller = self.controller
        zk = controller.cluster.zk
        current = zk.full_assignment(key)
        if current != assignment:
            zk.write_assignment(key, assignment)
            unneeded = tuple(r for r in current.replicas if r not in assignment.replicas)
            if unneeded:
                self._stop_removed(key, unneeded, assignment.replicas)
        config = controller.cluster.variant.broker_config(controller.broker)
        if config.isr_update == "zookeeper-write":
            zk.reassignment_watches.add(key)
        self.in_progress.add(key)

    def _complete(self, key: TopicPartition, assignment: ReplicaAssignment) -> bool:
        """isReassignmentComplete: nothing adding or removing, or the ISR holds the target."""
        if not assignment.being_reassigned:
            return True
        return set(assignment.target) <= set(self.controller.cluster.zk.partitions[key].isr)

    def _bump_epoch(self, key: TopicPartition, replicas: tuple[int, ...]) -> None:
        """updateLeaderEpochAndSendRequest: the same leader and ISR with a new leader epoch (so
        the leader takes the new replica set), sent to every replica of `replicas`."""
        controller = self.controller
        state = controller.cluster.zk.partitions[key]
        controller.write_state(key, PartitionState(state.leader, state.leader_epoch + 1,
                                                   state.isr, state.version + 1))
        self._leader_and_isr(key, set(replicas), replicas)

    def _move_leader(self, key: TopicPartition, target: tuple[int, ...]) -> None:
        """moveReassignedPartitionLeaderIfRequired: a leader in the target and online keeps
        leading at a new epoch; otherwise the first target replica online and in the ISR is
        elected (none: the partition keeps its state, as Kafka's failed election does)."""
        controller = self.controller
        cluster = controller.cluster
        state = cluster.zk.partitions[key]
        online = controller.electable
        if state.leader in target and state.leader in online:
            self._bump_epoch(key, target)
            return
        chosen = [r for r in target if r in online and r in state.isr]
        if not chosen:
            return
        new = PartitionState(chosen[0], state.leader_epoch + 1, state.isr, state.version + 1)
        controller.write_state(key, new)
        cluster.log.emit(names.LEADER_ELECTED, topic=key[0], partition=key[1], leader=new.leader,
                         epoch=new.leader_epoch, isr=list(new.isr), previous=state.leader,
                         election="clean", reason="reassignment")
        self._leader_and_isr(key, set(target), target)

    def _stop_removed(self, key: TopicPartition, removed: tuple[int, ...],
                      remaining: tuple[int, ...]) -> None:
        """stopRemovedReplicasOfReassignedPartition: each removed replica goes OfflineReplica
        (StopReplica without delete, out of the ISR in ZooKeeper, LeaderAndIsr to the replicas
        left), then ReplicaDeletionStarted (StopReplica with delete = true)."""
        controller = self.controller
        for replica in removed:
            self._stop_replica(replica, key, delete=False)
            replicas_offline(controller, [replica], only={key})
            self._leader_and_isr(key, set(remaining) - {replica}, remaining)
        for replica in removed:
            self._stop_replica(replica, key, delete=True)

    def _leader_and_isr(self, key: TopicPartition, brokers: set[int],
                        replicas: tuple[int, ...]) -> None:
        """The partition's state as ZooKeeper holds it now, with `replicas`, in LeaderAndIsr to
        `brokers`, and in UpdateMetadata to every live broker
        (ControllerBrokerRequestBatch.addLeaderAndIsrRequestForBrokers adds both)."""
        controller = self.controller
        state = controller.cluster.zk.partitions[key]
        controller.send_leader_and_isr({key: state}, brokers, {key: replicas})
        controller.update_metadata([key])

    def _stop_replica(self, broker_id: int, key: TopicPartition, *, delete: bool) -> None:
        controller = self.controller
        if broker_id not in controller.live:
            return  # the channel manager sends nothing to a broker that is gone
        cluster = controller.cluster
        controller.channels.send(
            broker_id, stop_replica_bytes(controller, [key], delete),
            lambda: cluster.stop_replica(broker_id, controller.epoch, key, delete),
            stop_replica_response_bytes(controller, [key], delete))
