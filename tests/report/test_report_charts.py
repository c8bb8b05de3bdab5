"""Chart building: downsampling, per-second series, figure contents."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from rig.analysis.buckets import MAX_POINTS
from rig.report.charts.fetch import build_charts
from rig.report.charts.series import downsample, per_second


def test_downsample_leaves_short_series_alone() -> None:
    xs, ys, bucket = downsample([0, 1, 2], [5, 6, 7], 10, "mean")
    assert (xs, ys, bucket) == ([0, 1, 2], [5, 6, 7], 1)


def test_downsample_mean_keeps_the_average_and_bucket_starts() -> None:
    xs = list(range(10))
    ys = [1, 3, 1, 3, 1, 3, 1, 3, 10, 20]
    dx, dy, bucket = downsample(xs, ys, 5, "mean")
    assert bucket == 2
    assert dx == [0, 2, 4, 6, 8]
    assert dy == [2, 2, 2, 2, 15]


def test_downsample_last_is_exact_at_bucket_ends_and_uneven_tail() -> None:
    xs = list(range(7))
    ys = [0, 1, 3, 6, 10, 15, 21]  # cumulative
    dx, dy, bucket = downsample(xs, ys, 3, "last")
    assert bucket == 3
    assert dx == [2, 5, 6]
    assert dy == [3, 15, 21]


def test_downsample_bounds_points() -> None:
    n = 3600 * 5 + 7
    dx, dy, _ = downsample(list(range(n)), [1.0] * n, MAX_POINTS, "mean")
    assert len(dx) == len(dy) <= MAX_POINTS
    assert all(y == 1.0 for y in dy)


def test_downsample_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        downsample([1], [1, 2], 5, "mean")
    with pytest.raises(ValueError):
        downsample([1], [1], 0, "mean")


def test_per_second_sums_brokers_and_zero_fills() -> None:
    rows = [
        {"variant": "a", "role": "follower", "broker": 0, "second": 0, "request_bytes": 10},
        {"variant": "a", "role": "follower", "broker": 1, "second": 0, "request_bytes": 5},
        {"variant": "a", "role": "follower", "broker": 1, "second": 3, "request_bytes": 7},
        {"variant": "b", "role": "follower", "broker": 0, "second": 1, "request_bytes": 99},
        {"variant": "a", "role": "consumer", "broker": 0, "second": 1, "request_bytes": 99},
    ]
    assert per_second(rows, "a", "follower", "request_bytes", 5) == [15, 0, 0, 7, 0]
    # Data past the declared duration is kept, not cut.
    assert per_second(rows, "a", "follower", "request_bytes", 2) == [15, 0, 0, 7]
    assert per_second(rows, "zzz", "follower", "request_bytes", 2) == [0, 0]


def _load(run: Path) -> tuple[list[dict], list[dict]]:
    metrics = run / "metrics"
    return (
        orjson.loads((metrics / "fetch_timeseries.json").read_bytes()),
        orjson.loads((metrics / "fetch_sizes.json").read_bytes()),
    )


def test_build_charts_one_trace_per_variant_simulated_everywhere(report_run: Path) -> None:
    timeseries, sizes = _load(report_run)
    charts = build_charts(
        ["v6", "v7"], timeseries, sizes, {"v6": 300_000, "v7": 300_000}, with_consumers=False
    )
    ids = [c.id for c in charts]
    assert ids == [
        "chart-request-rate",
        "chart-response-rate",
        "chart-cumulative",
        "chart-request-sizes",
        "chart-response-sizes",
    ]
    for chart in charts:
        layout = chart.figure["layout"]
        assert "SIMULATED" in layout["title"]["text"]
        assert any(a["text"] == "SIMULATED" for a in layout["annotations"])
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
        assert [t["name"] for t in chart.figure["data"]] == ["v6", "v7"]
        assert chart.caption.endswith((".", ".)"))
    rate = charts[0].figure["data"]
    # v6: two 12031-byte fetches per second on each of two brokers.
    assert rate[0]["y"][5] == 4 * 12_031
    assert rate[1]["y"][0] == 2 * 12_043 + 2 * 33
    assert rate[1]["y"][5] == 4 * 33
    assert len(rate[0]["x"]) == 300
    assert charts[0].figure["layout"]["yaxis"]["type"] == "log"  # 364× apart
    cumulative = charts[2].figure["data"][0]["y"]
    assert cumulative[-1] == sum(
        r["request_bytes"] + r["response_bytes"] for r in timeseries if r["variant"] == "v6"
    )
    assert charts[2].figure["layout"]["yaxis"]["type"] == "linear"
    bars = charts[3].figure["data"]
    assert bars[1]["x"] == ["33 B", "12,043 B"]  # idle v7: exactly two sizes
    assert bars[1]["y"] == [1198, 2]
    assert charts[3].figure["layout"]["xaxis"]["categoryarray"] == ["33 B", "12,031 B", "12,043 B"]


def test_build_charts_downsamples_long_runs() -> None:
    seconds = 3 * 3600
    rows = [
        {
            "variant": "a",
            "role": "follower",
            "broker": 0,
            "second": s,
            "request_bytes": 100,
            "response_bytes": 50,
        }
        for s in range(seconds)
    ]
    charts = build_charts(["a"], rows, [], {"a": seconds * 1000}, with_consumers=False)
    for chart in charts:
        for trace in chart.figure["data"]:
            assert len(trace["x"]) <= MAX_POINTS
    assert "averages 10 s" in charts[0].caption  # 3 h in "nice" 10 s buckets
    assert charts[2].figure["data"][0]["y"][-1] == 150 * seconds


def test_build_charts_consumers_are_extra_dashed_traces(report_run_with_consumers: Path) -> None:
    timeseries, sizes = _load(report_run_with_consumers)
    charts = build_charts(
        ["v6", "v7"], timeseries, sizes, {"v6": 300_000, "v7": 300_000}, with_consumers=True
    )
    names = [t["name"] for t in charts[0].figure["data"]]
    assert names == ["v6 · followers", "v6 · consumers", "v7 · followers", "v7 · consumers"]
    assert charts[0].figure["data"][1]["line"]["dash"] == "dash"
    assert "dashed lines are consumers" in charts[0].caption


def test_build_charts_without_data_draws_nothing() -> None:
    assert build_charts(["a"], [], [], {"a": 1000}, with_consumers=False) == []


def test_many_distinct_sizes_are_counted_in_power_of_two_ranges() -> None:
    """Over 40 distinct sizes, one bar per power-of-two range, every range between the smallest
    and the largest drawn (empty ones too), each size counted in exactly one."""
    sizes = [
        {"variant": "a", "role": "follower", "kind": "response", "body_bytes": 100 + i, "count": 1}
        for i in range(100)
    ] + [{"variant": "a", "role": "follower", "kind": "response", "body_bytes": b, "count": 5}
         for b in (1023, 1024, 2047, 3 * 2**20)]
    charts = build_charts(["a"], [], sizes, {"a": 1000}, with_consumers=False)
    assert [c.id for c in charts] == ["chart-response-sizes"]
    figure = charts[0].figure
    (trace,) = figure["data"]
    assert trace["type"] == "bar" and figure["layout"]["xaxis"]["type"] == "category"
    assert dict(zip(trace["x"], trace["y"], strict=True)) == {
        "64–128 B": 28,  # 100..127
        "128–256 B": 72,  # 128..199
        "512 B–1 KiB": 5,  # 1023
        "1–2 KiB": 10,  # 1024 and 2047
        "2–4 MiB": 5,
    }
    axis = figure["layout"]["xaxis"]["categoryarray"]
    assert axis[:5] == ["64–128 B", "128–256 B", "256–512 B", "512 B–1 KiB", "1–2 KiB"]
    assert axis[-1] == "2–4 MiB" and len(axis) == 16  # 2^6 .. 2^21
    assert "power-of-two range" in charts[0].caption and "104 distinct sizes" in charts[0].caption


def test_fault_markers_on_every_timeline_and_only_there(report_run_with_faults: Path) -> None:
    from rig.report.inputs import fault_marks, load_inputs

    inputs = load_inputs(report_run_with_faults)
    marks = fault_marks(inputs, ["v6", "v7"])
    assert [m.short for m in marks] == ["b1 crash", "b1 restart", "network partition"]
    charts = build_charts(["v6", "v7"], [], inputs.sizes, {"v6": 300_000, "v7": 300_000},
                          with_consumers=False, timeline=inputs.timeline, faults=marks)
    by_id = {c.id: c for c in charts}
    for chart_id in ("chart-request-rate", "chart-response-rate", "chart-cumulative"):
        layout = by_id[chart_id].figure["layout"]
        lines = [s for s in layout["shapes"] if s["type"] == "line"]
        assert [s["x0"] for s in lines] == [60.0, 90.5, 200.0]
        spans = [s for s in layout["shapes"] if s["type"] == "rect"]
        assert [(s["x0"], s["x1"]) for s in spans] == [(60.0, 90.5)]  # broker 1 down
        hover = by_id[chart_id].figure["data"][-1]
        assert hover["name"] == "faults" and hover["yaxis"] == "y2"
        assert hover["text"][0] == "broker 1 crashed (v7) at 60.000 s"
        labels = [a["text"] for a in layout["annotations"] if a["text"] != "SIMULATED"]
        assert labels == ["v7: b1 crash", "v7: b1 restart", "v6: network partition"]
        assert "dotted red lines mark faults" in by_id[chart_id].caption
    assert "shapes" not in by_id["chart-request-sizes"].figure["layout"]


def test_timeline_and_per_second_tables_draw_the_same(report_run_with_faults: Path) -> None:
    from rig.report.inputs import load_inputs

    inputs = load_inputs(report_run_with_faults)
    assert inputs.timeline and not inputs.timeseries  # the big table is not even read
    timeseries, sizes = _load(report_run_with_faults)
    durations = {"v6": 300_000, "v7": 300_000}
    a = build_charts(["v6", "v7"], [], sizes, durations, with_consumers=False,
                     timeline=inputs.timeline)
    b = build_charts(["v6", "v7"], timeseries, sizes, durations, with_consumers=False)
    assert [c.figure for c in a] == [c.figure for c in b]


def test_long_runs_use_minutes_or_hours_and_bucket_means() -> None:
    rows = [{"variant": "a", "role": "follower", "second": s, "request_bytes": 60 if s % 2 else 0}
            for s in range(4 * 3600)]
    charts = build_charts(["a"], rows, [], {"a": 4 * 3600 * 1000}, with_consumers=False)
    rate = charts[0].figure
    assert rate["layout"]["xaxis"]["title"]["text"] == "simulated time (min)"
    assert rate["data"][0]["x"][1] == pytest.approx(10 / 60, abs=1e-6)  # 10 s buckets, in min
    assert set(rate["data"][0]["y"]) == {30.0}  # the mean of 0 and 60 B/s
    day = [{"variant": "a", "role": "follower", "second": s, "request_bytes": 1}
           for s in range(0, 2 * 86_400, 600)]
    charts = build_charts(["a"], day, [], {"a": 2 * 86_400_000}, with_consumers=False)
    assert charts[0].figure["layout"]["xaxis"]["title"]["text"] == "simulated time (h)"
    assert len(charts[0].figure["data"][0]["x"]) <= MAX_POINTS


def _rows(counts: list[int], size: int, variant: str = "v7") -> list[dict]:
    """Per-second follower rows: `counts[i]` requests of `size` bytes in second i."""
    return [{"variant": variant, "role": "follower", "broker": 0, "second": i,
             "requests": n, "responses": n, "request_bytes": n * size,
             "response_bytes": n * size} for i, n in enumerate(counts)]


def _rate(charts: list, chart_id: str = "chart-request-rate") -> tuple[list, list, str]:
    [chart] = [c for c in charts if c.id == chart_id]
    trace = chart.figure["data"][0]
    return trace["x"], trace["y"], chart.caption


def test_a_partial_last_bucket_is_a_rate_over_the_time_it_covers() -> None:
    # 10.5 s: the last second holds half a second of fetching, at the same rate.
    rows = _rows([4] * 10 + [2], 33)
    charts = build_charts(["v7"], rows, [], {"v7": 10_500}, with_consumers=False)
    xs, ys, caption = _rate(charts)
    assert ys[:10] == [132.0] * 10 and ys[10] == 132.0  # 66 bytes over 0.5 s, not a drop
    assert xs[-1] == 10.5 and ys[-1] == 132.0  # drawn to the run's end, not a second on
    assert "the last point is the rate over the part of its bucket the run covered" in caption


def test_data_past_the_duration_leaves_its_cut_last_bucket_out() -> None:
    # The run quiesced past its 10 s and ended somewhere inside second 12: unknown width.
    rows = _rows([4] * 12 + [1], 33)
    charts = build_charts(["v7"], rows, [], {"v7": 10_000}, with_consumers=False)
    xs, ys, caption = _rate(charts)
    assert len(ys) == 12 and ys[-1] == 132.0 and xs[-1] == 11.0
    assert "the last bucket is left out" in caption


def test_a_counting_dip_is_explained_only_when_it_is_one() -> None:
    # Two rounds a second per broker, one round in second 5: the requests are the usual size.
    counts = [4] * 5 + [2] + [4] * 6
    charts = build_charts(["v7"], _rows(counts, 33), [], {"v7": 12_000}, with_consumers=False)
    _, ys, caption = _rate(charts)
    assert ys[5] == 66.0
    assert "The one-bucket steps at 5 s (v7) are an artefact of counting" in caption
    assert "3.833 requests a second on average" in caption
    # The same dip with bigger requests in that second is traffic, not counting: no sentence.
    rows = _rows(counts, 33)
    rows[5]["request_bytes"] = 2 * 500
    charts = build_charts(["v7"], rows, [], {"v7": 12_000}, with_consumers=False)
    assert "artefact" not in _rate(charts)[2]


def test_duration_log_axes_read_in_units() -> None:
    from rig.report.charts.figure import seconds_log_axis

    axis = seconds_log_axis([0.0004, 0.05, 7.2])
    assert axis["tickvals"] == [1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0]
    assert axis["ticktext"] == ["100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
    assert seconds_log_axis([]) == {}
