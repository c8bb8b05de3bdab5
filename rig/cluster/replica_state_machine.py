"""The ZooKeeper-era controller's replica state machine, the one transition rig's model takes
apart from elections: OfflineReplica (ZkReplicaStateMachine.doRemoveReplicasFromIsr)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rig.cluster.partition import TopicPartition
from rig.cluster.zookeeper import PartitionState
from rig.events import names

NO_LEADER = -1  # a partition's leader in ZooKeeper when none may lead


def replicas_offline(controller: Any, dead: Iterable[int],
                     only: set[TopicPartition] | None = None) -> list[TopicPartition]:
    """The OfflineReplica transition of each dead broker's replicas (of the partitions `only`
    names, if given), one broker at a time: each partition whose ISR holds it gets a new epoch,
    without it in the ISR unless it is the last member, and without a leader if it led.
    `controller` is rig.cluster.controller.Controller. Returns the partitions written."""
    cluster = controller.cluster
    partitions = cluster.zk.partitions
    written: list[TopicPartition] = []
    for replica in dead:
        for key, state in partitions.items():
            if replica not in state.isr or (only is not None and key not in only):
                continue
            leader = NO_LEADER if state.leader == replica else state.leader
            isr = state.isr if len(state.isr) == 1 else tuple(b for b in state.isr if b != replica)
            controller.write_state(key, PartitionState(leader, state.leader_epoch + 1, isr,
                                                       state.version + 1))
            if isr != state.isr:
                cluster.log.emit(names.ISR_SHRINK, topic=key[0], partition=key[1], leader=leader,
                                 isr=list(isr), removed=[replica], by="controller")
            written.append(key)
    return list(dict.fromkeys(written))


__all__ = ["NO_LEADER", "replicas_offline"]
