"""The under-replicated and offline partition counts over a run, from each partition's ISR
history (the replication stage's timeline), and the partition-seconds they add up to; and when
every partition is whole (led, every replica of its assignment in sync), which a fault's full
recovery waits for."""

from __future__ import annotations

from typing import Any

from rig.events import names

ISR_EVENTS = (names.ISR_SHRINK, names.ISR_EXPAND, names.LEADER_ELECTED, names.PARTITION_OFFLINE)
# The controller's writes of a partition's replica set (a reassignment): KRaft's, ZooKeeper's.
REPLICA_SET_WRITES = (names.PARTITION_CHANGE, names.ZK_PARTITION_ASSIGNMENT)


def _size(values: list[Any] | None) -> int | None:
    """Spark's size() in ANSI mode: null for a null array."""
    return None if values is None else len(values)


def timeline(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Change points of (under-replicated, offline) partition counts per variant, from the
    selected events in (variant, seq) order.

    Every partition starts led and fully replicated; each ISR-carrying event of an assigned
    partition (partition.assigned, logged once per partition when the cluster is built) sets
    its state. Nulls follow Spark's SQL: an unknown ISR or replica count leaves that change
    unknown, and a running count that has seen only unknowns is null."""
    rf = {(row["variant"], row["topic"], row["partition"]): _size(row["replicas"])
          for row in rows if row["event"] == names.PARTITION_ASSIGNED}
    state: dict[tuple[Any, Any, Any], tuple[int | None, int]] = {}  # (under, offline)
    running: dict[Any, list[int | None]] = {}  # per variant: [under, offline]
    isrs = {(row["variant"], row["topic"], row["partition"]): row["replicas"]
            for row in rows if row["event"] == names.PARTITION_ASSIGNED}  # the last ISR known
    points = []
    for row in rows:
        key = (row["variant"], row["topic"], row["partition"])
        if key not in rf or None in key:
            continue
        event = row["event"]
        if event in REPLICA_SET_WRITES and row["replicas"] is not None:
            # A reassignment changes the replica count; Kafka counts a partition under
            # replicated by its target's (Partition.isUnderReplicated: replicationFactor is
            # replicas − removing while one is in progress).
            size = len(row["replicas"]) - len(row.get("removing") or ())
            if size == rf[key]:
                continue
            rf[key] = size
            if state.get(key, (0, 0))[1]:
                continue  # offline: the new count applies from the next change
            row = {**row, "isr": isrs[key]}
        elif event not in ISR_EVENTS:
            continue
        else:
            isrs[key] = row["isr"]
        offline = int(event == names.PARTITION_OFFLINE)
        isr, replicas = _size(row["isr"]), rf[key]
        under = 0 if offline else (None if isr is None or replicas is None
                                   else int(isr < replicas))
        was_under, was_offline = state.get(key, (0, 0))
        state[key] = (under, offline)
        sums = running.setdefault(row["variant"], [None, None])
        if under is not None:
            sums[0] = (sums[0] or 0) + under - (was_under or 0)
        sums[1] = (sums[1] or 0) + offline - was_offline
        points.append({"variant": row["variant"], "t_ms": row["t_ms"], "seq": row["seq"],
                       "under_replicated": sums[0], "offline": sums[1]})
    return points


def partition_seconds(points: list[dict[str, Any]], end_ms: float | None) -> tuple[float, float]:
    under = offline = 0.0
    following: list[dict[str, Any] | None] = [*points[1:], None] if points else []
    for here, after in zip(points, following, strict=True):
        stop = after["t_ms"] if after is not None else (end_ms or here["t_ms"])
        span = max(0.0, stop - here["t_ms"]) / 1000
        under += here["under_replicated"] * span
        offline += here["offline"] * span
    return under, offline


def whole_points(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per variant, at each ISR-carrying event of an assigned partition (as `timeline`'s, and
    every KRaft partition.change), how many partitions are not whole: offline, or with a
    replica of their assignment outside the ISR.

    The assignment is the replica set as the controller last wrote it: a KRaft reassignment's
    PartitionChangeRecords widen it to target + removing, and the one that completes it
    (PartitionChangeBuilder.completeReassignmentIfNeeded) narrows it to the target with the
    whole target in the ISR; Kafka's under-replicated count looks at the target's size only
    (Partition.isUnderReplicated), so a reassignment still copying its new replicas is whole
    by that count and not by this one. A partition.change's absent field keeps its value."""
    replicas = {(row["variant"], row["topic"], row["partition"]): set(row["replicas"] or ())
                for row in rows if row["event"] == names.PARTITION_ASSIGNED}
    isrs = {key: set(members) for key, members in replicas.items()}
    offline: dict[tuple[Any, Any, Any], bool] = {}
    short: dict[Any, set[tuple[Any, Any, Any]]] = {}  # per variant: the partitions not whole
    points: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["variant"], row["topic"], row["partition"])
        event = row["event"]
        if key not in replicas or None in key or (
                event not in ISR_EVENTS and event not in REPLICA_SET_WRITES):
            continue
        if event not in REPLICA_SET_WRITES:  # (a leader lost or elected comes beside it)
            offline[key] = event == names.PARTITION_OFFLINE
        elif row.get("replicas") is not None:
            replicas[key] = set(row["replicas"])
        if row.get("isr") is not None:
            isrs[key] = set(row["isr"])
        missing = short.setdefault(row["variant"], set())
        (missing.add if offline.get(key) or not replicas[key] <= isrs[key]
         else missing.discard)(key)
        points.setdefault(row["variant"], []).append(
            {"t_ms": row["t_ms"], "not_whole": len(missing)})
    return points
