"""The matrix overview: one page over many runs (a CI matrix, or reports/*/), every scenario with
its variants, each expectation's and check's verdict, headline numbers and a link to its report.
Small and chart-free, so it opens at once however many runs there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig import rundir
from rig.report.format import DASH, fmt_bytes, fmt_number, fmt_rate, keep_units
from rig.report.inputs import (
    RunInputs,
    checks_status,
    dig,
    expectation_rows,
    load_inputs,
    merge,
    run_statuses,
    variants_of,
)
from rig.report.pages import write_page
from rig.report.paths import href, safe_name
from rig.report.verdicts import VariantVerdict, variant_verdicts

__all__ = ["Skipped", "build_index_context", "render_index"]

MAX_DESCRIPTION = 280  # characters in the overview; the run's own report has all of it
MAX_VIOLATIONS_SHOWN = 5  # per variant; the report and summary.json have the rest


@dataclass(frozen=True)
class Skipped:
    """A folder given to the index that is not a finished run, and why."""

    path: Path
    reason: str


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _variant_row(inputs: RunInputs, variant: str, verdict: VariantVerdict) -> dict[str, Any]:
    follower = dig(inputs.summary, "variants", variant, "fetch", "follower") or {}
    plan = dig(inputs.run, "variants", variant) or {}
    checks = dig(inputs.summary, "variants", variant, "checks")
    violations = dig(checks, "violations")
    violations = violations if isinstance(violations, list) else []
    checkers = dig(checks, "checks")
    return {
        "name": variant,
        "fetch_version": fmt_number(dig(plan, "fetch_version")),
        "session": str(dig(plan, "strategies", "fetch_session") or DASH),
        "steady": keep_units(fmt_bytes(dig(follower, "request_bytes", "p50"))),
        "request_rate": keep_units(fmt_rate(follower.get("request_bytes_per_second"))),
        "response_rate": keep_units(fmt_rate(follower.get("response_bytes_per_second"))),
        "checks": checks_status(checks),
        # The variant's verdict as its report's first screen gives it.
        "verdict": verdict.as_dict(),
        "violations": len(violations),
        "violation_texts": [str(v)[:300] for v in violations[:MAX_VIOLATIONS_SHOWN]],
        "checkers": [
            {"name": str(name), "status": str(dig(info, "status") or "unknown"),
             "note": str(dig(info, "note") or "")}
            for name, info in (checkers.items() if isinstance(checkers, dict) else [])
        ],
    }


def _entry(inputs: RunInputs, out: Path, anchor: str) -> dict[str, Any]:
    run, summary = inputs.run, inputs.summary
    variants = variants_of(inputs)
    expectations = [
        {**e, "value": fmt_number(e["value"])} for e in expectation_rows(summary)
    ]
    statuses = run_statuses(inputs, variants)
    seed = run.get("seed", summary.get("seed"))
    sha = str(run.get("scenario_sha256") or summary.get("scenario_sha256") or "")
    report = rundir.report_path(inputs.run_dir)
    return {
        "anchor": anchor,
        "scenario": str(run.get("scenario") or summary.get("scenario") or inputs.run_dir.name),
        "folder": inputs.run_dir.name,
        "name": str(run.get("scenario") or summary.get("scenario") or inputs.run_dir.name)
        + ("" if inputs.run_dir.name == run.get("scenario") else f" · {inputs.run_dir.name}"),
        "description": _short(str(run.get("description") or ""), MAX_DESCRIPTION),
        "report_href": href(out, report) if report.exists() else None,
        "overall": merge(statuses),
        "counts": {s: statuses.count(s) for s in ("pass", "fail", "unknown")},
        "expect_counts": {
            s: sum(e["status"] == s for e in expectations) for s in ("pass", "fail", "unknown")
        },
        "expectations": expectations,
        "variants": [_variant_row(inputs, v, verdict) for v, verdict in
                     zip(variants, variant_verdicts(inputs, variants), strict=True)],
        "seed": DASH if seed is None else str(seed),
        "sha_short": sha[:12] if sha else DASH,
        "sha": sha or DASH,
        "rig_version": str(run.get("rig_version") or summary.get("rig_version") or DASH),
        "command": str(run.get("command") or ""),
        "missing": inputs.missing,
    }


def _attention(entries: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Every failed or unknown expectation and check, failures first: what to look at."""
    items = []
    for entry in entries:
        for e in entry["expectations"]:
            if e["status"] != "pass":
                items.append({"anchor": entry["anchor"], "scenario": entry["name"],
                              "what": e["expect"], "value": e["value"], "status": e["status"]})
        for v in entry["variants"]:
            if v["checks"] != "pass":
                what = f"safety checks of {v['name']}"
                value = f"{v['violations']} violation(s)" if v["violations"] else DASH
                items.append({"anchor": entry["anchor"], "scenario": entry["name"],
                              "what": what, "value": value, "status": v["checks"]})
    items.sort(key=lambda i: i["status"] != "fail")  # stable: scenario order within
    return items


def build_index_context(
    run_dirs: Sequence[Path], out: Path, skipped: Sequence[Skipped] = ()
) -> dict[str, Any]:
    """The index template's variables, runs sorted by scenario name then folder."""
    loaded = sorted(
        (load_inputs(Path(d)) for d in run_dirs),
        key=lambda i: (str(i.run.get("scenario") or i.run_dir.name), i.run_dir.name),
    )
    entries, used = [], set()
    for inputs in loaded:
        anchor = "run-" + safe_name(inputs.run_dir.name)
        n = 1
        while anchor in used:
            n += 1
            anchor = f"run-{safe_name(inputs.run_dir.name)}-{n}"
        used.add(anchor)
        entries.append(_entry(inputs, Path(out), anchor))
    verdicts = [e["overall"] for e in entries]
    expectations = [x["status"] for e in entries for x in e["expectations"]]
    versions = sorted({e["rig_version"] for e in entries})
    return {
        "page": "index",
        "title": "Scenario matrix",
        "entries": entries,
        "overall": merge(verdicts),
        "run_counts": {s: verdicts.count(s) for s in ("pass", "fail", "unknown")},
        "expectation_counts": {s: expectations.count(s) for s in ("pass", "fail", "unknown")},
        "attention": _attention(entries),
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in skipped],
        "rig_version": ", ".join(versions) if versions else DASH,
    }


def render_index(
    run_dirs: Sequence[Path], out: Path, skipped: Sequence[Skipped] = ()
) -> Path:
    """Write the matrix overview of `run_dirs` to `out`; `skipped` folders are listed on it."""
    context = build_index_context(run_dirs, Path(out), skipped)
    return write_page("index.html.j2", context, Path(out), charts=False)
