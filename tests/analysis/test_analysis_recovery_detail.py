"""Per-fault detection time and catch-up bytes (metrics/recovery.json), and consumer lag over
time (metrics/consumer_lag.json), from a small simulated run: the Spark jobs against the same
figures computed plainly from the event log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.consumer_lag import analyze_consumer_lag, lag_timeline
from rig.analysis.replication import analyze_replication
from tests.analysis.conftest import simulated_run

SCENARIO = """
name: small-crash
seed: 11
duration: 20s
kafka: "2.4"
cluster:
  brokers: 3
  config:
    min.insync.replicas: 2
    replica.lag.time.max.ms: 10s
    zookeeper.session.timeout.ms: 6s
topics:
  - name: t
    partitions: 6
    replication_factor: 3
workload:
  producers:
    - {topic: t, rate: 500, record_size: 300, acks: all, linger: 10ms}
  consumers:
    - {group: readers, topic: t, members: 2, fetch_min_bytes: 16KiB}
faults:
  - {kind: crash, broker: 2, at: 3s, restart_after: 9s}   # longer than the session timeout
"""


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    return simulated_run(tmp_path_factory.mktemp("small-crash"), SCENARIO)


@pytest.mark.spark
def test_detection_and_catch_up_bytes(spark: Any, small_run: tuple[Path, list[dict]]) -> None:
    run_dir, events = small_run
    summary = analyze_replication(run_dir)["variants"]["default"]["replication"]
    (fault,) = orjson.loads((run_dir / "metrics" / "recovery.json").read_bytes())
    assert (fault["inject_ms"], fault["heal_ms"]) == (3_000.0, 12_000.0)
    # Detection: the first ISR shrink removing broker 2, or election away from it, after 3 s.
    first = next(e for e in events if e["t_ms"] >= 3_000 and (
        (e["event"] == "isr.shrink" and 2 in e["removed"])
        or (e["event"] == "leader.elected" and e["previous"] == 2)))
    assert fault["detected_ms"] == first["t_ms"]
    # The controller hears of it when broker 2's ZooKeeper session expires: at most 6 s.
    assert 0 < fault["detection_seconds"] <= 6.1
    assert fault["detection_seconds"] == pytest.approx((first["t_ms"] - 3_000) / 1000)
    assert summary["max_detection_seconds"] == fault["detection_seconds"]
    assert summary["max_recovery_seconds"] == fault["recovery_seconds"]
    # Catch-up: follower fetch responses to broker 2 from the restart until every ISR is full.
    window = [e for e in events if e["event"] == "fetch.response" and e["role"] == "follower"
              and e["source"] == 2 and 12_000 <= e["t_ms"] <= fault["recovered_ms"]]
    assert fault["catch_up_bytes"] == sum(e["wire_bytes"] for e in window) > 0
    assert fault["catch_up_record_bytes"] == sum(e["records_bytes"] for e in window)
    # Out of the ISR, broker 2 missed every record committed without it (300-byte values):
    # it must fetch at least those before it is back in every ISR.
    missed = sum(e["records"] for e in events if e["event"] == "produce.ack"
                 and fault["detected_ms"] < e["t_ms"] < 12_000)
    assert missed > 1_000 and fault["catch_up_record_bytes"] >= missed * 300
    assert summary["catch_up_bytes"] == fault["catch_up_bytes"]


@pytest.mark.spark
def test_consumer_lag_over_time(spark: Any, small_run: tuple[Path, list[dict]]) -> None:
    run_dir, events = small_run
    summary = analyze_consumer_lag(run_dir)["variants"]["default"]["consumers"]
    rows = orjson.loads((run_dir / "metrics" / "consumer_lag.json").read_bytes())
    samples = [e for e in events if e["event"] == "consumer.lag"]
    assert rows and all(r["bucket_s"] == 1 and r["group"] == "readers" for r in rows)
    by_second: dict[int, int] = {}
    for e in samples:
        second = int(e["t_ms"] // 1000)
        by_second[second] = max(by_second.get(second, 0), e["lag"])
    assert {r["second"]: r["lag_max"] for r in rows} == by_second
    assert summary["max_lag"] == max(by_second.values()) > 0
    assert summary["consumed"] == max(e["consumed"] for e in samples)


def test_lag_timeline_stays_within_the_point_budget() -> None:
    rows = [{"variant": "a", "group": "g", "second": s, "lag": s % 7, "consumed": s}
            for s in range(5_000)]
    out = lag_timeline(rows, {"a": 5_000_000}, ["a"], max_points=2_000)
    assert len(out) <= 2_000 and out[0]["bucket_s"] >= 3
    width = out[0]["bucket_s"]
    assert out[0]["lag_max"] == max(s % 7 for s in range(width))
    assert out[-1]["consumed"] == 4_999
