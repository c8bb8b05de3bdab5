"""The comparison page's tables (rig.report.compare): each run's fetch, recovery and expectation
figures and its checks' verdicts side by side, every cell with its change against the baseline
run, and every number of summary.json that differs between the runs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rig.report.format import (
    DASH,
    fmt_bytes,
    fmt_change,
    fmt_int,
    fmt_number,
    fmt_rate,
    keep_units,
    relative_change,
)
from rig.report.inputs import RunInputs, checks_status, dig, expectation_rows, number
from rig.report.recovery.headline import RECOVERY_METRICS, has_recovery_numbers

BIG_CHANGE = 0.10  # at or beyond ±10 % a change is outlined, not just shaded
MAX_NUMBER_ROWS = 400  # rows of "every number that differs"
# Wall-clock measurements are not simulated results: they differ on every run and say nothing.
_NOT_RESULTS = {"wall_seconds"}

Fmt = Callable[[Any], str]
_METRICS: tuple[tuple[str, str, tuple[str, ...], Fmt], ...] = (
    ("Requests", "", ("requests",), fmt_int),
    ("Full requests", "", ("full_requests",), fmt_int),
    ("Incremental requests", "", ("incremental_requests",), fmt_int),
    ("First request body", "bytes", ("first_request_bytes",), fmt_bytes),
    ("Steady request body (p50)", "bytes", ("request_bytes", "p50"), fmt_bytes),
    ("Largest request body", "bytes", ("request_bytes", "max"), fmt_bytes),
    ("Request rate", "body bytes/s", ("request_bytes_per_second",), fmt_rate),
    ("Response rate", "body bytes/s", ("response_bytes_per_second",), fmt_rate),
    ("Total request bytes", "body", ("request_bytes", "total"), fmt_bytes),
    ("Total response bytes", "body", ("response_bytes", "total"), fmt_bytes),
)


@dataclass
class Side:
    """One run of the comparison: its label and what was read from its directory."""

    label: str
    inputs: RunInputs
    variants: list[str]


def _change_cell(base: Any, value: Any, fmt: Fmt, baseline: bool) -> dict[str, Any]:
    """One table cell: the value, and for a non-baseline run its change against the baseline."""
    cell: dict[str, Any] = {"text": keep_units(fmt(value)), "change": None, "cls": "",
                            "changed": False}
    if baseline:
        return cell
    change = relative_change(base, value)
    if change is None:
        differs = base != value
        cell.update(changed=differs, change=("differs" if differs else None), cls="up")
        return cell
    cell["change"] = fmt_change(change)
    if change == 0:
        cell["cls"] = "same"
        return cell
    big = math.isinf(change) or abs(change) >= BIG_CHANGE
    cell.update(changed=True, cls=("up" if change > 0 else "down") + (" big" if big else ""))
    return cell


def union(lists: Sequence[Sequence[str]]) -> list[str]:
    """Every item of `lists`, once, in first-seen order (a dict, not a list scan per item:
    every number of two summaries is a few thousand keys)."""
    return list(dict.fromkeys(x for items in lists for x in items))


def fetch_roles(sides: Sequence[Side]) -> list[str]:
    consumers = any(
        (number(dig(s.inputs.summary, "variants", v, "fetch", "consumer", "requests")) or 0) > 0
        for s in sides
        for v in s.variants
    )
    return ["follower", "consumer"] if consumers else ["follower"]


def metric_tables(sides: Sequence[Side], variants: Sequence[str], roles: Sequence[str]) -> list:
    tables = []
    for role in roles:
        for variant in variants:
            rows = []
            for label, unit, path, fmt in _METRICS:
                values = [
                    dig(s.inputs.summary, "variants", variant, "fetch", role, *path) for s in sides
                ]
                cells = [
                    _change_cell(values[0], v, fmt, i == 0) for i, v in enumerate(values)
                ]
                rows.append(
                    {
                        "label": label,
                        "unit": unit,
                        "cells": cells,
                        "emph": label.startswith("Steady"),
                        "changed": any(c["changed"] for c in cells),
                    }
                )
            present = [variant in s.variants for s in sides]
            tables.append(
                {"role": role, "variant": variant, "rows": rows, "present": present,
                 "changed": sum(1 for r in rows if r["changed"]),
                 "heading": f"{variant} · {role} fetches"}
            )
    return tables


def recovery_tables(sides: Sequence[Side], variants: Sequence[str]) -> list[dict[str, Any]]:
    """Produce and recovery numbers per variant, for variants some run measured them for."""
    tables = []
    for variant in variants:
        if not any(has_recovery_numbers(s.inputs.summary, variant) for s in sides):
            continue
        rows = []
        for label, unit, path, fmt, _ in RECOVERY_METRICS:
            values = [dig(s.inputs.summary, "variants", variant, *path) for s in sides]
            if all(v is None for v in values):
                continue
            cells = [_change_cell(values[0], v, fmt, i == 0) for i, v in enumerate(values)]
            rows.append({"label": label, "unit": unit, "cells": cells,
                         "emph": label.startswith("Lost"),
                         "changed": any(c["changed"] for c in cells)})
        tables.append({"role": "recovery", "variant": variant, "rows": rows,
                       "present": [variant in s.variants for s in sides],
                       "changed": sum(1 for r in rows if r["changed"]),
                       "heading": f"{variant} · produce and recovery"})
    return tables


def expectations_table(sides: Sequence[Side]) -> list[dict[str, Any]]:
    """Union of every run's expectations, keyed by their text, in first-seen order."""
    per_side = [{e["expect"]: e for e in expectation_rows(s.inputs.summary)} for s in sides]
    keys = union([list(found) for found in per_side])
    rows = []
    for key in keys:
        found = [side.get(key) for side in per_side]
        cells = []
        for i, item in enumerate(found):
            if item is None:
                cells.append({"status": None, "text": DASH, "change": None, "cls": ""})
                continue
            base = found[0]["value"] if found[0] else None
            cell = _change_cell(base, item["value"], fmt_number, i == 0 or found[0] is None)
            cells.append({**cell, "status": item["status"]})
        statuses = {c["status"] for c in cells}
        description = next((f["description"] for f in found if f and f["description"]), "")
        rows.append(
            {"expect": key, "description": description, "cells": cells,
             "status_changed": len(statuses) > 1}
        )
    return rows


def checks_table(sides: Sequence[Side], variants: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for variant in variants:
        cells = []
        for s in sides:
            checks = dig(s.inputs.summary, "variants", variant, "checks")
            violations = dig(checks, "violations")
            cells.append(
                {
                    "status": checks_status(checks) if variant in s.variants else None,
                    "violations": len(violations) if isinstance(violations, list) else 0,
                }
            )
        rows.append(
            {"variant": variant, "cells": cells,
             "status_changed": len({c["status"] for c in cells}) > 1}
        )
    return rows


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every number (and bool) below `value`, lists by index."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if str(key) not in _NOT_RESULTS:
                yield from _leaves(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, Mapping | list):
                yield from _leaves(item, f"{prefix}[{i}]")
    elif isinstance(value, int | float) or value is None:
        yield prefix, value


def all_numbers(sides: Sequence[Side]) -> dict[str, Any]:
    """Every number under summary.json's `variants` that differs between the runs."""
    per_side = [dict(_leaves(dig(s.inputs.summary, "variants") or {}, "variants")) for s in sides]
    keys = union([list(found) for found in per_side])
    rows, same = [], 0
    for key in keys:
        values = [found.get(key) for found in per_side]
        if all(v == values[0] for v in values):
            same += 1
            continue
        rows.append(
            {"key": key,
             "cells": [_change_cell(values[0], v, fmt_number, i == 0) for i, v in
                       enumerate(values)]}
        )
    return {"rows": rows[:MAX_NUMBER_ROWS], "hidden": max(0, len(rows) - MAX_NUMBER_ROWS),
            "differ": len(rows), "same": same}

