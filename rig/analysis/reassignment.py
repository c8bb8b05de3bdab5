"""What each reassign fault moved, read from the controller's writes as the analysis selected
them.

A reassign fault's fault.inject names no broker (no node fails), but it sets replicas moving:
the controller takes AlterPartitionReassignments at once and writes the reassignment's first
step right after the fault.inject, in the same action. KRaft: a PartitionChangeRecord, logged
as partition.change with reason "reassignment" (rig.cluster.kraft.quorum_controller.reassign;
ReplicationControlManager.alterPartitionReassignments); ZooKeeper: the partition's assignment
in /brokers/topics, logged as zk.partition_assignment (rig.cluster.zk_reassignment, every such
write is a reassignment's). Its `adding` are the replicas that must copy the log from the
leader. The reassignment is over at the first later write for the same partition that leaves
nothing adding or removing (PartitionChangeBuilder.completeReassignmentIfNeeded;
KafkaController.onPartitionReassignment's step B6), or at a new reassignment of it, which
replaces it. A reassignment the controller refused (reassignment.rejected) or that changed
nothing writes nothing: nothing moved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from rig.analysis.partition_timeline import REPLICA_SET_WRITES
from rig.events import names

__all__ = ["Moved", "reassignments"]


class Moved(NamedTuple):
    """One reassignment: the partition, the brokers it added (as text, as fault targets are),
    and when it completed (None: not by the run's end)."""

    topic: str
    partition: int
    adding: tuple[str, ...]
    completed_ms: float | None


def reassignments(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], Moved]:
    """Per (variant, fault index) of each reassign fault that set replicas moving, what it
    moved. `rows`: the replication stage's selected events (fault.inject and partition.change
    or zk.partition_assignment among them, with reason, adding and removing) in (variant, seq)
    order."""
    out: dict[tuple[str, int], Moved] = {}
    pending: dict[str, tuple[int, float]] = {}  # per variant: a reassign fault just injected
    open_: dict[tuple[str, str, int], tuple[str, int]] = {}  # partition → its fault, moving
    for row in rows:
        event, variant = row["event"], row["variant"]
        if event == names.FAULT_INJECT:
            pending.pop(variant, None)
            if row["kind"] == "reassign":
                pending[variant] = (int(row["fault"]), float(row["t_ms"]))
            continue
        if event not in REPLICA_SET_WRITES:
            continue
        key = (variant, str(row["topic"]), int(row["partition"]))
        moving = open_.get(key)
        reassigning = event == names.ZK_PARTITION_ASSIGNMENT or row["reason"] == "reassignment"
        if moving is not None and (reassigning or not (row["adding"] or row["removing"])):
            del open_[key]
            out[moving] = out[moving]._replace(completed_ms=float(row["t_ms"]))
        injected = pending.get(variant)
        if injected is not None and reassigning and float(row["t_ms"]) == injected[1]:
            del pending[variant]
            fault = (variant, injected[0])
            moving_now = bool(row["adding"] or row["removing"])  # else only a new order
            out[fault] = Moved(key[1], key[2], tuple(str(b) for b in row["adding"] or ()),
                               None if moving_now else float(row["t_ms"]))
            if moving_now:
                open_[key] = fault
    return out
