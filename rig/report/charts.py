"""Plotly figures for the report and the comparison, built in Python as plain dicts.

Plain dicts (not plotly.graph_objects) keep rendering fast and the JSON deterministic; the page
hands them to the inlined plotly.js. Every figure carries the SIMULATED label, every axis a unit,
every trace a hover template, and every timeline the run's fault markers.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# One bucketing rule for every timeline, the analysis's: its tables come bucketed already.
from rig.analysis.buckets import MAX_POINTS, bucket_seconds

__all__ = [
    "MAX_POINTS",
    "PALETTE",
    "Chart",
    "FaultMark",
    "Series",
    "TraceStyle",
    "bucket_seconds",
    "build_charts",
    "downsample",
    "per_second",
    "plotly_text",
    "seconds_log_axis",
    "series_from_seconds",
    "series_from_timeline",
    "size_chart",
    "size_groups",
    "time_charts",
]

MAX_SIZE_CATEGORIES = 40  # more distinct sizes than this and bars stop being readable
MAX_FAULT_LABELS = 12  # more fault labels than this overlap; the lines and hover stay
PALETTE = ("#2563eb", "#dc2626", "#059669", "#7c3aed", "#d97706", "#0891b2", "#be185d", "#4b5563")
RUN_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
BAR_PATTERNS = {"dash": ".", "dot": "x", "dashdot": "-", "longdash": "|", "longdashdot": "+"}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
SIMULATED_RED = "#b91c1c"
FAULT_COLOR = "#b91c1c"
FIELDS = (
    "requests",
    "responses",
    "request_bytes",
    "response_bytes",
    "wire_request_bytes",
    "wire_response_bytes",
)

_LOG_AXIS = {"type": "log", "dtick": 1, "tickformat": "~s"}
_LINEAR_AXIS = {"type": "linear", "rangemode": "tozero"}
ROLE_LABEL = {"follower": "followers", "consumer": "consumers"}
# The only markup rig's own figure text uses. Plotly reads tags in any string of a figure (trace
# names, hover text, titles, labels) as markup, so every other `<`, `>` and `&` is escaped:
# scenario text like `<a href="https://…">` stays text, never a live link in an offline page.
_OWN_TAGS = re.compile(r"</?extra>|<br>|</span>|<span style='color:#[0-9a-fA-F]{6}'>")


def plotly_text(text: str) -> str:
    """`text` as plotly shows it literally: `&`, `<`, `>` escaped (plotly decodes entities),
    except rig's own tags (`_OWN_TAGS`)."""
    out, pos = [], 0
    for tag in _OWN_TAGS.finditer(text):
        out += [html.escape(text[pos:tag.start()], quote=False), tag.group()]
        pos = tag.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def _plain_figure(value: Any) -> Any:
    if isinstance(value, str):
        return plotly_text(value)
    if isinstance(value, dict):
        return {k: _plain_figure(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_figure(v) for v in value]
    return value


@dataclass(frozen=True)
class Chart:
    """One figure on the page: its DOM id, the sentence under it, and the plotly figure, whose
    text is made plain (`plotly_text`) here, once, whoever built it."""

    id: str
    title: str
    caption: str
    figure: dict[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "figure", _plain_figure(self.figure))


@dataclass(frozen=True)
class Series:
    """What one line of a timeline draws: per-bucket sums of one (run, variant, role).

    Bucket i covers seconds [i * bucket_s, (i + 1) * bucket_s) clipped to `span_s`; every field
    of FIELDS has one sum per bucket, zero where nothing was fetched. `cut` says that data went
    on past the declared duration (the quiesce after it), so the run's true end, and with it the
    width of the last bucket, is not known: a rate must leave that bucket out.
    """

    variant: str
    role: str
    bucket_s: int
    span_s: float
    sums: Mapping[str, Sequence[int]]
    run: str = ""  # the run's label in a comparison, "" in a one-run report
    cut: bool = False

    def covered(self, i: int) -> float:
        """Seconds bucket i covers (the last may be short: a rate divides by this, so a
        partial last bucket is not drawn as a drop)."""
        return max(1e-3, min(float(self.bucket_s), self.span_s - i * self.bucket_s))

    def partial(self) -> bool:
        """Is the last bucket shorter than the others?"""
        n = max((len(v) for v in self.sums.values()), default=0)
        return n > 0 and not self.cut and self.covered(n - 1) < self.bucket_s

    def total(self, fields: Sequence[str]) -> list[int]:
        n = max((len(self.sums.get(f, ())) for f in fields), default=0)
        out = [0] * n
        for name in fields:
            for i, value in enumerate(self.sums.get(name, ())):
                out[i] += value
        return out


@dataclass(frozen=True)
class FaultMark:
    """A fault step to mark on timelines, at simulated second `t_s`."""

    t_s: float
    label: str
    short: str
    event: str
    variant: str = ""
    broker: int | None = None
    run: str = ""
    fault: int | None = None  # the scenario's fault index, pairing fault.inject and fault.heal


@dataclass(frozen=True)
class TraceStyle:
    name: str
    color: str
    dash: str = "solid"
    width: float = 2.0


Styler = Callable[[str, str, str], TraceStyle]  # (run, variant, role) → how to draw it


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


def _seconds(duration_ms: Any) -> int:
    return math.ceil(_exact_seconds(duration_ms))


def _exact_seconds(duration_ms: Any) -> float:
    ok = isinstance(duration_ms, int | float) and not isinstance(duration_ms, bool)
    return duration_ms / 1000 if ok and duration_ms > 0 else 0.0


def _grouped(
    rows: Iterable[Mapping[str, Any]], variants: Sequence[str], roles: Sequence[str]
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    wanted_v, wanted_r = set(variants), set(roles)
    for row in rows:
        key = (row.get("variant"), row.get("role"))
        if key[0] in wanted_v and key[1] in wanted_r and isinstance(row.get("second"), int | float):
            groups.setdefault(key, []).append(row)  # type: ignore[arg-type]
    return groups


def _series(
    groups: Mapping[tuple[str, str], list[Mapping[str, Any]]],
    variants: Sequence[str],
    roles: Sequence[str],
    durations_ms: Mapping[str, Any],
    bucket: int,
    run: str,
) -> list[Series]:
    out = []
    for variant in variants:
        for role in roles:
            rows = groups.get((variant, role), [])
            last = max((int(r["second"]) + 1 for r in rows), default=0)
            declared = _exact_seconds(durations_ms.get(variant))
            # Data past the declared duration (the quiesce) ends at a moment no table records.
            cut = last > math.ceil(declared)
            span = float(last) if cut else declared
            n = math.ceil(span / bucket)
            sums = {name: [0] * n for name in FIELDS}
            for row in rows:
                i = int(row["second"]) // bucket
                for name in FIELDS:
                    sums[name][i] += int(row.get(name) or 0)
            if n and any(any(values) for values in sums.values()):
                out.append(Series(variant, role, bucket, span, sums, run, cut))
    return out


def series_from_seconds(
    rows: Iterable[Mapping[str, Any]],
    variants: Sequence[str],
    roles: Sequence[str],
    durations_ms: Mapping[str, Any],
    *,
    run: str = "",
    max_points: int = MAX_POINTS,
) -> list[Series]:
    """Series from the per-second table (metrics/fetch_timeseries.json), bucketed here.

    Used for runs analysed before the coarse timeline existed; one bucket width for the run.
    """
    groups = _grouped(rows, variants, roles)
    last = max((int(r["second"]) + 1 for g in groups.values() for r in g), default=0)
    span = max([last, *(_seconds(durations_ms.get(v)) for v in variants)])
    return _series(groups, variants, roles, durations_ms, bucket_seconds(span, max_points), run)


def series_from_timeline(
    rows: Iterable[Mapping[str, Any]],
    variants: Sequence[str],
    roles: Sequence[str],
    durations_ms: Mapping[str, Any],
    *,
    run: str = "",
) -> list[Series]:
    """Series from the coarse timeline (metrics/fetch_timeline.json): buckets as analysed."""
    groups = _grouped(rows, variants, roles)
    widths = {int(r.get("bucket_s") or 1) for g in groups.values() for r in g}
    # One width per run by construction; a hand-edited mix falls back to the widest.
    bucket = max(widths, default=1)
    return _series(groups, variants, roles, durations_ms, bucket, run)


def _time_unit(span_s: float) -> tuple[str, float]:
    """Seconds for short runs, minutes up to ten hours, hours beyond: ticks stay readable."""
    if span_s <= 1200:
        return "s", 1.0
    if span_s <= 36000:
        return "min", 60.0
    return "h", 3600.0


def seconds_log_axis(values: Iterable[float]) -> dict[str, Any]:
    """Ticks for a log axis of durations in seconds, each a power of ten with its unit:
    "100 µs", "1 ms", "60 s" (plotly's SI format would write "100µ" and "1m", and "1m" reads as a
    minute)."""
    positive = [v for v in values if v > 0]
    if not positive:
        return {}
    low = math.floor(math.log10(min(positive)))
    high = math.ceil(math.log10(max(positive)))
    vals, text = [], []
    for power in range(low, max(high, low + 1) + 1):
        value = 10.0 ** power
        for limit, factor, name in ((1e-3, 1e6, "µs"), (1.0, 1e3, "ms"), (math.inf, 1.0, "s")):
            if value < limit:
                text.append(f"{value * factor:,.0f} {name}")
                break
        vals.append(value)
    return {"type": "log", "tickmode": "array", "tickvals": vals, "ticktext": text}


def _duration_text(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


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


def report_styler(variants: Sequence[str], roles: Sequence[str]) -> Styler:
    """One run: a colour per variant; consumers dashed (named only when both roles show)."""
    index = {v: i for i, v in enumerate(variants)}

    def style(run: str, variant: str, role: str) -> TraceStyle:
        name = variant if len(roles) == 1 else f"{variant} · {ROLE_LABEL.get(role, role)}"
        color = PALETTE[index.get(variant, 0) % len(PALETTE)]
        return TraceStyle(name, color, "solid" if role == "follower" else "dash")

    return style


def comparison_styler(runs: Sequence[str], variants: Sequence[str], roles: Sequence[str]) -> Styler:
    """Several runs: a colour per variant, a dash pattern per run (the baseline solid);
    consumers thinner, so the same variant in two runs reads as a pair."""
    v_index = {v: i for i, v in enumerate(variants)}
    r_index = {r: i for i, r in enumerate(runs)}

    def style(run: str, variant: str, role: str) -> TraceStyle:
        name = f"{run} · {variant}"
        if len(roles) > 1:
            name += f" · {ROLE_LABEL.get(role, role)}"
        return TraceStyle(
            name,
            PALETTE[v_index.get(variant, 0) % len(PALETTE)],
            RUN_DASHES[r_index.get(run, 0) % len(RUN_DASHES)],
            2.0 if role == "follower" else 1.2,
        )

    return style


def _line(style: TraceStyle, xs: list[float], ys: list[float], unit: str) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": style.name,
        "x": xs,
        "y": ys,
        "line": {"color": style.color, "width": style.width, "dash": style.dash},
        "hovertemplate": f"%{{y:,.0f}} {unit}<extra>{style.name}</extra>",
    }


def _fault_overlay(
    faults: Sequence[FaultMark],
    scale: float,
    span_x: float,
    label_runs: bool,
    label_variants: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """(shapes, annotations, hover trace) marking faults on a time axis in units of `scale` s.

    A dotted line per fault step; a shaded span while a broker is down (crash to its restart)
    or a fault is active (fault.inject to the fault.heal of the same fault), or to the end; a ▼
    at the top of each line whose hover says what happened.
    """
    if not faults:
        return [], [], None
    shapes: list[dict[str, Any]] = []
    for fault in faults:
        x = round(fault.t_s / scale, 6)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "layer": "above",
                "line": {"color": FAULT_COLOR, "width": 1.2, "dash": "dot"},
            }
        )
    down: dict[tuple[str, str, str, int | None], float] = {}
    for fault in faults:
        if fault.event in ("broker.crash", "broker.shutdown", "broker.restart"):
            key = (fault.run, fault.variant, "broker", fault.broker)
        elif fault.event in ("fault.inject", "fault.heal") and fault.fault is not None:
            key = (fault.run, fault.variant, "fault", fault.fault)
        else:
            continue
        if fault.event in ("broker.crash", "broker.shutdown", "fault.inject"):
            down.setdefault(key, fault.t_s)
        elif key in down:
            shapes.append(_down_span(down.pop(key), fault.t_s, scale))
    for start in down.values():
        shapes.append(_down_span(start, span_x * scale, scale))

    def who(fault: FaultMark, brief: bool = False) -> str:
        head = [fault.run] if label_runs and fault.run else []
        head += [fault.variant] if fault.variant and (label_variants or not brief) else []
        return " · ".join(head)

    annotations = []
    if len(faults) <= MAX_FAULT_LABELS:
        for fault in faults:
            annotations.append(
                {
                    "text": f"{who(fault, True)}: {fault.short}" if who(fault, True)
                    else fault.short,
                    "xref": "x",
                    "yref": "paper",
                    "x": round(fault.t_s / scale, 6),
                    "y": 1,
                    "xanchor": "left",
                    "yanchor": "top",
                    "showarrow": False,
                    "font": {"size": 10, "color": FAULT_COLOR},
                    "bgcolor": "rgba(255,255,255,0.8)",
                }
            )
    texts = [
        f"{fault.label}" + (f" ({who(fault)})" if who(fault) else "") + f" at {fault.t_s:,.3f} s"
        for fault in faults
    ]
    hover = {
        "type": "scatter",
        "mode": "markers",
        "name": "faults",
        "x": [round(fault.t_s / scale, 6) for fault in faults],
        "y": [1] * len(faults),
        "yaxis": "y2",
        "marker": {"symbol": "triangle-down", "size": 10, "color": FAULT_COLOR},
        "text": texts,
        "hovertemplate": "%{text}<extra>fault</extra>",
    }
    return shapes, annotations, hover


def _down_span(start_s: float, end_s: float, scale: float) -> dict[str, Any]:
    return {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": round(start_s / scale, 6),
        "x1": round(end_s / scale, 6),
        "y0": 0,
        "y1": 1,
        "layer": "below",
        "line": {"width": 0},
        "fillcolor": "rgba(185, 28, 28, 0.07)",
    }


MAX_DIPS_NAMED = 4  # dips a caption names by time; the rest are counted


def counting_dips(series: Sequence[Series], field: str, scale: float, unit: str) -> str:
    """A sentence on the one-bucket dips (or spikes) of the rate of `field` that are artefacts
    of counting whole fetches per bucket, or "" when there are none.

    A fetch client repeats its round every long-poll wait plus a round trip, a little more than
    a whole fraction of a second; so a bucket usually holds k rounds and, every few hundred
    rounds, k - 1. Such a bucket is recognised by the data, never assumed: its neighbours agree
    (within 10 %), it holds fewer (or more) whole requests than they do, and its bytes per
    request are theirs (within 1 %), so the traffic did not change, only the count per bucket.
    """
    count_field = "requests" if field.startswith("request") else "responses"
    found: list[tuple[float, str]] = []
    rates: list[str] = []
    for s in series:
        values, counts = list(s.sums.get(field, ())), list(s.sums.get(count_field, ()))
        if len(values) < 3 or len(counts) != len(values):
            continue
        hits = []
        for i in range(1, len(values) - 1 - (1 if s.cut else 0)):
            before, here, after = counts[i - 1], counts[i], counts[i + 1]
            if not (before and here and after) or before != after or here == before:
                continue
            per = [values[j] / counts[j] for j in (i - 1, i, i + 1)]
            if max(per) > min(per) * 1.01:
                continue  # the requests themselves changed size: not a counting artefact
            hits.append(i)
        if hits:
            found += [(i * s.bucket_s, s.variant) for i in hits]
            total = sum(counts[: len(counts) - (1 if s.cut else 0)])
            span = min(s.span_s, (len(counts) - (1 if s.cut else 0)) * s.bucket_s)
            rates.append(f"{total / span:,.3f}")
    if not found:
        return ""
    found.sort()
    names = sorted({v for _, v in found})
    times = ", ".join(f"{t / scale:,.{0 if scale == 1 else 2}f} {unit}"
                      for t, _ in found[:MAX_DIPS_NAMED])
    more = f" and {len(found) - MAX_DIPS_NAMED} more" if len(found) > MAX_DIPS_NAMED else ""
    width = _duration_text(series[0].bucket_s)
    average = " or ".join(dict.fromkeys(rates))
    return (f"The one-bucket steps at {times}{more} ({', '.join(names)}) are an artefact of "
            f"counting, not a change in traffic: a fetch round takes a little longer than a "
            f"whole fraction of a second ({average} {count_field} a second on average, not a "
            f"whole number), so now and then a {width} bucket holds one round fewer or more "
            f"than its neighbours, each of the usual size.")


_TIME_SPECS: tuple[tuple[str, str, str, str, str, tuple[str, ...], bool], ...] = (
    # (chart id, title, y axis, unit, caption, fields summed, cumulative?)
    (
        "chart-request-rate",
        "Fetch request bytes per second",
        "request bodies (B/s)",
        "B/s",
        "How many bytes of fetch request bodies each variant sends every second, summed over all "
        "brokers: the steady cost of asking for data.",
        ("request_bytes",),
        False,
    ),
    (
        "chart-response-rate",
        "Fetch response bytes per second",
        "response bodies (B/s)",
        "B/s",
        "How many bytes of fetch response bodies the brokers send back every second, summed over "
        "all brokers: partition headers plus any records.",
        ("response_bytes",),
        False,
    ),
    (
        "chart-cumulative",
        "Cumulative fetch bytes (requests + responses)",
        "request + response bodies so far (B)",
        "B",
        "The running total of request and response body bytes: the slope is the rate, and the "
        "gap between lines is what one variant costs over the other.",
        ("request_bytes", "response_bytes"),
        True,
    ),
)


def time_charts(
    series: Sequence[Series],
    style: Styler,
    faults: Sequence[FaultMark] = (),
    *,
    label_runs: bool = False,
) -> list[Chart]:
    """The three fetch timelines for `series` (drawn in the order given), faults marked on each.

    Charts without any data are left out rather than drawn empty.
    """
    if not series:
        return []
    span = max(s.span_s for s in series)
    unit_name, scale = _time_unit(span)
    roles = {s.role for s in series}
    buckets = sorted({s.bucket_s for s in series})
    charts = []
    for chart_id, title, y_title, unit, caption, fields, cumulative in _TIME_SPECS:
        traces, levels = [], []
        for s in series:
            totals = s.total(fields)
            if not any(totals):
                continue
            if cumulative:
                running, ys_c = 0, []
                for value in totals:
                    running += value
                    ys_c.append(running)
                xs = [min((i + 1) * s.bucket_s, s.span_s) / scale for i in range(len(totals))]
                ys: list[float] = list(ys_c)
            else:
                kept = len(totals) - 1 if s.cut and len(totals) > 1 else len(totals)
                xs = [i * s.bucket_s / scale for i in range(kept)]
                ys = [round(totals[i] / s.covered(i), 3) for i in range(kept)]
                levels.append(ys)
                if kept > 1 and s.partial():
                    # The last bucket's rate holds until the run's end, not a full bucket on.
                    xs.append(s.span_s / scale)
                    ys.append(ys[-1])
            xs = [round(x, 6) for x in xs]
            traces.append(_line(style(s.run, s.variant, s.role), xs, ys, unit))
        if not traces:
            continue
        # A cumulative line stays linear: its slope is the rate only on a linear axis.
        log_y = not cumulative and _wants_log(levels)
        notes = []
        if log_y:
            notes.append("log scale: the lines differ by more than 20×")
        wide = [b for b in buckets if b > 1]
        if wide and not cumulative:
            notes.append("each point averages " + " or ".join(_duration_text(b) for b in wide))
        if not cumulative and any(s.cut for s in series):
            notes.append("the last bucket is left out: the run went on past its duration to "
                         "settle, and ended inside that bucket at a moment the tables do not "
                         "record")
        if not cumulative and any(s.partial() for s in series):
            notes.append("the last point is the rate over the part of its bucket the run "
                         "covered")
        if len(roles) > 1:
            notes.append("thinner or dashed lines are consumers" if label_runs else
                         "dashed lines are consumers")
        if label_runs:
            notes.append("line style tells the runs apart, colour the variants")
        if faults:
            notes.append("dotted red lines mark faults, hover a ▼ for what happened; shaded spans "
                         "are faults in force")
        full_caption = caption + (f" ({'; '.join(notes)}.)" if notes else "")
        if not cumulative:
            dips = counting_dips([s for s in series if any(s.total(fields))], fields[0],
                                 scale, unit_name)
            full_caption += f" {dips}" if dips else ""
        layout = _layout(title, f"simulated time ({unit_name})", y_title, log_y=log_y)
        layout["xaxis"]["hoverformat"] = ",.2f" if scale > 1 else ",.0f"
        shapes, annotations, hover = _fault_overlay(
            faults, scale, span / scale, label_runs, len({s.variant for s in series}) > 1
        )
        if hover is not None:
            traces.append(hover)
            layout["shapes"] = shapes
            layout["annotations"] = layout["annotations"] + annotations
            # The ▼ markers sit on a hidden 0..1 axis so they stay at the top at any zoom.
            layout["yaxis2"] = {
                "overlaying": "y",
                "range": [0, 1.04],
                "visible": False,
                "fixedrange": True,
            }
        charts.append(Chart(chart_id, title, full_caption, {"data": traces, "layout": layout}))
    return charts


def size_chart(
    groups: Sequence[tuple[str, str, str, Mapping[int, int]]],
    style: Styler,
    kind: str,
    *,
    chart_id: str | None = None,
) -> Chart | None:
    """Bars of how many requests (or responses) had each exact body size.

    `groups` are (run, variant, role, {size: count}) in drawing order.
    """
    groups = [g for g in groups if g[3]]
    if not groups:
        return None
    distinct = sorted({size for *_, per in groups for size in per})
    categorical = len(distinct) <= MAX_SIZE_CATEGORIES
    noun = "requests" if kind == "request" else "responses"
    traces = []
    for run, variant, role, per in groups:
        look = style(run, variant, role)
        ordered = sorted(per)
        trace: dict[str, Any] = {
            "name": look.name,
            "y": [per[s] for s in ordered],
            "hovertemplate": f"%{{y:,}} {noun} of %{{x}}<extra>{look.name}</extra>",
        }
        if categorical:
            # Hatching tells what the dash tells on a line: consumers, or a later run.
            shape = "/" if role != "follower" and look.dash == "dash" else BAR_PATTERNS.get(
                look.dash, "")
            trace.update(
                type="bar",
                x=[f"{s:,} B" for s in ordered],
                marker={"color": look.color} | ({"pattern": {"shape": shape}} if shape else {}),
            )
            if len(groups) <= 4:  # more bars than that per size and the counts overlap
                trace.update(
                    text=[f"{per[s]:,}" for s in ordered], textposition="outside",
                    cliponaxis=False,
                )
        else:
            trace.update(
                type="scatter",
                mode="markers",
                x=ordered,
                marker={"color": look.color, "size": 7, "opacity": 0.8},
                hovertemplate=f"%{{y:,}} {noun} of %{{x:,}} B<extra>{look.name}</extra>",
            )
        traces.append(trace)
    title = f"Fetch {kind} body sizes"
    all_counts = [c for *_, per in groups for c in per.values()]
    log_y = max(all_counts) / max(min(all_counts), 1) > 20
    layout = _layout(
        title,
        f"{kind} body size (bytes)",
        f"{noun} (count)",
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
    return Chart(chart_id or f"chart-{kind}-sizes", title, caption,
                 {"data": traces, "layout": layout})


def size_groups(
    sizes: Iterable[Mapping[str, Any]],
    variants: Sequence[str],
    roles: Sequence[str],
    kind: str,
    run: str = "",
) -> list[tuple[str, str, str, dict[int, int]]]:
    """(run, variant, role, {size: count}) from metrics/fetch_sizes.json rows of one `kind`."""
    counts: dict[tuple[str, str], dict[int, int]] = {}
    for row in sizes:
        if row.get("kind") != kind or not isinstance(row.get("body_bytes"), int | float):
            continue
        key = (row.get("variant"), row.get("role"))
        if key[0] in variants and key[1] in roles:
            per = counts.setdefault(key, {})  # type: ignore[arg-type]
            size = int(row["body_bytes"])
            per[size] = per.get(size, 0) + int(row.get("count") or 0)
    return [
        (run, v, r, counts[(v, r)]) for v in variants for r in roles if counts.get((v, r))
    ]


def build_charts(
    variants: Sequence[str],
    timeseries: Sequence[Mapping[str, Any]],
    sizes: Sequence[Mapping[str, Any]],
    durations_ms: Mapping[str, int | None],
    *,
    with_consumers: bool,
    timeline: Sequence[Mapping[str, Any]] | None = None,
    faults: Sequence[FaultMark] = (),
) -> list[Chart]:
    """All charts of a one-run report, in page order, for the variants given (in that order).

    Timelines come from `timeline` (metrics/fetch_timeline.json) when given, else from the
    per-second `timeseries`. Consumer traces appear (dashed / hatched) only when
    `with_consumers`; charts without any data are left out rather than drawn empty.
    """
    roles = ("follower", "consumer") if with_consumers else ("follower",)
    if timeline:
        series = series_from_timeline(timeline, variants, roles, durations_ms)
    else:
        series = series_from_seconds(timeseries, variants, roles, durations_ms)
    style = report_styler(variants, roles)
    charts = time_charts(series, style, faults)
    for kind in ("request", "response"):
        chart = size_chart(size_groups(sizes, variants, roles, kind), style, kind)
        if chart is not None:
            charts.append(chart)
    return charts
