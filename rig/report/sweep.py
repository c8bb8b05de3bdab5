"""The sweep report: summary metrics across a parameter grid, seeds aggregated (mean, min, max).

One grid parameter draws lines (one trace per variant, min–max as error bars); two or more draw a
heatmap per variant over the first two (further parameters are averaged, and said so). Reads
only sweep.json's record, so it can be re-rendered without re-running anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rig.report.charts.figure import PALETTE, Chart, base_layout
from rig.report.format import fmt_number
from rig.report.pages import json_for_script, write_page

__all__ = ["DEFAULT_METRICS", "aggregate", "available_metrics", "build_sweep_context",
           "render_sweep"]

DEFAULT_METRICS = (
    "produce.acked_lost",
    "replication.max_recovery_seconds",
    "replication.under_replicated_partition_seconds",
    "replication.leader_elections",
    "fetch.follower.request_bytes_per_second",
    "fetch.follower.response_bytes_per_second",
)


def _label(value: Any) -> str:
    return value if isinstance(value, str) else repr(value) if not isinstance(
        value, int | float) else f"{value:g}"


def available_metrics(record: dict[str, Any]) -> list[str]:
    """Every metric some point has for some variant, sorted."""
    found = {m for row in record["points"] for per in row["metrics"].values() for m in per}
    return sorted(found)


def _variants(record: dict[str, Any]) -> list[str]:
    names: dict[str, None] = {}
    for row in record["points"]:
        names.update(dict.fromkeys(row["metrics"]))
    return list(names)


def aggregate(record: dict[str, Any], metric: str, variant: str,
              keys: Sequence[str]) -> dict[tuple[str, ...], dict[str, float]]:
    """Mean, min, max and count of `metric` over the points sharing the values of `keys`."""
    groups: dict[tuple[str, ...], list[float]] = {}
    for row in record["points"]:
        value = row["metrics"].get(variant, {}).get(metric)
        if value is None:
            continue
        key = tuple(_label(row["params"][k]) for k in keys)
        groups.setdefault(key, []).append(float(value))
    return {key: {"mean": sum(vs) / len(vs), "min": min(vs), "max": max(vs), "n": len(vs)}
            for key, vs in groups.items()}


def _line_chart(record: dict[str, Any], metric: str, key: str, index: int,
                others: Sequence[str]) -> Chart:
    labels = [_label(v) for v in record["grid"][key]]
    traces = []
    for i, variant in enumerate(_variants(record)):
        stats = aggregate(record, metric, variant, [key])
        xs = [x for x in labels if (x,) in stats]
        means = [stats[(x,)]["mean"] for x in xs]
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": variant, "x": xs, "y": means,
            "line": {"color": PALETTE[i % len(PALETTE)], "width": 2},
            "error_y": {"type": "data", "symmetric": False,
                        "array": [stats[(x,)]["max"] - stats[(x,)]["mean"] for x in xs],
                        "arrayminus": [stats[(x,)]["mean"] - stats[(x,)]["min"] for x in xs],
                        "thickness": 1.2, "width": 4},
            "customdata": [[stats[(x,)]["min"], stats[(x,)]["max"], stats[(x,)]["n"]]
                           for x in xs],
            "hovertemplate": (f"{variant}: %{{y:,.4g}} (min %{{customdata[0]:,.4g}}, "
                              "max %{customdata[1]:,.4g}, %{customdata[2]} runs)<extra></extra>"),
        })
    layout = base_layout(metric, key, f"{metric} (mean over seeds)", log_y=False,
                         x_type="category")
    averaged = f" Averaged over {', '.join(others)} as well." if others else ""
    caption = (f"{metric} for each value of {key}, one line per variant: the mean over the "
               f"seeds, bars from the smallest to the largest run.{averaged}")
    return Chart(f"sweep-line-{index}", f"{metric} by {key}", caption,
                 {"data": traces, "layout": layout})


def _heatmap(record: dict[str, Any], metric: str, variant: str, keys: Sequence[str],
             index: int, others: Sequence[str]) -> Chart:
    rows, cols = ([_label(v) for v in record["grid"][k]] for k in keys[:2])
    stats = aggregate(record, metric, variant, keys[:2])

    def cell(r: str, c: str, what: str) -> float | None:
        found = stats.get((r, c))
        return None if found is None else found[what]

    z = [[cell(r, c, "mean") for c in cols] for r in rows]
    text = [[fmt_number(cell(r, c, "mean")) for c in cols] for r in rows]
    custom = [[[cell(r, c, "min"), cell(r, c, "max")] for c in cols] for r in rows]
    trace = {
        "type": "heatmap", "x": cols, "y": rows, "z": z, "text": text,
        "texttemplate": "%{text}", "customdata": custom,
        "colorscale": "Blues", "reversescale": True,  # darker is more
        "colorbar": {"title": {"text": "mean"}},
        "hovertemplate": (f"{keys[0]}=%{{y}}, {keys[1]}=%{{x}}<br>mean %{{z:,.4g}} (min "
                          "%{customdata[0]:,.4g}, max %{customdata[1]:,.4g})<extra></extra>"),
    }
    layout = base_layout(f"{metric} · {variant}", keys[1], keys[0], log_y=False, x_type="category")
    layout["yaxis"]["type"] = "category"
    layout["hovermode"] = "closest"
    averaged = f" Averaged over {', '.join(others)} as well." if others else ""
    caption = (f"{metric} of variant {variant} for each pair of {keys[0]} (rows) and {keys[1]} "
               f"(columns): the mean over the seeds in each cell; hover for min and max."
               f"{averaged}")
    return Chart(f"sweep-heatmap-{index}", f"{metric} · {variant}", caption,
                 {"data": [trace], "layout": layout})


def build_sweep_context(record: dict[str, Any], metrics: Sequence[str]) -> dict[str, Any]:
    keys = list(record["grid"])
    available = available_metrics(record)
    chosen = list(metrics) or [m for m in DEFAULT_METRICS if m in available] or available[:4]
    missing = [m for m in chosen if m not in available]
    chosen = [m for m in chosen if m in available]
    charts: list[Chart] = []
    for metric in chosen:
        if len(keys) == 1:
            charts.append(_line_chart(record, metric, keys[0], len(charts), []))
            continue
        for variant in _variants(record):
            if any(metric in row["metrics"].get(variant, {}) for row in record["points"]):
                charts.append(_heatmap(record, metric, variant, keys, len(charts), keys[2:]))
    table = [{"index": row["index"], "run_dir": row["run_dir"], "seed": row["seed"],
              "params": [_label(row["params"][k]) for k in keys],
              "checks": row["checks"], "failed": row["expectations_failed"],
              "cells": [fmt_number(row["metrics"].get(v, {}).get(m))
                         for m in chosen for v in _variants(record)]}
             for row in record["points"]]
    return {
        "title": f"Sweep of {record['scenario']}",
        "rig_version": record["rig_version"],
        "record": record, "keys": keys, "variants": _variants(record),
        "metrics": chosen, "missing": missing, "available": available,
        "charts": charts, "table": table,
        "figures_json": json_for_script({c.id: c.figure for c in charts}),
    }


def render_sweep(record: dict[str, Any], out: Path, metrics: Sequence[str] = ()) -> Path:
    """Write the sweep report of `record` (sweep.json's content) to `out`."""
    return write_page("sweep.html.j2", build_sweep_context(record, metrics), Path(out),
                      charts=True)
