"""rig.analysis.events: the closed form that counts an idle run's rounds before a bound, and
fetch_rows / fetch_runs turning fetch.idle events into weighted rows, against counting every
round one by one (what the full log would have)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.spark

US = 1_000_000
FIRSTS = (0, 1, 999_999, 1_000_000, 1_000_001, 2_499_500)
PERIODS = (1, 7, 333_333, 500_000, 501_000, 1_000_000, 1_500_000)
COUNTS = (0, 1, 2, 5, 13)
# Every second boundary up to 6 s, and the µs either side of it.
BOUNDS = tuple(k * US + d for k in range(7) for d in (-1, 0, 1))


def _idle(seq: int, client: str, period: int, requests: int, first_request: int,
          responses: int, first_response: int) -> dict[str, Any]:
    return {"t_ms": 60_000.0, "seq": seq, "event": "fetch.idle", "variant": "v",
            "role": "follower", "client": client, "replica_id": 1, "broker": 0, "source": 1,
            "fetcher": 0, "version": 7, "session_id": 5, "full": False,
            "first_session_epoch": 3, "period_us": period, "requests": requests,
            "first_request_us": first_request, "request_partitions": 0,
            "request_body_bytes": 33, "request_header_bytes": 31, "request_wire_bytes": 68,
            "responses": responses, "first_response_us": first_response,
            "response_partitions": 0, "error_code": 0, "records_bytes": 0, "waited_ms": 500.0,
            "response_body_bytes": 14, "response_header_bytes": 8, "response_wire_bytes": 26}


IDLE = [
    _idle(10, "a", 501_000, 30, 999_999, 29, 1_000_000),
    _idle(11, "b", 1_500_000, 4, 2_000_000, 4, 2_999_999),
    _idle(12, "c", 250_000, 1, 5_000_000, 0, 0),
    _idle(13, "d", 1_000_000, 0, 0, 1, 3_000_000),
    _idle(14, "e", 333_333, 10, 0, 10, 1),
]
PLAIN = {"t_ms": 1999.999, "seq": 1, "event": "fetch.request", "variant": "v",
         "role": "consumer", "client": "c1", "replica_id": -1, "broker": 0, "source": "c1",
         "fetcher": 0, "version": 7, "session_id": 0, "session_epoch": 0, "full": True,
         "partitions": 3, "forgotten": 0, "body_bytes": 100, "header_bytes": 20,
         "wire_bytes": 124}


def _rounds(idle: dict[str, Any]) -> list[tuple[str, int]]:
    """(event, t_us) of every request and response a fetch.idle stands for."""
    return ([("fetch.request", idle["first_request_us"] + i * idle["period_us"])
             for i in range(idle["requests"])]
            + [("fetch.response", idle["first_response_us"] + i * idle["period_us"])
               for i in range(idle["responses"])])


@pytest.fixture(scope="module")
def events(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from pyspark.sql import types as T

    from rig.analysis.columnar import parse_event_logs
    from rig.analysis.events import hadoop_path, with_fetch_fields

    path: Path = tmp_path_factory.mktemp("idle") / "v.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in [PLAIN, *IDLE]) + b"\n")
    schema = with_fetch_fields(T.StructType([]))
    fields = [(f.name, f.dataType.simpleString()) for f in schema.fields]
    parsed = parse_event_logs([path], fields, path.with_suffix(".parquet"))
    return spark.read.parquet(hadoop_path(parsed.table))


def test_occurrences_before_at_second_boundaries(spark: Any) -> None:
    from pyspark.sql import functions as F

    from rig.analysis.events import occurrences_before

    cases = list(itertools.product(FIRSTS, PERIODS, COUNTS, BOUNDS))
    frame = spark.createDataFrame(cases, "first long, period long, count long, bound long")
    counted = frame.select(occurrences_before(F.col("first"), F.col("period"), F.col("count"),
                                              F.col("bound")).alias("n")).collect()
    expected = [sum(1 for i in range(count) if first + i * period < bound)
                for first, period, count, bound in cases]
    assert [row["n"] for row in counted] == expected


def test_fetch_rows_one_row_per_kind_and_second_weighted_by_rounds(events: Any) -> None:
    from rig.analysis.events import fetch_rows

    rows = [row.asDict() for row in fetch_rows(events).collect()]
    assert list(rows[0]) == [
        "event", "variant", "role", "client", "replica_id", "broker", "source", "fetcher",
        "version", "session_id", "full", "partitions", "forgotten", "error_code",
        "records_bytes", "waited_ms", "body_bytes", "header_bytes", "wire_bytes", "t_ms", "seq",
        "second", "n"]
    got = {(r["client"], r["event"], r["second"]): (r["n"], r["t_ms"]) for r in rows}
    assert len(got) == len(rows)  # at most one row per (idle event, kind, second)
    expected: dict[tuple[str, str, int], tuple[int, float]] = {
        ("c1", "fetch.request", 1): (1, 1999.999)}
    for idle in IDLE:
        for event, t_us in _rounds(idle):
            key = (idle["client"], event, t_us // US)
            n, first = expected.get(key, (0, t_us / 1000))
            expected[key] = (n + 1, min(first, t_us / 1000))
    assert got == expected
    by_kind = {r["event"]: r for r in rows if r["client"] == "a"}
    assert by_kind["fetch.request"]["full"] is False
    assert by_kind["fetch.request"]["error_code"] is None
    assert (by_kind["fetch.request"]["forgotten"], by_kind["fetch.request"]["wire_bytes"]) == (
        0, 68)
    response = by_kind["fetch.response"]
    assert (response["full"], response["forgotten"], response["error_code"]) == (None, None, 0)
    assert (response["body_bytes"], response["waited_ms"], response["seq"]) == (14, 500.0, 10)


@pytest.mark.parametrize(("lo_ms", "hi_ms"), [
    (1000.0, 2002.0), (1000.001, 2001.999), (0.0, 0.001), (0.003, 1.001), (5000.0, 5000.0),
    (2999.999, 3000.0), (4000.5, 1000.0), (333.334, 4499.999),
])
def test_occurrences_between_includes_both_ends(spark: Any, events: Any, lo_ms: float,
                                                hi_ms: float) -> None:
    from pyspark.sql import functions as F

    from rig.analysis.events import fetch_runs, occurrences_between

    runs = fetch_runs(events).where(F.col("event") == "fetch.response")
    n = occurrences_between(F.lit(lo_ms), F.lit(hi_ms))
    got = {row["client"]: row["n"] for row in runs.select("client", n.alias("n")).collect()}
    expected = {idle["client"]: sum(1 for event, t_us in _rounds(idle)
                                    if event == "fetch.response"
                                    and lo_ms <= t_us / 1000 <= hi_ms)
                for idle in IDLE if idle["responses"]}
    assert got == expected


# Idle runs over the grid of first rounds, periods and counts (and a run without a period):
# what idle_per_second counts on the driver must be what Spark's fetch_rows spreads.
GRID = [_idle(100 + i, f"g{i}", period, count, first, count, first + period // 2)
        for i, (first, period, count) in enumerate(itertools.product(FIRSTS, PERIODS, COUNTS))]
GRID.append({**_idle(99, "no-period", 0, 3, 1_500_000, 2, 2_000_000), "period_us": None})


@pytest.fixture(scope="module")
def grid(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from pyspark.sql import types as T

    from rig.analysis.columnar import parse_event_logs
    from rig.analysis.events import hadoop_path, with_fetch_fields

    path: Path = tmp_path_factory.mktemp("grid") / "v.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in [PLAIN, *IDLE, *GRID]) + b"\n")
    schema = with_fetch_fields(T.StructType([]))
    fields = [(f.name, f.dataType.simpleString()) for f in schema.fields]
    parsed = parse_event_logs([path], fields, path.with_suffix(".parquet"))
    return spark.read.parquet(hadoop_path(parsed.table))


def test_idle_per_second_counts_what_fetch_rows_spreads(grid: Any) -> None:
    from pyspark.sql import functions as F

    from rig.analysis.events import fetch_rows, idle_fetch_runs, idle_per_second

    keys = ["variant", "event", "client", "broker", "body_bytes"]
    spread = (fetch_rows(grid).where(F.col("client") != "c1")
              .groupBy(*keys, "second")
              .agg(F.sum("n").alias("n"), F.min("t_ms").alias("t_ms"),
                   F.min("seq").alias("seq")).collect())
    expected = {tuple(row[k] for k in [*keys, "second"]): (row["n"], row["t_ms"], row["seq"])
                for row in spread}
    counted = idle_per_second(idle_fetch_runs(grid), keys).to_pylist()
    got = {tuple(row[k] for k in [*keys, "second"]): (row["n"], row["t_ms"], row["seq"])
           for row in counted}
    assert len(got) == len(counted)
    assert got == expected
    assert sum(n for n, _, _ in got.values()) == sum(
        e["requests"] + e["responses"] for e in [*IDLE, *GRID])


def test_plain_and_idle_fetches_make_up_fetch_rows(grid: Any) -> None:
    from rig.analysis.events import fetch_rows, idle_fetch_runs, plain_fetch_rows

    plain = [row.asDict() for row in plain_fetch_rows(grid).collect()]
    assert [r["client"] for r in plain] == ["c1"]
    assert plain == [r.asDict() for r in fetch_rows(grid).collect() if r["client"] == "c1"]
    runs = idle_fetch_runs(grid, only="fetch.response").to_pylist()
    assert {r["client"] for r in runs} == {
        e["client"] for e in [*IDLE, *GRID] if e["responses"]}
    assert {r["event"] for r in runs} == {"fetch.response"}
