"""Fetch-session (KIP-227) metrics from a run's event log, computed with Spark.

How full each broker's session cache was over time, how many sessions were created and evicted,
the session errors clients met (70 FETCH_SESSION_ID_NOT_FOUND, 71 INVALID_FETCH_SESSION_EPOCH),
and the full fetches answered without a session: a client that asked for a session and got no
slot (or a Fetch ≤ v6 client, which never has one) sends every partition in every request.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.buckets import bucket_seconds
from rig.analysis.events import (
    idle_fetch_runs,
    idle_per_second,
    plain_fetch_rows,
    spark_sorted,
    to_arrow,
    with_fetch_fields,
)
from rig.analysis.stages import FunctionStage, run_stage
from rig.events import names
from rig.protocol.errors import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["CHURN_FIELDS", "STAGE", "analyze_sessions", "session_churn"]

# Per bucket of the churn table: sessions evicted, errors 70, consumer full fetches without one.
CHURN_FIELDS = ("evicted", "not_found", "consumer_sessionless")

_SESSION_EVENTS = (names.SESSION_CREATED, names.SESSION_EVICTED, names.SESSION_ERROR)
_EVENTS = (names.SESSION_CACHE, *_SESSION_EVENTS, names.FETCH_RESPONSE, names.FETCH_IDLE)


def _schema() -> StructType:
    from pyspark.sql import types as T

    long, text = T.LongType(), T.StringType()
    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("seq", long), ("event", text), ("variant", text),
        ("broker", long), ("role", text), ("sessions", long), ("partitions", long),
        ("session_id", long), ("error_code", long), ("privileged", T.BooleanType()),
        ("slots", long),
    ]
    return with_fetch_fields(T.StructType([T.StructField(n, k, nullable=True)
                                           for n, k in fields]))


def _rows(events: DataFrame, idle: bool) -> list[dict[str, Any]]:
    """What both tables read: each session event as one row (n = 1), and per (variant, second,
    role, sessionless) the number n of fetch responses (rig.analysis.events.fetch_rows: a
    fetch.idle's included, counted here from its runs by idle_per_second). Sessionless:
    answered as a full fetch without a session (session 0, no error), null when unknown.
    Without `idle` (the logs hold no fetch.idle) there are no runs to collect."""
    import pyarrow.compute as pc

    rows = to_arrow(_logged_rows(events)).to_pylist()
    runs = idle_fetch_runs(events, only=names.FETCH_RESPONSE) if idle else None
    if runs is not None and runs.num_rows:
        # Spark's three-valued AND, as the sessionless column above is computed.
        runs = runs.append_column("sessionless", pc.and_kleene(
            pc.equal(runs["session_id"], 0), pc.equal(runs["error_code"], 0)))
        for row in idle_per_second(runs, ["variant", "role", "sessionless"]).to_pylist():
            rows.append({"variant": row["variant"], "event": names.FETCH_RESPONSE,
                         "t_ms": None, "seq": None, "second": row["second"],
                         **dict.fromkeys(("broker", "sessions", "partitions", "slots",
                                          "error_code")),
                         "role": row["role"], "sessionless": row["sessionless"], "n": row["n"]})
    return rows


def _logged_rows(events: DataFrame) -> DataFrame:
    """_rows' session events and the responses logged one by one, from Spark."""
    from pyspark.sql import functions as F

    def none(kind: str) -> Any:
        return F.lit(None).cast(kind)

    sessions = events.where(F.col("event").isin(names.SESSION_CACHE, *_SESSION_EVENTS)).select(
        "variant", "event", "t_ms", "seq",
        F.floor(F.col("t_ms") / 1000).cast("long").alias("second"), "broker", "sessions",
        "partitions", "slots", "error_code", none("string").alias("role"),
        F.lit(False).alias("sessionless"), F.lit(1).cast("long").alias("n"))
    sessionless = (F.col("session_id") == 0) & (F.col("error_code") == 0)
    responses = (plain_fetch_rows(events, only=names.FETCH_RESPONSE)
                 .groupBy("variant", "second", "role", sessionless.alias("sessionless"))
                 .agg(F.sum("n").alias("n"))
                 .select("variant", F.lit(names.FETCH_RESPONSE).alias("event"),
                         none("double").alias("t_ms"), none("long").alias("seq"), "second",
                         *(none("long").alias(c) for c in ("broker", "sessions", "partitions",
                                                           "slots", "error_code")),
                         "role", "sessionless", "n"))
    return sessions.unionByName(responses)


def _occupancy(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every session.cache sample (variant, broker, t_s, sessions, partitions, slots), in order."""
    samples = spark_sorted((r for r in rows if r["event"] == names.SESSION_CACHE),
                           "variant", "seq")
    return [{"variant": r["variant"], "broker": int(r["broker"]),
             "t_s": round(r["t_ms"] / 1000, 3),
             "sessions": int(r["sessions"] or 0),
             "partitions": None if r["partitions"] is None else int(r["partitions"]),
             "slots": None if r["slots"] is None else int(r["slots"])}
            for r in samples]


_COUNTS = ("created", "evicted", "not_found", "invalid_epoch", "consumer_sessionless",
           "follower_sessionless")


def _counted_as(row: Mapping[str, Any]) -> str | None:
    """Which per-second count a row adds its `n` to (None: none)."""
    event = row["event"]
    if event == names.SESSION_CREATED:
        return "created"
    if event == names.SESSION_EVICTED:
        return "evicted"
    if event == names.SESSION_ERROR:
        return {FETCH_SESSION_ID_NOT_FOUND: "not_found",
                INVALID_FETCH_SESSION_EPOCH: "invalid_epoch"}.get(row["error_code"])
    if event == names.FETCH_RESPONSE and row["sessionless"]:
        return {"consumer": "consumer_sessionless",
                "follower": "follower_sessionless"}.get(row["role"])
    return None


def _per_second(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per variant and simulated second: sessions created and evicted, errors 70 and 71, and
    full fetch responses without a session, by role. A (variant, second) with a row of any
    kind but a cache sample has an entry, zeros included."""
    counts: dict[tuple[Any, Any], dict[str, int]] = {}
    for row in rows:
        if row["event"] == names.SESSION_CACHE:
            continue
        entry = counts.setdefault((row["variant"], row["second"]), dict.fromkeys(_COUNTS, 0))
        counted = _counted_as(row)
        if counted is not None and row["n"] is not None:
            entry[counted] += row["n"]
    ordered = spark_sorted(({"variant": variant, "second": second, **entry}
                            for (variant, second), entry in counts.items()), "variant", "second")
    return [{**row, "second": int(row["second"] or 0)} for row in ordered]


def _summary(occupancy: list[dict[str, Any]], seconds: list[dict[str, Any]],
             variant: str) -> dict[str, Any]:
    mine = [r for r in seconds if r["variant"] == variant]
    samples = [r for r in occupancy if r["variant"] == variant]
    final: dict[int, int] = {}
    for sample in samples:
        final[sample["broker"]] = sample["sessions"]

    def total(key: str) -> int:
        return sum(r[key] for r in mine)

    return {
        "created": total("created"),
        "evicted": total("evicted"),
        "errors": {"session_id_not_found": total("not_found"),
                   "invalid_session_epoch": total("invalid_epoch")},
        "max_sessions_per_broker": max((s["sessions"] for s in samples), default=0),
        "final_sessions": sum(final.values()),
        "sessionless_full_fetches": {"consumer": total("consumer_sessionless"),
                                     "follower": total("follower_sessionless")},
    }


def session_churn(seconds: Sequence[Mapping[str, Any]], occupancy: Sequence[Mapping[str, Any]],
                  durations_ms: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-second counts summed into coarse buckets (at most 60 over the run, at least 5 s:
    clients long-poll in step, a 5 s wait makes a 5 s beat, and per-second counts would draw
    that beat rather than the level). The span is the longest variant's duration, or the last
    cache sample if later. Rows: variant, second (the bucket's first), bucket_s, CHURN_FIELDS;
    buckets with nothing counted are left out (a reader zero-fills them); in the order of
    `seconds` (variant, then time)."""
    declared = [d / 1000 for d in durations_ms.values()
                if isinstance(d, int | float) and not isinstance(d, bool) and d > 0]
    ends = [float(s.get("t_s") or 0) for s in occupancy]
    span_s = max([*declared, *ends, 1.0])
    bucket = max(5, bucket_seconds(math.ceil(span_s), 60))
    sums: dict[tuple[str, int], dict[str, int]] = {}
    for row in seconds:
        values = {name: int(row.get(name) or 0) for name in CHURN_FIELDS}
        if not any(values.values()):
            continue
        start = int(row["second"]) // bucket * bucket
        entry = sums.setdefault((str(row["variant"]), start), dict.fromkeys(CHURN_FIELDS, 0))
        for name, value in values.items():
            entry[name] += value
    return [{"variant": v, "second": s, "bucket_s": bucket, **sums[(v, s)]} for v, s in sums]


def _sessions_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """`{v: {"sessions": {...}}}`; writes metrics/sessions.json with the cache occupancy
    samples and the per-second counts."""
    occupancy: list[dict[str, Any]] = []
    seconds: list[dict[str, Any]] = []
    events = analysis.events(_schema())
    if events is not None:
        events = events.where("event IN ({})".format(", ".join(f"'{e}'" for e in _EVENTS)))
        rows = _rows(events, analysis.logged(names.FETCH_IDLE))
        occupancy = _occupancy(rows)
        seconds = _per_second(rows)
    variants = analysis.variants or sorted({r["variant"] for r in occupancy + seconds})
    rundir.write_metric(analysis.run_dir, rundir.SESSIONS,
                        {"occupancy": occupancy, "per_second": seconds})
    rundir.write_metric(analysis.run_dir, rundir.SESSION_CHURN,
                        session_churn(seconds, occupancy, analysis.durations))
    return {v: {"sessions": _summary(occupancy, seconds, v)} for v in variants}


STAGE = FunctionStage(name="sessions", writes=(rundir.SESSIONS, rundir.SESSION_CHURN),
                      schema=_schema,
                      job=_sessions_stage)


def analyze_sessions(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The sessions stage alone: `{"variants": {v: {"sessions": {...}}}}`; writes
    metrics/sessions.json."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
