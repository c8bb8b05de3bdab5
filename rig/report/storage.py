"""The report's "Storage" section: log size, dirty ratio and disk over time, the cleaner's
passes and the keys each mapped, the cost of offset lookups, and where groups' offsets live.

Reads summary.json (`variants.<v>.storage`, `.offsets`) and metrics/storage.json; a run with no
storage activity worth showing (no compacted log, no cleaner pass, no offset commit) leaves the
section out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from rig import rundir
from rig.report.charts.figure import PALETTE, Chart, FaultMark, base_layout, time_unit
from rig.report.format import DASH, fmt_int
from rig.report.inputs import RunInputs, dig

__all__ = ["build_storage"]

MAX_PARTITION_LINES = 6  # per variant and chart: the largest logs
MAX_PASS_ROWS = 200
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def _mib(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return DASH
    return f"{value / (1 << 20):,.2f}"


def _ratio(value: Any) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return DASH
    return f"{value:.3f}"


def _headline(summary: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    def row(label: str, unit: str, path: tuple[str, ...], fmt: Any,
            emph: bool = False) -> dict[str, Any]:
        return {"label": label, "unit": unit, "emph": emph,
                "cells": [fmt(dig(summary, "variants", v, *path)) for v in variants]}

    return [
        row("Cleaner passes", "", ("storage", "cleaner_passes"), fmt_int, True),
        row("… partial (map full)", "", ("storage", "partial_passes"), fmt_int),
        row("Most keys mapped in a pass", "", ("storage", "max_keys_mapped"), fmt_int),
        row("Records removed", "", ("storage", "records_removed"), fmt_int),
        row("Highest dirty ratio", "", ("storage", "max_dirty_ratio"), _ratio),
        row("Dirty ratio at the end", "", ("storage", "final_dirty_ratio"), _ratio),
        row("Compacted logs at the end", "MiB", ("storage", "final_compacted_log_bytes"), _mib,
            True),
        row("All logs at the end (every broker)", "MiB", ("storage", "final_log_bytes"), _mib),
        row("Segments at the end", "", ("storage", "final_segments"), fmt_int),
        row("Offset lookups", "", ("storage", "lookups"), fmt_int),
        row("Bytes scanned per lookup, min", "B", ("storage", "lookup_bytes_scanned", "min"),
            fmt_int),
        row("… median (sampled)", "B", ("storage", "lookup_bytes_scanned", "p50"), fmt_int),
        row("… max", "B", ("storage", "lookup_bytes_scanned", "max"), fmt_int),
        row("Offset commits", "", ("offsets", "commits"), fmt_int),
        row("Coordinator failovers", "", ("offsets", "coordinator_failovers"), fmt_int),
        row("Records read again (duplicates)", "", ("offsets", "duplicates"), fmt_int, True),
    ]


def _chart(chart_id: str, title: str, caption: str, y_title: str, traces: list[dict[str, Any]],
           span_s: float, *, y_range: list[float] | None = None,
           shapes: list[dict[str, Any]] | None = None) -> Chart:
    unit, scale = time_unit(span_s)
    layout = base_layout(title, f"simulated time ({unit})", y_title, log_y=False)
    layout["xaxis"]["range"] = [0, round(span_s / scale, 6)]
    if y_range is not None:
        layout["yaxis"]["range"] = y_range
    if shapes:
        layout["shapes"] = shapes
    for trace in traces:
        trace["x"] = [round(x / scale, 6) for x in trace["x"]]
    return Chart(chart_id, title, caption, {"data": traces, "layout": layout})


def _largest(partitions: Mapping[str, list[Mapping[str, Any]]], compacted: bool) -> list[str]:
    names = [name for name, rows in partitions.items()
             if rows and (not compacted or any(r.get("dirty_ratio") is not None for r in rows))]
    names.sort(key=lambda n: (-max(int(r.get("size_bytes") or 0) for r in partitions[n]), n))
    return names[:MAX_PARTITION_LINES]


def _partition_traces(tables: Mapping[str, Any], variants: Sequence[str], field: str,
                      compacted: bool, span_s: float,
                      scale: float = 1.0) -> list[dict[str, Any]]:
    traces = []
    for i, v in enumerate(variants):
        partitions = (tables.get(v) or {}).get("partitions") or {}
        for j, name in enumerate(_largest(partitions, compacted)):
            rows = [r for r in partitions[name] if r.get(field) is not None]
            if not rows:
                continue
            xs = [float(r["t_ms"]) / 1000 for r in rows]
            ys = [float(r[field]) * scale for r in rows]
            traces.append({"type": "scatter", "mode": "lines+markers", "name": f"{v} · {name}",
                           "x": [*xs, span_s], "y": [*ys, ys[-1]], "line": {
                               "color": PALETTE[i % len(PALETTE)], "shape": "hv",
                               "dash": DASHES[j % len(DASHES)]}, "marker": {"size": 4}})
    return traces


def _disk_traces(tables: Mapping[str, Any], variants: Sequence[str],
                 span_s: float) -> list[dict[str, Any]]:
    traces = []
    for i, v in enumerate(variants):
        by_broker: dict[int, list[Mapping[str, Any]]] = {}
        for point in (tables.get(v) or {}).get("disk") or []:
            by_broker.setdefault(int(point["broker"]), []).append(point)
        for j, (broker, points) in enumerate(sorted(by_broker.items())):
            xs = [float(p["t_ms"]) / 1000 for p in points]
            ys = [int(p["bytes"]) / (1 << 20) for p in points]
            traces.append({"type": "scatter", "mode": "lines", "name": f"{v} · broker {broker}",
                           "x": [0.0, *xs, span_s], "y": [0, *ys, ys[-1]], "line": {
                               "color": PALETTE[i % len(PALETTE)], "shape": "hv",
                               "dash": DASHES[j % len(DASHES)]}})
    return traces


def _keys_traces(tables: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    traces = []
    for i, v in enumerate(variants):
        passes = [p for p in (tables.get(v) or {}).get("passes") or [] if not p.get("aborted")]
        if not passes:
            continue
        traces.append({"type": "scatter", "mode": "markers", "name": v,
                       "x": [float(p["t_ms"]) / 1000 for p in passes],
                       "y": [int(p.get("keys_mapped") or 0) for p in passes],
                       "marker": {"color": PALETTE[i % len(PALETTE)], "size": 9,
                                  "symbol": ["triangle-up" if p.get("map_full") else "circle"
                                             for p in passes]}})
    return traces


def _pass_rows(tables: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for v in variants:
        for p in (tables.get(v) or {}).get("passes") or []:
            rows.append({
                "variant": v, "at": f"{float(p['t_ms']) / 1000:,.3f}",
                "where": f"{p.get('topic')}-{p.get('partition')} on broker {p.get('broker')}",
                "mapped": fmt_int(p.get("keys_mapped")), "capacity": fmt_int(p.get("map_capacity")),
                "partial": bool(p.get("map_full")), "aborted": bool(p.get("aborted")),
                "ratio": _ratio(p.get("dirty_ratio")),
                "offsets": (f"{fmt_int(p.get('first_dirty_offset'))} → "
                            f"{fmt_int(p.get('end_offset'))}"),
                "removed": fmt_int(p.get("records_removed")),
                "read": _mib(p.get("bytes_read")), "written": _mib(p.get("bytes_written")),
                "duration": f"{float(p.get('duration_ms') or 0) / 1000:,.3f}",
                "size": f"{_mib(p.get('log_bytes_before'))} → {_mib(p.get('log_bytes_after'))}",
                "segments": f"{fmt_int(p.get('segments_before'))} → "
                            f"{fmt_int(p.get('segments_after'))}"})
    return rows


def _group_rows(summary: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for v in variants:
        groups = dig(summary, "variants", v, "offsets", "groups") or {}
        for group, info in sorted(groups.items()):
            coordinators = [str(c) for c in info.get("coordinators") or []]
            rows.append({"variant": v, "group": group,
                         "partition": f"__consumer_offsets-{info.get('offsets_partition')}",
                         "coordinators": " → ".join(coordinators) or DASH})
    return rows


def build_storage(
    inputs: RunInputs,
    variants: Sequence[str],
    marks: Sequence[FaultMark],
    *,
    with_consumers: bool = False,
) -> dict[str, Any] | None:
    """The section's template variables, or None when there is nothing storage-specific."""
    summary = inputs.summary
    path = rundir.metric_path(inputs.run_dir, rundir.STORAGE)
    try:
        tables: dict[str, Any] = orjson.loads(path.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        tables = {}
    interesting = any(
        dig(summary, "variants", v, "storage", "cleaner_passes")
        or dig(summary, "variants", v, "storage", "final_compacted_log_bytes")
        or dig(summary, "variants", v, "offsets", "commits") for v in variants)
    if not interesting:
        return None
    ends = [float(r.get("t_ms") or 0) / 1000 for v in variants
            for rows in ((tables.get(v) or {}).get("partitions") or {}).values() for r in rows]
    durations = [float(dig(inputs.run, "variants", v, "duration_ms") or 0) / 1000
                 for v in variants]
    span_s = max([*ends, *durations, 1.0])
    charts = []
    size = _partition_traces(tables, variants, "size_bytes", True, span_s, 1 / (1 << 20))
    if size:
        charts.append(_chart(
            "storage-log-size", "Compacted log size per partition", (
                "The size of each compacted partition's log (the largest "
                f"{MAX_PARTITION_LINES} per variant), sampled every 2 s while it changed: it "
                "grows with appends and drops when a cleaner pass swaps its output in."),
            "MiB", size, span_s))
    ratio = _partition_traces(tables, variants, "dirty_ratio", True, span_s)
    if ratio:
        charts.append(_chart(
            "storage-dirty-ratio", "Dirty ratio per compacted partition", (
                "Dirty bytes / (clean + dirty bytes) of each compacted log, the active segment "
                "excluded. The cleaner takes a log only when this is strictly above "
                "min.cleanable.dirty.ratio (the dotted line at 0.5), the dirtiest first."),
            "dirty ratio", ratio, span_s, y_range=[0, 1.05], shapes=[{
                "type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 0.5, "y1": 0.5,
                "line": {"color": "#6b7280", "dash": "dot", "width": 1}}]))
    keys = _keys_traces(tables, variants)
    if keys:
        charts.append(_chart(
            "storage-keys-per-pass", "Keys mapped per cleaner pass", (
                "Each marker is one pass: how many distinct keys its offset map took. A "
                "triangle is a partial pass — the map filled (buffer / threads / 24 bytes × "
                "0.9) before the dirty section ended, so the next pass continues from there."),
            "keys mapped", keys, span_s))
    disk = _disk_traces(tables, variants, span_s)
    if disk:
        charts.append(_chart(
            "storage-disk", "Disk used per broker", (
                "The bytes of every log a broker holds (leaders and followers), after each "
                "sample: appends, cleaner passes and retention move it."),
            "MiB", disk, span_s))
    passes = _pass_rows(tables, variants)
    return {
        "headline": _headline(summary, variants),
        "charts": charts,
        "passes": passes[:MAX_PASS_ROWS],
        "passes_total": len(passes),
        "groups": _group_rows(summary, variants),
        "missing": [] if tables else [path.name],
    }
