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

In a quorum (cluster.controllers) the request goes to the active controller the broker knows;
NOT_CONTROLLER, no controller known, or no answer within the request timeout leave the
partition free to propose again (AlterPartitionManager re-sends to the new controller; rig's
leaders propose anew at their next ISR check).
"""

from __future__ import annotations

from typing import Any

from rig.cluster.alter_isr import handle_response, log_rejected, propose
from rig.cluster.controller_wire import alter_partition_bytes, alter_partition_response_bytes
from rig.cluster.kraft.broker_lifecycle import REQUEST_TIMEOUT_MS
from rig.cluster.kraft.partition_change_builder import RECOVERED, RECOVERING
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.protocol.errors import NOT_CONTROLLER, STALE_BROKER_EPOCH

# Errors the controller answers for the whole request (ControllerApis: NOT_CONTROLLER;
# ReplicationControlManager.alterPartition: a stale broker epoch): no partitions in the answer.
_TOP_LEVEL = frozenset({NOT_CONTROLLER, STALE_BROKER_EPOCH})


class AlterPartitionManager:
    """The ISR writer of every broker of a KRaft cluster (rig.cluster.context.IsrWriter)."""

    def __init__(self, plane: Any):
        self.plane = plane
        self._sent = 0  # a count of requests: an answer after a timeout is not the latest
        self._inflight: dict[tuple[int, TopicPartition], int] = {}

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        life = self.plane.lifecycles[broker.id]
        followers = replica.followers
        if expand and any(life.ineligible(b, followers[b].broker_epoch if b in followers
                                          else -1) for b in expand):
            return  # Partition.canAddReplicaToIsr: not ISR-eligible in this broker's image
        self._send(broker, replica, isr, RECOVERED, expand)

    def recover(self, broker: Any, replica: Replica) -> None:
        """KIP-704: a leader elected unclean (RECOVERING) marks the partition RECOVERED once its
        log is recovered, with itself alone as the ISR; until then no other replica joins."""
        self._send(broker, replica, (broker.id,), RECOVERED)

    def propagate_isr_changes(self, broker: Any, keys: tuple[TopicPartition, ...]) -> None:
        """ZooKeeper's /isr_change_notification has no KRaft counterpart: nothing to do (the
        ISR tasks call this only for changes a ZooKeeper write recorded)."""

    def _send(self, broker: Any, replica: Replica, isr: tuple[int, ...], recovery: str,
              expand: list[int] | None = None) -> None:
        """Partition.sendAlterPartitionRequest (AlterPartition v3, metadata version 3.5+)."""
        plane = self.plane
        life = plane.lifecycles[broker.id]
        pending = propose(replica, isr, expand)
        key, epoch, incarnation = replica.key, replica.leader_epoch, broker.incarnation
        request = AlterPartitionRequest(key, broker.id, life.epoch, epoch, replica.zk_version,
                                        isr, _isr_epochs(broker.id, life.epoch, replica, isr),
                                        recovery)
        node = life.known
        if node is None:  # a quorum between leaders: propose again later
            replica.pending_isr = None
            return
        self._sent += 1
        sent = self._sent
        inflight = self._inflight
        inflight[(broker.id, key)] = sent

        def at_controller() -> None:
            plane.at_controller(node).alter_partition(request, lambda error, part: plane.send(
                node, broker.id, _answer_bytes(plane, broker, key, error, part),
                lambda: answered(error, part), reliable=True))

        def answered(error: int, part: Any) -> None:
            if broker.incarnation != incarnation:
                return
            if plane.quorum and inflight.get((broker.id, key)) != sent:
                return  # timed out and proposed again since
            if replica.leader_epoch != epoch or broker.replicas.get(key) is not replica:
                # The partition moved on (a new leader epoch, or deleted) before the answer
                # came: Partition ignores it ("partitionState != proposedIsrState"), but the
                # broker did receive the error. NEW_LEADER_ELECTED races the very record it
                # reports: the controller wrote it and answered at once, and the metadata
                # fetch may bring the record first.
                if error and error != NOT_CONTROLLER:
                    log_rejected(plane.log.emit, request, error, ignored=True)
                return
            if error == NOT_CONTROLLER and plane.quorum:
                if replica.pending_isr is pending:
                    replica.pending_isr = None  # retriable (a controller no longer active, or
                return  # behind): propose again
            answer = None if part is None else (part.leader_epoch, part.isr,
                                                part.partition_epoch)
            if handle_response(broker, plane.log.emit, replica, pending, request, error,
                               answer):
                replica.pending_isr = None  # retriable: proposed again at the next check

        def timed_out() -> None:
            if (inflight.get((broker.id, key)) == sent and broker.incarnation == incarnation
                    and replica.leader_epoch == epoch):
                inflight.pop((broker.id, key))
                if replica.pending_isr is pending:
                    replica.pending_isr = None

        assert recovery in (RECOVERED, RECOVERING)
        if plane.quorum:
            broker.schedule(REQUEST_TIMEOUT_MS * 1000, timed_out)
        plane.send(broker.id, node, alter_partition_bytes(plane.variant, broker, [(key, len(isr))]),
                   at_controller, reliable=True)


def _answer_bytes(plane: Any, broker: Any, key: TopicPartition, error: int, part: Any) -> int:
    """The answer on the wire: the partition with its ISR, or without one (an error for the
    partition), or none (an error for the request)."""
    answers = [] if error in _TOP_LEVEL else [
        (key, len(part.isr) if part is not None and not error else 0)]
    return alter_partition_response_bytes(plane.variant, broker, answers)


def _isr_epochs(leader: int, own_epoch: int, replica: Replica,
                isr: tuple[int, ...]) -> tuple[int, ...]:
    """Each proposed ISR member's broker epoch as the leader knows it (KIP-903,
    Partition.addBrokerEpochToIsr): its own registration's, and each follower's from its
    latest fetch (ReplicaState.brokerEpoch; -1 when none told it). The controller refuses a
    member whose registered epoch differs: a broker that restarted since it fetched."""
    followers = replica.followers
    return tuple(own_epoch if b == leader else
                 (followers[b].broker_epoch if b in followers else -1) for b in isr)

