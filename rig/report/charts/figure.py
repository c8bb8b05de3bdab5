"""One figure on the page (Chart) and the look every figure shares: the title marked
SIMULATED, the watermark, the palette, the legend on top, linear or log axes, the unit of
simulated time an axis counts in, the fault steps every timeline marks (FaultMark), and text
kept plain (plotly reads tags as markup).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FONT",
    "PALETTE",
    "SIMULATED_RED",
    "Chart",
    "FaultMark",
    "base_layout",
    "duration_text",
    "plotly_text",
    "seconds_log_axis",
    "time_unit",
    "wants_log",
]

PALETTE = ("#2563eb", "#dc2626", "#059669", "#7c3aed", "#d97706", "#0891b2", "#be185d", "#4b5563")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
SIMULATED_RED = "#b91c1c"

_LOG_AXIS = {"type": "log", "dtick": 1, "tickformat": "~s"}
_LINEAR_AXIS = {"type": "linear", "rangemode": "tozero"}

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


def time_unit(span_s: float) -> tuple[str, float]:
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


def duration_text(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def base_layout(
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


def wants_log(series: Iterable[Sequence[float]]) -> bool:
    """Log scale when the typical levels of the traces differ by more than 20×, otherwise
    the smaller traces are flat lines on the floor of a linear axis."""
    levels = []
    for values in series:
        positive = sorted(v for v in values if v > 0)
        if positive:
            levels.append(positive[len(positive) // 2])
    return len(levels) > 1 and max(levels) / min(levels) > 20
