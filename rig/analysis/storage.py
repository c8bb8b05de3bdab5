"""Storage, compaction and consumer-offset metrics from a run's event log, computed with Spark.

Spark filters the storage events (compacted-log and broker samples, cleaner passes, retention,
offset commits, coordinator changes, resumes) and sums them per variant; Python orders the few
rows left into timelines. Writes RUN_DIR/metrics/storage.json (per variant: log size, dirty
ratio and segment count over time per compacted partition, disk per broker over time, every
cleaner pass, where each group's offsets live) and returns `variants.<v>.storage` and
`variants.<v>.offsets` for summary.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.stages import Analysis, FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_storage", "storage_summary"]
_EVENTS = (names.LOG_SAMPLE, names.BROKER_STORAGE, names.CLEANER_PASS, names.LOG_RETENTION,
           names.OFFSETS_COMMIT, names.COORDINATOR_FOUND, names.CONSUMER_RESUME)
_PASS_FIELDS = ("broker", "thread", "topic", "partition", "keys_mapped", "map_capacity",
                "map_full", "records_read", "records_removed", "tombstones_removed",
                "bytes_read", "bytes_written", "duration_ms", "dirty_ratio",
                "first_dirty_offset", "end_offset", "segments_before", "segments_after",
                "log_bytes_before", "log_bytes_after", "aborted")


def _schema() -> StructType:
    from pyspark.sql import types as T

    long, text, double, flag = T.LongType(), T.StringType(), T.DoubleType(), T.BooleanType()
    fields: list[tuple[str, Any]] = [
        ("t_ms", double), ("seq", long), ("event", text), ("variant", text), ("broker", long),
        ("topic", text), ("partition", long), ("leader", flag), ("size_bytes", long),
        ("segments", long), ("index_bytes", long), ("time_index_bytes", long),
        ("log_start_offset", long), ("log_end_offset", long), ("records", long),
        ("dirty_ratio", double), ("lookups", long), ("lookup_bytes", long),
        ("lookup_min", long), ("lookup_max", long), ("lookup_samples", T.ArrayType(long)),
        ("thread", long), ("keys_mapped", long), ("map_capacity", long), ("map_full", flag),
        ("records_read", long), ("records_removed", long), ("tombstones_removed", long),
        ("bytes_read", long), ("bytes_written", long), ("duration_ms", double),
        ("first_dirty_offset", long), ("end_offset", long), ("segments_before", long),
        ("segments_after", long), ("log_bytes_before", long), ("log_bytes_after", long),
        ("aborted", flag), ("segments_deleted", long), ("records_deleted", long),
        ("reason", text), ("group", text), ("member", text), ("coordinator", long),
        ("offsets_partition", long), ("partitions", long), ("error_code", long),
        ("previous", long), ("committed", long), ("position", long), ("duplicates", long),
        ("logs", long), ("changed", long),
    ]
    return T.StructType([T.StructField(n, k, nullable=True) for n, k in fields])


def _totals(events: DataFrame) -> dict[str, dict[str, Any]]:
    """Per variant sums and extremes, in Spark."""
    from pyspark.sql import functions as F

    event = F.col("event")

    def count(cond: Any) -> Any:
        return F.sum(F.when(cond, 1).otherwise(0))

    def total(cond: Any, column: str) -> Any:
        return F.sum(F.when(cond, F.col(column)).otherwise(0))

    cleaned = (event == names.CLEANER_PASS) & ~F.coalesce(F.col("aborted"), F.lit(False))
    commit = event == names.OFFSETS_COMMIT
    rows = events.groupBy("variant").agg(
        count(cleaned).alias("cleaner_passes"),
        count(cleaned & F.col("map_full")).alias("partial_passes"),
        count((event == names.CLEANER_PASS) & F.col("aborted")).alias("aborted_passes"),
        total(cleaned, "records_removed").alias("records_removed"),
        total(cleaned, "tombstones_removed").alias("tombstones_removed"),
        total(cleaned, "bytes_read").alias("cleaner_bytes_read"),
        total(cleaned, "bytes_written").alias("cleaner_bytes_written"),
        F.max(F.when(cleaned, F.col("keys_mapped"))).alias("max_keys_mapped"),
        F.max(F.when(event == names.LOG_SAMPLE, F.col("dirty_ratio"))).alias("max_dirty_ratio"),
        total(event == names.BROKER_STORAGE, "lookups").alias("lookups"),
        F.min(F.when((event == names.BROKER_STORAGE) & (F.col("lookups") > 0),
                     F.col("lookup_min"))).alias("lookup_min"),
        F.max(F.when(event == names.BROKER_STORAGE, F.col("lookup_max"))).alias("lookup_max"),
        total(event == names.LOG_RETENTION, "segments_deleted").alias("segments_deleted"),
        count(commit & (F.coalesce(F.col("error_code"), F.lit(0)) == 0)).alias("commits"),
        count(commit & (F.coalesce(F.col("error_code"), F.lit(0)) != 0)).alias(
            "commit_errors"),
        count((event == names.COORDINATOR_FOUND) & (F.col("previous") >= 0)
              & (F.col("previous") != F.col("coordinator"))).alias("coordinator_failovers"),
        total(event == names.CONSUMER_RESUME, "duplicates").alias("duplicates"),
        count(event == names.CONSUMER_RESUME).alias("resumes"),
    ).collect()
    return {row["variant"]: row.asDict() for row in rows if row["variant"] is not None}


def _percentile(values: list[int], q: float) -> int | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def storage_summary(rows: list[dict[str, Any]], totals: dict[str, Any]) -> dict[str, Any]:
    """The storage, offsets and timeline entries of one variant from its storage events."""
    samples = [r for r in rows if r["event"] == names.LOG_SAMPLE]
    brokers = [r for r in rows if r["event"] == names.BROKER_STORAGE]
    passes = [r for r in rows if r["event"] == names.CLEANER_PASS]
    last: dict[tuple[int, str, int], dict[str, Any]] = {}
    partitions: dict[str, list[dict[str, Any]]] = {}
    for row in samples:
        last[(row["broker"], row["topic"], row["partition"])] = row
        partitions.setdefault(f"{row['topic']}-{row['partition']}@{row['broker']}", []).append(
            {k: row.get(k) for k in ("t_ms", "size_bytes", "dirty_ratio", "segments",
                                     "records", "log_start_offset", "log_end_offset")})
    disk: dict[int, int] = {}
    disk_points: list[dict[str, Any]] = []
    scanned: list[int] = []
    for row in brokers:
        disk[row["broker"]] = row["size_bytes"] or 0
        disk_points.append({"t_ms": row["t_ms"], "broker": row["broker"],
                            "bytes": row["size_bytes"] or 0})
        scanned.extend(row.get("lookup_samples") or [])
    compacted = [r for r in last.values() if r.get("dirty_ratio") is not None]
    lookups = int(totals.get("lookups") or 0)
    storage = {
        "cleaner_passes": int(totals.get("cleaner_passes") or 0),
        "partial_passes": int(totals.get("partial_passes") or 0),
        "aborted_passes": int(totals.get("aborted_passes") or 0),
        "records_removed": int(totals.get("records_removed") or 0),
        "tombstones_removed": int(totals.get("tombstones_removed") or 0),
        "cleaner_bytes_read": int(totals.get("cleaner_bytes_read") or 0),
        "cleaner_bytes_written": int(totals.get("cleaner_bytes_written") or 0),
        "max_keys_mapped": int(totals.get("max_keys_mapped") or 0),
        "max_dirty_ratio": totals.get("max_dirty_ratio"),
        "final_dirty_ratio": max((r["dirty_ratio"] for r in compacted), default=None),
        "final_log_bytes": sum(disk.values()),
        "final_compacted_log_bytes": sum(r["size_bytes"] or 0 for r in compacted),
        "final_segments": sum(r["segments"] or 0 for r in compacted),
        "segments_deleted": int(totals.get("segments_deleted") or 0),
        "lookups": lookups,
        "lookup_bytes_scanned": {
            "min": totals.get("lookup_min") if lookups else None,
            "p50": _percentile(scanned, 0.5),
            "max": totals.get("lookup_max") if lookups else None,
        },
    }
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["event"] == names.COORDINATOR_FOUND:
            entry = groups.setdefault(row["group"], {"offsets_partition": row["offsets_partition"],
                                                     "coordinators": []})
            if row["coordinator"] not in entry["coordinators"]:
                entry["coordinators"].append(row["coordinator"])
    offsets = {
        "commits": int(totals.get("commits") or 0),
        "commit_errors": int(totals.get("commit_errors") or 0),
        "coordinator_failovers": int(totals.get("coordinator_failovers") or 0),
        "resumes": int(totals.get("resumes") or 0),
        "duplicates": int(totals.get("duplicates") or 0),
        "groups": groups,
    }
    table = {
        "partitions": partitions,
        "disk": disk_points,
        "passes": [{"t_ms": p["t_ms"], **{k: p.get(k) for k in _PASS_FIELDS}} for p in passes],
        "retention": [r for r in rows if r["event"] == names.LOG_RETENTION],
        "groups": groups,
        "resumes": [r for r in rows if r["event"] == names.CONSUMER_RESUME],
    }
    return {"storage": storage, "offsets": offsets, "table": table}


def _storage_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """`{v: {"storage": {...}, "offsets": {...}}}`; writes metrics/storage.json."""
    totals: dict[str, dict[str, Any]] = {}
    by_variant: dict[str, list[dict[str, Any]]] = {}
    events = analysis.events(_schema())
    if events is not None:
        from pyspark.sql import functions as F

        events = events.where(F.col("event").isin(*_EVENTS) & F.col("variant").isNotNull())
        totals = _totals(events)
        for row in events.orderBy("variant", "seq").collect():
            by_variant.setdefault(row["variant"], []).append(row.asDict())
    out: dict[str, dict[str, Any]] = {}
    tables: dict[str, Any] = {}
    for name in analysis.variants or sorted(totals):
        result = storage_summary(by_variant.get(name, []), totals.get(name, {}))
        tables[name] = result.pop("table")
        out[name] = result
    rundir.write_metric(analysis.run_dir, rundir.STORAGE, tables)
    return out


STAGE = FunctionStage(name="storage", writes=(rundir.STORAGE,), schema=_schema,
                      job=_storage_stage)


def analyze_storage(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The storage stage alone: `{"variants": {v: {"storage": {...}, "offsets": {...}}}}`;
    writes metrics/storage.json."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
