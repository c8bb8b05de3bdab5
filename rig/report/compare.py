"""Several runs in one report: the same metrics side by side, relative change against the first
run (the baseline), verdicts that changed, overlaid timelines, and the diff of the resolved
scenarios. Reads saved results only, like the one-run report.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig import rundir
from rig.report.charts.figure import PALETTE, Chart
from rig.report.charts.series import fetch_series
from rig.report.charts.sizes import size_chart, size_groups
from rig.report.charts.styles import RUN_DASHES, comparison_styler
from rig.report.charts.timelines import time_charts
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
from rig.report.inputs import (
    RunInputs,
    checks_status,
    dig,
    expectation_rows,
    fault_marks,
    load_inputs,
    merge,
    number,
    run_statuses,
    variants_of,
)
from rig.report.pages import json_for_script, write_page
from rig.report.paths import href, safe_name
from rig.report.recovery.headline import RECOVERY_METRICS, has_recovery_numbers

__all__ = ["COMPARE_FOLDER", "comparison_name", "render_comparison", "run_labels"]

COMPARE_FOLDER = Path("reports")  # default home of comparison pages, like runs' (DESIGN.md)
BIG_CHANGE = 0.10  # at or beyond ±10 % a change is outlined, not just shaded
MAX_DIFF_LINES = 1500  # per scenario diff; a run with explicit assignments can have a huge one
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


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Short, distinct labels: folder names, widened with the parent folder, then numbered."""
    paths = [Path(p).resolve() for p in run_dirs]
    labels = [p.name or str(p) for p in paths]
    if len(set(labels)) < len(labels):
        labels = [f"{p.parent.name}/{p.name}" if p.parent.name else p.name for p in paths]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def comparison_name(labels: Sequence[str]) -> str:
    """The default file name: compare-<a>-vs-<b>….html, safe whatever the folder names are."""
    return "compare-" + safe_name("-vs-".join(labels), fallback="runs") + ".html"


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


def _union(lists: Sequence[Sequence[str]]) -> list[str]:
    out: list[str] = []
    for items in lists:
        out += [x for x in items if x not in out]
    return out


def _roles(sides: Sequence[Side]) -> list[str]:
    consumers = any(
        (number(dig(s.inputs.summary, "variants", v, "fetch", "consumer", "requests")) or 0) > 0
        for s in sides
        for v in s.variants
    )
    return ["follower", "consumer"] if consumers else ["follower"]


def _metric_tables(sides: Sequence[Side], variants: Sequence[str], roles: Sequence[str]) -> list:
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


def _recovery_tables(sides: Sequence[Side], variants: Sequence[str]) -> list[dict[str, Any]]:
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


def _expectations(sides: Sequence[Side]) -> list[dict[str, Any]]:
    """Union of every run's expectations, keyed by their text, in first-seen order."""
    per_side = [{e["expect"]: e for e in expectation_rows(s.inputs.summary)} for s in sides]
    keys = _union([list(found) for found in per_side])
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


def _checks(sides: Sequence[Side], variants: Sequence[str]) -> list[dict[str, Any]]:
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


def _all_numbers(sides: Sequence[Side]) -> dict[str, Any]:
    """Every number under summary.json's `variants` that differs between the runs."""
    per_side = [dict(_leaves(dig(s.inputs.summary, "variants") or {}, "variants")) for s in sides]
    keys = _union([list(found) for found in per_side])
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


def _diff(base: Side, other: Side) -> dict[str, Any]:
    """Unified diff of the two resolved scenario.yaml files, as classed lines (escaped later)."""
    a, b = base.inputs.scenario_text, other.inputs.scenario_text
    result: dict[str, Any] = {"against": other.label, "lines": [], "identical": False,
                              "hidden": 0, "missing": a is None or b is None, "changed": 0}
    if a is None or b is None:
        return result
    lines = list(
        difflib.unified_diff(
            a.splitlines(), b.splitlines(),
            f"{base.label}/scenario.yaml", f"{other.label}/scenario.yaml", lineterm="", n=2,
        )
    )
    result["identical"] = not lines
    classed = []
    for line in lines:
        if line.startswith(("+++", "---")):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        classed.append({"cls": cls, "text": line})
    result["changed"] = sum(1 for c in classed if c["cls"] in ("add", "del"))
    result["lines"] = classed[:MAX_DIFF_LINES]
    result["hidden"] = max(0, len(classed) - MAX_DIFF_LINES)
    return result


def _run_facts(side: Side, out: Path, index: int) -> dict[str, Any]:
    run, summary = side.inputs.run, side.inputs.summary
    seed = run.get("seed", summary.get("seed"))
    sha = str(run.get("scenario_sha256") or summary.get("scenario_sha256") or "")
    statuses = run_statuses(side.inputs, side.variants)
    report = rundir.report_path(side.inputs.run_dir)
    return {
        "label": side.label,
        "dash": RUN_DASHES[index % len(RUN_DASHES)],
        "dir": str(side.inputs.run_dir),
        "report_href": href(out, report) if report.exists() else None,
        "scenario": str(run.get("scenario") or summary.get("scenario") or DASH),
        "description": str(run.get("description") or ""),
        "seed": DASH if seed is None else str(seed),
        "rig_version": str(run.get("rig_version") or summary.get("rig_version") or DASH),
        "sha": sha or DASH,
        "sha_short": sha[:12] if sha else DASH,
        "command": str(run.get("command") or ""),
        "overall": merge(statuses),
        "counts": {s: statuses.count(s) for s in ("pass", "fail", "unknown")},
        "variants": side.variants,
    }


def _differences(facts: Sequence[dict[str, Any]], diffs: Sequence[dict[str, Any]],
                 tables: Sequence[dict[str, Any]], numbers: dict[str, Any]) -> list[str]:
    """Plain sentences: what differs between the baseline and the other runs, most telling
    first."""
    base = facts[0]
    out = []
    for field, noun in (("scenario", "scenario"), ("seed", "seed"), ("sha", "scenario file"),
                        ("rig_version", "rig version")):
        changed = [f for f in facts[1:] if f[field] != base[field]]
        if changed:
            shown = ", ".join(f"{f['label']}: {f[field if field != 'sha' else 'sha_short']}"
                              for f in changed)
            first = base[field if field != "sha" else "sha_short"]
            out.append(f"{noun.capitalize()} differs: {base['label']}: {first}; {shown}.")
    for diff in diffs:
        if diff["missing"]:
            out.append(f"The resolved scenarios of {base['label']} and {diff['against']} cannot "
                       "be compared: a scenario.yaml is missing.")
        elif diff["identical"]:
            out.append(f"The resolved scenarios of {base['label']} and {diff['against']} are "
                       "identical.")
        else:
            out.append(f"The resolved scenario of {diff['against']} differs from "
                       f"{base['label']}'s in {diff['changed']} line(s): see the diff below.")
    changed_rows = sum(t["changed"] for t in tables)
    out.append(
        f"{changed_rows} of {sum(len(t['rows']) for t in tables)} headline numbers changed; "
        f"{numbers['differ']} of {numbers['differ'] + numbers['same']} numbers in summary.json "
        "differ."
    )
    verdicts = [f"{f['label']} {f['overall']}" for f in facts]
    if len({f["overall"] for f in facts}) > 1:
        out.append("The verdicts differ: " + ", ".join(verdicts) + ".")
    return out


def build_comparison_context(run_dirs: Sequence[Path], out: Path) -> dict[str, Any]:
    """The comparison template's variables; run_dirs[0] is the baseline."""
    labels = run_labels(run_dirs)
    sides = []
    for label, run_dir in zip(labels, run_dirs, strict=True):
        inputs = load_inputs(Path(run_dir))
        sides.append(Side(label, inputs, variants_of(inputs)))
    variants = _union([s.variants for s in sides])
    roles = _roles(sides)
    facts = [_run_facts(s, out, i) for i, s in enumerate(sides)]
    tables = _metric_tables(sides, variants, roles) + _recovery_tables(sides, variants)
    numbers = _all_numbers(sides)
    diffs = [_diff(sides[0], other) for other in sides[1:]]
    charts = _charts(sides, labels, variants, roles)
    scenarios = _union([[f["scenario"]] for f in facts])
    heading = " vs ".join(labels)
    title = f"{scenarios[0]}: {heading}" if len(scenarios) == 1 else heading
    return {
        "page": "compare",
        "title": title,
        "scenarios": scenarios,
        "runs": facts,
        "variants": variants,
        "palette": PALETTE,
        "differences": _differences(facts, diffs, tables, numbers),
        "tables": tables,
        "expectations": _expectations(sides),
        "checks": _checks(sides, variants),
        "numbers": numbers,
        "diffs": diffs,
        "charts": charts,
        "figures_json": json_for_script({c.id: c.figure for c in charts}),
        "rig_version": facts[0]["rig_version"],
    }


def _charts(
    sides: Sequence[Side], labels: Sequence[str], variants: Sequence[str], roles: Sequence[str]
) -> list[Chart]:
    style = comparison_styler(labels, variants, roles)
    series, marks = [], []
    for side in sides:
        inputs = side.inputs
        durations = {v: dig(inputs.run, "variants", v, "duration_ms") for v in side.variants}
        series += fetch_series(inputs.timeline, inputs.timeseries, side.variants, roles,
                               durations, run=side.label)
        marks += fault_marks(inputs, side.variants, run=side.label)
    # Draw the same variant of every run next to each other: the legend then reads in pairs.
    order = {v: i for i, v in enumerate(variants)}
    series.sort(key=lambda s: (order.get(s.variant, 0), s.role != "follower"))
    marks.sort(key=lambda m: m.t_s)
    charts = time_charts(series, style, marks, label_runs=True)
    groups = []
    for variant in variants:
        for side in sides:
            groups += size_groups(side.inputs.sizes, [variant], roles, "request", side.label)
    chart = size_chart(groups, style, "request")
    if chart is not None:
        charts.append(chart)
    return charts


def render_comparison(run_dirs: Sequence[Path], out: Path) -> Path:
    """Write the comparison of `run_dirs` (the first is the baseline) to `out`; return it."""
    if len(run_dirs) < 2:
        raise ValueError("a comparison needs at least two runs")
    context = build_comparison_context(run_dirs, Path(out))
    return write_page("compare.html.j2", context, Path(out), charts=True)
