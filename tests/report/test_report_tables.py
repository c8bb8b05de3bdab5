"""The tables the analysis writes for the report: the coarse timeline and the fault markers.

The pure parts run without Spark; the hook in analyze_run and the Parquet export run on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.buckets import MAX_POINTS, bucket_seconds
from rig.analysis.faults import fault_rows, is_fault_event
from rig.analysis.timeline import fetch_timeline


def _row(second: int, broker: int = 0, variant: str = "v6", **values: int) -> dict[str, Any]:
    return {"variant": variant, "role": "follower", "broker": broker, "second": second,
            "requests": 1, "request_bytes": 10, **values}


@pytest.mark.parametrize(
    ("span", "bucket"),
    [(0, 1), (600, 1), (2000, 1), (2001, 2), (3 * 3600, 10), (86_400, 60), (10**9, 86_400 * 6)],
)
def test_bucket_widths_are_nice_and_bound_the_points(span: int, bucket: int) -> None:
    assert bucket_seconds(span) == bucket
    assert -(-span // bucket) <= MAX_POINTS


def test_timeline_sums_brokers_into_one_width_for_the_run() -> None:
    rows = [_row(s, b) for s in range(5000) for b in (0, 1)] + [_row(3, 0, "v7")]
    table = fetch_timeline(rows, {"v6": 5_000_000, "v7": 10_000}, ["v7", "v6"])
    assert {r["bucket_s"] for r in table} == {5}
    assert table[0] == {"variant": "v7", "role": "follower", "second": 0, "bucket_s": 5,
                        "requests": 1, "responses": 0, "request_bytes": 10, "response_bytes": 0,
                        "wire_request_bytes": 0, "wire_response_bytes": 0}
    v6 = [r for r in table if r["variant"] == "v6"]
    assert len(v6) == 1000 and all(r["request_bytes"] == 100 for r in v6)
    assert sum(r["requests"] for r in v6) == 10_000  # nothing lost


def test_timeline_of_a_day_long_run_is_small() -> None:
    rows = [_row(s, b) for s in range(0, 86_400, 7) for b in range(3)]
    table = fetch_timeline(rows, {"v6": 86_400_000})
    assert len(table) <= MAX_POINTS
    assert sum(r["request_bytes"] for r in table) == 10 * len(rows)


def test_fault_rows_keep_faults_only_with_details() -> None:
    lines = [
        b'{"t_ms":5.0,"seq":9,"event":"broker.restart","variant":"v6","broker":2}',
        b'{"t_ms":1.5,"seq":3,"event":"broker.crash","variant":"v6","broker":2,"why":"kill"}',
        b'{"t_ms":2.0,"seq":4,"event":"fault.network_partition","variant":"v6",'
        b'"brokers":[0,1],"rack":"b"}',
        b'{"t_ms":2.0,"seq":5,"event":"fetch.request","variant":"v6","note":"fault.x"}',
        b'{"t_ms":"x","seq":6,"event":"fault.bad_time"}',
        b"not json at all fault.",
        b'["fault.x"]',
    ]
    rows = fault_rows(lines)
    assert [r["event"] for r in rows] == [
        "broker.crash", "fault.network_partition", "broker.restart"]
    crash, partition, restart = rows
    assert crash["label"] == "broker 2 crashed" and crash["short"] == "b2 crash"
    assert crash["details"] == {"broker": 2, "why": "kill"}
    assert partition["label"] == "network partition (brokers 0, 1, rack b)"
    assert partition["broker"] is None
    assert restart["short"] == "b2 restart"
    assert is_fault_event("fault.stall") and not is_fault_event("faults") and not is_fault_event(3)


@pytest.mark.spark
def test_analyze_run_writes_the_timeline_and_the_faults(
    spark: Any, tmp_path: Path
) -> None:
    from rig.analysis import analyze_run
    from tests.analysis.conftest import write_run

    run_dir = write_run(tmp_path / "run")
    log = run_dir / "events" / "v7.jsonl"
    extra = [
        {"t_ms": 2500.0, "seq": 10_001, "event": "broker.crash", "variant": "v7", "broker": 1},
        {"t_ms": 4000.0, "seq": 10_002, "event": "broker.restart", "variant": "v7", "broker": 1},
        {"t_ms": 3000.0, "seq": 10_003, "event": "fault.link_degraded", "variant": "v7",
         "brokers": [0, 1], "latency_ms": 50},
    ]
    with log.open("ab") as handle:
        for event in extra:
            handle.write(orjson.dumps(event) + b"\n")
    analyze_run(run_dir)
    metrics = run_dir / "metrics"
    faults = orjson.loads((metrics / "faults.json").read_bytes())
    assert [(f["variant"], f["t_ms"], f["event"]) for f in faults] == [
        ("v7", 2500.0, "broker.crash"),
        ("v7", 3000.0, "fault.link_degraded"),
        ("v7", 4000.0, "broker.restart"),
    ]
    assert faults[1]["details"] == {"brokers": [0, 1], "latency_ms": 50}
    timeline = orjson.loads((metrics / "fetch_timeline.json").read_bytes())
    per_second = orjson.loads((metrics / "fetch_timeseries.json").read_bytes())
    for field in ("requests", "request_bytes", "response_bytes", "wire_response_bytes"):
        assert sum(r[field] for r in timeline) == sum(r[field] for r in per_second)
    assert {r["bucket_s"] for r in timeline} == {1}
    assert timeline[0]["variant"] == "v6"


@pytest.mark.spark
def test_a_run_without_faults_has_an_empty_table(spark: Any, tmp_path: Path) -> None:
    from rig.analysis import analyze_run
    from tests.analysis.conftest import write_run

    run_dir = write_run(tmp_path / "run")
    analyze_run(run_dir)
    assert orjson.loads((run_dir / "metrics" / "faults.json").read_bytes()) == []


@pytest.mark.spark
def test_export_parquet_tables_and_events(spark: Any, tmp_path: Path) -> None:
    from rig.analysis import analyze_run
    from rig.analysis.export import export_run
    from tests.analysis.conftest import write_run

    run_dir = write_run(tmp_path / "odd [run]")
    analyze_run(run_dir)
    (run_dir / "summary.json").write_bytes(orjson.dumps({
        "variants": {"v6": {"fetch": {"follower": {"requests": 40, "request_bytes": {
            "total": 1, "min": None, "max": None, "p50": None}}},
            "checks": {"ok": True, "status": "ok", "violations": []}}},
        "expectations": [{"expect": "x", "value": 1.5, "ok": None}]}))
    written = export_run(run_dir, "parquet")
    export = run_dir / "export"
    assert sorted(p.name for p in export.glob("*.parquet")) == [
        "faults.parquet", "fetch_sizes.parquet", "fetch_timeline.parquet",
        "fetch_timeseries.parquet", "summary_checks.parquet", "summary_expectations.parquet",
        "summary_fetch.parquet"]
    assert sorted(p.name for p in (export / "events").iterdir()) == [
        ".rig-written.json", "v6.parquet", "v7.parquet"]  # the manifest: rig/written.py
    assert len(written) == 9 and all(p.is_file() for p in written)
    assert not [p for p in export.rglob("*")  # no scratch left
                if p.name.startswith(".") and p.name != ".rig-written.json"]

    from rig.analysis.events import hadoop_path

    def read(path: Path) -> Any:
        return spark.read.parquet(hadoop_path(path))  # "[run]" would be a glob otherwise

    sizes = read(export / "fetch_sizes.parquet")
    assert sizes.count() == len(orjson.loads((run_dir / "metrics" / "fetch_sizes.json")
                                             .read_bytes()))
    fetch = read(export / "summary_fetch.parquet").collect()
    assert fetch[0]["requests"] == 40 and fetch[0]["request_bytes_p50"] is None
    events = read(export / "events" / "v7.parquet")
    assert events.columns[:4] == ["t_ms", "seq", "event", "variant"]
    assert {"extra", "duration_ms", "replicas", "body_bytes"} <= set(events.columns)
    v6 = read(export / "events" / "v6.parquet")
    assert v6.columns == events.columns  # one schema for every log: they concatenate
    lines = (run_dir / "events" / "v7.jsonl").read_bytes().splitlines()
    assert events.count() == len(lines)
    seqs = [r["seq"] for r in events.select("seq").collect()]
    assert seqs == sorted(seqs)


def test_inject_and_heal_name_their_kind_and_pair_by_fault_index() -> None:
    from rig.report.charts.faults import fault_overlay
    from rig.report.charts.figure import FaultMark

    rows = fault_rows([
        b'{"t_ms":1000.0,"seq":1,"event":"fault.inject","variant":"v7","fault":0,'
        b'"kind":"network-partition","targets":[0,"zk"],"description":"split <zk>"}',
        b'{"t_ms":4000.0,"seq":2,"event":"fault.heal","variant":"v7","fault":0,'
        b'"kind":"network-partition","targets":[0,"zk"]}',
    ])
    inject, heal = rows
    assert inject["label"] == "network-partition injected (nodes 0, zk): split <zk>"
    assert inject["short"] == "network-partition" and inject["fault"] == 0
    assert heal["label"] == "network-partition healed (nodes 0, zk)"
    marks = [FaultMark(r["t_ms"] / 1000, r["label"], r["short"], r["event"], "v7",
                       fault=r["fault"]) for r in rows]
    shapes, annotations, hover = fault_overlay(marks, 1.0, 10.0, False, False)
    spans = [s for s in shapes if s["type"] == "rect"]
    assert [(s["x0"], s["x1"]) for s in spans] == [(1.0, 4.0)]
    assert hover is not None and hover["x"] == [1.0, 4.0]
    assert [a["text"] for a in annotations] == ["network-partition", "network-partition healed"]
