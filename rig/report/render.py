"""Render RUN_DIR/report.html: one offline HTML file from run.json, summary.json and metrics/.

Reads only what earlier stages wrote (never re-simulates, never starts Spark) and tolerates
missing files and keys: whatever is unknown shows as a dash or "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from rig import rundir
from rig.report.charts.fetch import build_charts
from rig.report.charts.figure import PALETTE, Chart
from rig.report.firstscreen import build_first_screen
from rig.report.format import (
    DASH,
    fmt_bytes,
    fmt_int,
    fmt_number,
    fmt_rate,
    fmt_ratio,
    keep_units,
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
    status,
    variants_of,
)
from rig.report.pages import json_for_script, write_page
from rig.report.sections import SECTIONS
from rig.report.verdicts import EXPECTED_WORD

__all__ = ["RunInputs", "build_context", "cap_text", "load_inputs", "render_report"]

MAX_VIOLATIONS_SHOWN = 100  # per variant; the rest is counted, summary.json has them all
MAX_EXPECTATIONS_SHOWN = 300  # a fuzzed scenario can state many; summary.json has them all
MAX_FAULTS_SHOWN = 200  # rows of the fault table; every fault is still marked on the charts
MAX_SCENARIO_LINES = 2000  # of the resolved scenario shown; scenario.yaml has it all


def _requests_cell(stats: Mapping[str, Any]) -> str:
    total = stats.get("requests")
    if total is None:
        return DASH
    full, incr = stats.get("full_requests"), stats.get("incremental_requests")
    if full is None or incr is None:
        return fmt_int(total)
    return f"{fmt_int(total)} ({fmt_int(full)} full, {fmt_int(incr)} incremental)"


def _headline(inputs: RunInputs, variants: list[str], role: str) -> dict[str, Any]:
    """Rows × variant columns for one role, plus the "v6 is 364.6× v7" sentence."""
    stats = {v: dig(inputs.summary, "variants", v, "fetch", role) or {} for v in variants}
    plans = {v: dig(inputs.run, "variants", v) or {} for v in variants}
    steady = {v: dig(stats[v], "request_bytes", "p50") for v in variants}
    known = {v: s for v, s in steady.items() if isinstance(s, int | float) and s > 0}
    smallest = min(known, key=lambda v: known[v]) if known else None

    def ratio(v: str) -> str:
        if smallest is None or v not in known:
            return DASH
        text = fmt_ratio(known[v] / known[smallest])
        return f"{text} (smallest)" if known[v] == known[smallest] else text

    rows: list[tuple[str, str, list[str]]] = [
        ("Fetch version", "", [fmt_number(dig(plans[v], "fetch_version")) for v in variants]),
        (
            "Session strategy",
            "",
            [str(dig(plans[v], "strategies", "fetch_session") or DASH) for v in variants],
        ),
        ("Requests", "", [_requests_cell(stats[v]) for v in variants]),
        (
            "First request body",
            "bytes",
            [fmt_bytes(stats[v].get("first_request_bytes")) for v in variants],
        ),
        ("Steady request body (p50)", "bytes", [fmt_bytes(steady[v]) for v in variants]),
        (
            "Largest request body",
            "bytes",
            [fmt_bytes(dig(stats[v], "request_bytes", "max")) for v in variants],
        ),
        (
            "Request rate",
            "body bytes/s",
            [fmt_rate(stats[v].get("request_bytes_per_second")) for v in variants],
        ),
        (
            "Response rate",
            "body bytes/s",
            [fmt_rate(stats[v].get("response_bytes_per_second")) for v in variants],
        ),
        (
            "Total request bytes",
            "body",
            [fmt_bytes(dig(stats[v], "request_bytes", "total")) for v in variants],
        ),
        (
            "Total response bytes",
            "body",
            [fmt_bytes(dig(stats[v], "response_bytes", "total")) for v in variants],
        ),
        ("Steady request size vs the smallest", "", [ratio(v) for v in variants]),
    ]
    sentence = ""
    if smallest is not None and len(known) > 1:
        parts = [
            f"{v} is {fmt_ratio(known[v] / known[smallest])} {smallest}"
            for v in variants
            if v in known and known[v] != known[smallest]
        ]
        same = f"every variant sends {fmt_int(known[smallest])} bytes"
        sentence = "; ".join(parts) if parts else same
    return {
        "role": role,
        "rows": [
            {"label": label, "unit": unit, "cells": [keep_units(c) for c in cells]}
            for label, unit, cells in rows
        ],
        "ratio_sentence": sentence,
    }


def cap_text(text: str | None, max_lines: int) -> tuple[str | None, int, int]:
    """(the first `max_lines` lines of text, lines shown, lines in all)."""
    if text is None:
        return None, 0, 0
    lines = text.splitlines(keepends=True)
    return "".join(lines[:max_lines]), min(len(lines), max_lines), len(lines)


def _violation_text(violation: Any) -> str:
    if isinstance(violation, str):
        return violation
    if isinstance(violation, Mapping) and isinstance(violation.get("message"), str):
        rest = {k: v for k, v in violation.items() if k != "message"}
        tail = orjson.dumps(rest, option=orjson.OPT_SORT_KEYS).decode() if rest else ""
        return f"{violation['message']} {tail}".strip()
    return orjson.dumps(violation, option=orjson.OPT_SORT_KEYS, default=str).decode()


def _checks(inputs: RunInputs, variants: list[str]) -> list[dict[str, Any]]:
    """One row per variant: the merged verdict, each checker's own verdict, the violations."""
    out = []
    for v in variants:
        checks = dig(inputs.summary, "variants", v, "checks")
        violations = dig(checks, "violations")
        violations = violations if isinstance(violations, list) else []
        checkers = dig(checks, "checks")
        out.append(
            {
                "variant": v,
                "status": checks_status(checks),
                "expected": bool(dig(checks, "expected_by_scenario")),
                # Violations the scenario demands read as such, as on the first screen.
                "word": EXPECTED_WORD if checks_status(checks) == "pass" and violations
                else checks_status(checks).upper(),
                "css": "expected" if checks_status(checks) == "pass" and violations
                else checks_status(checks),
                "count": len(violations),
                "shown": [_violation_text(x) for x in violations[:MAX_VIOLATIONS_SHOWN]],
                "checkers": [
                    {
                        "name": str(name),
                        "status": status({"ok": True, "failed": False}.get(
                            str(dig(info, "status")))),
                        "note": str(dig(info, "note") or ""),
                    }
                    for name, info in (checkers.items() if isinstance(checkers, Mapping) else [])
                ],
            }
        )
    return out


def _expectations(inputs: RunInputs) -> list[dict[str, str]]:
    return [
        {**row, "value": fmt_number(row["value"])}
        for row in expectation_rows(inputs.summary)
    ]


def _has_consumers(inputs: RunInputs, variants: list[str]) -> bool:
    if any(
        (number(dig(inputs.summary, "variants", v, "fetch", "consumer", "requests")) or 0) > 0
        for v in variants
    ):
        return True
    return any(
        r.get("role") == "consumer" and (number(r.get("requests")) or 0) > 0
        for r in inputs.timeseries + inputs.timeline
    )


def _faults(inputs: RunInputs, variants: Sequence[str]) -> list[dict[str, str]]:
    """The fault table: time, variant, what happened (capped; the charts mark all of them)."""
    rows = []
    for mark in fault_marks(inputs, variants)[:MAX_FAULTS_SHOWN]:
        rows.append(
            {
                "t": f"{mark.t_s:,.3f}",
                "variant": mark.variant or DASH,
                "event": mark.event,
                "label": mark.label,
            }
        )
    return rows


def reproduce_block(inputs: RunInputs) -> dict[str, str]:
    """The exact command, rig version, seed and scenario hash of a run, as display strings."""
    run, summary = inputs.run, inputs.summary
    seed = run.get("seed", summary.get("seed"))
    return {
        "command": str(run.get("command") or ""),
        "rig_version": str(run.get("rig_version") or summary.get("rig_version") or DASH),
        "seed": DASH if seed is None else str(seed),
        "scenario_sha256": str(
            run.get("scenario_sha256") or summary.get("scenario_sha256") or DASH
        ),
    }


def build_context(inputs: RunInputs) -> dict[str, Any]:
    """The template's variables, all plain strings, lists and dicts (formatting done here)."""
    run, summary = inputs.run, inputs.summary
    variants = variants_of(inputs)
    with_consumers = _has_consumers(inputs, variants)
    roles = ["follower", "consumer"] if with_consumers else ["follower"]
    durations = {v: dig(run, "variants", v, "duration_ms") for v in variants}
    marks = fault_marks(inputs, variants)
    charts: list[Chart] = build_charts(
        variants,
        inputs.timeseries,
        inputs.sizes,
        durations,
        with_consumers=with_consumers,
        timeline=inputs.timeline or None,
        faults=marks,
    )
    built = {s.name: s.build(inputs, variants, marks, with_consumers=with_consumers)
             for s in SECTIONS}
    sections = [{"name": s.name, "title": s.title, "template": s.template}
                for s in SECTIONS if built[s.name]]
    first = build_first_screen(inputs, variants, marks)
    drawn = charts + [c for data in built.values() if data for c in data.get("charts", [])]
    if first["timeline"] is not None:
        drawn.append(first["timeline"])
    expectations = _expectations(inputs)
    checks = _checks(inputs, variants)
    statuses = [e["status"] for e in expectations] + [c["status"] for c in checks]
    scenario_text, shown, total = cap_text(inputs.scenario_text, MAX_SCENARIO_LINES)
    return {
        "page": "report",
        "title": str(run.get("scenario") or summary.get("scenario") or inputs.run_dir.name),
        "description": str(run.get("description") or ""),
        "reproduce": reproduce_block(inputs),
        "variants": variants,
        "headlines": [_headline(inputs, variants, role) for role in roles],
        "expectations": expectations[:MAX_EXPECTATIONS_SHOWN],
        "expectations_hidden": max(0, len(expectations) - MAX_EXPECTATIONS_SHOWN),
        "checks": checks,
        "first": first,
        "overall": merge(statuses),
        "counts": {s: statuses.count(s) for s in ("pass", "fail", "unknown")},
        "charts": charts,
        "figures_json": json_for_script({c.id: c.figure for c in drawn}),
        **built,
        "sections": sections,
        "faults": _faults(inputs, variants),
        "faults_total": len(marks),
        "scenario_text": scenario_text,
        "scenario_lines": {"shown": shown, "total": total},
        "missing": inputs.missing,
        "palette": PALETTE,
        "rig_version": reproduce_block(inputs)["rig_version"],
    }


def render_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report for `run_dir` to `out` (default RUN_DIR/report.html); return its path.

    Refuses to overwrite a file that rig did not write.
    """
    run_dir = Path(run_dir)
    out = Path(out) if out is not None else rundir.report_path(run_dir)
    context = build_context(load_inputs(run_dir))
    return write_page("report.html.j2", context, out, charts=True)
