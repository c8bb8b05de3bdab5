"""Plotly figures for the report, built in Python as plain dicts from the metric tables.

Plain dicts (not plotly.graph_objects) keep rendering fast and the JSON deterministic; the page
hands them to the inlined plotly.js. Every figure carries the SIMULATED label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "MAX_POINTS",
    "Chart",
    "build_charts",
    "downsample",
    "per_second",
]

MAX_POINTS = 2000  # per trace; beyond that a browser gets sluggish and the eye sees no more
MAX_SIZE_CATEGORIES = 40  # more distinct sizes than this and bars stop being readable
PALETTE = ("#2563eb", "#dc2626", "#059669", "#7c3aed", "#d97706", "#0891b2", "#be185d", "#4b5563")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
SIMULATED_RED = "#b91c1c"

_LOG_AXIS = {"type": "log", "dtick": 1, "tickformat": "~s"}
_LINEAR_AXIS = {"type": "linear", "rangemode": "tozero"}
ROLE_LABEL = {"follower": "followers", "consumer": "consumers"}


@dataclass(frozen=True)
class Chart:
    """One figure on the page: its DOM id, the sentence under it, and the plotly figure."""

    id: str
    title: str
    caption: str
    figure: dict[str, Any]


def downsample(
    xs: Sequence[float], ys: Sequence[float], max_points: int, how: Literal["mean", "last"]
) -> tuple[list[float], list[float], int]:
    """Shrink a series to at most `max_points` by grouping consecutive points in equal buckets.

    "mean" averages each bucket (for rates: preserves the area under the curve) and places it at
    the bucket's first x; "last" keeps each bucket's last point (for cumulative series: exact at
    bucket ends). Returns (xs, ys, bucket size); the bucket size is 1 when nothing was done.
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    if n <= max_points:
        return list(xs), list(ys), 1
    bucket = math.ceil(n / max_points)
    out_x: list[float] = []
    out_y: list[float] = []
    for start in range(0, n, bucket):
        chunk = ys[start : start + bucket]
        if how == "mean":
            out_x.append(xs[start])
            out_y.append(sum(chunk) / len(chunk))
        else:
            out_x.append(xs[start + len(chunk) - 1])
            out_y.append(chunk[-1])
    return out_x, out_y, bucket


def per_second(
    rows: Iterable[Mapping[str, Any]], variant: str, role: str, field: str, seconds: int
) -> list[int]:
    """Sum `field` over brokers for each second 0..seconds-1 (longer if the data goes on);
    seconds without a row are zero, since no fetch then means no bytes."""
    totals: dict[int, int] = {}
    for row in rows:
        if row.get("variant") == variant and row.get("role") == role:
            second = int(row.get("second") or 0)
            totals[second] = totals.get(second, 0) + int(row.get(field) or 0)
    length = max([seconds, *(s + 1 for s in totals)]) if totals else seconds
    return [totals.get(s, 0) for s in range(max(length, 0))]


def _cumulative(values: Iterable[int]) -> list[int]:
    out, running = [], 0
    for value in values:
        running += value
        out.append(running)
    return out


def _layout(
    title: str, x_title: str, y_title: str, *, log_y: bool, x_type: str | None = None
) -> dict[str, Any]:
    """The shared look: left-aligned title marked SIMULATED, a watermark, legend on top."""
    axis = {"gridcolor": "#e5e7eb", "linecolor": "#9ca3af", "zeroline": False, "automargin": True}
    xaxis: dict[str, Any] = {**axis, "title": {"text": x_title}}
    if x_type:
        xaxis["type"] = x_type
    return {
        "title": {
            "text": f"{title} <span style='color:{SIMULATED_RED}'>· SIMULATED</span>",
            "x": 0,
            "xanchor": "left",
            "font": {"size": 15},
        },
        "annotations": [
            {
                "text": "SIMULATED",
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
                "showarrow": False,
                "textangle": -18,
                "font": {"size": 56, "color": "rgba(185, 28, 28, 0.07)"},
            }
        ],
        "xaxis": xaxis,
        # On a log axis, label powers of ten only: plotly's 2/5 minor labels read as noise.
        "yaxis": {**axis, "title": {"text": y_title}} | (_LOG_AXIS if log_y else _LINEAR_AXIS),
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom"},
        "margin": {"l": 64, "r": 16, "t": 72, "b": 56},
        "height": 400,
        "hovermode": "x unified",
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "font": {"family": FONT, "size": 12, "color": "#1f2937"},
    }


def _wants_log(series: Iterable[Sequence[float]]) -> bool:
    """Log scale when the typical levels of the traces differ by more than 20×, otherwise
    the smaller traces are flat lines on the floor of a linear axis."""
    levels = []
    for values in series:
        positive = sorted(v for v in values if v > 0)
        if positive:
            levels.append(positive[len(positive) // 2])
    return len(levels) > 1 and max(levels) / min(levels) > 20


def _trace_name(variant: str, role: str, roles: Sequence[str]) -> str:
    return variant if len(roles) == 1 else f"{variant} · {ROLE_LABEL.get(role, role)}"


def _line(
    name: str, xs: list[float], ys: list[float], color: str, role: str, unit: str
) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": xs,
        "y": ys,
        "line": {"color": color, "width": 2, "dash": "solid" if role == "follower" else "dash"},
        "hovertemplate": f"%{{y:,.0f}} {unit}<extra>{name}</extra>",
    }


def _time_charts(
    variants: Sequence[str],
    roles: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    seconds: Mapping[str, int],
) -> list[Chart]:
    # (chart id, title, y axis, unit, caption, fields summed, cumulative?)
    specs = [
        (
            "chart-request-rate",
            "Fetch request bytes per second",
            "request bodies (B/s)",
            "B/s",
            "How many bytes of fetch request bodies each variant sends every second, summed over "
            "all brokers: the steady cost of asking for data.",
            ("request_bytes",),
            False,
        ),
        (
            "chart-response-rate",
            "Fetch response bytes per second",
            "response bodies (B/s)",
            "B/s",
            "How many bytes of fetch response bodies the brokers send back every second, summed "
            "over all brokers: partition headers plus any records.",
            ("response_bytes",),
            False,
        ),
        (
            "chart-cumulative",
            "Cumulative fetch bytes (requests + responses)",
            "request + response bodies so far (B)",
            "B",
            "The running total of request and response body bytes: the slope is the rate, and "
            "the gap between lines is what one variant costs over the other.",
            ("request_bytes", "response_bytes"),
            True,
        ),
    ]
    # Group rows once: per_second over the whole table for every trace is quadratic-ish, and a
    # long run with many brokers has a million rows.
    groups: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row.get("variant"), row.get("role")), []).append(row)
    memo: dict[tuple[str, str, str], list[int]] = {}

    def series(variant: str, role: str, field: str) -> list[int]:
        key = (variant, role, field)
        if key not in memo:
            subset = groups.get((variant, role), [])
            memo[key] = per_second(subset, variant, role, field, seconds.get(variant, 0))
        return memo[key]

    charts = []
    for chart_id, title, y_title, unit, caption, fields, cumulative in specs:
        raw: list[tuple[str, str, list[int]]] = []
        for variant in variants:
            for role in roles:
                total: list[int] = []
                for field in fields:
                    values = series(variant, role, field)
                    if len(values) > len(total):
                        total += [0] * (len(values) - len(total))
                    for i, value in enumerate(values):
                        total[i] += value
                if any(total):
                    raw.append((variant, role, _cumulative(total) if cumulative else total))
        if not raw:
            continue
        traces, bucket = [], 1
        for variant, role, values in raw:
            xs = list(range(len(values)))
            how: Literal["mean", "last"] = "last" if cumulative else "mean"
            dxs, dys, size = downsample(xs, values, MAX_POINTS, how)
            if cumulative:
                dxs = [x + 1 for x in dxs]  # the total at the end of that second
            bucket = max(bucket, size)
            color = PALETTE[list(variants).index(variant) % len(PALETTE)]
            traces.append(_line(_trace_name(variant, role, roles), dxs, dys, color, role, unit))
        # A cumulative line stays linear: its slope is the rate only on a linear axis.
        log_y = not cumulative and _wants_log(values for _, _, values in raw)
        notes = []
        if log_y:
            notes.append("log scale: the variants differ by more than 20×")
        if bucket > 1 and not cumulative:
            notes.append(f"each point averages {bucket} s")
        if len(roles) > 1:
            notes.append("dashed lines are consumers")
        full_caption = caption + (f" ({'; '.join(notes)}.)" if notes else "")
        layout = _layout(title, "simulated time (s)", y_title, log_y=log_y)
        charts.append(Chart(chart_id, title, full_caption, {"data": traces, "layout": layout}))
    return charts


def _size_chart(
    variants: Sequence[str],
    roles: Sequence[str],
    sizes: Sequence[Mapping[str, Any]],
    kind: str,
) -> Chart | None:
    """Bars of how many requests (or responses) had each exact body size."""
    counts: dict[tuple[str, str], dict[int, int]] = {}
    for row in sizes:
        if row.get("kind") != kind or row.get("body_bytes") is None:
            continue
        key = (row.get("variant"), row.get("role"))
        if key[0] in variants and key[1] in roles:
            per = counts.setdefault(key, {})  # type: ignore[arg-type]
            per[int(row["body_bytes"])] = per.get(int(row["body_bytes"]), 0) + int(row["count"])
    if not counts:
        return None
    distinct = sorted({size for per in counts.values() for size in per})
    categorical = len(distinct) <= MAX_SIZE_CATEGORIES
    noun = "requests" if kind == "request" else "responses"
    traces = []
    for variant in variants:
        for role in roles:
            found = counts.get((variant, role))
            if not found:
                continue
            per = found
            color = PALETTE[list(variants).index(variant) % len(PALETTE)]
            name = _trace_name(variant, role, roles)
            ordered = sorted(per)
            trace: dict[str, Any] = {
                "name": name,
                "y": [per[s] for s in ordered],
                "hovertemplate": f"%{{y:,}} {noun} of %{{x}}<extra>{name}</extra>",
            }
            if categorical:
                trace.update(
                    type="bar",
                    x=[f"{s:,} B" for s in ordered],
                    marker={"color": color}
                    | ({"pattern": {"shape": "/"}} if role != "follower" else {}),
                    text=[f"{per[s]:,}" for s in ordered],
                    textposition="outside",
                    cliponaxis=False,
                )
            else:
                trace.update(
                    type="scatter",
                    mode="markers",
                    x=ordered,
                    marker={"color": color, "size": 7, "opacity": 0.8},
                    hovertemplate=f"%{{y:,}} {noun} of %{{x:,}} B<extra>{name}</extra>",
                )
            traces.append(trace)
    title = f"Fetch {kind} body sizes"
    all_counts = [c for per in counts.values() for c in per.values()]
    log_y = max(all_counts) / max(min(all_counts), 1) > 20
    layout = _layout(
        title,
        f"{kind} body size (bytes)",
        f"number of {noun}",
        log_y=log_y,
        x_type="category" if categorical else "log",
    )
    layout["hovermode"] = "closest"
    if categorical:
        layout["barmode"] = "group"
        layout["xaxis"]["categoryorder"] = "array"
        layout["xaxis"]["categoryarray"] = [f"{s:,} B" for s in distinct]
    caption = (
        f"How many {noun} had each exact body size"
        + (": one bar per distinct size" if categorical else " (log-scale size axis)")
        + (", log-scale counts" if log_y else "")
        + (
            "; a session-less fetch repeats one large size, an incremental one is large once "
            "and tiny after."
            if kind == "request"
            else "."
        )
    )
    return Chart(f"chart-{kind}-sizes", title, caption, {"data": traces, "layout": layout})


def build_charts(
    variants: Sequence[str],
    timeseries: Sequence[Mapping[str, Any]],
    sizes: Sequence[Mapping[str, Any]],
    durations_ms: Mapping[str, int | None],
    *,
    with_consumers: bool,
) -> list[Chart]:
    """All report charts, in page order, for the variants given (in that order).

    Consumer traces appear (dashed / hatched) only when `with_consumers`; charts without any
    data are left out rather than drawn empty.
    """
    roles = ("follower", "consumer") if with_consumers else ("follower",)
    seconds = {
        v: math.ceil(d / 1000) for v, d in durations_ms.items() if isinstance(d, int | float)
    }
    charts = _time_charts(variants, roles, timeseries, seconds)
    for kind in ("request", "response"):
        chart = _size_chart(variants, roles, sizes, kind)
        if chart is not None:
            charts.append(chart)
    return charts
