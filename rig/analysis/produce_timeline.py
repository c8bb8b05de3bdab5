"""The produce and election timeline: per variant and time bucket, records acknowledged and failed,
leader elections and ISR changes. Spark sums the log per second; Python buckets those few rows
with the fetch timeline's rule, so the report's recovery charts line up with its fetch charts.
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

__all__ = ["PRODUCE_FIELDS", "STAGE", "analyze_produce_timeline", "produce_timeline"]

# Per bucket: acked = records in produce.ack; errors = records in any produce.error (retried or
# not), error_events = how many produce.error events (as summary.json's produce.errors counts);
# failed = records in produce.error with retrying=false (the producer gave up on them);
# elections / unclean_elections = leader.elected events; isr_shrinks / isr_expands likewise.
PRODUCE_FIELDS: tuple[str, ...] = (
    "acked",
    "errors",
    "error_events",
    "failed",
    "elections",
    "unclean_elections",
    "isr_shrinks",
    "isr_expands",
)
_EVENTS = (
    names.PRODUCE_ACK,
    names.PRODUCE_ERROR,
    names.LEADER_ELECTED,
    names.ISR_SHRINK,
    names.ISR_EXPAND,
    names.RUN_END,  # carries no count: it tells how long the run went on after its duration
)


def _schema() -> StructType:
    from pyspark.sql import types as T

    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("seq", T.LongType()), ("event", T.StringType()),
        ("variant", T.StringType()), ("records", T.LongType()), ("retrying", T.BooleanType()),
        ("election", T.StringType()),
    ]
    return T.StructType([T.StructField(n, k, nullable=True) for n, k in fields])


def _per_second(events: DataFrame) -> list[dict[str, Any]]:
    """One row per (variant, second) with an event of interest: the PRODUCE_FIELDS sums."""
    from pyspark.sql import functions as F

    event, records = F.col("event"), F.coalesce(F.col("records"), F.lit(0))

    def total(cond: Any, value: Any) -> Any:
        return F.sum(F.when(cond, value).otherwise(0))

    error = event == names.PRODUCE_ERROR
    elected = event == names.LEADER_ELECTED
    rows = (
        events.where(event.isin(*_EVENTS) & F.col("t_ms").isNotNull()
                     & F.col("variant").isNotNull())
        .groupBy("variant", F.floor(F.col("t_ms") / 1000).cast("long").alias("second"))
        .agg(
            total(event == names.PRODUCE_ACK, records).alias("acked"),
            total(error, records).alias("errors"),
            total(error, F.lit(1)).alias("error_events"),
            # Only an explicit false is a give-up: a retried batch may still be acknowledged.
            total(error & (F.col("retrying") == F.lit(False)), records).alias("failed"),
            total(elected, F.lit(1)).alias("elections"),
            total(elected & (F.col("election") == "unclean"), F.lit(1)).alias(
                "unclean_elections"),
            total(event == names.ISR_SHRINK, F.lit(1)).alias("isr_shrinks"),
            total(event == names.ISR_EXPAND, F.lit(1)).alias("isr_expands"),
        )
        .collect()
    )
    return [row.asDict() for row in rows]


def produce_timeline(
    rows: Iterable[Mapping[str, Any]],
    durations_ms: Mapping[str, Any],
    variants: Sequence[str] = (),
    *,
    max_points: int = MAX_POINTS,
) -> list[dict[str, Any]]:
    """Sum per-(variant, second) rows into (variant, bucket) rows, like the fetch timeline.

    One bucket width for the run, from the longest variant (its declared duration, or further if
    events go on while the run quiesces); `second` is a bucket's first second, `bucket_s` its
    width. Buckets where nothing happened are left out (a reader zero-fills them). Rows come in
    `variants` order (others after, by name), then time.
    """
    rows = [r for r in rows if r.get("variant") is not None
            and isinstance(r.get("second"), int | float)]
    bucket = bucket_seconds(span_seconds(rows, durations_ms), max_points)
    sums: dict[tuple[str, int], dict[str, int]] = {}
    for row in rows:
        values = {name: int(row.get(name) or 0) for name in PRODUCE_FIELDS}
        if not any(values.values()):
            continue  # a run.end-only second: it set the span, it has nothing to draw
        start = int(row["second"]) // bucket * bucket
        entry = sums.setdefault((str(row["variant"]), start), dict.fromkeys(PRODUCE_FIELDS, 0))
        for name, value in values.items():
            entry[name] += value
    index = {name: i for i, name in enumerate(variants)}
    ordered = sorted(sums, key=lambda key: (index.get(key[0], len(index)), key[0], key[1]))
    return [{"variant": v, "second": s, "bucket_s": bucket, **sums[(v, s)]} for v, s in ordered]


def _produce_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """Write the produce timeline (empty without event logs); it adds nothing to the summary."""
    events = analysis.events(_schema())
    per_second = _per_second(events) if events is not None else []
    rows = produce_timeline(per_second, analysis.durations, analysis.variants)
    rundir.write_metric(analysis.run_dir, rundir.PRODUCE_TIMELINE, rows)
    return {}


STAGE = FunctionStage(name="produce_timeline", writes=(rundir.PRODUCE_TIMELINE,),
                      schema=_schema, job=_produce_stage)


def analyze_produce_timeline(
    run_dir: Path, *, spark_master: str | None = None
) -> list[dict[str, Any]]:
    """The stage alone: write RUN_DIR/metrics/produce_timeline.json from the event logs; return
    its rows. No event logs, no Spark: the table is written empty."""
    run_stage(STAGE, run_dir, spark_master=spark_master)
    rows: list[dict[str, Any]] = rundir.read_metric(run_dir, rundir.PRODUCE_TIMELINE)
    return rows
