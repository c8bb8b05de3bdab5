"""What every timeline of a report section shares (recovery, sessions, the first screen): one
time axis for the run, fault marks drawn once and labelled sparsely, whole-number count
axes, one legend entry per variant, and step series bucketed so a spike never vanishes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from rig.analysis.buckets import bucket_seconds
from rig.report.charts.faults import FAULT_LABEL_LINES, fault_overlay
from rig.report.charts.figure import Chart, FaultMark, base_layout
from rig.report.inputs import RunInputs, dig, number
from rig.report.recovery.values import to_int

__all__ = [
    "count_layout",
    "finish_timeline",
    "shared_marks",
    "shared_span",
    "steps",
    "variant_legend",
]


def shared_span(inputs: RunInputs, variants: Sequence[str], *extra: float) -> float:
    """The time axis every recovery chart shares: the longest variant, or further if data goes
    on while the run quiesces."""
    declared = [number(dig(inputs.run, "variants", v, "duration_ms")) for v in variants]
    return max([*(d / 1000 for d in declared if d), *extra, 1.0])


def shared_marks(marks: Sequence[FaultMark], variants: Sequence[str]) -> list[FaultMark]:
    """A fault every variant had at the same moment, drawn once and labelled without a variant:
    the variants of one scenario share its fault schedule, and stacked copies darken the spans
    and hide each other's labels."""
    if len(variants) < 2:
        return list(marks)
    seen: dict[tuple[Any, ...], set[str]] = {}
    for m in marks:
        seen.setdefault((m.t_s, m.event, m.label, m.broker, m.fault), set()).add(m.variant)
    out: list[FaultMark] = []
    done: set[tuple[Any, ...]] = set()
    for m in marks:
        key = (m.t_s, m.event, m.label, m.broker, m.fault)
        if seen[key] >= set(variants):
            if key not in done:
                done.add(key)
                out.append(replace(m, variant=""))
        else:
            out.append(m)
    return out


def _label_marks(marks: Sequence[FaultMark]) -> list[FaultMark]:
    """The marks worth a label: a fault.inject or fault.heal at the moment its broker crashed or
    restarted says the same thing twice (its line and hover stay)."""
    broker_steps = {(m.variant, round(m.t_s, 3)) for m in marks if m.broker is not None}
    return [m for m in marks if m.event not in ("fault.inject", "fault.heal")
            or (m.variant, round(m.t_s, 3)) not in broker_steps]


def _stagger(annotations: list[dict[str, Any]], span_x: float) -> None:
    """Step labels of nearby faults down a line each, so they do not print over each other."""
    level, last = 0, None
    for note in sorted(annotations, key=lambda a: a["x"]):
        near = last is not None and note["x"] - last < span_x * 0.09
        level = min(level + 1, FAULT_LABEL_LINES - 1) if near else 0
        note["y"] = round(1 - 0.065 * level, 3)
        last = note["x"]


def count_layout(traces: list[dict[str, Any]], title: str, unit: str,
                 y_title: str) -> dict[str, Any]:
    """The layout of a timeline of counts in simulated `unit`s: one legend entry per variant
    (variant_legend) and whole-number ticks on the y axis."""
    variant_legend(traces)
    layout = base_layout(title, f"simulated time ({unit})", y_title, log_y=False)
    _count_axis(layout["yaxis"], traces)
    return layout


def _count_axis(axis: dict[str, Any], traces: Sequence[Mapping[str, Any]]) -> None:
    """Whole-number ticks for counts: "0 0 1 1" would read as rounding, not as a count."""
    top = max((y for t in traces for y in t.get("y", []) if isinstance(y, int | float)),
              default=0)
    axis.update(tickformat=",d", rangemode="tozero")
    if top <= 5:
        axis.update(dtick=1, range=[0, max(1, top) * 1.15])


def finish_timeline(
    chart_id: str,
    title: str,
    caption: str,
    traces: list[dict[str, Any]],
    layout: dict[str, Any],
    marks: Sequence[FaultMark],
    span_s: float,
    scale: float,
    several: bool,
) -> Chart:
    """Add the shared time axis range and the fault markers; wrap as a Chart."""
    layout["xaxis"]["range"] = [0, round(span_s / scale, 6)]
    layout["xaxis"]["hoverformat"] = ",.2f" if scale > 1 else ",.3f"
    shapes, _, hover = fault_overlay(marks, scale, span_s / scale, False, several)
    _, annotations, _ = fault_overlay(_label_marks(marks), scale, span_s / scale, False, several)
    _stagger(annotations, span_s / scale)
    notes = []
    if hover is not None:
        traces.append(hover)
        unique: list[dict[str, Any]] = []
        for shape in shapes:  # a crash and its fault.inject shade the same span: once is enough
            if shape not in unique:
                unique.append(shape)
        layout["shapes"] = layout.get("shapes", []) + unique
        layout["annotations"] = layout["annotations"] + annotations
        layout["yaxis2"] = {"overlaying": "y", "range": [0, 1.04], "visible": False,
                            "fixedrange": True}
        notes.append("dotted red lines mark faults, hover a ▼ for what happened; shaded spans "
                     "are faults in force")
    text = caption + (f" ({'; '.join(notes)}.)" if notes else "")
    return Chart(chart_id, title, text, {"data": traces, "layout": layout})


def steps(points: Sequence[Mapping[str, Any]], key: str, span_s: float,
          max_points: int) -> tuple[list[float], list[int], int]:
    """(seconds, values, bucket) of a step series that starts at 0 and holds its last value to
    `span_s`. Past `max_points` changes it is bucketed (bucket > 0), each bucket showing the
    most it reached: a short spike must not vanish between two points."""
    last_at: dict[float, int] = {}
    for p in points:  # in seq order: the last change at one instant is the state after it
        last_at[p["t_ms"] / 1000] = to_int(p.get(key))
    times = sorted(last_at)
    if len(times) + 2 <= max_points:
        ys = [0, *(last_at[t] for t in times)]
        return [0.0, *times, span_s], [*ys, ys[-1]], 0
    bucket = bucket_seconds(math.ceil(span_s), max_points)
    xs: list[float] = []
    ys = []
    held, k = 0, 0
    for i in range(math.ceil(span_s / bucket)):
        top = held
        while k < len(times) and times[k] < (i + 1) * bucket:
            held = last_at[times[k]]
            top = max(top, held)
            k += 1
        xs.append(float(i * bucket))
        ys.append(top)
    return [*xs, span_s], [*ys, held], bucket


def variant_legend(traces: list[dict[str, Any]]) -> None:
    """One legend entry per variant, as on the fetch charts (clicking it hides all its traces):
    an entry per line style would wrap into the title on a phone. Captions tell the styles
    apart, and each trace's hover names what it shows (its `meta`)."""
    seen: set[str] = set()
    for trace in traces:
        trace["legendgroup"] = trace["name"]
        trace["showlegend"] = trace["name"] not in seen
        seen.add(trace["name"])
