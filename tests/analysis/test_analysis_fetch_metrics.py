"""analyze_run on a synthetic two-variant log: exact summary numbers and metric tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.analysis import analyze_run

pytestmark = pytest.mark.spark

EMPTY_BYTES = {"total": 0, "min": None, "max": None, "p50": None}


def _table(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return orjson.loads((run_dir / "metrics" / name).read_bytes())


def test_variants_in_run_json_order_with_both_roles(analysed: tuple[Path, dict]) -> None:
    _, result = analysed
    assert list(result) == ["variants"]
    assert list(result["variants"]) == ["v6", "v7"]
    for variant in result["variants"].values():
        assert list(variant) == ["fetch"]
        assert list(variant["fetch"]) == ["follower", "consumer"]


def test_v6_sessionless_follower_numbers(analysed: tuple[Path, dict]) -> None:
    _, result = analysed
    f = result["variants"]["v6"]["fetch"]["follower"]
    assert f["requests"] == 40 and f["responses"] == 40
    assert f["full_requests"] == 40 and f["incremental_requests"] == 0
    assert f["request_bytes"] == {"total": 40 * 12_031, "min": 12_031, "max": 12_031, "p50": 12_031}
    # 20 responses of 19000 and 20 of 25000: the discrete median of an even count is the
    # lower middle value (a continuous median would say 22000).
    assert f["response_bytes"] == {
        "total": 20 * 19_000 + 20 * 25_000,
        "min": 19_000,
        "max": 25_000,
        "p50": 19_000,
    }
    assert f["wire_request_bytes"] == {
        "total": 40 * 12_066,
        "min": 12_066,
        "max": 12_066,
        "p50": 12_066,
    }
    assert f["wire_response_bytes"]["p50"] == 19_012
    assert f["first_request_bytes"] == 12_031
    assert f["request_bytes_per_second"] == pytest.approx(40 * 12_031 / 10)
    assert f["response_bytes_per_second"] == pytest.approx(880_000 / 10)


def test_v7_incremental_follower_numbers(analysed: tuple[Path, dict]) -> None:
    _, result = analysed
    f = result["variants"]["v7"]["fetch"]["follower"]
    assert f["requests"] == 40
    assert f["full_requests"] == 2 and f["incremental_requests"] == 38
    assert f["request_bytes"] == {
        "total": 2 * 12_043 + 38 * 33,
        "min": 33,
        "max": 12_043,
        "p50": 33,
    }
    assert f["first_request_bytes"] == 12_043
    assert f["wire_request_bytes"] == {
        "total": 2 * 12_078 + 38 * 68,
        "min": 68,
        "max": 12_078,
        "p50": 68,
    }
    assert f["response_bytes"]["p50"] == 14
    assert f["request_bytes_per_second"] == pytest.approx(25_340 / 10)


def test_roles_are_separate_and_absent_roles_zero_filled(analysed: tuple[Path, dict]) -> None:
    _, result = analysed
    c6 = result["variants"]["v6"]["fetch"]["consumer"]
    assert c6["requests"] == 0 and c6["responses"] == 0
    assert c6["full_requests"] == 0 and c6["incremental_requests"] == 0
    for key in ("request_bytes", "response_bytes", "wire_request_bytes", "wire_response_bytes"):
        assert c6[key] == EMPTY_BYTES
    assert c6["first_request_bytes"] is None
    assert c6["request_bytes_per_second"] == 0.0

    c7 = result["variants"]["v7"]["fetch"]["consumer"]
    assert c7["requests"] == 2
    # Sizes 200 then 100: the first by seq is 200, the median of two is the smaller one.
    assert c7["first_request_bytes"] == 200
    assert c7["request_bytes"] == {"total": 300, "min": 100, "max": 200, "p50": 100}
    assert c7["response_bytes"] == {"total": 800, "min": 300, "max": 500, "p50": 300}


def test_result_is_plain_json_with_int_counts(analysed: tuple[Path, dict]) -> None:
    _, result = analysed
    assert orjson.loads(orjson.dumps(result)) == result
    f = result["variants"]["v7"]["fetch"]["follower"]
    for value in (f["requests"], f["request_bytes"]["total"], f["request_bytes"]["p50"]):
        assert type(value) is int


def test_timeseries_table(analysed: tuple[Path, dict], synthetic_events: dict) -> None:
    run_dir, _ = analysed
    rows = _table(run_dir, "fetch_timeseries.json")
    assert rows[0] == {
        # v6 broker 0, second 0: requests at 100 and 600 ms, one response (500 ms) back.
        "variant": "v6",
        "role": "follower",
        "broker": 0,
        "second": 0,
        "requests": 2,
        "responses": 1,
        "request_bytes": 2 * 12_031,
        "response_bytes": 19_000,
        "wire_request_bytes": 2 * 12_066,
        "wire_response_bytes": 19_012,
    }
    # The whole table against a plain-Python reference computed from the same events.
    expected: dict[tuple, dict[str, int]] = {}
    for variant, events in synthetic_events.items():
        for e in events:
            if e["event"] not in ("fetch.request", "fetch.response"):
                continue
            key = (variant, e["role"], e["broker"], int(e["t_ms"] // 1000))
            acc = expected.setdefault(
                key,
                dict.fromkeys(
                    (
                        "requests",
                        "responses",
                        "request_bytes",
                        "response_bytes",
                        "wire_request_bytes",
                        "wire_response_bytes",
                    ),
                    0,
                ),
            )
            kind = "request" if e["event"] == "fetch.request" else "response"
            acc[f"{kind}s"] += 1
            acc[f"{kind}_bytes"] += e["body_bytes"]
            acc[f"wire_{kind}_bytes"] += e["wire_bytes"]
    got = {
        (r["variant"], r["role"], r["broker"], r["second"]): {
            k: v for k, v in r.items() if k not in ("variant", "role", "broker", "second")
        }
        for r in rows
    }
    assert got == expected
    # Ordered by variant (run.json order), role (follower first), broker, second.
    keys = [(r["variant"], r["role"] != "follower", r["broker"], r["second"]) for r in rows]
    assert keys == sorted(keys)


def test_sizes_table(analysed: tuple[Path, dict]) -> None:
    run_dir, _ = analysed
    rows = _table(run_dir, "fetch_sizes.json")
    v7_requests = [
        (r["body_bytes"], r["count"])
        for r in rows
        if r["variant"] == "v7" and r["role"] == "follower" and r["kind"] == "request"
    ]
    assert v7_requests == [(33, 38), (12_043, 2)]
    v6 = [
        (r["kind"], r["body_bytes"], r["count"])
        for r in rows
        if r["variant"] == "v6" and r["role"] == "follower"
    ]
    assert v6 == [("request", 12_031, 40), ("response", 19_000, 20), ("response", 25_000, 20)]
    assert set(rows[0]) == {"variant", "role", "kind", "body_bytes", "count"}


def test_tables_are_written_atomically(analysed: tuple[Path, dict]) -> None:
    run_dir, _ = analysed
    # Written through a temp file and a rename: no temp file is left behind.
    assert sorted(p.name for p in (run_dir / "metrics").iterdir()) == [
        "faults.json",
        "fetch_sizes.json",
        "fetch_timeline.json",
        "fetch_timeseries.json",
    ]


def test_one_events_file_for_all_variants_and_duration_from_run_start(
    spark: Any, tmp_path: Path, write_synthetic_run: Any
) -> None:
    run_dir = write_synthetic_run(tmp_path / "odd [dir]")
    events = run_dir / "events"
    merged = b"".join((events / f"{v}.jsonl").read_bytes() for v in ("v6", "v7"))
    for v in ("v6", "v7"):
        (events / f"{v}.jsonl").unlink()
    (events / "all.jsonl").write_bytes(merged + b"not json at all\n")
    run = orjson.loads((run_dir / "run.json").read_bytes())
    del run["variants"]["v7"]["duration_ms"]  # falls back to run.start's duration_ms
    run["variants"].pop("v6")  # a variant only the events know of comes after, sorted
    (run_dir / "run.json").write_bytes(orjson.dumps(run))

    result = analyze_run(run_dir)
    assert list(result["variants"]) == ["v7", "v6"]
    f = result["variants"]["v7"]["fetch"]["follower"]
    assert f["request_bytes"]["p50"] == 33
    assert f["request_bytes_per_second"] == pytest.approx(25_340 / 10)
    assert result["variants"]["v6"]["fetch"]["follower"]["requests"] == 40


def test_no_events_gives_zero_filled_variants(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "run.json").write_bytes(orjson.dumps({"variants": {"a": {"duration_ms": 1000}}}))
    result = analyze_run(tmp_path)
    assert result["variants"]["a"]["fetch"]["follower"]["requests"] == 0
    assert result["variants"]["a"]["fetch"]["consumer"]["request_bytes"] == EMPTY_BYTES
    assert _table(tmp_path, "fetch_timeseries.json") == []


def test_refused_partitions_are_counted_by_error_name(analysed: tuple[Path, dict]) -> None:
    """fetch.response's `errors`: each [topic, partition, code] is one partition refused, named
    as Kafka names the code; every variant and role is present, empty when nothing was."""
    from rig.analysis.fetch_refusals import analyze_fetch_refusals

    run_dir, _ = analysed
    result = analyze_fetch_refusals(run_dir)
    assert result == {"variants": {
        "v6": {"fetch_refusals": {"follower": {}, "consumer": {}}},
        "v7": {"fetch_refusals": {"follower": {"NOT_LEADER_OR_FOLLOWER": 1,
                                               "UNKNOWN_LEADER_EPOCH": 2},
                                  "consumer": {}}}}}
