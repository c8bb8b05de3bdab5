"""The Recovery section of a one-run report: its template variables from the tables and
timelines of this package, or None when the run had neither faults nor producers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig import rundir
from rig.report.charts.figure import FaultMark
from rig.report.inputs import RunInputs, dig, number
from rig.report.recovery.fault_table import MAX_FAULT_ROWS, fault_rows
from rig.report.recovery.frame import shared_marks, shared_span
from rig.report.recovery.headline import has_recovery_numbers, headline_rows
from rig.report.recovery.lost import lost_table
from rig.report.recovery.timelines import events_chart, lag_chart, partition_chart, produce_chart
from rig.report.recovery.values import read_table, to_int

__all__ = [
    "build_recovery",
]


def _active(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark],
            recovery: Sequence[Mapping[str, Any]], produce: Sequence[Mapping[str, Any]]) -> bool:
    """Had the run faults or producers? An idle run has neither, and no Recovery section."""
    if marks or recovery or any(to_int(r.get("acked")) or to_int(r.get("errors")) for r in produce):
        return True
    keys = (("replication", "faults"), ("produce", "acked"), ("produce", "errors"))
    return any(to_int(dig(inputs.summary, "variants", v, *k)) for v in variants for k in keys)


def build_recovery(
    inputs: RunInputs,
    variants: Sequence[str],
    marks: Sequence[FaultMark],
    *,
    with_consumers: bool = False,
) -> dict[str, Any] | None:
    """The section's template variables, or None when it is left out: a run without faults
    and producers, or one analysed before rig measured recovery."""
    run_dir = inputs.run_dir
    recovery = read_table(run_dir, rundir.RECOVERY)
    points = read_table(run_dir, rundir.PARTITION_TIMELINE)
    produce_table = read_table(run_dir, rundir.PRODUCE_TIMELINE)
    produce = produce_table or []
    lag = read_table(run_dir, rundir.CONSUMER_LAG) if with_consumers else []
    numbers = any(has_recovery_numbers(inputs.summary, v) for v in variants)
    if not (numbers or recovery or points or produce):
        return None
    if not _active(inputs, variants, marks, recovery or [], produce):
        return None
    ends = [(number(p.get("t_ms")) or 0.0) / 1000 for p in points or []]
    ends += [float(to_int(r.get("second")) + 1) for r in produce]
    ends += [m.t_s for m in marks]
    ends += [float(to_int(r.get("second")) + 1) for r in lag or []]
    span_s = shared_span(inputs, variants, *ends)
    marks = shared_marks(marks, variants)
    charts = [
        chart
        for chart in (
            partition_chart(points, variants, marks, span_s) if points is not None else None,
            produce_chart(produce, variants, marks, span_s),
            events_chart(produce, variants, marks, span_s),
            lag_chart(lag or [], variants, marks, span_s),
        )
        if chart is not None
    ]
    faults = fault_rows(recovery or [], variants, {
        v: number(dig(inputs.run, "variants", v, "duration_ms")) for v in variants})
    return {
        "headline": headline_rows(inputs.summary, variants),
        "faults": faults[:MAX_FAULT_ROWS],
        "faults_total": len(faults),
        "charts": charts,
        "lost": lost_table(inputs, variants),
        "missing": [rundir.metric_path(run_dir, name).name
                    for name, table in ((rundir.RECOVERY, recovery),
                                        (rundir.PARTITION_TIMELINE, points),
                                        (rundir.PRODUCE_TIMELINE, produce_table),
                                        (rundir.CONSUMER_LAG, lag))
                    if table is None],
    }
