"""Consumer lag over time: per variant, consumer group and time bucket, the most records a group
was behind the high watermark (from its `consumer.lag` samples) and what it had consumed; and
per variant the positions consumers moved (`consumer.offset_reset`) and the committed records
their positions passed unread (`consumer.skipped`, rig.checks.consumer_reads).

Spark takes the largest sample per (variant, group, second); Python buckets those few rows with
the fetch timeline's rule (at most MAX_POINTS buckets), so the chart lines up with the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.buckets import MAX_POINTS, bucket_seconds, span_seconds
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["STAGE", "analyze_consumer_lag", "lag_timeline"]


def _schema() -> StructType:
    from pyspark.sql import types as T

    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("event", T.StringType()), ("variant", T.StringType()),
        ("group", T.StringType()), ("lag", T.LongType()), ("consumed", T.LongType()),
        ("records", T.LongType()),
    ]
    return T.StructType([T.StructField(n, k, nullable=True) for n, k in fields])


def _per_second(events: DataFrame) -> list[dict[str, Any]]:
    from pyspark.sql import functions as F

    rows = (events.where((F.col("event") == names.CONSUMER_LAG) & F.col("t_ms").isNotNull()
                         & F.col("variant").isNotNull() & F.col("lag").isNotNull())
            .groupBy("variant", F.coalesce(F.col("group"), F.lit("")).alias("group"),
                     F.floor(F.col("t_ms") / 1000).cast("long").alias("second"))
            .agg(F.max("lag").alias("lag"), F.max("consumed").alias("consumed"))
            .collect())
    return [row.asDict() for row in rows]


def _resets_and_skips(events: DataFrame) -> dict[str, dict[str, int]]:
    """Per variant: `offset_resets` (events) and `skipped` (records of consumer.skipped)."""
    from pyspark.sql import functions as F

    rows = (events.where(F.col("event").isin(names.CONSUMER_OFFSET_RESET, names.CONSUMER_SKIPPED)
                         & F.col("variant").isNotNull())
            .groupBy("variant", "event")
            .agg(F.count(F.lit(1)).alias("events"), F.sum("records").alias("records"))
            .collect())
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        entry = out.setdefault(row["variant"], {"offset_resets": 0, "skipped": 0})
        if row["event"] == names.CONSUMER_OFFSET_RESET:
            entry["offset_resets"] = int(row["events"])
        else:
            entry["skipped"] = int(row["records"] or 0)
    return out


def lag_timeline(rows: Iterable[Mapping[str, Any]], durations_ms: Mapping[str, Any],
                 variants: Sequence[str] = (), *, max_points: int = MAX_POINTS
                 ) -> list[dict[str, Any]]:
    """(variant, group, second) rows → (variant, group, bucket) rows: `lag_max` the largest
    sample in the bucket, `consumed` the records consumed by its end. One bucket width for the
    run (from the longest variant); rows in `variants` order, then group, then time."""
    rows = [r for r in rows if r.get("variant") is not None
            and isinstance(r.get("second"), int | float)]
    bucket = bucket_seconds(span_seconds(rows, durations_ms), max_points)
    out: dict[tuple[str, str, int], dict[str, int]] = {}
    for row in rows:
        start = int(row["second"]) // bucket * bucket
        entry = out.setdefault((str(row["variant"]), str(row.get("group") or ""), start),
                               {"lag_max": 0, "consumed": 0})
        entry["lag_max"] = max(entry["lag_max"], int(row.get("lag") or 0))
        entry["consumed"] = max(entry["consumed"], int(row.get("consumed") or 0))
    index = {name: i for i, name in enumerate(variants)}
    ordered = sorted(out, key=lambda k: (index.get(k[0], len(index)), k[0], k[1], k[2]))
    return [{"variant": v, "group": g, "second": s, "bucket_s": bucket, **out[(v, g, s)]}
            for v, g, s in ordered]


def _lag_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """Write metrics/consumer_lag.json; return `{v: {"consumers": {max_lag, consumed,
    offset_resets, skipped}}}` for the variants that had consumers."""
    events = analysis.events(_schema())
    per_second: list[dict[str, Any]] = []
    if events is not None and analysis.logged(names.CONSUMER_LAG):  # else no Spark job: none
        per_second = _per_second(events)
    rows = lag_timeline(per_second, analysis.durations, analysis.variants)
    rundir.write_metric(analysis.run_dir, rundir.CONSUMER_LAG, rows)
    summary: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = summary.setdefault(row["variant"], {"consumers": {"max_lag": 0, "consumed": 0}})
        numbers = entry["consumers"]
        numbers["max_lag"] = max(numbers["max_lag"], row["lag_max"])
    consumed: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row["variant"], row["group"])
        consumed[key] = max(consumed.get(key, 0), row["consumed"])
    for (variant, _), count in consumed.items():
        summary[variant]["consumers"]["consumed"] += count
    moved: dict[str, dict[str, int]] = {}
    if events is not None and (analysis.logged(names.CONSUMER_OFFSET_RESET)
                               or analysis.logged(names.CONSUMER_SKIPPED)):
        moved = _resets_and_skips(events)
    for variant in [*summary, *(v for v in moved if v not in summary)]:
        numbers = summary.setdefault(variant, {"consumers": {}})["consumers"]
        numbers.update(moved.get(variant, {"offset_resets": 0, "skipped": 0}))
    return summary


STAGE = FunctionStage(name="consumer_lag", writes=(rundir.CONSUMER_LAG,), schema=_schema,
                      job=_lag_stage)


def analyze_consumer_lag(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The stage alone: write RUN_DIR/metrics/consumer_lag.json; return
    `{"variants": {v: {"consumers": {max_lag, consumed, offset_resets, skipped}}}}` for the
    variants with consumers."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
