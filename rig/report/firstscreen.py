"""The report's first screen: what the scenario asked, answered.

A verdict line per variant (rig.report.verdicts), then the figures the scenario's expectations
and its `report: {headline: [...]}` speak about, a row per metric and a column per variant
(each expectation's own figure marked with its verdict), then the faults on one timeline with
the leader and ISR of each partition they touched, a lane per partition.

Reads run.json, summary.json and metrics/isr_membership.json (the partition state after each
write of ZooKeeper or the KRaft controller, from rig.analysis.isr); never the event logs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig import rundir
from rig.report.charts.figure import PALETTE, Chart, FaultMark, base_layout, time_unit
from rig.report.format import DASH, fmt_number, fmt_ratio
from rig.report.inputs import RunInputs, dig, expectation_rows, number
from rig.report.metric_text import metric_label, target_text, value_text
from rig.report.recovery.frame import finish_timeline, shared_marks
from rig.report.recovery.values import read_table
from rig.report.verdicts import (
    expectation_subject,
    variant_of,
    variant_verdicts,
    verdict_lines,
)
from rig.scenario.summary_keys import path_parts

__all__ = ["MAX_LANES", "build_first_screen"]

MAX_LANES = 12  # partition lanes on the fault timeline; the ISR section has every partition
OFFLINE = "#9ca3af"
MARKS = {"pass": "✓", "fail": "✗", "unknown": "?"}
# Broker colours on the timeline: not the variant palette, whose colours mean variants.
BROKER_COLORS = ("#0f766e", "#7c3aed", "#c2410c", "#0369a1", "#a16207", "#be123c", "#4d7c0f",
                 "#475569")


STATS = ("total", "min", "max", "p50")


def _one_variant_ratio(variant: str, over: str, under: str) -> str:
    """"v · Traffic: replication, cross zone bytes / consumer fetch, same zone bytes": the
    variant once, and the words the two labels start with once (a phone has 390 px)."""
    shared = 0
    for i in range(min(len(over), len(under))):
        if over[i] != under[i]:
            break
        if over[i] == " " and over[i - 1] in ",:":
            shared = i + 1
    return f"{variant} · {over} / {under[shared:]}"


def _headline_paths(inputs: RunInputs) -> list[str]:
    """The scenario's own `report.headline` (run.json), paths under `variants.<name>.`."""
    named = dig(inputs.run, "report", "headline")
    return [str(p) for p in named if isinstance(p, str)] if isinstance(named, list) else []


def _figures(inputs: RunInputs, variants: Sequence[str]) -> dict[str, Any]:
    """Rows of figures (headline first, then each path an expectation names) and ratio rows;
    each expectation marks the one cell that holds its measured value."""
    rows: dict[str, dict[str, Any]] = {}

    def row(path: str, headline: bool) -> dict[str, Any]:
        if path not in rows:
            label, unit = metric_label(path)
            rows[path] = {
                "path": path, "label": label, "unit": unit, "headline": headline,
                "cells": [dict(zip(("text", "exact"), value_text(
                    path, dig(inputs.summary, "variants", v, *path_parts(path))), strict=True),
                    marks=[]) for v in variants],
            }
        return rows[path]

    for path in _headline_paths(inputs):
        row(path, True)
    ratios = []
    for i, e in enumerate(expectation_rows(inputs.summary)):
        mark = {"index": i, "status": e["status"], "symbol": MARKS[e["status"]],
                "expect": e["expect"], "description": e["description"]}
        subject = expectation_subject(e["expect"])
        located = [variant_of(p, variants) for p in subject.paths] if subject else []
        if subject and not subject.is_ratio and located[0]:
            variant, rest = located[0]
            target = row(rest, False)
            target["cells"][list(variants).index(variant)]["marks"].append(
                {**mark, "target": f"{subject.op} {target_text(rest, subject.target)}"})
            continue
        if subject and subject.is_ratio and all(located):
            for found in located:
                row(found[1], False)  # type: ignore[index]
            (a, rest_a), (b, rest_b) = located  # type: ignore[misc]
            what = (f"{a} / {b} · {metric_label(rest_a)[0]}" if rest_a == rest_b else
                    _one_variant_ratio(a, metric_label(rest_a)[0], metric_label(rest_b)[0])
                    if a == b else
                    f"{a} {metric_label(rest_a)[0]} / {b} {metric_label(rest_b)[0]}")
        else:
            what = e["expect"].split(" ")[0] if subject is None else " / ".join(subject.paths)
        value = e["value"]
        text = fmt_ratio(value) if subject and subject.is_ratio else fmt_number(value)
        ratios.append({"label": what, "text": text,
                       "mark": {**mark, "target": f"{subject.op} {subject.target}"
                                if subject else ""}})
    return {"rows": list(rows.values()), "ratios": ratios}


# The fault timeline -----------------------------------------------------------------------------


def _table(inputs: RunInputs, name: str) -> list[dict[str, Any]]:
    return read_table(inputs.run_dir, name) or []


def _lost_marks(lost: Sequence[Mapping[str, Any]], lanes: Mapping[tuple[str, str], str],
                scale: float) -> dict[str, Any] | None:
    """A ✗ on its partition's lane where each lost batch was acknowledged, and where each
    diverged batch was found (metrics/lost_records.json)."""
    xs, ys, text = [], [], []
    for row in lost:
        lane = lanes.get((str(row.get("variant")), f"{row.get('topic')}-{row.get('partition')}"))
        at = (number(row.get("acked_at_ms")) if row.get("what") == "lost"
              else number(row.get("t_ms")))
        if lane is None or at is None:
            continue
        xs.append(round(at / 1000 / scale, 6))
        ys.append(lane)
        what = (f"acknowledged at {at / 1000:,.3f} s (acks={row.get('acks')}), then lost"
                if row.get("what") == "lost" else f"diverged, found at {at / 1000:,.3f} s")
        text.append(f"offset {row.get('offset')}: {what}")
    if not xs:
        return None
    return {"type": "scatter", "mode": "markers", "name": "lost or diverged record",
            "x": xs, "y": ys, "text": text,
            "marker": {"symbol": "x-thin", "size": 16, "color": "#b91c1c",
                       "line": {"color": "#b91c1c", "width": 3}},
            "hovertemplate": "%{text}<extra>%{y}</extra>"}


def _lanes(membership: Sequence[Mapping[str, Any]], variants: Sequence[str]
           ) -> tuple[list[tuple[str, str, list[Mapping[str, Any]]]], int]:
    """(variant, partition name, its states in order) for the partitions whose leader or ISR
    changed, the busiest first (at most MAX_LANES lanes); and how many partitions changed."""
    grouped: dict[tuple[str, int], dict[str, list[Mapping[str, Any]]]] = {}
    for r in membership:
        v = str(r.get("variant"))
        if v in variants and number(r.get("t_ms")) is not None:
            key = (str(r.get("topic")), int(number(r.get("partition")) or 0))
            grouped.setdefault(key, {}).setdefault(v, []).append(r)
    changed = [(key, per) for key, per in grouped.items()
               if any(len(rows) > 1 for rows in per.values())]
    changed.sort(key=lambda item: (-max(len(r) for r in item[1].values()), item[0]))
    lanes: list[tuple[str, str, list[Mapping[str, Any]]]] = []
    for (topic, partition), per in changed:
        for v in variants:
            if per.get(v) and len(lanes) < MAX_LANES:
                rows = sorted(per[v], key=lambda r: number(r.get("t_ms")) or 0.0)
                lanes.append((v, f"{topic}-{partition}", rows))
    return lanes, len(changed)


def _written_by(inputs: RunInputs, variants: Sequence[str]) -> str:
    """Whose partition state the lanes follow, by the variants' controller kinds."""
    kinds = {dig(inputs.run, "variants", v, "strategies", "controller") for v in variants}
    if kinds == {"kraft"}:
        return "the KRaft controller's partition records (the metadata log)"
    if "kraft" in kinds:
        return "ZooKeeper's partition state or the KRaft controller's records"
    return "ZooKeeper's partition state"


def _timeline_chart(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark]
                    ) -> Chart | None:
    membership = _table(inputs, rundir.ISR_MEMBERSHIP)
    lanes, total = _lanes(membership, variants)
    if not lanes:
        return None  # nothing changed hands: the fault table and the section charts say when
    declared = [number(dig(inputs.run, "variants", v, "duration_ms")) for v in variants]
    ends = [(number(r.get("t_ms")) or 0.0) / 1000 for r in membership] + [m.t_s for m in marks]
    span_s = max([*(d / 1000 for d in declared if d), *ends, 1.0])
    unit, scale = time_unit(span_s)
    several = len(variants) > 1
    labels: list[str] = []
    lane_of: dict[tuple[str, str], str] = {}
    bars: dict[int | None, dict[str, list[Any]]] = {}
    for variant, name, rows in lanes:
        label = f"{variant}<br>{name}" if several else name
        labels.append(label)
        lane_of[(variant, name)] = label
        for i, r in enumerate(rows):
            start = (number(r.get("t_ms")) or 0.0) / 1000
            end = (number(rows[i + 1].get("t_ms")) or 0.0) / 1000 if i + 1 < len(rows) else span_s
            if end <= start:
                continue
            leader = r.get("leader")
            leader = int(leader) if isinstance(leader, int) and leader >= 0 else None
            isr = [int(b) for b in r.get("isr") or () if isinstance(b, int)]
            replicas = [int(b) for b in r.get("replicas") or () if isinstance(b, int)]
            short = len(isr) < len(replicas)
            group = bars.setdefault(leader, {"x": [], "base": [], "y": [], "text": [],
                                             "hover": [], "pattern": []})
            group["x"].append(round((end - start) / scale, 6))
            group["base"].append(round(start / scale, 6))
            group["y"].append(label)
            isr_text = ",".join(map(str, isr)) or "empty"
            group["text"].append(f"L{leader} · ISR {isr_text}" if leader is not None
                                 else "offline")
            group["pattern"].append("/" if short else "")
            who = f"leader broker {leader}" if leader is not None else "no leader (offline)"
            group["hover"].append(
                f"{who}; ISR [{isr_text}] of replicas [{','.join(map(str, replicas))}]; "
                f"{start:,.3f} s to {end:,.3f} s (written by the {r.get('writer') or '?'})")
    traces: list[dict[str, Any]] = []
    for leader in sorted(bars, key=lambda b: (b is None, b or 0)):
        group = bars[leader]
        color = OFFLINE if leader is None else BROKER_COLORS[leader % len(BROKER_COLORS)]
        traces.append({
            "type": "bar", "orientation": "h",
            "name": "offline" if leader is None else f"leader: broker {leader}",
            "x": group["x"], "base": group["base"], "y": group["y"], "text": group["text"],
            "customdata": group["hover"], "textposition": "inside", "insidetextanchor": "start",
            "textangle": 0, "textfont": {"color": "#ffffff", "size": 11},
            "marker": {"color": color, "line": {"color": "#ffffff", "width": 1},
                       "pattern": {"shape": group["pattern"], "fgcolor": "#ffffff",
                                   "fgopacity": 0.5, "size": 8, "fillmode": "overlay"}},
            "hovertemplate": "%{customdata}<extra>%{y}</extra>",
        })
    lost = _lost_marks(_table(inputs, rundir.LOST_RECORDS), lane_of, scale)
    if lost is not None:
        traces.append(lost)
    title = "Faults, leaders and ISRs on one timeline"
    layout = base_layout(title, f"simulated time ({unit})", "", log_y=False)
    layout["barmode"] = "overlay"
    layout["hovermode"] = "closest"
    layout["bargap"] = 0.3
    layout["uniformtext"] = {"mode": "hide", "minsize": 9}  # a label that does not fit: none
    layout["yaxis"] = {"type": "category", "categoryorder": "array",
                       "categoryarray": list(reversed(labels)), "automargin": True,
                       "title": {"text": ""}, "fixedrange": True}
    layout["height"] = max(240, 150 + 34 * len(labels))
    caption = ("A lane per partition whose leader or ISR changed"
               + (", per variant" if several else "")
               + f", from {_written_by(inputs, variants)} after each write: the colour is the "
               "leader, the label the ISR (L1 · ISR 1,0: broker 1 leads, brokers 1 and 0 "
               "are in sync); hatched while the ISR is short of a replica, grey while "
               "offline."
               + (" A red ✗ marks where a lost record was acknowledged (or a diverged one "
                  "found)." if lost is not None else ""))
    if len(labels) < total * (len(variants) if several else 1):
        caption += (f" The busiest {len({name for _, name, _ in lanes})} of the {total} "
                    "partitions that changed; the ISR section and "
                    f"{rundir.metric_file(rundir.ISR_MEMBERSHIP)} have them all.")
    return finish_timeline("chart-fault-timeline", title, caption, traces, layout,
                           shared_marks(marks, variants), span_s, scale, several)


def build_first_screen(inputs: RunInputs, variants: Sequence[str],
                       marks: Sequence[FaultMark]) -> dict[str, Any]:
    """The first screen's template variables: verdicts, figures and the fault timeline."""
    figures = _figures(inputs, variants)
    chart = _timeline_chart(inputs, variants, marks)
    calm = (chart is None and bool(marks)
            and rundir.metric_path(inputs.run_dir, rundir.ISR_MEMBERSHIP).exists())
    verdicts = [v.as_dict() for v in variant_verdicts(inputs, variants)]
    return {
        "verdicts": verdicts,
        "verdict_lines": verdict_lines(verdicts, variants),
        "figures": figures,
        "headline_named": bool(_headline_paths(inputs)),
        "timeline": chart,
        # Faults that moved no leader and shrank no ISR: said, not drawn as empty lanes.
        "calm": calm,
        "palette": PALETTE,
        "dash": DASH,
    }
