"""metrics/produce_timeline.json: acked and failed records, elections and ISR changes per bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis.buckets import bucket_seconds
from rig.analysis.produce_timeline import PRODUCE_FIELDS, produce_timeline
from rig.analysis.timeline import fetch_timeline

ZERO = dict.fromkeys(PRODUCE_FIELDS, 0)


def _ev(t_ms: float, event: str, variant: str, **fields: Any) -> dict[str, Any]:
    return {"t_ms": t_ms, "event": event, "variant": variant, **fields}


def _log(variant: str) -> list[dict[str, Any]]:
    """A crash at 4 s: errors (retried, then one given up), elections, ISR shrink and expand."""
    events = [_ev(0.0, "run.start", variant, duration_ms=10_000)]
    for second in range(10):
        events.append(_ev(second * 1000 + 10.0, "produce.ack", variant, topic="t", partition=0,
                          offset=second, records=3, acks=-1))
    events += [
        _ev(4_001.0, "produce.error", variant, topic="t", partition=1, error_code=13, records=2,
            retrying=True),
        _ev(4_002.5, "produce.error", variant, topic="t", partition=1, error_code=13, records=5,
            retrying=True),
        _ev(4_999.9, "produce.error", variant, topic="t", partition=2, error_code=7, records=4,
            retrying=False),
        _ev(5_000.0, "leader.elected", variant, topic="t", partition=1, leader=0, epoch=1,
            election="clean", reason="broker-failure"),
        _ev(5_000.0, "leader.elected", variant, topic="t", partition=2, leader=0, epoch=1,
            election="unclean", reason="broker-failure"),
        _ev(5_000.0, "isr.shrink", variant, topic="t", partition=0, isr=[0], removed=[1]),
        _ev(8_500.0, "isr.expand", variant, topic="t", partition=0, isr=[0, 1], added=[1]),
        # Odd fields the analysis must survive: a string where a count belongs, no records.
        _ev(8_600.0, "produce.ack", variant, records="many", extra={"nested": [1]}),
        _ev(8_700.0, "produce.error", variant, error_code=13),
        _ev(12_400.0, "run.end", variant, events=20),  # quiescing ran past the duration
    ]
    for seq, event in enumerate(events):
        event["seq"] = seq
    return events


def _write_run(root: Path) -> Path:
    (root / "events").mkdir(parents=True)
    for variant in ("b-second", "a-first"):
        lines = [orjson.dumps(e) for e in _log(variant)]
        lines.insert(3, b"{not json")
        (root / "events" / f"{variant}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    run = {"rig_version": "0.1.0", "variants": {"b-second": {"duration_ms": 10_000},
                                                "a-first": {"duration_ms": 10_000}}}
    (root / "run.json").write_bytes(orjson.dumps(run))
    return root


@pytest.mark.spark
def test_buckets_from_a_synthetic_log(spark: Any, tmp_path: Path) -> None:
    from rig.analysis.produce_timeline import analyze_produce_timeline

    run_dir = _write_run(tmp_path / "run [1]")  # brackets: Spark must not glob the path
    rows = analyze_produce_timeline(run_dir)
    assert rows == orjson.loads((run_dir / "metrics" / "produce_timeline.json").read_bytes())
    assert [r["variant"] for r in rows][:1] == ["b-second"]  # run.json order, not by name
    by = {(r["variant"], r["second"]): r for r in rows}
    assert {r["bucket_s"] for r in rows} == {1}
    # Every second 0..9 acknowledged 3 records; the run ran on to 12.4 s with nothing to draw.
    assert sorted(s for v, s in by if v == "a-first") == list(range(10))
    assert by[("a-first", 0)] == {"variant": "a-first", "second": 0, "bucket_s": 1,
                                  **ZERO, "acked": 3}
    assert by[("a-first", 4)] == {"variant": "a-first", "second": 4, "bucket_s": 1, **ZERO,
                                  "acked": 3, "errors": 11, "error_events": 3, "failed": 4}
    assert by[("a-first", 5)] == {"variant": "a-first", "second": 5, "bucket_s": 1, **ZERO,
                                  "acked": 3, "elections": 2, "unclean_elections": 1,
                                  "isr_shrinks": 1}
    # The odd lines count as events with no records; the broken line is skipped.
    assert by[("a-first", 8)] == {"variant": "a-first", "second": 8, "bucket_s": 1, **ZERO,
                                  "acked": 3, "error_events": 1, "isr_expands": 1}
    for field in PRODUCE_FIELDS:
        a = sum(r[field] for r in rows if r["variant"] == "a-first")
        b = sum(r[field] for r in rows if r["variant"] == "b-second")
        assert a == b


@pytest.mark.spark
def test_no_event_logs_write_an_empty_table(tmp_path: Path) -> None:
    from rig.analysis.produce_timeline import analyze_produce_timeline

    (tmp_path / "run.json").write_bytes(orjson.dumps({"variants": {"v": {"duration_ms": 1}}}))
    assert analyze_produce_timeline(tmp_path) == []
    assert orjson.loads((tmp_path / "metrics" / "produce_timeline.json").read_bytes()) == []


def test_bucket_rule_is_the_fetch_timelines() -> None:
    """An hour-long run buckets produce rows as wide as the fetch timeline buckets fetch rows."""
    durations = {"v6": 3_600_000, "v7": 3_600_000}
    seconds: list[dict[str, Any]] = [
        {"variant": "v7", "second": s, "acked": 10, "isr_shrinks": s % 2}
        for s in range(0, 3_600, 7)
    ]
    rows = produce_timeline(seconds, durations, ["v6", "v7"])
    fetch = fetch_timeline([{"variant": "v7", "role": "follower", "second": 0, "requests": 1}],
                           durations, ["v6", "v7"])
    assert {r["bucket_s"] for r in rows} == {fetch[0]["bucket_s"]} == {bucket_seconds(3_600)}
    assert len(rows) <= 2000
    assert all(r["second"] % r["bucket_s"] == 0 for r in rows)
    assert sum(r["acked"] for r in rows) == 10 * len(seconds)
    assert sum(r["isr_shrinks"] for r in rows) == sum(s["isr_shrinks"] for s in seconds)


def test_span_follows_data_past_the_duration_and_empty_seconds_are_left_out() -> None:
    seconds: list[dict[str, Any]] = [
        {"variant": "v", "second": 4_100, "acked": 0},  # run.end only: sets the span
        {"variant": "v", "second": 3, "failed": 2, "errors": 2, "error_events": 1},
        {"variant": None, "second": 1, "acked": 5},  # no variant: dropped
        {"variant": "v", "second": "x", "acked": 5},  # no second: dropped
    ]
    rows = produce_timeline(seconds, {"v": 1_000}, ["v"])
    assert rows == [{"variant": "v", "second": 0, "bucket_s": bucket_seconds(4_101), **ZERO,
                     "failed": 2, "errors": 2, "error_events": 1}]
    assert produce_timeline([], {}, []) == []
