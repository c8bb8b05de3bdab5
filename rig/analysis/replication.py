"""Produce and replication metrics from a run's event log, computed with Spark.

Acknowledged and lost records, elections, ISR shrinks and expands, truncations, divergence;
under-replicated and offline partition-seconds from each partition's ISR history; and, per fault,
how long until every partition was led again and fully replicated, and the acks=all stall: from
the fault to the first acks=all acknowledgement after it (docs/kafka.md §11: about the session
timeout after a follower crash, not replica.lag.time.max.ms).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.availability import EVENTS as AVAILABILITY_EVENTS
from rig.analysis.availability import fencing_delays, under_min_isr_seconds
from rig.analysis.events import spark_sorted, with_fetch_fields
from rig.analysis.fault_reaction import (
    add_catch_up,
    add_detection,
    add_isr_exit,
    catch_up_sums,
    first_acks_all,
    seconds_after,
    visibility_delays,
)
from rig.analysis.isr import spread
from rig.analysis.partition_timeline import ISR_EVENTS as _ISR_EVENTS
from rig.analysis.partition_timeline import partition_seconds as _partition_seconds
from rig.analysis.partition_timeline import timeline as _timeline
from rig.analysis.partition_timeline import whole_points
from rig.analysis.replication_counts import counts_of_events
from rig.analysis.side_by_side import side_by_side
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_replication"]

_SELECTED = (names.PARTITION_ASSIGNED, *_ISR_EVENTS, names.FAULT_INJECT, names.FAULT_HEAL,
             names.ZK_PARTITION_STATE, names.PARTITION_CHANGE, names.ZK_PARTITION_ASSIGNMENT,
             names.TOPIC_CREATED, *AVAILABILITY_EVENTS)


def _schema() -> StructType:
    from pyspark.sql import types as T

    long, text = T.LongType(), T.StringType()
    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("seq", long), ("event", text), ("variant", text),
        ("topic", text), ("partition", long), ("records", long), ("acks", long),
        ("isr", T.ArrayType(long)), ("replicas", T.ArrayType(long)), ("check", text),
        ("election", text), ("fault", long), ("kind", text), ("targets", T.ArrayType(text)),
        ("duration_ms", long), ("removed", T.ArrayType(long)), ("previous", long),
        ("offset", long), ("hw", long), ("leader", T.BooleanType()),
        ("leaderless_ms", T.DoubleType()), ("stale_ms", T.DoubleType()), ("broker", long),
        ("min_insync_replicas", long), ("reason", text), ("removing", T.ArrayType(long)),
        ("error_code", long), ("adding", T.ArrayType(long)),
    ]
    # The fetch fields are for the catch-up bytes (rig.analysis.fault_reaction).
    return with_fetch_fields(T.StructType([T.StructField(n, k, nullable=True)
                                           for n, k in fields]))


def _rounded(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None


def _diverged(analysis: Analysis) -> dict[str, int]:
    """Per variant, how many partitions the replicas-agree check found diverged: distinct
    "topic-partition" names (Spark's concat_ws: a null part left out) of its violations. From
    the few check.violation events, on the driver: a count of distinct values in the counts'
    query made Spark expand and shuffle every event of the log twice (issue 19)."""
    seen: dict[str, set[str]] = {}
    for row in analysis.rare((names.CHECK_VIOLATION,), _schema(),
                             ("variant", "check", "topic", "partition")):
        if row["check"] == "replicas-agree" and row["variant"] is not None:
            name = "-".join(str(part) for part in (row["topic"], row["partition"])
                            if part is not None)
            seen.setdefault(row["variant"], set()).add(name)
    return {variant: len(found) for variant, found in seen.items()}


def _end_ms(analysis: Analysis) -> dict[str, float | None]:
    """Per variant, the time of its run.end (the last event), from the few run.end events."""
    ends: dict[str, float | None] = {}
    for row in analysis.rare((names.RUN_END,), _schema(), ("variant", "t_ms")):
        variant, t_ms = row["variant"], row["t_ms"]
        if variant is not None and t_ms is not None:
            ends[variant] = max(t_ms, ends.get(variant) or t_ms)
    return ends


def _selected(analysis: Analysis) -> list[dict[str, Any]]:
    """The few events the timeline, the recovery and the reactions read (assignments, ISR
    changes, elections, offline partitions, fault steps), read once, in (variant, seq)
    order (nulls first, as Spark orders)."""
    chosen = analysis.rare(_SELECTED, _schema(), (
        "variant", "event", "t_ms", "seq", "topic", "partition", "isr", "replicas", "fault",
        "kind", "targets", "removed", "previous", "broker", "min_insync_replicas", "removing",
        "adding", "reason"))
    return spark_sorted(chosen, "variant", "seq")


def _recovery(rows: list[dict[str, Any]],
              points: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per fault: injection, heal (None: not undone), first election after it, and full
    recovery after the heal (the injection, if not undone): every partition whole again
    (`points`: partition_timeline.whole_points). Detection and catch-up bytes are added by
    rig.analysis.fault_reaction. `rows`: the selected events in (variant, seq) order."""
    faults = [r for r in rows if r["event"] in (names.FAULT_INJECT, names.FAULT_HEAL)]
    elections = spark_sorted((r for r in rows if r["event"] == names.LEADER_ELECTED),
                             "variant", "t_ms")
    by_fault: dict[tuple[str, int], dict[str, Any]] = {}
    for row in faults:
        entry = by_fault.setdefault((row["variant"], row["fault"]), {
            "variant": row["variant"], "fault": row["fault"], "kind": row["kind"],
            "targets": row["targets"], "inject_ms": None, "heal_ms": None})
        entry["inject_ms" if row["event"] == names.FAULT_INJECT else "heal_ms"] = row["t_ms"]
    result = []
    for (variant, _), entry in sorted(by_fault.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        start = entry["inject_ms"]
        if start is None:
            continue
        entry["new_leader_ms"] = next((e["t_ms"] for e in elections
                                       if e["variant"] == variant and e["t_ms"] >= start), None)
        settle_from = entry["heal_ms"] if entry["heal_ms"] is not None else start
        healthy = next((p["t_ms"] for p in points.get(variant, [])
                        if p["t_ms"] >= settle_from and p["not_whole"] == 0), None)
        disturbed = any(p["t_ms"] >= start and p["not_whole"] for p in points.get(variant, []))
        entry["recovered_ms"] = recovered = healthy if disturbed else start
        entry["recovery_seconds"] = None if recovered is None else seconds_after(start, recovered)
        result.append(entry)
    return result


# summary.json's replication.by_fault.<fault index>: what expectations say of one fault.
_PER_FAULT = ("kind", "inject_ms", "ack_stall_ms", "isr_exit_ms", "visibility_delay_ms",
              "detection_seconds", "recovery_seconds")


def _add_visibility(entries: list[dict[str, Any]], delays: dict[str, list[tuple[float, float]]],
                    end_ms: dict[str, Any]) -> None:
    """Add `visibility_delay_ms` ({min, p50, max} or None) to each fault entry: over the
    batches acknowledged from its injection until it healed and recovered; a fault not undone,
    until it recovered (the end of the run if it did not)."""
    for entry in entries:
        heal, stop = entry.get("heal_ms"), entry.get("recovered_ms")
        if heal is not None:
            stop = max(heal, stop) if stop is not None else heal
        elif stop is None:
            stop = end_ms.get(entry["variant"])
        entry["visibility_delay_ms"] = spread(
            d for t, d in delays.get(entry["variant"], ())
            if t >= entry["inject_ms"] and (stop is None or t <= stop))


def _replication_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """`{v: {"produce": {...}, "replication": {...}}}`; writes the recovery and
    partition-timeline tables."""
    variants = analysis.variants
    delays: dict[str, list[tuple[float, float]]] = {}
    fencing: dict[str, list[float]] = {}
    under_min: dict[str, float | None] = {}
    counts: dict[str, dict[str, Any]] = {}
    timeline: list[dict[str, Any]] = []
    recovery: list[dict[str, Any]] = []
    end_ms: dict[str, float | None] = {}  # each variant's run.end
    by_variant: dict[str, list[dict[str, Any]]] = {}  # the timeline's points per variant
    events = analysis.events(_schema())
    if events is not None:
        selected = _selected(analysis)
        timeline = _timeline(selected)
        for point in timeline:
            by_variant.setdefault(point["variant"], []).append(point)
        recovery = _recovery(selected, whole_points(selected))
        end_ms = _end_ms(analysis)
        for entry in recovery:  # its place in the entry: before the detection's keys
            entry["ack_stall_ms"] = None
        windows = add_detection(selected, recovery, end_ms)
        # The stage's four Spark jobs, side by side (issue 19): on a busy run they are most of
        # its time, and the stage is the analysis' longest.
        counts, first_acks, catch_up, delays = side_by_side(
            lambda: counts_of_events(events), lambda: first_acks_all(events, recovery),
            lambda: catch_up_sums(events, windows), lambda: visibility_delays(events))
        for i, at in first_acks.items():
            recovery[i]["ack_stall_ms"] = round(at - recovery[i]["inject_ms"], 3)
        add_catch_up(recovery, catch_up)
        diverged = _diverged(analysis)
        for name, entry in counts.items():
            entry["diverged_partitions"] = diverged.get(name, 0)
        add_isr_exit([r for r in selected if r["event"] in (
            names.PARTITION_ASSIGNED, names.ZK_PARTITION_STATE, names.PARTITION_CHANGE)],
            recovery)
        _add_visibility(recovery, delays, end_ms)
        fencing = fencing_delays(selected)
        under_min = under_min_isr_seconds(selected, end_ms)
    out: dict[str, Any] = {}
    for name in variants or sorted(counts):
        c = counts.get(name, {})
        under, offline = _partition_seconds(by_variant.get(name, []), end_ms.get(name))
        recoveries = [r["recovery_seconds"] for r in recovery  # (to the µs, as in by_fault)
                      if r["variant"] == name and r["recovery_seconds"] is not None]
        detections = [r["detection_seconds"] for r in recovery
                      if r["variant"] == name and r.get("detection_seconds") is not None]
        out[name] = {
            "produce": {key: int(c.get(key) or 0) for key in (
                "acked", "acked_batches", "acked_all", "errors", "acked_lost",
                "acked_all_lost")},
            "replication": {
                **{key: int(c.get(key) or 0) for key in (
                    "leader_elections", "unclean_elections", "elr_elections",
                    "last_known_leader_elections", "isr_shrinks", "isr_expands",
                    "truncated_records", "leader_epoch_truncations", "failed_starts",
                    "diverging_epoch_truncations", "diverged_partitions", "broker_halts",
                    "fenced_fetches")},
                "under_replicated_partition_seconds": round(under, 3),
                "offline_partition_seconds": round(offline, 3),
                "under_min_isr_partition_seconds": _rounded(under_min.get(name)),
                "fencing_delay_ms": spread(fencing.get(name, ())),
                "max_recovery_seconds": max(recoveries) if recoveries else None,
                "faults": len([r for r in recovery if r["variant"] == name]),
                "max_detection_seconds": max(detections) if detections else None,
                "catch_up_bytes": sum(r.get("catch_up_bytes", 0) for r in recovery
                                      if r["variant"] == name),
                "max_ack_stall_ms": spread(r["ack_stall_ms"] for r in recovery
                                           if r["variant"] == name
                                           and r.get("ack_stall_ms") is not None),
                "visibility_delay_ms": spread(d for _, d in delays.get(name, ())),
                "by_fault": {str(r["fault"]): {key: r.get(key) for key in _PER_FAULT}
                             for r in recovery if r["variant"] == name},
                "full_truncations": int(c.get("full_truncations") or 0),
            },
            "controller": {
                "elections": int(c.get("controller_elections") or 0),
                "brokers_fenced": int(c.get("brokers_fenced") or 0),
                # None: no active controller was lost (no failover, or one controller)
                "max_leaderless_ms": _rounded(c.get("max_leaderless_ms")),
                "max_metadata_stale_ms": _rounded(c.get("max_metadata_stale_ms")),
                **{key: int(c.get(key) or 0) for key in (
                    "new_leader_elected", "reassignment_elections", "replicas_created",
                    "replicas_deleted")},
            },
        }
    rundir.write_metric(analysis.run_dir, rundir.RECOVERY, recovery)
    rundir.write_metric(analysis.run_dir, rundir.PARTITION_TIMELINE, timeline)
    return out


STAGE = FunctionStage(name="replication", writes=(rundir.RECOVERY, rundir.PARTITION_TIMELINE),
                      schema=_schema, job=_replication_stage)


def analyze_replication(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The replication stage alone: `{"variants": {v: {"produce": {...}, "replication":
    {...}}}}`; writes the recovery and partition-timeline tables under RUN_DIR/metrics/."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
