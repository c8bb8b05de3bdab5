"""Several runs in one report: the same metrics side by side, relative change against the first
run (the baseline), verdicts that changed, overlaid timelines, and the diff of the resolved
scenarios. Reads saved results only, like the one-run report. The tables are built in
rig.report.compare_tables; this module names the runs, compares their scenarios and assembles
the page.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rig import rundir
from rig.report.charts.figure import PALETTE, Chart
from rig.report.charts.series import fetch_series
from rig.report.charts.sizes import size_chart, size_groups
from rig.report.charts.styles import RUN_DASHES, comparison_styler
from rig.report.charts.timelines import time_charts
from rig.report.compare_tables import (
    Side,
    all_numbers,
    checks_table,
    expectations_table,
    fetch_roles,
    metric_tables,
    recovery_tables,
    union,
)
from rig.report.format import DASH
from rig.report.inputs import dig, fault_marks, load_inputs, merge, run_statuses, variants_of
from rig.report.pages import json_for_script, write_page
from rig.report.paths import href, safe_name

__all__ = ["COMPARE_FOLDER", "comparison_name", "render_comparison", "run_labels"]

COMPARE_FOLDER = Path("reports")  # default home of comparison pages, like runs' (DESIGN.md)
MAX_DIFF_LINES = 1500  # per scenario diff; a run with explicit assignments can have a huge one


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
    variants = union([s.variants for s in sides])
    roles = fetch_roles(sides)
    facts = [_run_facts(s, out, i) for i, s in enumerate(sides)]
    tables = metric_tables(sides, variants, roles) + recovery_tables(sides, variants)
    numbers = all_numbers(sides)
    diffs = [_diff(sides[0], other) for other in sides[1:]]
    charts = _charts(sides, labels, variants, roles)
    scenarios = union([[f["scenario"]] for f in facts])
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
        "expectations": expectations_table(sides),
        "checks": checks_table(sides, variants),
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
