"""A KRaft leader's ISR changes: AlterPartition to the active controller (Kafka's
AlterPartitionManager and Partition.sendAlterPartitionRequest; KIP-497, KIP-841, KIP-903).

The leader proposes a new ISR with its leader epoch and the partition epoch it holds; the
controller answers with the partition as it now is (the controller logs the accepted change:
`isr.shrink` by the leader or `isr.expand`), or an error, which the leader logs
(`alter_partition.rejected`). One change is in flight per partition, and the HW and acks=all go
by the maximal ISR meanwhile: the partition's side is ZooKeeper's AlterIsr one
(rig.cluster.alter_isr.propose and handle_response; Kafka's Partition serves both modes). A
replica that the leader's own image shows fenced or shutting down is not proposed at all
(isReplicaIsrEligible).
KRaft brokers announce nothing afterwards: the metadata log carries every change.

The broker's queue is ZooKeeper mode's (rig.cluster.alter_partition_manager: one request in
flight, the partitions queued meanwhile batched into the next), and so is its channel
(rig.cluster.broker_to_controller_channel), whose controller is the Raft leader the broker
knows (RaftControllerNodeProvider; none known: it looks again every 100 ms). The controller
answers once the records are committed. NOT_CONTROLLER, a dead controller's connection (reset
by a crashed process a round trip later; a combined controller's machine without power answers
nothing) or no answer within controller.socket.timeout.ms (30 s) send the request again to the
leader the broker knows then. Until 2026-11-30 rig sent one request per partition with a 2 s
timeout and, on NOT_CONTROLLER or without a controller, left the change to the leader's next
ISR check.
"""

from __future__ import annotations

from typing import Any

from rig.cluster.alter_isr import Answer, handle_response, log_rejected, propose
from rig.cluster.alter_partition_manager import AlterItem, DefaultAlterPartitionManager, Reply
from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.cluster.kraft.controller_nodes import controller_channel
from rig.cluster.kraft.partition_change_builder import RECOVERED, PartitionRegistration
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.protocol.errors import NONE, NOT_CONTROLLER, STALE_BROKER_EPOCH

# Errors the controller answers for the whole request (ControllerApis: NOT_CONTROLLER;
# ReplicationControlManager.alterPartition: a stale broker epoch): no partitions in the answer.
_TOP_LEVEL = frozenset({NOT_CONTROLLER, STALE_BROKER_EPOCH})


class AlterPartitionManager(DefaultAlterPartitionManager):
    """The ISR writer of every broker of a KRaft cluster (rig.cluster.context.IsrWriter)."""

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        life = self.plane.lifecycles[broker.id]
        followers = replica.followers
        if expand and any(life.ineligible(b, followers[b].broker_epoch if b in followers
                                          else -1) for b in expand):
            return  # Partition.canAddReplicaToIsr: not ISR-eligible in this broker's image
        self._propose(broker, replica, isr, RECOVERED, expand)

    def recover(self, broker: Any, replica: Replica) -> None:
        """KIP-704: a leader elected unclean (RECOVERING) marks the partition RECOVERED once its
        log is recovered, with itself alone as the ISR; until then no other replica joins."""
        self._propose(broker, replica, (broker.id,), RECOVERED)

    def propagate_isr_changes(self, broker: Any, keys: tuple[TopicPartition, ...]) -> None:
        """ZooKeeper's /isr_change_notification has no KRaft counterpart: nothing to do (the
        ISR tasks call this only for changes a ZooKeeper write recorded)."""

    def _propose(self, broker: Any, replica: Replica, isr: tuple[int, ...], recovery: str,
                 expand: list[int] | None = None) -> None:
        """Partition.sendAlterPartitionRequest (AlterPartition v3, metadata version 3.5+)."""
        life = self.plane.lifecycles[broker.id]
        pending = propose(replica, isr, expand)
        self.submit(broker, replica, pending, AlterPartitionRequest(
            replica.key, broker.id, life.epoch, replica.leader_epoch, replica.zk_version, isr,
            _isr_epochs(broker.id, life.epoch, replica, isr), recovery))

    # -- the hooks ------------------------------------------------------------------------------
    def _new_channel(self, broker: Any) -> BrokerToControllerChannel:
        return controller_channel(self.plane, broker)

    def _at_controller(self, broker: Any, target: Any, items: list[AlterItem],
                       reply: Reply) -> None:
        """ControllerApis.handleAlterPartitionRequest: the partitions' changes, answered
        together once committed (a top-level error: no partitions)."""
        controller = self.plane.at_controller(target)
        results: dict[TopicPartition, tuple[int, Answer | None]] = {}
        top = [NONE]

        def one(key: TopicPartition, error: int, part: PartitionRegistration | None) -> None:
            if error in _TOP_LEVEL:
                top[0] = error
            results[key] = (error, None if part is None or error else (
                part.leader_epoch, part.isr, part.partition_epoch))
            if len(results) == len(items):
                reply(top[0], {} if top[0] else results)

        for item in items:
            key = item.request.key
            controller.alter_partition(item.request,
                                       lambda error, part, key=key: one(key, error, part))

    def _handle(self, broker: Any, item: AlterItem, error: int, answer: Answer | None) -> bool:
        replica, request = item.replica, item.request
        if replica.leader_epoch != request.leader_epoch or broker.replicas.get(
                request.key) is not replica:
            # The partition moved on (a new leader epoch, or deleted) before the answer came:
            # Partition ignores it ("partitionState != proposedIsrState"), but the broker did
            # receive the error. NEW_LEADER_ELECTED races the very record it reports: the
            # controller wrote it and answered at once, and the metadata fetch may bring the
            # record first.
            if error:
                log_rejected(self.plane.log.emit, request, error, ignored=True)
            return False
        return handle_response(broker, self.plane.log.emit, replica, item.pending, request,
                               error, answer)


def _isr_epochs(leader: int, own_epoch: int, replica: Replica,
                isr: tuple[int, ...]) -> tuple[int, ...]:
    """Each proposed ISR member's broker epoch as the leader knows it (KIP-903,
    Partition.addBrokerEpochToIsr): its own registration's, and each follower's from its
    latest fetch (ReplicaState.brokerEpoch; -1 when none told it). The controller refuses a
    member whose registered epoch differs: a broker that restarted since it fetched."""
    followers = replica.followers
    return tuple(own_epoch if b == leader else
                 (followers[b].broker_epoch if b in followers else -1) for b in isr)

