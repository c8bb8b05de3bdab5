"""The under-replicated and offline partition counts over a run, from each partition's ISR
history (the replication stage's timeline), and the partition-seconds they add up to."""

from __future__ import annotations

from typing import Any

from rig.events import names

ISR_EVENTS = (names.ISR_SHRINK, names.ISR_EXPAND, names.LEADER_ELECTED, names.PARTITION_OFFLINE)


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
        if event == names.PARTITION_CHANGE and row["replicas"] is not None:
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
