"""The report's "ISR" section: who was in sync when, how often the ISR shrank and grew under each
strategy, how long each change of a partition's state took to reach every broker, and how long
the brokers' metadata caches disagreed with the control plane (ZooKeeper's /state, or the KRaft
controller's PartitionChangeRecords in the metadata log).

Reads summary.json (`variants.<v>.isr`) and metrics/isr_{membership,propagation,staleness}.json
written by rig.analysis.isr; a run without them, or without a single ISR change, has no section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig import rundir
from rig.report.charts.faults import FAULT_COLOR, fault_overlay
from rig.report.charts.figure import (
    PALETTE,
    Chart,
    FaultMark,
    base_layout,
    seconds_log_axis,
    time_unit,
)
from rig.report.format import DASH, fmt_int, fmt_ms_spread, fmt_seconds
from rig.report.inputs import RunInputs, dig
from rig.report.inputs import number as _num
from rig.report.recovery.values import read_table

__all__ = ["MAX_STRIPS", "build_isr"]

MAX_STRIPS = 24  # replica rows in the membership chart; the busiest partitions first
IN_SYNC = "#059669"
OUT_OF_SYNC = "#e5e7eb"


def _seconds(value: Any) -> str:
    ms = _num(value)
    return DASH if ms is None else f"{ms / 1000:,.3f}"


def _headline(inputs: RunInputs, variants: Sequence[str]) -> list[dict[str, Any]]:
    def row(label: str, unit: str, cells: list[str]) -> dict[str, Any]:
        return {"label": label, "unit": unit, "cells": cells}

    def isr(v: str, *path: str) -> Any:
        return dig(inputs.summary, "variants", v, "isr", *path)

    return [
        row("ISR strategy", "", [str(dig(inputs.run, "variants", v, "strategies", "isr") or DASH)
                                 for v in variants]),
        row("ISR shrinks", "by the leader + by the controller",
            [f"{fmt_int(isr(v, 'shrinks'))} ({fmt_int(isr(v, 'shrinks_by_leader'))} + "
             f"{fmt_int(isr(v, 'shrinks_by_controller'))})" if isr(v, "shrinks") else
             fmt_int(isr(v, "shrinks")) for v in variants]),
        row("ISR expands", "", [fmt_int(isr(v, "expands")) for v in variants]),
        row("Shrink delay", "s from the fault to the shrink, min / p50 / max",
            [fmt_ms_spread(isr(v, "shrink_delay_ms")) for v in variants]),
        row("ISR change notifications", "/isr_change_notification children",
            [fmt_int(isr(v, "notifications")) for v in variants]),
        row("Propagation delay", "s from the write to a broker's cache, min / p50 / max",
            [fmt_ms_spread(isr(v, "propagation_delay_ms")) for v in variants]),
        row("Longest metadata staleness", "s a broker's cache disagreed with the controller's",
            [_seconds(isr(v, "max_metadata_staleness_ms")) for v in variants]),
        # The controller's side of a crash, both eras side by side (rig.analysis.availability).
        row("Fencing delay", "s from a broker's crash to its fencing (ZooKeeper: session "
            "expiry), min / p50 / max",
            [fmt_ms_spread(dig(inputs.summary, "variants", v, "replication", "fencing_delay_ms"))
             for v in variants]),
        row("Under min ISR", "partition-seconds led with fewer in-sync replicas than "
            "min.insync.replicas",
            [fmt_seconds(dig(inputs.summary, "variants", v, "replication",
                             "under_min_isr_partition_seconds")) for v in variants]),
    ]


def _replicas(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Every broker that was a replica at some point, in order of first appearance: a KRaft
    reassignment adds the target's new replicas and, as it completes, drops the old ones."""
    return list(dict.fromkeys(int(b) for r in rows for b in r.get("replicas") or ()))


def _strip_rows(membership: Sequence[Mapping[str, Any]], variants: Sequence[str]
                ) -> tuple[list[tuple[str, tuple[str, int], list[Mapping[str, Any]]]], int]:
    """(variant, partition, its states in order) for every partition whose ISR changed in some
    variant, busiest first, each shown for every variant (a calm variant's strips are the
    comparison)."""
    grouped: dict[tuple[str, int], dict[str, list[Mapping[str, Any]]]] = {}
    for row in membership:
        v = str(row.get("variant"))
        if v in variants and _num(row.get("t_ms")) is not None:
            key = (str(row.get("topic")), int(row.get("partition") or 0))
            grouped.setdefault(key, {}).setdefault(v, []).append(row)
    changed = [(key, by_variant) for key, by_variant in grouped.items()
               if any(len(rows) > 1 for rows in by_variant.values())]
    changed.sort(key=lambda item: (-max(len(r) for r in item[1].values()), item[0]))
    per_partition = max((len(_replicas(rows)) for _, by_variant in changed
                         for rows in by_variant.values()), default=1) * max(1, len(variants))
    shown = changed[:max(1, MAX_STRIPS // max(1, per_partition))]
    return ([(v, key, by_variant[v]) for v in variants for key, by_variant in shown
             if by_variant.get(v)], len(changed))


def _membership_chart(membership: Sequence[Mapping[str, Any]], variants: Sequence[str],
                      span_s: float, fault_marks: Sequence[FaultMark] = ()) -> Chart | None:
    groups, total = _strip_rows(membership, variants)
    if not groups:
        return None
    unit, scale = time_unit(span_s)
    labels: list[str] = []
    ins: dict[str, list[Any]] = {"x": [], "base": [], "y": [], "text": []}
    outs: dict[str, list[Any]] = {"x": [], "base": [], "y": [], "text": []}
    marks: dict[str, list[Any]] = {"x": [], "y": [], "text": []}
    for variant, (topic, partition), rows in groups:
        for broker in _replicas(rows):
            label = f"{variant} · {topic}-{partition} · broker {broker}"
            labels.append(label)
            for i, row in enumerate(rows):
                start = (_num(row.get("t_ms")) or 0.0) / 1000
                end = ((_num(rows[i + 1].get("t_ms")) or 0.0) / 1000 if i + 1 < len(rows)
                       else span_s)
                if end <= start or broker not in (row.get("replicas") or ()):
                    continue  # not (yet, or any more) a replica: no strip
                member = broker in (row.get("isr") or ())
                target = ins if member else outs
                target["x"].append(round((end - start) / scale, 6))
                target["base"].append(round(start / scale, 6))
                target["y"].append(label)
                leader = " (leader)" if row.get("leader") == broker else ""
                target["text"].append(f"{'in' if member else 'out of'} the ISR{leader} from "
                                      f"{start:,.3f} s to {end:,.3f} s")
                was = broker in (rows[i - 1].get("isr") or ()) if i else True
                if i and was and not member:
                    marks["x"].append(round(start / scale, 6))
                    marks["y"].append(label)
                    marks["text"].append(f"removed at {start:,.3f} s by the "
                                         f"{row.get('writer') or 'leader'}")
    traces: list[dict[str, Any]] = [
        {"type": "bar", "orientation": "h", "name": "in the ISR", "marker": {"color": IN_SYNC},
         "textposition": "none", "hovertemplate": "%{text}<extra>%{y}</extra>", **ins},
        {"type": "bar", "orientation": "h", "name": "out of the ISR",
         "marker": {"color": OUT_OF_SYNC, "line": {"color": "#9ca3af", "width": 0.5}},
         "textposition": "none", "hovertemplate": "%{text}<extra>%{y}</extra>", **outs},
        {"type": "scatter", "mode": "markers", "name": "shrink",
         "marker": {"symbol": "line-ns-open", "size": 14, "color": FAULT_COLOR,
                    "line": {"width": 2, "color": FAULT_COLOR}},
         "hovertemplate": "%{text}<extra>%{y}</extra>", **marks},
    ]
    traces = [t for t in traces if t["x"]]  # no removal ticks, say: no empty trace
    title = "ISR membership per replica"
    layout = base_layout(title, f"simulated time ({unit})", "", log_y=False)
    layout["barmode"] = "overlay"
    layout["hovermode"] = "closest"
    layout["bargap"] = 0.35
    layout["yaxis"] = {"type": "category", "categoryorder": "array",
                       "categoryarray": list(reversed(labels)), "automargin": True,
                       "title": {"text": ""}}
    layout["xaxis"]["range"] = [0, round(span_s / scale, 6)]
    layout["height"] = max(220, 90 + 26 * len(labels))
    # The faults as on the other timelines: a dotted line each, shaded while in force.
    shapes, _, _ = fault_overlay(list(fault_marks), scale, span_s / scale, False,
                                 len(variants) > 1)
    unique: list[dict[str, Any]] = []
    for shape in shapes:
        if shape not in unique:
            unique.append(shape)
    layout["shapes"] = unique
    caption = ("One strip per replica of each partition whose ISR changed in some variant, from "
               "the control plane's partition state (ZooKeeper's /state, or the KRaft "
               "controller's records): green while the replica is in the ISR, grey while it is "
               "out, none while it is not a replica; a red tick marks each removal (shrinks that "
               "are undone within milliseconds show only as ticks). Dotted red lines mark faults; "
               "shaded spans are faults in force (a crashed replica stays in the ISR until "
               "someone removes it).")
    shown = len({key for _, key, _ in groups})
    if shown < total:
        caption += (f" The {shown} busiest of the {total} partitions whose ISR changed; "
                    f"{rundir.metric_file(rundir.ISR_MEMBERSHIP)} has them all.")
    return Chart("chart-isr-membership", title, caption, {"data": traces, "layout": layout})


def _propagation_chart(rows: Sequence[Mapping[str, Any]], variants: Sequence[str]
                       ) -> Chart | None:
    rows = [r for r in rows if str(r.get("variant")) in variants and _num(r.get("delay_ms"))
            is not None]
    if not rows:
        return None
    traces = []
    for i, v in enumerate(variants):
        for writer, symbol in (("leader", "circle"), ("controller", "diamond")):
            mine = [r for r in rows if str(r.get("variant")) == v and r.get("writer") == writer]
            if not mine:
                continue
            traces.append({
                # A box without its box: only the jittered points, one column per (variant,
                # writer), so a handful of points is not drawn as a distribution it is not.
                "type": "box", "name": f"{v} · {writer}'s changes", "boxpoints": "all",
                "jitter": 0.5, "pointpos": 0, "fillcolor": "rgba(0,0,0,0)",
                "line": {"width": 0}, "legendgroup": v,
                "y": [max(round((_num(r["delay_ms"]) or 0.0) / 1000, 6), 1e-4) for r in mine],
                "text": [f"broker {r.get('broker')} · {r.get('topic')}-{r.get('partition')} · "
                         f"written at {(_num(r.get('written_ms')) or 0.0) / 1000:,.3f} s"
                         for r in mine],
                "marker": {"color": PALETTE[i % len(PALETTE)], "size": 8, "symbol": symbol,
                           "opacity": 0.8},
                "hovertemplate": "%{y:,.4f} s: %{text}<extra>%{x}</extra>",
            })
    title = "Propagation delay: partition state write → each broker's metadata cache"
    layout = base_layout(title, "", "delay (log scale)", log_y=True)
    delays = [y for r in rows if (y := _num(r.get("delay_ms"))) is not None]
    layout["yaxis"].update(seconds_log_axis(max(d / 1000, 1e-4) for d in delays))
    layout["hovermode"] = "closest"
    layout["xaxis"]["type"] = "category"
    layout["showlegend"] = False
    caption = ("Each point is one broker learning one partition's new ISR or leader: from the "
               "write of the partition's /state znode to the UpdateMetadata that put it in the "
               "broker's cache (KRaft: from the controller's append of the PartitionChangeRecord "
               "to the broker's metadata fetch that applied it). A ZooKeeper leader's change "
               "(circles) waits in its isrChangeSet until no change came for 5 s, or the last "
               "announcement is over 60 s old, checked every 2.5 s: 5 to 7.5 s after a burst of "
               "changes, within 2.5 s for a lone one. A write that lands just before the "
               "controller reads ZooKeeper for an earlier announcement arrives within "
               "milliseconds. The controller's own changes (diamonds) go out at once. Changes "
               "undone before they were announced never reach a cache and have no point.")
    return Chart("chart-isr-propagation", title, caption, {"data": traces, "layout": layout})


def _staleness_chart(rows: Sequence[Mapping[str, Any]], variants: Sequence[str]
                     ) -> Chart | None:
    rows = [r for r in rows if str(r.get("variant")) in variants
            and _num(r.get("duration_ms")) is not None]
    if not rows:
        return None
    brokers = sorted({int(r.get("broker") or 0) for r in rows})
    traces = []
    for i, v in enumerate(variants):
        worst = {b: 0.0 for b in brokers}
        for r in rows:
            if str(r.get("variant")) == v:
                b = int(r.get("broker") or 0)
                worst[b] = max(worst[b], (_num(r["duration_ms"]) or 0.0) / 1000)
        traces.append({
            "type": "bar", "name": v, "x": [f"broker {b}" for b in brokers],
            "y": [round(worst[b], 6) for b in brokers],
            "marker": {"color": PALETTE[i % len(PALETTE)]},
            "hovertemplate": "%{y:,.3f} s<extra>" + v + " · %{x}</extra>",
        })
    title = "Longest metadata staleness per broker"
    layout = base_layout(title, "broker", "longest staleness (s)",
                         log_y=False)
    layout["hovermode"] = "closest"
    layout["xaxis"]["type"] = "category"
    caption = ("For each broker, the longest time its metadata cache held a partition's leader "
               "or ISR that the control plane no longer had (while the broker was up). A client "
               "asking that broker for metadata during that time was told the old ISR.")
    return Chart("chart-isr-staleness", title, caption, {"data": traces, "layout": layout})


def _shared(marks: Sequence[FaultMark]) -> list[FaultMark]:
    """Each fault step once: the variants of a scenario share its fault schedule."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for m in marks:
        key = (m.t_s, m.event, m.label, m.broker, m.fault)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


def build_isr(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark], *,
              with_consumers: bool = False) -> dict[str, Any] | None:
    """The section's template variables; None when the run has no ISR numbers or nothing in
    any variant's ISR changed."""
    summaries = [dig(inputs.summary, "variants", v, "isr") for v in variants]
    if not any(isinstance(s, Mapping) for s in summaries):
        return None
    changes = sum(int(_num(dig(s, "shrinks")) or 0) + int(_num(dig(s, "expands")) or 0)
                  for s in summaries if isinstance(s, Mapping))
    membership = read_table(inputs.run_dir, rundir.ISR_MEMBERSHIP) or []
    if not changes and not _strip_rows(membership, variants)[1]:
        return None  # (a KRaft reassignment changes the ISR with no shrink or expand event)
    propagation = read_table(inputs.run_dir, rundir.ISR_PROPAGATION) or []
    staleness = read_table(inputs.run_dir, rundir.ISR_STALENESS) or []
    declared = [_num(dig(inputs.run, "variants", v, "duration_ms")) for v in variants]
    ends = [(_num(r.get("t_ms")) or 0.0) / 1000 for r in membership]
    ends += [m.t_s for m in marks]
    span_s = max([*(d / 1000 for d in declared if d), *ends, 1.0])
    charts = [c for c in (_membership_chart(membership, variants, span_s, _shared(marks)),
                          _propagation_chart(propagation, variants),
                          _staleness_chart(staleness, variants)) if c is not None]
    missing = [path.name for path in (rundir.metric_path(inputs.run_dir, name) for name in (
        rundir.ISR_MEMBERSHIP, rundir.ISR_PROPAGATION, rundir.ISR_STALENESS))
        if not path.exists()]
    return {"headline": _headline(inputs, variants), "charts": charts, "missing": missing}
