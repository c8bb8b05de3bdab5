"""The "Bandwidth ranking" section: every variant ranked by the Fetch bytes per second it cost.

Shown when a run has two variants or more. The figures are summary.json's
`variants.<v>.fetch.<role>.{request,response}_bytes_per_second` (body bytes, as encoded for
each variant's Fetch version); the table ranks by their sum, cheapest first. When the run priced
its traffic (issue 20's ledger), a last column gives each variant's
`variants.<v>.cost.usd_per_month`: what all its traffic (not only Fetch) costs a month.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig.report.charts.figure import PALETTE, Chart, FaultMark, base_layout, wants_log
from rig.report.charts.styles import ROLE_LABEL
from rig.report.format import fmt_int, fmt_usd
from rig.report.inputs import RunInputs, dig

__all__ = ["build_bandwidth"]

DIRECTIONS = (("request", "requests"), ("response", "responses"))


def _rate(summary: Mapping[str, Any], variant: str, role: str, direction: str) -> float | None:
    value = dig(summary, "variants", variant, "fetch", role, f"{direction}_bytes_per_second")
    return float(value) if isinstance(value, int | float) else None


def _chart(rows: Sequence[Mapping[str, Any]], roles: Sequence[str]) -> Chart:
    """Horizontal bars, one group per variant (cheapest on top), one bar per role and
    direction: the ranking reads top to bottom, the split within each variant side by side."""
    order = [r["variant"] for r in reversed(rows)]  # plotly draws the first category lowest
    traces = []
    shades = {("follower", "request"): 0, ("follower", "response"): 1,
              ("consumer", "request"): 2, ("consumer", "response"): 3}
    for role in roles:
        for direction, noun in DIRECTIONS:
            name = f"{ROLE_LABEL.get(role, role)} · {noun}"
            rates = {r["variant"]: r["rates"].get((role, direction)) for r in rows}
            traces.append({
                "type": "bar", "orientation": "h", "name": name,
                "y": order, "x": [rates[v] or 0 for v in order],
                "marker": {"color": PALETTE[shades[(role, direction)] % len(PALETTE)]},
                "hovertemplate": f"%{{x:,.0f}} B/s<extra>{name}</extra>",
            })
    log_x = wants_log([[v for v in t["x"] if v] for t in traces] + [
        [r["total"] for r in rows]])
    layout = base_layout("Fetch bytes per second, ranked",
                         "bytes per second (body" + (", log scale)" if log_x else ")"), "",
                         log_y=False)
    layout["barmode"] = "group"
    layout["hovermode"] = "closest"
    layout["yaxis"] = {**layout["yaxis"], "type": "category",
                       "title": {"text": "variant (cheapest on top)"}}
    if log_x:
        layout["xaxis"].update(type="log", dtick=1, tickformat="~s")
    else:
        layout["xaxis"].update(rangemode="tozero", tickformat="~s")
    layout["height"] = max(320, 90 + 34 * len(rows) * max(1, len(roles)))
    caption = ("Each variant's Fetch body bytes per simulated second, cheapest variant on top; "
               "bars split followers from consumers and requests from responses, so a version "
               "that only saves on requests (fetch sessions) or only costs on one side (v15's "
               "ReplicaState) shows where.")
    return Chart("chart-bandwidth-ranking", "Fetch bytes per second, ranked", caption,
                 {"data": traces, "layout": layout})


def build_bandwidth(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark], *,
                    with_consumers: bool) -> dict[str, Any] | None:
    """The section's variables, or None with fewer than two variants or no fetch figures."""
    if len(variants) < 2:
        return None
    roles = ["follower", "consumer"] if with_consumers else ["follower"]
    rows: list[dict[str, Any]] = []
    for v in variants:
        rates = {(role, d): _rate(inputs.summary, v, role, d)
                 for role in roles for d, _ in DIRECTIONS}
        known = [r for r in rates.values() if r is not None]
        if not known:
            continue
        rows.append({"variant": v, "rates": rates, "total": sum(known),
                     "version": dig(inputs.run, "variants", v, "fetch_version"),
                     "usd": dig(inputs.summary, "variants", v, "cost", "usd_per_month")})
    if len(rows) < 2:
        return None
    rows.sort(key=lambda r: (r["total"], variants.index(r["variant"])))
    best = rows[0]["total"] or 1.0
    keys = [(role, d) for role in roles for d, _ in DIRECTIONS]
    cheapest = {k: min((r["rates"][k] for r in rows if r["rates"][k] is not None), default=None)
                for k in keys}
    priced = [r["usd"] for r in rows if isinstance(r["usd"], int | float)]
    table = []
    for rank, row in enumerate(rows, 1):
        table.append({
            "rank": rank, "variant": row["variant"],
            # The version under the name, unless the name says it already.
            "version": "" if row["version"] is None or row["variant"] == f"v{row['version']}"
            else f"Fetch v{row['version']}",
            # Each column's cheapest variant is marked: the ranking of one role and direction.
            "cells": [{"text": fmt_int(row["rates"][k]),
                       "best": row["rates"][k] is not None and row["rates"][k] == cheapest[k]}
                      for k in keys],
            "total": fmt_int(row["total"]),
            "times_best": "1×" if rank == 1 else f"{row['total'] / best:,.2f}×",
            "usd": fmt_usd(row["usd"]),
            "cheapest_usd": bool(priced) and row["usd"] == min(priced),
        })
    return {"rows": table, "roles": [ROLE_LABEL.get(role, role).capitalize() for role in roles],
            "priced": bool(priced), "charts": [_chart(rows, roles)]}
