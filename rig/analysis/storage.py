"""Storage, compaction and consumer-offset metrics from a run's event log, computed with Spark.

Spark selects the storage events (compacted-log and broker samples, cleaner passes, retention,
offset commits, coordinator changes, resumes); Python sums the few rows left per variant and orders
them into timelines. Writes RUN_DIR/metrics/storage.json (per variant: log size, dirty
ratio and segment count over time per compacted partition, disk per broker over time, every
cleaner pass, where each group's offsets live) and returns `variants.<v>.storage` and
`variants.<v>.offsets` for summary.json.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.events import spark_sorted
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
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


def _sql_sum(values: Iterable[Any]) -> Any:
    """SQL's SUM: nulls skipped, null when there is no value."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _sql_extreme(pick: Callable[[list[Any]], Any], values: Iterable[Any]) -> Any:
    """SQL's MIN or MAX: nulls skipped, null when there is no value."""
    known = [v for v in values if v is not None]
    return pick(known) if known else None


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One variant's sums and extremes over its storage events, by SQL's rules for nulls (a
    condition on a null is false; a sum of only nulls is null)."""
    def of(*events: str) -> list[dict[str, Any]]:
        return [r for r in rows if r["event"] in events]

    passes, samples = of(names.CLEANER_PASS), of(names.LOG_SAMPLE)
    brokers, commits = of(names.BROKER_STORAGE), of(names.OFFSETS_COMMIT)
    resumes = of(names.CONSUMER_RESUME)
    cleaned = [r for r in passes if not r["aborted"]]

    def total(chosen: list[dict[str, Any]], column: str) -> Any:
        # SUM(CASE WHEN chosen THEN column ELSE 0 END) over every row of the variant.
        return _sql_sum([*(r[column] for r in chosen), *([0] * (len(rows) - len(chosen)))])

    return {
        "cleaner_passes": len(cleaned),
        "partial_passes": sum(1 for r in cleaned if r["map_full"]),
        "aborted_passes": sum(1 for r in passes if r["aborted"]),
        "records_removed": total(cleaned, "records_removed"),
        "tombstones_removed": total(cleaned, "tombstones_removed"),
        "cleaner_bytes_read": total(cleaned, "bytes_read"),
        "cleaner_bytes_written": total(cleaned, "bytes_written"),
        "max_keys_mapped": _sql_extreme(max, (r["keys_mapped"] for r in cleaned)),
        "max_dirty_ratio": _sql_extreme(max, (r["dirty_ratio"] for r in samples)),
        "lookups": total(brokers, "lookups"),
        "lookup_min": _sql_extreme(min, (r["lookup_min"] for r in brokers
                                         if r["lookups"] is not None and r["lookups"] > 0)),
        "lookup_max": _sql_extreme(max, (r["lookup_max"] for r in brokers)),
        "segments_deleted": total(of(names.LOG_RETENTION), "segments_deleted"),
        "commits": sum(1 for r in commits if (r["error_code"] or 0) == 0),
        "commit_errors": sum(1 for r in commits if (r["error_code"] or 0) != 0),
        "coordinator_failovers": sum(
            1 for r in of(names.COORDINATOR_FOUND)
            if r["previous"] is not None and r["coordinator"] is not None
            and r["previous"] >= 0 and r["previous"] != r["coordinator"]),
        "duplicates": total(resumes, "duplicates"),
        "resumes": len(resumes),
    }


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
    if analysis.parsed is not None:
        chosen = [row for row in analysis.rare(_EVENTS, _schema()) if row["variant"] is not None]
        for row in spark_sorted(chosen, "variant", "seq"):
            by_variant.setdefault(row["variant"], []).append(row)
        totals = {name: _totals(mine) for name, mine in by_variant.items()}
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
