"""A leader's ISR changes through the controller in ZooKeeper mode, from inter.broker.protocol
.version 2.7 (KIP-497; docs/kafka.md §11): the partition's side of a change (Partition
.sendAlterIsrRequest and handleAlterIsrResponse, which the KRaft leaders' AlterPartition shares),
and the controller's KafkaController.processAlterIsr.

- The leader proposes the new ISR with its leader epoch and the /state version it holds, and
  proposes nothing else for the partition until the answer (Partition.isrState pending). While
  an expansion is pending, the HW and acks=all count the new replica (the maximal ISR); while a
  shrink is pending, they still count the replicas it removes.
- Each broker keeps one AlterIsr request in flight (rig.cluster.alter_isr_manager: Kafka's
  AlterIsrManager and BrokerToControllerChannelManager).
- The controller checks the broker epoch (STALE_BROKER_EPOCH), each partition's leader epoch
  (FENCED_LEADER_EPOCH), answers an ISR already in place with the current state, from 3.3
  refuses a member not live or shutting down (INELIGIBLE_REPLICA, KIP-841), writes the rest to
  ZooKeeper conditionally on their version (INVALID_UPDATE_VERSION), sends UpdateMetadata for
  the partitions to every live broker and answers with the new ISR and version. No
  /isr_change_notification: the controller has made the change itself.
- The leader takes a confirmed ISR carrying its leader epoch and a version not older than its
  own (2.7.0–2.8.0: newer than its own, KAFKA-12751); FENCED_LEADER_EPOCH,
  INVALID_UPDATE_VERSION and the like leave the change pending until the next LeaderAndIsr;
  INELIGIBLE_REPLICA resets it; other errors send it again (handleAlterPartitionError).
  From 3.1 (KAFKA-13091) it recomputes its HW on the answer.
Events: the controller logs an accepted change (`zk.partition_state`, writer `controller`,
then `isr.shrink` by `leader` or `isr.expand`); the leader logs `alter_partition.rejected`.
"""

from __future__ import annotations

from typing import Any

from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import PendingIsr, Replica, Role
from rig.events import names
from rig.protocol.errors import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_REQUEST,
    INVALID_UPDATE_VERSION,
    NEW_LEADER_ELECTED,
    NONE,
    NOT_CONTROLLER,
    OPERATION_NOT_ATTEMPTED,
    STALE_BROKER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
    name_of,
)

# Partition.handleAlterPartitionError: what a rejected change does next.
_RESET = frozenset({INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED})  # back to the committed ISR
_GIVE_UP = frozenset({UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
                      INVALID_REQUEST, NEW_LEADER_ELECTED})  # pending until new metadata
Answer = tuple[int, tuple[int, ...], int]  # leader epoch, ISR, version (partition epoch)


# -- the partition's side (Partition), ZooKeeper AlterIsr and KRaft AlterPartition alike --------
def propose(replica: Replica, isr: tuple[int, ...], expand: list[int] | None) -> PendingIsr:
    """Partition.sendAlterIsrRequest: the partition is pending (PendingExpandIsr with the
    replica it adds, or PendingShrinkIsr) until the answer or a new leader epoch."""
    pending = PendingIsr(isr, expand[0] if expand else None)
    replica.pending_isr = pending
    return pending


def log_rejected(emit: Any, request: AlterPartitionRequest, error: int, **ignored: bool) -> None:
    """`alter_partition.rejected`: the controller's error for one partition, as its leader
    received it (`ignored=True`: the partition had moved on, and Partition ignores it)."""
    key = request.key
    emit(names.ALTER_PARTITION_REJECTED, broker=request.broker, topic=key[0], partition=key[1],
         error_code=error, error=name_of(error),
         isr=list(request.new_isr), leader_epoch=request.leader_epoch,
         partition_epoch=request.partition_epoch, **ignored)


def handle_response(broker: Any, emit: Any, replica: Replica, pending: PendingIsr,
                    request: AlterPartitionRequest, error: int, answer: Answer | None) -> bool:
    """Partition.handleAlterIsrResponse for one partition; True when the change must be sent
    again. An answer to a change no longer pending (a LeaderAndIsr or the metadata log came
    first) is ignored."""
    if replica.pending_isr is not pending or replica.role is not Role.LEADER:
        return False
    if error:
        log_rejected(emit, request, error)
        if error in _RESET:
            replica.pending_isr = None
            return False
        return error not in _GIVE_UP
    assert answer is not None
    leader_epoch, isr, version = answer
    # A version below the leader's own is stale; one equal to it is the controller's answer
    # for an ISR already in place (processAlterIsr, equalsIgnoreZk), which 2.7.0–2.8.0 ignore
    # as stale too (`leaderAndIsr.zkVersion <= zkVersion`) and 3.0.0, 2.7.2 and 2.8.1 take
    # (KAFKA-12751, Partition.handleAlterIsrResponse). Ignored, the change stays pending until
    # the next LeaderAndIsr.
    newest = replica.zk_version if broker.config.alter_isr_takes_same_version else (
        replica.zk_version + 1)
    if leader_epoch != replica.leader_epoch or version < newest:
        return False
    rm = broker.replica_manager
    rm.set_isr(replica, isr)
    replica.zk_version = version
    replica.pending_isr = None
    if broker.config.hw_on_alter_isr_response:  # 3.1+ (KAFKA-13091)
        rm.maybe_advance_hw(replica)
    return False


# -- the controller's side (KafkaController.processAlterIsr) -------------------------------------
def process_alter_isr(controller: Any, broker_id: int, broker_epoch: int,
                      requests: list[AlterPartitionRequest],
                      ) -> tuple[int, dict[TopicPartition, tuple[int, Answer | None]]]:
    """The controller's answer to one AlterIsr request: a top-level error, or per partition
    (error, (leader epoch, ISR, version)). Accepted changes are written to ZooKeeper and sent
    to every live broker in UpdateMetadata before the answer goes out."""
    cluster = controller.cluster
    zk = cluster.zk
    kip_841 = cluster.variant.broker_config(controller.broker).alter_partition_ineligible
    if not controller.active:
        return NOT_CONTROLLER, {}
    if broker_id not in controller.live or zk.sessions.get(broker_id) != broker_epoch:
        return STALE_BROKER_EPOCH, {}
    results: dict[TopicPartition, tuple[int, Answer | None]] = {}
    for request in requests:
        key = request.key
        state = zk.partitions.get(key)
        if state is None:
            results[key] = (UNKNOWN_TOPIC_OR_PARTITION, None)
        elif request.leader_epoch < state.leader_epoch:
            results[key] = (FENCED_LEADER_EPOCH, None)
        elif (request.broker, request.leader_epoch, request.new_isr) == (
                state.leader, state.leader_epoch, state.isr):
            results[key] = (NONE, (state.leader_epoch, state.isr, state.version))
        elif kip_841 and any(b not in controller.electable for b in request.new_isr):
            results[key] = (INELIGIBLE_REPLICA, None)  # liveBrokerIds: live, not shutting down
        else:
            before = state.isr
            version = zk.update_isr(key, request.leader_epoch, request.new_isr,
                                    request.partition_epoch, writer="controller")
            if version is None:
                results[key] = (INVALID_UPDATE_VERSION, None)
                continue
            results[key] = (NONE, (request.leader_epoch, request.new_isr, version))
            removed = [b for b in before if b not in request.new_isr]
            added = [b for b in request.new_isr if b not in before]
            if removed:
                cluster.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1],
                                 leader=broker_id, isr=list(request.new_isr), removed=removed,
                                 by="leader")
            if added:
                cluster.log.emit(names.ISR_EXPAND, topic=key[0], partition=key[1],
                                 leader=broker_id, isr=list(request.new_isr), added=added)
    controller.update_metadata([r.key for r in requests])
    return NONE, results
