"""The recovery section's timelines: under-replicated and offline partitions, records
acknowledged and failed, leader elections and ISR changes, and consumer lag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rig.analysis.buckets import MAX_POINTS
from rig.report.charts.figure import (
    PALETTE,
    Chart,
    FaultMark,
    base_layout,
    duration_text,
    time_unit,
)
from rig.report.inputs import number
from rig.report.recovery.frame import count_layout, finish_timeline, steps, variant_legend
from rig.report.recovery.values import to_int

__all__ = [
    "events_chart",
    "lag_chart",
    "partition_chart",
    "produce_chart",
]


def partition_chart(
    points: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    by_variant: dict[str, list[Mapping[str, Any]]] = {v: [] for v in variants}
    for p in points:
        if str(p.get("variant")) in by_variant and number(p.get("t_ms")) is not None:
            by_variant[str(p.get("variant"))].append(p)
    for rows in by_variant.values():
        rows.sort(key=lambda p: (p["t_ms"], to_int(p.get("seq"))))
    offline_seen = any(to_int(p.get("offline")) for rows in by_variant.values() for p in rows)
    unit, scale = time_unit(span_s)
    traces, buckets = [], set()
    kinds = [("under_replicated", "under-replicated", "solid")]
    if offline_seen:
        kinds.append(("offline", "offline", "dot"))
    for key, noun, dash in kinds:
        for i, v in enumerate(variants):
            xs, ys, bucket = steps(by_variant[v], key, span_s, MAX_POINTS)
            if bucket:
                buckets.add(bucket)
            traces.append({
                "type": "scatter", "mode": "lines", "name": v, "meta": noun,
                "x": [round(x / scale, 6) for x in xs], "y": ys,
                # Later variants draw thinner on top: identical lines still show both colours.
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": dash, "shape": "hv",
                         "width": max(1.5, 4.5 - 1.5 * i)},
                "hovertemplate": f"%{{y:,}} {noun} partitions<extra>{v}</extra>",
            })
    title = "Under-replicated and offline partitions"
    layout = count_layout(traces, title, unit, "partitions (count)")
    caption = ("Partitions with fewer in-sync replicas than replicas (solid)"
               + (" and partitions without a leader (dotted), over time"
                  if offline_seen else ", over time (none was ever without a leader)")
               + "; the area under a line is the partition-seconds in the table above.")
    if len(variants) > 1:
        caption += " Lines that coincide show as a thin line on a thick one."
    if buckets:
        caption += (" Each step shows the most partitions within "
                    + " or ".join(duration_text(b) for b in sorted(buckets)) + ".")
    return finish_timeline("chart-partitions", title, caption, traces, layout, marks, span_s,
                           scale, len(variants) > 1)


def _dense(rows: Sequence[Mapping[str, Any]], variant: str, field: str, bucket: int,
           n: int) -> list[int]:
    out = [0] * n
    for row in rows:
        if str(row.get("variant")) == variant:
            i = to_int(row.get("second")) // bucket
            if 0 <= i < n:
                out[i] += to_int(row.get(field))
    return out


def _produce_bucket(rows: Sequence[Mapping[str, Any]]) -> int:
    # One width per run by construction; a hand-edited mix falls back to the widest.
    return max({to_int(r.get("bucket_s")) or 1 for r in rows}, default=1)


def produce_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    """Two panels on one time axis: records acknowledged per second above, records in error
    responses and records given up below (a different scale: errors are few)."""
    if not any(to_int(r.get("acked")) or to_int(r.get("errors")) for r in rows):
        return None
    bucket = _produce_bucket(rows)
    unit, scale = time_unit(span_s)
    n = max(1, math.ceil(span_s / bucket))
    xs = [round(i * bucket / scale, 6) for i in range(n)]
    covered = [max(1e-9, min(bucket, span_s - i * bucket)) for i in range(n)]

    def rate(values: list[int]) -> list[float]:
        return [round(v / c, 3) for v, c in zip(values, covered, strict=True)]

    traces: list[dict[str, Any]] = []
    errors_seen = False
    for i, v in enumerate(variants):
        color = PALETTE[i % len(PALETTE)]
        width = max(1.5, 3.5 - 1.0 * i)
        acked = _dense(rows, v, "acked", bucket, n)
        errors, failed = (_dense(rows, v, f, bucket, n) for f in ("errors", "failed"))
        lines = [("acknowledged", acked, "solid", "y")]
        if any(errors) or any(failed):
            errors_seen = True
            lines += [("in error responses", errors, "dot", "y3"),
                      ("failed for good", failed, "dash", "y3")]
        for noun, values, dash, axis in lines:
            if noun == "acknowledged" and not any(values):
                continue
            traces.append({
                "type": "scatter", "mode": "lines", "name": v, "meta": noun,
                "x": xs, "y": rate(values), "yaxis": axis,
                "line": {"color": color, "width": width, "dash": dash},
                "hovertemplate": f"%{{y:,.1f}} records/s {noun}<extra>{v}</extra>",
            })
    variant_legend(traces)
    title = "Records acknowledged and failed"
    layout = base_layout(title, f"simulated time ({unit})", "acked (records/s)", log_y=False)
    layout["hoversubplots"] = "axis"  # one hover box for both panels
    if errors_seen:
        layout["height"] = 480
        layout["yaxis"]["domain"] = [0.44, 1.0]
        # Smaller axis titles: on a phone each panel is barely taller than its title.
        layout["yaxis"]["title"]["font"] = {"size": 11}
        layout["yaxis3"] = {
            **{k: layout["yaxis"][k] for k in ("gridcolor", "linecolor", "zeroline",
                                                "automargin")},
            "title": {"text": "errors (records/s)", "font": {"size": 11}},
            "domain": [0.0, 0.3],
            "rangemode": "tozero", "anchor": "x",
        }
        layout["xaxis"]["anchor"] = "y3"
    caption = ("Records the producers saw acknowledged each second (solid)"
               + ("; below, records whose produce request came back with an error (dotted, "
                  "most are retried) and records the producer gave up on (dashed)" if errors_seen
                  else "; no produce request came back with an error")
               + ": a fault shows as a dip, then a burst as the backlog drains.")
    if bucket > 1:
        caption += f" Each point averages {duration_text(bucket)}."
    return finish_timeline("chart-produce", title, caption, traces, layout, marks, span_s,
                           scale, len(variants) > 1)


_EVENT_KINDS = (
    # (field, legend noun, marker symbol)
    ("elections", "leader elections", "circle"),
    ("unclean_elections", "unclean elections", "x"),
    # Open triangles: a filled red ▼ already marks faults at the top of every timeline.
    ("isr_shrinks", "ISR shrinks", "triangle-down-open"),
    ("isr_expands", "ISR expands", "triangle-up-open"),
)


def events_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    fields = [f for f, *_ in _EVENT_KINDS]
    if not any(to_int(r.get(f)) for r in rows for f in fields):
        return None
    bucket = _produce_bucket(rows)
    unit, scale = time_unit(span_s)
    n = max(1, math.ceil(span_s / bucket))
    per = "second" if bucket == 1 else duration_text(bucket)
    traces = []
    for i, v in enumerate(variants):
        for field, noun, symbol in _EVENT_KINDS:
            values = _dense(rows, v, field, bucket, n)
            hits = [(k, c) for k, c in enumerate(values) if c]
            if not hits:
                continue
            color = PALETTE[i % len(PALETTE)]
            traces.append({
                "type": "scatter", "mode": "markers", "name": v, "meta": noun,
                "x": [round(k * bucket / scale, 6) for k, _ in hits],
                "y": [c for _, c in hits],
                # Later variants draw smaller on top: identical counts show as rings.
                "marker": {"color": color, "symbol": symbol, "size": max(6, 15 - 4 * i),
                           "line": {"color": color if symbol.endswith("-open") else "#ffffff",
                                    "width": 2 if symbol.endswith("-open") else 1}},
                "hovertemplate": f"%{{y:,}} {noun} in this {per}<extra>{v}</extra>",
            })
    title = "Leader elections and ISR changes"
    y_title = f"events per {per} (count)" if bucket == 1 else f"events per {per} bucket (count)"
    layout = count_layout(traces, title, unit, y_title)
    layout["hovermode"] = "closest"
    caption = ("How many leaders the controller elected (● clean, ✕ unclean) and how many ISRs "
               f"shrank (▽) or expanded (△) per {per}: a crash is a burst of elections and "
               "shrinks, a returning replica a burst of expands.")
    if len(variants) > 1:
        caption += " Equal counts of two variants show as a ring around a smaller dot."
    return finish_timeline("chart-elections", title, caption, traces, layout, marks, span_s,
                           scale, len(variants) > 1)


def lag_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    """Each consumer group's largest lag per bucket: records between its positions and the HW."""
    series: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if str(row.get("variant")) in variants and number(row.get("second")) is not None:
            series.setdefault((str(row.get("variant")), str(row.get("group") or "")),
                              []).append(row)
    if not series:
        return None
    bucket = _produce_bucket(rows)
    unit, scale = time_unit(span_s)
    groups = sorted({g for _, g in series})
    dashes = ("solid", "dot", "dash", "longdash", "dashdot")
    traces = []
    for i, v in enumerate(variants):
        for j, group in enumerate(groups):
            points = sorted(series.get((v, group), []), key=lambda r: to_int(r.get("second")))
            if not points:
                continue
            traces.append({
                "type": "scatter", "mode": "lines", "name": v, "meta": f"group {group}",
                "x": [round(to_int(r.get("second")) / scale, 6) for r in points],
                "y": [to_int(r.get("lag_max")) for r in points],
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": dashes[j % len(dashes)],
                         "shape": "hv", "width": max(1.5, 4.5 - 1.5 * i)},
                "hovertemplate": f"%{{y:,}} records behind (group {group})<extra>{v}</extra>",
            })
    title = "Consumer lag"
    layout = count_layout(traces, title, unit, "lag (records behind the HW)")
    caption = ("How many records each consumer group was behind the high watermark, summed "
               "over its partitions with a live leader: it falls to zero while a dead replica "
               "still in the ISR holds every HW back (acks=all), and jumps when the HW moves on "
               "or the consumers must find new leaders.")
    if len(groups) > 1:
        caption += " One line style per group (" + ", ".join(groups) + ")."
    caption += (" Each step shows the largest sample within "
                + duration_text(bucket) + "." if bucket > 1 else
                " Samples are taken every second by default.")
    return finish_timeline("chart-consumer-lag", title, caption, traces, layout, marks, span_s,
                           scale, len(variants) > 1)
