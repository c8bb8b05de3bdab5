"""The traffic ledger: every byte the wire carried, by traffic class and zone scope, and what the
cross-zone bytes cost (docs/kafka.md §13, rig.cost).

Wire bytes are counted: the int32 size prefix, the header and the body of each message, as the
model sends them (Fetch exactly, from the codec; produce and control messages at the sizes the
model gives them). No TCP/IP, TLS or retransmission overhead is counted. Classes:

- produce: produce requests and their responses (net.traffic kind "produce");
- replication: the record bytes of follower fetch responses;
- catch_up: the record bytes of follower fetch responses while that follower is out of the ISR
  of some partition (between the isr.shrink that removed it and the isr.expand that re-added it);
- consumer_fetch: the record bytes of consumer fetch responses;
- fetch_overhead: every fetch request, and every fetch response less its record bytes (empty
  responses whole), including idle rounds logged in closed form (fetch.idle);
- control: everything else the wire carried (metadata, ZooKeeper, controller requests, offset
  commits, OffsetsForLeaderEpoch; net.traffic kind "control").

A node's zone is its rack (broker.start; client.rack for clients). A message between two zones is
cross-zone; one with an end that has no zone (ZooKeeper, a client without client.rack) is counted
same-zone, as the network model reaches it over the same-rack link. Costs: each cross-zone byte
pays `out` at its sender and `in` at its receiver, per GB of 10^9 bytes; with
`broker_to_broker_free` (msk) bytes between two brokers cost nothing. A month is 30 days at the
rate of the run: usd_total × 30 days / the simulated span (run start to run end, quiesce
included, as the bytes are).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig import rundir
from rig.analysis.analysis import Analysis
from rig.analysis.stages import FunctionStage, run_stage
from rig.cost import GB, MONTH_MS, PROFILES, Prices
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = ["CLASSES", "STAGE", "analyze_traffic", "ledger", "price"]

CLASSES: tuple[str, ...] = ("produce", "replication", "catch_up", "consumer_fetch",
                            "fetch_overhead", "control")

# A ledger line: (variant, class, src node, dst node) → bytes.
Line = tuple[str, str, str, str]


def _schema() -> StructType:
    from pyspark.sql import types as T

    long, text = T.LongType(), T.StringType()
    fields: list[tuple[str, Any]] = [
        ("t_ms", T.DoubleType()), ("seq", long), ("event", text), ("variant", text),
        ("broker", long),
        ("rack", text), ("client", text), ("role", text), ("replica_id", long),
        ("wire_bytes", long), ("records_bytes", long), ("requests", long), ("responses", long),
        ("request_wire_bytes", long), ("response_wire_bytes", long), ("src", text),
        ("dst", text), ("kind", text), ("bytes", long), ("removed", T.ArrayType(long)),
        ("added", T.ArrayType(long)), ("topic", text), ("partition", long),
    ]
    return T.StructType([T.StructField(n, k, nullable=True) for n, k in fields])


def _small(analysis: Analysis) -> list[dict[str, Any]]:
    """The few events the ledger reads one by one: zones, ISR changes, wire totals, run end."""
    wanted = (names.BROKER_START, names.CLIENT_RACK, names.ISR_SHRINK, names.ISR_EXPAND,
              names.NET_TRAFFIC, names.RUN_END)
    return analysis.rare(wanted, _schema(), (
        "t_ms", "event", "variant", "broker", "rack", "client", "src", "dst", "kind", "bytes",
        "removed", "added", "topic", "partition"))


Spans = dict[tuple[str, int], list[tuple[float, float]]]


def out_of_isr(events: Iterable[Mapping[str, Any]]) -> Spans:
    """(variant, follower) → the time spans in which it was out of the ISR of some partition,
    merged; a span still open at the end runs to infinity."""
    outside: dict[tuple[str, int], dict[tuple[str, int], float]] = {}
    spans: Spans = {}

    def close(who: tuple[str, int], end: float) -> None:
        spans.setdefault(who, []).append((start_of[who], end))

    start_of: dict[tuple[str, int], float] = {}
    for event in sorted(events, key=lambda e: e["t_ms"]):
        variant, key = str(event["variant"]), (str(event["topic"]), int(event["partition"]))
        if event["event"] == names.ISR_SHRINK:
            for follower in event.get("removed") or ():
                who = (variant, int(follower))
                held = outside.setdefault(who, {})
                if not held:
                    start_of[who] = float(event["t_ms"])
                held[key] = float(event["t_ms"])
        elif event["event"] == names.ISR_EXPAND:
            for follower in event.get("added") or ():
                who = (variant, int(follower))
                held = outside.get(who, {})
                if held.pop(key, None) is not None and not held:
                    close(who, float(event["t_ms"]))
    for who, held in outside.items():
        if held:
            close(who, float("inf"))
    return spans


def _fetch_lines(events: DataFrame, spans: Spans, spark: Any) -> list[dict[str, Any]]:
    """Fetch bytes grouped by (variant, role, fetcher node, broker, class part)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    fetcher = F.when(F.col("role") == "follower", F.col("replica_id").cast("string")).otherwise(
        F.col("client"))
    fetches = events.where(F.col("event").isin(names.FETCH_REQUEST, names.FETCH_RESPONSE,
                                               names.FETCH_IDLE))
    fetches = fetches.select(
        "variant", "event", "role", "t_ms", "seq", "replica_id", fetcher.alias("node"),
        F.col("broker").cast("string").alias("broker"),
        F.when(F.col("event") == names.FETCH_REQUEST, F.col("wire_bytes"))
         .when(F.col("event") == names.FETCH_IDLE,
               F.col("requests") * F.col("request_wire_bytes")).otherwise(0).alias("up"),
        F.when(F.col("event") == names.FETCH_RESPONSE, F.col("wire_bytes"))
         .when(F.col("event") == names.FETCH_IDLE,
               F.col("responses") * F.col("response_wire_bytes")).otherwise(0).alias("down"),
        F.when(F.col("event") == names.FETCH_RESPONSE, F.coalesce(F.col("records_bytes"),
                                                                  F.lit(0)))
         .otherwise(0).alias("records"))
    rows = [(variant, follower, start, min(end, 1e300))
            for (variant, follower), pairs in spans.items() for start, end in pairs]
    catching = F.lit(False)
    if rows:
        schema = T.StructType([T.StructField("cv", T.StringType()),
                               T.StructField("cf", T.LongType()),
                               T.StructField("cs", T.DoubleType()),
                               T.StructField("ce", T.DoubleType())])
        intervals = F.broadcast(spark.createDataFrame(rows, schema))
        cond = ((F.col("variant") == F.col("cv")) & (F.col("replica_id") == F.col("cf"))
                & (F.col("t_ms") >= F.col("cs")) & (F.col("t_ms") < F.col("ce")))
        flagged = (fetches.where((F.col("role") == "follower") & (F.col("records") > 0))
                   .join(intervals, cond, "left")
                   .groupBy("variant", "seq", "role", "node", "broker", "up", "down",
                            "records")
                   .agg(F.max(F.col("cv").isNotNull()).alias("catching")))
        rest = fetches.where(~((F.col("role") == "follower") & (F.col("records") > 0)))
        keep = ["variant", "role", "node", "broker", "up", "down", "records", "catching"]
        fetches = flagged.select(*keep).unionByName(
            rest.withColumn("catching", F.lit(False)).select(*keep))
    else:
        fetches = fetches.withColumn("catching", catching)
    grouped = (fetches.groupBy("variant", "role", "node", "broker", "catching")
               .agg(F.sum("up").alias("up"), F.sum("down").alias("down"),
                    F.sum("records").alias("records")).collect())
    return [row.asDict() for row in grouped]


def ledger(fetch_rows: Iterable[Mapping[str, Any]],
           wire_rows: Iterable[Mapping[str, Any]]) -> dict[Line, int]:
    """Bytes per (variant, class, src, dst) from the grouped fetch rows and net.traffic rows."""
    lines: dict[Line, int] = {}

    def add(variant: str, cls: str, src: str, dst: str, nbytes: int) -> None:
        if nbytes:
            key = (variant, cls, src, dst)
            lines[key] = lines.get(key, 0) + int(nbytes)

    for row in fetch_rows:
        variant, node, broker = str(row["variant"]), str(row["node"]), str(row["broker"])
        records = int(row.get("records") or 0)
        records_class = ("consumer_fetch" if row["role"] == "consumer" else
                         "catch_up" if row.get("catching") else "replication")
        add(variant, "fetch_overhead", node, broker, int(row.get("up") or 0))
        add(variant, records_class, broker, node, records)
        add(variant, "fetch_overhead", broker, node, int(row.get("down") or 0) - records)
    for row in wire_rows:
        add(str(row["variant"]), str(row["kind"]), str(row["src"]), str(row["dst"]),
            int(row.get("bytes") or 0))
    return lines


def price(lines: Mapping[Line, int], zones: Mapping[str, Mapping[str, str | None]],
          brokers: Mapping[str, set[str]], prices: Mapping[str, Prices],
          spans_ms: Mapping[str, float | None]) -> dict[str, dict[str, Any]]:
    """Each variant's `traffic` and `cost` summary entries from its ledger lines."""
    out: dict[str, dict[str, Any]] = {}
    for (variant, cls, src, dst), nbytes in sorted(lines.items()):
        zone = zones.get(variant, {})
        a, b = zone.get(src), zone.get(dst)
        cross = a is not None and b is not None and a != b
        entry = out.setdefault(variant, {
            "traffic": {c: {"same_zone_bytes": 0, "cross_zone_bytes": 0} for c in CLASSES},
            "cost": {"usd_total": 0.0, "usd_per_month": None,
                     "by_class": dict.fromkeys(CLASSES, 0.0)}})
        entry["traffic"][cls]["cross_zone_bytes" if cross else "same_zone_bytes"] += nbytes
        rate = prices.get(variant, PROFILES["aws"])
        between_brokers = src in brokers.get(variant, set()) and dst in brokers.get(variant, set())
        if cross and not (rate.broker_to_broker_free and between_brokers):
            usd = nbytes / GB * (rate.out_usd_per_gb + rate.in_usd_per_gb)
            entry["cost"]["by_class"][cls] += usd
            entry["cost"]["usd_total"] += usd
    for variant, entry in out.items():
        cost = entry["cost"]
        span = spans_ms.get(variant)
        if span:
            cost["usd_per_month"] = cost["usd_total"] * MONTH_MS / span
        cost["prices"] = prices.get(variant, PROFILES["aws"]).as_json()
    return out


def _traffic_stage(analysis: Analysis) -> dict[str, dict[str, Any]]:
    """Write metrics/traffic.json (one row per variant, class, src, dst, with zones); return
    each variant's `traffic` and `cost` entries."""
    events = analysis.events(_schema())
    if events is None:
        rundir.write_metric(analysis.run_dir, rundir.TRAFFIC, [])
        return {}
    small = _small(analysis)
    zones: dict[str, dict[str, str | None]] = {}
    brokers: dict[str, set[str]] = {}
    spans_ms: dict[str, float | None] = {}
    for event in small:
        variant = str(event["variant"])
        if event["event"] == names.BROKER_START:
            zones.setdefault(variant, {})[str(event["broker"])] = event.get("rack")
            brokers.setdefault(variant, set()).add(str(event["broker"]))
        elif event["event"] == names.CLIENT_RACK:
            zones.setdefault(variant, {})[str(event["client"])] = event.get("rack")
        elif event["event"] == names.RUN_END:
            spans_ms[variant] = float(event["t_ms"])
    spans = out_of_isr(e for e in small if e["event"] in (names.ISR_SHRINK, names.ISR_EXPAND))
    fetch_rows = _fetch_lines(events, spans, analysis.spark())
    lines = ledger(fetch_rows, (e for e in small if e["event"] == names.NET_TRAFFIC))
    declared = analysis.run.get("variants") or {}
    prices = {}
    for variant, info in declared.items():
        raw = (info or {}).get("cost")
        prices[str(variant)] = Prices(**raw) if raw else PROFILES["aws"]
    summary = price(lines, zones, brokers, prices, spans_ms)
    rows = []
    for (variant, cls, src, dst), nbytes in sorted(lines.items()):
        zone = zones.get(variant, {})
        rows.append({"variant": variant, "class": cls, "src": src, "dst": dst,
                     "src_zone": zone.get(src), "dst_zone": zone.get(dst), "bytes": nbytes})
    rundir.write_metric(analysis.run_dir, rundir.TRAFFIC, rows)
    return summary


STAGE = FunctionStage(name="traffic", writes=(rundir.TRAFFIC,), schema=_schema,
                      job=_traffic_stage)


def analyze_traffic(run_dir: Path, *, spark_master: str | None = None) -> dict[str, Any]:
    """The stage alone: write RUN_DIR/metrics/traffic.json; return `{"variants": {v: {traffic,
    cost}}}`."""
    return run_stage(STAGE, run_dir, spark_master=spark_master)
