"""The report's "Traffic and cost" section: bytes by traffic class, same-zone and cross-zone, what
the cross-zone ones cost a month by class, the variants side by side, and each variant's
zone-to-zone matrix.

Reads summary.json (`variants.<v>.traffic`, `.cost`) and metrics/traffic.json; a run without
the ledger (an older run) leaves the section out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig import rundir
from rig.report.charts.figure import FaultMark
from rig.report.format import DASH, fmt_int, fmt_usd, human_bytes
from rig.report.inputs import RunInputs, dig

__all__ = ["build_traffic"]

CLASSES: tuple[tuple[str, str], ...] = (
    ("produce", "Produce"), ("replication", "Replication"), ("catch_up", "Catch-up after faults"),
    ("consumer_fetch", "Consumer fetch"), ("fetch_overhead", "Fetch overhead"),
    ("control", "Metadata and control"),
)
NO_ZONE = "(none)"


def _rows(summary: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for key, label in CLASSES:
        rows.append({"label": label, "cells": [{
            "same": human_bytes(dig(summary, "variants", v, "traffic", key, "same_zone_bytes")),
            "cross": human_bytes(dig(summary, "variants", v, "traffic", key,
                                     "cross_zone_bytes")),
            "usd": fmt_usd(dig(summary, "variants", v, "cost", "by_class", key)),
        } for v in variants]})
    return rows


def _matrix(table: Sequence[Mapping[str, Any]], variant: str) -> dict[str, Any]:
    """Bytes from zone to zone (all classes) for one variant."""
    cells: dict[tuple[str, str], int] = {}
    for row in table:
        if row.get("variant") != variant:
            continue
        a, b = row.get("src_zone") or NO_ZONE, row.get("dst_zone") or NO_ZONE
        cells[(a, b)] = cells.get((a, b), 0) + int(row.get("bytes") or 0)
    zones = sorted({z for pair in cells for z in pair}, key=lambda z: (z == NO_ZONE, z))
    return {"variant": variant, "zones": zones,
            "rows": [{"zone": a, "cells": [{"text": human_bytes(cells.get((a, b), 0))
                                                    if (a, b) in cells else DASH,
                                            "cross": a != b and NO_ZONE not in (a, b)}
                                           for b in zones]} for a in zones]}


def build_traffic(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark], *,
                  with_consumers: bool) -> dict[str, Any] | None:
    summary = inputs.summary
    shown = [v for v in variants if dig(summary, "variants", v, "traffic") is not None]
    if not shown:
        return None
    table = rundir.read_metric(inputs.run_dir, rundir.TRAFFIC) or []
    return {
        "variants": shown,
        "classes": _rows(summary, shown),
        "totals": [{"month": fmt_usd(dig(summary, "variants", v, "cost", "usd_per_month")),
                    "total": fmt_usd(dig(summary, "variants", v, "cost", "usd_total")),
                    "profile": str(dig(summary, "variants", v, "cost", "prices", "profile")
                                   or DASH)} for v in shown],
        "matrices": [_matrix(table, v) for v in shown],
        "pairs": fmt_int(len(table)),
        "charts": [],
    }
