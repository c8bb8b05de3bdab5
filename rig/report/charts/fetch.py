"""All fetch charts of a one-run report, in page order: the three timelines, then the request
and response size bars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig.report.charts.figure import Chart, FaultMark
from rig.report.charts.series import fetch_series
from rig.report.charts.sizes import size_chart, size_groups
from rig.report.charts.styles import report_styler
from rig.report.charts.timelines import time_charts

__all__ = [
    "build_charts",
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
    series = fetch_series(timeline, timeseries, variants, roles, durations_ms)
    style = report_styler(variants, roles)
    charts = time_charts(series, style, faults)
    for kind in ("request", "response"):
        chart = size_chart(size_groups(sizes, variants, roles, kind), style, kind)
        if chart is not None:
            charts.append(chart)
    return charts
