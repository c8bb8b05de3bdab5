"""The report's "Recovery" section: produce and replication headline numbers, the fault table,
partition health, produce and election timelines, and the records a run lost or let diverge.

Reads summary.json and metrics/{recovery,partition_timeline,produce_timeline,consumer_lag,
lost_records}.json (never the event logs); a missing piece leaves its table or chart out, never
an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from rig import rundir
from rig.analysis.buckets import MAX_POINTS, bucket_seconds
from rig.report.charts.faults import fault_overlay
from rig.report.charts.figure import (
    PALETTE,
    Chart,
    FaultMark,
    base_layout,
    duration_text,
    time_unit,
)
from rig.report.format import DASH, fmt_int, fmt_ms_spread, fmt_number, human_bytes
from rig.report.inputs import RunInputs, dig

__all__ = [
    "MAX_LOST_SHOWN",
    "RECOVERY_METRICS",
    "build_recovery",
    "has_recovery_numbers",
]

MAX_LOST_SHOWN = 100  # rows of the lost-or-diverged table; metrics/lost_records.json has them all
MAX_FAULT_ROWS = 200  # rows of the per-fault table, as the fault table above it

Fmt = Callable[[Any], str]


def _fmt_seconds(value: object) -> str:
    """Simulated seconds to the millisecond: 30.009828 → "30.010"."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return DASH
    return f"{value:,.3f}"


# (label, unit, path under variants.<name>, format, a non-zero value is bad news).
# The comparison page shows the same rows (rig.report.compare).
RECOVERY_METRICS: tuple[tuple[str, str, tuple[str, ...], Fmt, bool], ...] = (
    ("Records acknowledged", "records", ("produce", "acked"), fmt_int, False),
    ("Acknowledged with acks=all", "records", ("produce", "acked_all"), fmt_int, False),
    ("Lost, acknowledged with acks=all", "records", ("produce", "acked_all_lost"), fmt_int, True),
    ("Lost, acknowledged with any acks", "records", ("produce", "acked_lost"), fmt_int, True),
    ("Produce errors", "responses, retried or not", ("produce", "errors"), fmt_int, False),
    ("Leader elections", "", ("replication", "leader_elections"), fmt_int, False),
    ("Unclean leader elections", "", ("replication", "unclean_elections"), fmt_int, True),
    ("ELR elections (KRaft, KIP-966)", "", ("replication", "elr_elections"), fmt_int, False),
    ("Last-known-leader elections (KRaft)", "", ("replication", "last_known_leader_elections"),
     fmt_int, True),
    ("ISR shrinks", "", ("replication", "isr_shrinks"), fmt_int, False),
    ("ISR expands", "", ("replication", "isr_expands"), fmt_int, False),
    ("Truncated records", "records", ("replication", "truncated_records"), fmt_int, False),
    ("Diverged partitions", "partitions", ("replication", "diverged_partitions"), fmt_int, True),
    ("Offline", "partition-seconds", ("replication", "offline_partition_seconds"), fmt_number,
     True),
    ("Under-replicated", "partition-seconds",
     ("replication", "under_replicated_partition_seconds"), fmt_number, False),
    ("Under min ISR", "partition-seconds, acks=all refused",
     ("replication", "under_min_isr_partition_seconds"), fmt_number, False),
    ("Fencing delay", "s from a crash to broker.fenced (ZooKeeper: session expiry), "
     "min / p50 / max", ("replication", "fencing_delay_ms"), fmt_ms_spread, False),
    ("Longest detection", "s, fault injected to the first reaction",
     ("replication", "max_detection_seconds"), _fmt_seconds, False),
    ("Longest recovery", "s, fault injected to every ISR full",
     ("replication", "max_recovery_seconds"), _fmt_seconds, False),
    ("Catch-up fetched", "bytes, healed to every ISR full",
     ("replication", "catch_up_bytes"), fmt_int, False),
    ("Largest consumer lag", "records behind the HW", ("consumers", "max_lag"), fmt_int, False),
    ("Faults", "", ("replication", "faults"), fmt_int, False),
)


def has_recovery_numbers(summary: Mapping[str, Any], variant: str) -> bool:
    """Does summary.json hold produce or replication numbers for `variant`?"""
    return any(isinstance(dig(summary, "variants", variant, part), Mapping)
               for part in ("produce", "replication"))


def _rows(value: Any) -> list[dict[str, Any]]:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _table(run_dir: Path, name: str) -> list[dict[str, Any]] | None:
    """A metrics table's rows; None when the file is missing or unreadable (an older run)."""
    try:
        value = orjson.loads(rundir.metric_path(run_dir, name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return _rows(value) if isinstance(value, list) else None


def _num(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def _int(value: Any) -> int:
    number = _num(value)
    return int(number) if number is not None else 0


# Lost and diverged records ---------------------------------------------------------------------


def _partition(row: Mapping[str, Any]) -> str:
    topic, partition = row.get("topic"), row.get("partition")
    if topic is None and partition is None:
        return DASH
    return f"{topic if topic is not None else '?'}-{partition if partition is not None else '?'}"


def _acks_text(acks: Any) -> str:
    return "all" if acks == -1 else DASH if acks is None else str(acks)


def _lost_row(variant: str, row: Mapping[str, Any]) -> dict[str, Any]:
    acks = row.get("acks")
    leader = row.get("leader")
    return {
        "variant": variant,
        "what": f"lost (acks={_acks_text(acks)})",
        "bad": "fail" if acks == -1 else "unknown",
        "partition": _partition(row),
        "offset": _num(row.get("offset")),
        "records": _num(row.get("records")),
        "acked_ms": _num(row.get("acked_at_ms")),
        "detail": (f"leader at the end: broker {leader}" if leader is not None else "")
        + (f"; batch id {row['id']}" if row.get("id") is not None else ""),
    }


def _diverged_row(variant: str, row: Mapping[str, Any]) -> dict[str, Any]:
    theirs = row.get("leader_id")
    detail = (f"broker {row.get('broker', '?')} holds batch {row.get('replica_id')}; "
              f"leader {row.get('leader', '?')} holds "
              + (f"batch {theirs}" if theirs is not None else "nothing there"))
    return {
        "variant": variant,
        "what": "diverged",
        "bad": "fail",
        "partition": _partition(row),
        "offset": _num(row.get("offset")),
        "records": None,
        "acked_ms": None,
        "detail": detail,
    }


def _span_text(low: float | None, high: float | None, fmt: Fmt) -> str:
    if low is None or high is None:
        return DASH
    return fmt(low) if low == high else f"{fmt(low)} – {fmt(high)}"


def _grouped(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (variant, what, partition): a lost run of batches reads as one line."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["variant"], row["what"], row["partition"]), []).append(row)
    out = []
    for (variant, what, partition), members in groups.items():
        offsets = [r["offset"] for r in members if r["offset"] is not None]
        acked = [r["acked_ms"] / 1000 for r in members if r["acked_ms"] is not None]
        records = [r["records"] for r in members if r["records"] is not None]
        out.append({
            "variant": variant, "what": what, "bad": members[0]["bad"], "partition": partition,
            "batches": fmt_int(len(members)),
            "records": fmt_int(sum(records)) if records else DASH,
            "offsets": _span_text(min(offsets, default=None), max(offsets, default=None),
                                  fmt_int),
            "acked_at": _span_text(min(acked, default=None), max(acked, default=None),
                                   _fmt_seconds),
        })
    return out


def _lost_table(inputs: RunInputs, variants: Sequence[str]) -> dict[str, Any]:
    """Lost records and diverged replicas (metrics/lost_records.json; for a run analysed before
    that table, the no-acked-loss and replicas-agree violations of summary.json): grouped by
    partition, and batch by batch (both capped)."""
    table = _table(inputs.run_dir, rundir.LOST_RECORDS)
    rows: list[dict[str, Any]] = []
    for v in variants:
        if table is not None:
            found = [row for row in table if row.get("variant") == v]
        else:
            violations = dig(inputs.summary, "variants", v, "checks", "violations")
            found = [{**x, "what": "lost" if x.get("check") == "no-acked-loss" else "diverged"}
                     for x in (violations if isinstance(violations, list) else [])
                     if isinstance(x, Mapping)
                     and x.get("check") in ("no-acked-loss", "replicas-agree")]
            found.sort(key=lambda x: x["what"] != "lost")  # stable: lost first, as the table
        rows += [_lost_row(v, row) if row.get("what") == "lost" else _diverged_row(v, row)
                 for row in found]
    shown = [
        {**row, "offset": fmt_int(row["offset"]), "records": fmt_int(row["records"]),
         "acked_at": _fmt_seconds(None if row["acked_ms"] is None else row["acked_ms"] / 1000)}
        for row in rows[:MAX_LOST_SHOWN]
    ]
    groups = _grouped(rows)
    return {"groups": groups[:MAX_LOST_SHOWN], "groups_total": len(groups), "rows": shown,
            "total": len(rows),
            "partitions": len({(r["variant"], r["partition"]) for r in rows}),
            "variants": [v for v in variants if any(r["variant"] == v for r in rows)]}


# Tables -----------------------------------------------------------------------------------------


def _headline(summary: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for label, unit, path, fmt, bad in RECOVERY_METRICS:
        values = [dig(summary, "variants", v, *path) for v in variants]
        if all(value is None for value in values):
            continue  # a key an older summary.json lacks: no row of dashes
        out.append({
            "label": label,
            "unit": unit,
            "emph": label.startswith("Lost"),
            "cells": [{"text": fmt(value), "bad": bad and bool(_num(value))}
                      for value in values],
        })
    return out


def _targets(targets: Any) -> str:
    """["2"] → "broker 2"; ["0", "zk"] → "nodes 0, zk" (the scenario's node names)."""
    items = [str(t) for t in targets] if isinstance(targets, list) else (
        [str(targets)] if targets not in (None, "") else [])
    if not items:
        return DASH
    if all(t.isdigit() for t in items):
        return ("broker " if len(items) == 1 else "brokers ") + ", ".join(items)
    return ("node " if len(items) == 1 else "nodes ") + ", ".join(items)


def _fault_rows(recovery: Sequence[Mapping[str, Any]], variants: Sequence[str]) -> list[dict]:
    order = {v: i for i, v in enumerate(variants)}
    chosen = [r for r in recovery if str(r.get("variant")) in order]
    chosen.sort(key=lambda r: (order[str(r.get("variant"))], _num(r.get("inject_ms")) or 0.0,
                               _int(r.get("fault"))))

    def at(value: Any) -> str:
        ms = _num(value)
        return DASH if ms is None else f"{ms / 1000:,.3f}"

    rows = []
    for r in chosen:
        inject, leader = _num(r.get("inject_ms")), _num(r.get("new_leader_ms"))
        targets = r.get("targets")
        after = (f"+{(leader - inject) / 1000:,.3f}"
                 if inject is not None and leader is not None else DASH)
        rows.append({
            "variant": str(r.get("variant")),
            "fault": DASH if r.get("fault") is None else str(r.get("fault")),
            "kind": str(r.get("kind") or DASH),
            "targets": _targets(targets),
            "inject": at(inject),
            "heal": at(r.get("heal_ms")),
            "leader_after": after,
            "detected_after": (f"+{_fmt_seconds(r.get('detection_seconds'))}"
                               if _num(r.get("detection_seconds")) is not None else DASH),
            # A first reaction after the heal answered something else, or came late.
            "detected_late": (_num(r.get("detected_ms")) or 0.0) > (_num(r.get("heal_ms"))
                                                                    or math.inf),
            "catch_up": human_bytes(r.get("catch_up_bytes")) if "catch_up_bytes" in r else DASH,
            "recovered": at(r.get("recovered_ms")),
            "seconds": _fmt_seconds(r.get("recovery_seconds")),
            # A fault that never recovered before the run ended: the reader must see it.
            "open": r.get("recovery_seconds") is None,
        })
    return rows


# Charts -----------------------------------------------------------------------------------------


def _span_seconds(inputs: RunInputs, variants: Sequence[str], *extra: float) -> float:
    """The time axis every recovery chart shares: the longest variant, or further if data goes
    on while the run quiesces."""
    declared = [_num(dig(inputs.run, "variants", v, "duration_ms")) for v in variants]
    return max([*(d / 1000 for d in declared if d), *extra, 1.0])


def _shared_marks(marks: Sequence[FaultMark], variants: Sequence[str]) -> list[FaultMark]:
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
        level = min(level + 1, 5) if near else 0
        note["y"] = round(1 - 0.065 * level, 3)
        last = note["x"]


def _count_axis(axis: dict[str, Any], traces: Sequence[Mapping[str, Any]]) -> None:
    """Whole-number ticks for counts: "0 0 1 1" would read as rounding, not as a count."""
    top = max((y for t in traces for y in t.get("y", []) if isinstance(y, int | float)),
              default=0)
    axis.update(tickformat=",d", rangemode="tozero")
    if top <= 5:
        axis.update(dtick=1, range=[0, max(1, top) * 1.15])


def _finish(
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


def _steps(points: Sequence[Mapping[str, Any]], key: str, span_s: float,
           max_points: int) -> tuple[list[float], list[int], int]:
    """(seconds, values, bucket) of a step series that starts at 0 and holds its last value to
    `span_s`. Past `max_points` changes it is bucketed (bucket > 0), each bucket showing the
    most it reached: a short spike must not vanish between two points."""
    last_at: dict[float, int] = {}
    for p in points:  # in seq order: the last change at one instant is the state after it
        last_at[p["t_ms"] / 1000] = _int(p.get(key))
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


def _partition_chart(
    points: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    by_variant: dict[str, list[Mapping[str, Any]]] = {v: [] for v in variants}
    for p in points:
        if str(p.get("variant")) in by_variant and _num(p.get("t_ms")) is not None:
            by_variant[str(p.get("variant"))].append(p)
    for rows in by_variant.values():
        rows.sort(key=lambda p: (p["t_ms"], _int(p.get("seq"))))
    offline_seen = any(_int(p.get("offline")) for rows in by_variant.values() for p in rows)
    unit, scale = time_unit(span_s)
    traces, buckets = [], set()
    kinds = [("under_replicated", "under-replicated", "solid")]
    if offline_seen:
        kinds.append(("offline", "offline", "dot"))
    for key, noun, dash in kinds:
        for i, v in enumerate(variants):
            xs, ys, bucket = _steps(by_variant[v], key, span_s, MAX_POINTS)
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
    _variant_legend(traces)
    title = "Under-replicated and offline partitions"
    layout = base_layout(title, f"simulated time ({unit})", "partitions (count)", log_y=False)
    _count_axis(layout["yaxis"], traces)
    caption = ("Partitions with fewer in-sync replicas than replicas (solid)"
               + (" and partitions without a leader (dotted), over time"
                  if offline_seen else ", over time (none was ever without a leader)")
               + "; the area under a line is the partition-seconds in the table above.")
    if len(variants) > 1:
        caption += " Lines that coincide show as a thin line on a thick one."
    if buckets:
        caption += (" Each step shows the most partitions within "
                    + " or ".join(duration_text(b) for b in sorted(buckets)) + ".")
    return _finish("chart-partitions", title, caption, traces, layout, marks, span_s, scale,
                   len(variants) > 1)


def _variant_legend(traces: list[dict[str, Any]]) -> None:
    """One legend entry per variant, as on the fetch charts (clicking it hides all its traces):
    an entry per line style would wrap into the title on a phone. Captions tell the styles
    apart, and each trace's hover names what it shows (its `meta`)."""
    seen: set[str] = set()
    for trace in traces:
        trace["legendgroup"] = trace["name"]
        trace["showlegend"] = trace["name"] not in seen
        seen.add(trace["name"])


def _dense(rows: Sequence[Mapping[str, Any]], variant: str, field: str, bucket: int,
           n: int) -> list[int]:
    out = [0] * n
    for row in rows:
        if str(row.get("variant")) == variant:
            i = _int(row.get("second")) // bucket
            if 0 <= i < n:
                out[i] += _int(row.get(field))
    return out


def _produce_bucket(rows: Sequence[Mapping[str, Any]]) -> int:
    # One width per run by construction; a hand-edited mix falls back to the widest.
    return max({_int(r.get("bucket_s")) or 1 for r in rows}, default=1)


def _produce_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    """Two panels on one time axis: records acknowledged per second above, records in error
    responses and records given up below (a different scale: errors are few)."""
    if not any(_int(r.get("acked")) or _int(r.get("errors")) for r in rows):
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
    _variant_legend(traces)
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
    return _finish("chart-produce", title, caption, traces, layout, marks, span_s, scale,
                   len(variants) > 1)


_EVENT_KINDS = (
    # (field, legend noun, marker symbol)
    ("elections", "leader elections", "circle"),
    ("unclean_elections", "unclean elections", "x"),
    # Open triangles: a filled red ▼ already marks faults at the top of every timeline.
    ("isr_shrinks", "ISR shrinks", "triangle-down-open"),
    ("isr_expands", "ISR expands", "triangle-up-open"),
)


def _events_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    fields = [f for f, *_ in _EVENT_KINDS]
    if not any(_int(r.get(f)) for r in rows for f in fields):
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
    _variant_legend(traces)
    title = "Leader elections and ISR changes"
    y_title = f"events per {per} (count)" if bucket == 1 else f"events per {per} bucket (count)"
    layout = base_layout(title, f"simulated time ({unit})", y_title, log_y=False)
    layout["hovermode"] = "closest"
    _count_axis(layout["yaxis"], traces)
    caption = ("How many leaders the controller elected (● clean, ✕ unclean) and how many ISRs "
               f"shrank (▽) or expanded (△) per {per}: a crash is a burst of elections and "
               "shrinks, a returning replica a burst of expands.")
    if len(variants) > 1:
        caption += " Equal counts of two variants show as a ring around a smaller dot."
    return _finish("chart-elections", title, caption, traces, layout, marks, span_s, scale,
                   len(variants) > 1)


def _lag_chart(
    rows: Sequence[Mapping[str, Any]], variants: Sequence[str], marks: Sequence[FaultMark],
    span_s: float,
) -> Chart | None:
    """Each consumer group's largest lag per bucket: records between its positions and the HW."""
    series: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if str(row.get("variant")) in variants and _num(row.get("second")) is not None:
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
            points = sorted(series.get((v, group), []), key=lambda r: _int(r.get("second")))
            if not points:
                continue
            traces.append({
                "type": "scatter", "mode": "lines", "name": v, "meta": f"group {group}",
                "x": [round(_int(r.get("second")) / scale, 6) for r in points],
                "y": [_int(r.get("lag_max")) for r in points],
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": dashes[j % len(dashes)],
                         "shape": "hv", "width": max(1.5, 4.5 - 1.5 * i)},
                "hovertemplate": f"%{{y:,}} records behind (group {group})<extra>{v}</extra>",
            })
    _variant_legend(traces)
    title = "Consumer lag"
    layout = base_layout(title, f"simulated time ({unit})", "lag (records behind the HW)",
                         log_y=False)
    _count_axis(layout["yaxis"], traces)
    caption = ("How many records each consumer group was behind the high watermark, summed "
               "over its partitions with a live leader: it falls to zero while a dead replica "
               "still in the ISR holds every HW back (acks=all), and jumps when the HW moves on "
               "or the consumers must find new leaders.")
    if len(groups) > 1:
        caption += " One line style per group (" + ", ".join(groups) + ")."
    caption += (" Each step shows the largest sample within "
                + duration_text(bucket) + "." if bucket > 1 else
                " Samples are taken every second by default.")
    return _finish("chart-consumer-lag", title, caption, traces, layout, marks, span_s, scale,
                   len(variants) > 1)


# The section ------------------------------------------------------------------------------------


def _active(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark],
            recovery: Sequence[Mapping[str, Any]], produce: Sequence[Mapping[str, Any]]) -> bool:
    """Had the run faults or producers? An idle run has neither, and no Recovery section."""
    if marks or recovery or any(_int(r.get("acked")) or _int(r.get("errors")) for r in produce):
        return True
    keys = (("replication", "faults"), ("produce", "acked"), ("produce", "errors"))
    return any(_int(dig(inputs.summary, "variants", v, *k)) for v in variants for k in keys)


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
    recovery = _table(run_dir, rundir.RECOVERY)
    points = _table(run_dir, rundir.PARTITION_TIMELINE)
    produce_table = _table(run_dir, rundir.PRODUCE_TIMELINE)
    produce = produce_table or []
    lag = _table(run_dir, rundir.CONSUMER_LAG) if with_consumers else []
    numbers = any(has_recovery_numbers(inputs.summary, v) for v in variants)
    if not (numbers or recovery or points or produce):
        return None
    if not _active(inputs, variants, marks, recovery or [], produce):
        return None
    ends = [(_num(p.get("t_ms")) or 0.0) / 1000 for p in points or []]
    ends += [float(_int(r.get("second")) + 1) for r in produce]
    ends += [m.t_s for m in marks]
    ends += [float(_int(r.get("second")) + 1) for r in lag or []]
    span_s = _span_seconds(inputs, variants, *ends)
    marks = _shared_marks(marks, variants)
    charts = [
        chart
        for chart in (
            _partition_chart(points, variants, marks, span_s) if points is not None else None,
            _produce_chart(produce, variants, marks, span_s),
            _events_chart(produce, variants, marks, span_s),
            _lag_chart(lag or [], variants, marks, span_s),
        )
        if chart is not None
    ]
    faults = _fault_rows(recovery or [], variants)
    return {
        "headline": _headline(inputs.summary, variants),
        "faults": faults[:MAX_FAULT_ROWS],
        "faults_total": len(faults),
        "charts": charts,
        "lost": _lost_table(inputs, variants),
        "missing": [rundir.metric_path(run_dir, name).name
                    for name, table in ((rundir.RECOVERY, recovery),
                                        (rundir.PARTITION_TIMELINE, points),
                                        (rundir.PRODUCE_TIMELINE, produce_table),
                                        (rundir.CONSUMER_LAG, lag))
                    if table is None],
    }
