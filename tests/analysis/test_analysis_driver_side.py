"""What a stage finishes in Python, on the few rows Spark collected for it, follows Spark SQL's
rules, nulls included: each function is compared with the same aggregate written in Spark SQL
and run by Spark on the same rows (rows with nulls where an event log could hold them)."""

from __future__ import annotations

from typing import Any

import pytest

from rig.analysis import fetch_metrics, partition_timeline, storage

pytestmark = pytest.mark.spark

_CUBE = ("variant string, role string, kind string, broker bigint, second bigint, "
         "full boolean, body_bytes bigint, wire_bytes bigint, n bigint, first_t double, "
         "first_seq bigint")
CUBE = [
    ("v", "follower", "request", 0, 0, True, 100, 140, 1, 10.0, 1),
    ("v", "follower", "request", 0, 1, False, 30, 70, 5, 1000.0, 4),
    ("v", "follower", "request", 1, 1, None, 30, 70, 2, 1100.0, 6),
    ("v", "follower", "request", 1, 2, False, None, None, 3, 2000.0, 9),
    ("v", "follower", "response", 0, 0, None, 20, 60, 1, 10.5, 2),
    ("v", "follower", "response", 1, 2, None, None, 60, 4, 2000.5, 10),
    ("v", "consumer", "request", 0, 3, True, None, None, 2, None, 11),  # first_t unknown
    ("v", "consumer", "request", 0, 3, False, 50, 90, 1, 3000.0, None),
    ("w", "follower", "response", 0, 0, None, None, None, 2, 5.0, 1),  # nothing known
]


def _table(rows: list[tuple[Any, ...]], schema: str) -> Any:
    import pyarrow as pa

    names = [part.split()[0] for part in schema.split(", ")]
    kinds = {"string": pa.string(), "bigint": pa.int64(), "double": pa.float64(),
             "boolean": pa.bool_()}
    types = [kinds[part.split()[1]] for part in schema.split(", ")]
    return pa.table({name: pa.array([row[i] for row in rows], type=kind)
                     for i, (name, kind) in enumerate(zip(names, types, strict=True))})


def _sql(spark: Any, rows: list[tuple[Any, ...]], schema: str, query: str) -> list[dict]:
    spark.createDataFrame(rows, schema).createOrReplaceTempView("t")
    return [row.asDict() for row in spark.sql(query).collect()]


def _by(rows: list[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(row[k] for k in keys): row for row in rows}


def test_fetch_totals_medians_timeseries_and_sizes_agree_with_spark_sql(spark: Any) -> None:
    cube = _table(CUBE, _CUBE)
    totals = _sql(spark, CUBE, _CUBE, """
        SELECT variant, role, kind, sum(n) AS count,
               sum(CASE WHEN full THEN n ELSE 0 END) AS full,
               sum(CASE WHEN NOT full THEN n ELSE 0 END) AS incremental,
               sum(n * body_bytes) AS body_total, min(body_bytes) AS body_min,
               max(body_bytes) AS body_max, sum(n * wire_bytes) AS wire_total,
               min(wire_bytes) AS wire_min, max(wire_bytes) AS wire_max,
               min_by(body_bytes, struct(first_t, first_seq)) AS first_body
        FROM t GROUP BY variant, role, kind""")
    assert _by(fetch_metrics._totals(cube), "variant", "role", "kind") == _by(
        totals, "variant", "role", "kind")
    for column in ("body_bytes", "wire_bytes"):
        medians = _sql(spark, CUBE, _CUBE, f"""
            SELECT variant, role, kind, min({column}) AS p50 FROM (
              SELECT *, sum(c) OVER (PARTITION BY variant, role, kind ORDER BY {column}
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
                        sum(c) OVER (PARTITION BY variant, role, kind) AS total
              FROM (SELECT variant, role, kind, {column}, sum(n) AS c FROM t
                    WHERE {column} IS NOT NULL GROUP BY variant, role, kind, {column}))
            WHERE upto * 2 >= total GROUP BY variant, role, kind""")
        assert fetch_metrics._medians(cube, column) == {
            (r["variant"], r["role"], r["kind"]): r["p50"] for r in medians}
    per_second = _sql(spark, CUBE, _CUBE, """
        SELECT variant, role, broker, second,
          sum(CASE WHEN kind = 'request' THEN n ELSE 0 END) AS requests,
          sum(CASE WHEN NOT kind = 'request' THEN n ELSE 0 END) AS responses,
          sum(CASE WHEN kind = 'request' THEN n * body_bytes ELSE 0 END) AS request_bytes,
          sum(CASE WHEN NOT kind = 'request' THEN n * body_bytes ELSE 0 END) AS response_bytes,
          sum(CASE WHEN kind = 'request' THEN n * wire_bytes ELSE 0 END) AS wire_request_bytes,
          sum(CASE WHEN NOT kind = 'request' THEN n * wire_bytes ELSE 0 END)
            AS wire_response_bytes
        FROM t GROUP BY variant, role, broker, second""")
    keys = ("variant", "role", "broker", "second")
    assert _by(fetch_metrics._timeseries(cube), *keys) == _by(per_second, *keys)
    sizes = _sql(spark, CUBE, _CUBE, """
        SELECT variant, role, kind, body_bytes, sum(n) AS count FROM t
        GROUP BY variant, role, kind, body_bytes""")
    keys = ("variant", "role", "kind", "body_bytes")
    assert _by(fetch_metrics._sizes(cube), *keys) == _by(sizes, *keys)


_STORAGE = ("variant string, event string, seq bigint, aborted boolean, map_full boolean, "
            "records_removed bigint, keys_mapped bigint, dirty_ratio double, lookups bigint, "
            "lookup_min bigint, lookup_max bigint, error_code bigint, previous bigint, "
            "coordinator bigint, duplicates bigint")
STORAGE = [
    ("v", "cleaner.pass", 1, None, None, 7, 10, None, None, None, None, None, None, None, None),
    ("v", "cleaner.pass", 2, False, True, None, None, None, None, None, None, None, None, None,
     None),
    ("v", "cleaner.pass", 3, True, True, 99, 50, None, None, None, None, None, None, None, None),
    ("v", "log.sample", 4, None, None, None, None, 0.75, None, None, None, None, None, None,
     None),
    ("v", "broker.storage", 5, None, None, None, None, None, 3, 10, 400, None, None, None, None),
    ("v", "broker.storage", 6, None, None, None, None, None, None, 1, 900, None, None, None,
     None),
    ("v", "broker.storage", 7, None, None, None, None, None, 0, 2, None, None, None, None, None),
    ("v", "offsets.commit", 8, None, None, None, None, None, None, None, None, None, None, 1,
     None),
    ("v", "offsets.commit", 9, None, None, None, None, None, None, None, None, 7, None, 1, None),
    ("v", "coordinator.found", 10, None, None, None, None, None, None, None, None, None, -1, 1,
     None),
    ("v", "coordinator.found", 11, None, None, None, None, None, None, None, None, None, 1, 2,
     None),
    ("v", "coordinator.found", 12, None, None, None, None, None, None, None, None, None, 2,
     None, None),
    ("v", "consumer.resume", 13, None, None, None, None, None, None, None, None, None, None,
     None, None),
    ("w", "consumer.resume", 1, None, None, None, None, None, None, None, None, None, None,
     None, None),  # a variant whose only sum is of nulls
]


def test_storage_totals_agree_with_spark_sql(spark: Any) -> None:
    cleaned = "event = 'cleaner.pass' AND NOT coalesce(aborted, false)"
    expected = _sql(spark, STORAGE, _STORAGE, f"""
        SELECT variant,
          sum(CASE WHEN {cleaned} THEN 1 ELSE 0 END) AS cleaner_passes,
          sum(CASE WHEN {cleaned} AND map_full THEN 1 ELSE 0 END) AS partial_passes,
          sum(CASE WHEN event = 'cleaner.pass' AND aborted THEN 1 ELSE 0 END) AS aborted_passes,
          sum(CASE WHEN {cleaned} THEN records_removed ELSE 0 END) AS records_removed,
          max(CASE WHEN {cleaned} THEN keys_mapped END) AS max_keys_mapped,
          max(CASE WHEN event = 'log.sample' THEN dirty_ratio END) AS max_dirty_ratio,
          sum(CASE WHEN event = 'broker.storage' THEN lookups ELSE 0 END) AS lookups,
          min(CASE WHEN event = 'broker.storage' AND lookups > 0 THEN lookup_min END)
            AS lookup_min,
          max(CASE WHEN event = 'broker.storage' THEN lookup_max END) AS lookup_max,
          sum(CASE WHEN event = 'offsets.commit' AND coalesce(error_code, 0) = 0 THEN 1 ELSE 0
              END) AS commits,
          sum(CASE WHEN event = 'offsets.commit' AND coalesce(error_code, 0) != 0 THEN 1
              ELSE 0 END) AS commit_errors,
          sum(CASE WHEN event = 'coordinator.found' AND previous >= 0
              AND previous != coordinator THEN 1 ELSE 0 END) AS coordinator_failovers,
          sum(CASE WHEN event = 'consumer.resume' THEN duplicates ELSE 0 END) AS duplicates,
          sum(CASE WHEN event = 'consumer.resume' THEN 1 ELSE 0 END) AS resumes
        FROM t GROUP BY variant""")
    names = _STORAGE.replace(" string", "").replace(" bigint", "").replace(" boolean", "")
    columns = names.replace(" double", "").split(", ")
    for reference in expected:
        mine = [dict(zip(columns, row, strict=True)) for row in STORAGE
                if row[0] == reference["variant"]]
        found = storage._totals([{**row, "tombstones_removed": 0, "bytes_read": 0,
                                  "bytes_written": 0, "segments_deleted": 0} for row in mine])
        assert {k: found[k] for k in reference if k != "variant"} == {
            k: v for k, v in reference.items() if k != "variant"}, reference["variant"]


_ISR = ("variant string, event string, t_ms double, seq bigint, topic string, "
        "partition bigint, isr array<bigint>, replicas array<bigint>")
ISR = [
    ("v", "partition.assigned", 0.0, 1, "t", 0, None, [0, 1, 2]),
    ("v", "partition.assigned", 0.0, 2, "t", 1, None, [1, 2, 0]),
    ("v", "partition.assigned", 0.0, 3, "t", 2, None, None),  # replicas unknown
    ("v", "isr.shrink", 10.0, 4, "t", 0, [0, 1], None),
    ("v", "isr.shrink", 11.0, 5, "t", 2, [0], None),
    ("v", "isr.shrink", 12.0, 6, "t", 1, None, None),  # ISR unknown
    ("v", "partition.offline", 13.0, 7, "t", 1, None, None),
    ("v", "leader.elected", 14.0, 8, "t", 1, [1, 2, 0], None),
    ("v", "isr.expand", 15.0, 9, "t", 0, [0, 1, 2], None),
    ("v", "isr.expand", 16.0, 10, "t", 9, [0], None),  # never assigned
    ("w", "partition.assigned", 0.0, 1, "t", 0, None, [0, 1]),
    ("w", "isr.shrink", 5.0, 2, "t", 0, None, None),  # w's first change is unknown
    ("w", "isr.shrink", 6.0, 3, "t", 0, [0], None),
]


def test_partition_timeline_agrees_with_spark_sql(spark: Any) -> None:
    expected = _sql(spark, ISR, _ISR, """
        WITH rf AS (SELECT variant, topic, partition, size(replicas) AS rf FROM t
                    WHERE event = 'partition.assigned'),
        changes AS (
          SELECT c.variant, c.t_ms, c.seq, c.topic, c.partition,
                 CAST(c.event = 'partition.offline' AS int) AS offline,
                 CAST(size(c.isr) < rf.rf AND c.event != 'partition.offline' AS int) AS under
          FROM t c JOIN rf ON c.variant = rf.variant AND c.topic = rf.topic
                          AND c.partition = rf.partition
          WHERE c.event IN ('isr.shrink', 'isr.expand', 'leader.elected',
                            'partition.offline')),
        deltas AS (
          SELECT variant, t_ms, seq,
            under - coalesce(lag(under) OVER (PARTITION BY variant, topic, partition
                                              ORDER BY seq), 0) AS du,
            offline - coalesce(lag(offline) OVER (PARTITION BY variant, topic, partition
                                                  ORDER BY seq), 0) AS do
          FROM changes)
        SELECT variant, t_ms, seq,
          sum(du) OVER (PARTITION BY variant ORDER BY seq
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS under_replicated,
          sum(do) OVER (PARTITION BY variant ORDER BY seq
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS offline
        FROM deltas ORDER BY variant, seq""")
    columns = ["variant", "event", "t_ms", "seq", "topic", "partition", "isr", "replicas"]
    rows = [dict(zip(columns, row, strict=True)) for row in ISR]
    assert partition_timeline.timeline(rows) == expected
    assert any(point["under_replicated"] is None for point in expected)  # the null case is hit
