"""Fault steps marked on a time axis: a dotted line per step, a shaded span while a broker is
down or a fault in force, and a ▼ whose hover says what happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig.report.charts.figure import FaultMark

__all__ = [
    "FAULT_COLOR",
    "fault_overlay",
]

MAX_FAULT_LABELS = 12  # more fault labels than this overlap; the lines and hover stay
FAULT_COLOR = "#b91c1c"
FAULT_LABEL = "fault-label"  # the annotations' name: the page places them as drawn
FAULT_LABEL_LINES = 6  # lines of fault labels at most, under the top of the plot


def fault_overlay(
    faults: Sequence[FaultMark],
    scale: float,
    span_x: float,
    label_runs: bool,
    label_variants: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """(shapes, annotations, hover trace) marking faults on a time axis in units of `scale` s.

    A dotted line per fault step; a shaded span while a broker is down (crash to its restart,
    or to the end) or a fault is active (fault.inject to the fault.heal of the same fault; a
    fault that is not undone, such as a reassignment, has no heal and no span); a ▼ at the top
    of each line whose hover says what happened.
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
        if fault.event in ("broker.crash", "broker.shutdown", "broker.restart",
                           "broker.startup_failed"):
            key = (fault.run, fault.variant, "broker", fault.broker)
        elif fault.event in ("fault.inject", "fault.heal") and fault.fault is not None:
            key = (fault.run, fault.variant, "fault", fault.fault)
        else:
            continue
        if fault.event in ("broker.crash", "broker.shutdown", "broker.startup_failed",
                           "fault.inject"):
            down.setdefault(key, fault.t_s)
        elif key in down:
            shapes.append(_down_span(down.pop(key), fault.t_s, scale))
    for key, start in down.items():
        if key[2] == "broker":  # a fault.inject with no fault.heal is not undone: no span
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
                    "name": FAULT_LABEL,  # (the page places these by their drawn width)
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
