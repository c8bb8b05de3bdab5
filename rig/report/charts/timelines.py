"""The three fetch timelines (request rate, response rate, cumulative bytes) of a report or a
comparison, with the caption sentence on counting artefacts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig.report.charts.faults import fault_overlay
from rig.report.charts.figure import (
    Chart,
    FaultMark,
    base_layout,
    duration_text,
    time_unit,
    wants_log,
)
from rig.report.charts.series import Series
from rig.report.charts.styles import Styler, TraceStyle

__all__ = [
    "counting_dips",
    "time_charts",
]

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
    width = duration_text(series[0].bucket_s)
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
    unit_name, scale = time_unit(span)
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
        log_y = not cumulative and wants_log(levels)
        notes = []
        if log_y:
            notes.append("log scale: the lines differ by more than 20×")
        wide = [b for b in buckets if b > 1]
        if wide and not cumulative:
            notes.append("each point averages " + " or ".join(duration_text(b) for b in wide))
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
        layout = base_layout(title, f"simulated time ({unit_name})", y_title, log_y=log_y)
        layout["xaxis"]["hoverformat"] = ",.2f" if scale > 1 else ",.0f"
        shapes, annotations, hover = fault_overlay(
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
