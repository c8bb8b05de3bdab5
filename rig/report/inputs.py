"""What every page reads from a run directory, and the small judgements they share.

Tolerant by design: a missing file or key is an empty value, listed in `missing`, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig import rundir
from rig.report.charts.figure import FaultMark

__all__ = [
    "RunInputs",
    "dig",
    "expectation_rows",
    "fault_marks",
    "load_inputs",
    "merge",
    "number",
    "run_statuses",
    "status",
    "variants_of",
]



@dataclass
class RunInputs:
    """Everything the pages read from a run directory (each piece may be empty)."""

    run_dir: Path
    run: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    timeseries: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    sizes: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    scenario_text: str | None = None
    missing: list[str] = field(default_factory=list)


def _read_json(path: Path, missing: list[str] | None) -> Any:
    try:
        found = rundir.read_json(path)
    except orjson.JSONDecodeError:
        if missing is not None:
            missing.append(f"{path.name} (not valid JSON)")
        return None
    if found is None and missing is not None and not path.exists():
        missing.append(path.name)
    return found


def _rows(value: Any) -> list[dict[str, Any]]:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def load_inputs(run_dir: Path) -> RunInputs:
    """Read run.json, summary.json, metrics/*.json and scenario.yaml from `run_dir`.

    The per-second table is read only when the coarse timeline is absent (runs analysed before
    it existed): on a long run it is the one big file, and the timeline holds all the charts need.
    """
    run_dir = Path(run_dir)
    found = RunInputs(run_dir=run_dir)
    run = _read_json(rundir.run_json_path(run_dir), found.missing)
    summary = _read_json(rundir.summary_path(run_dir), found.missing)
    found.run = run if isinstance(run, dict) else {}
    found.summary = summary if isinstance(summary, dict) else {}
    found.timeline = _rows(_read_json(rundir.metric_path(run_dir, rundir.FETCH_TIMELINE), None))
    if not found.timeline:
        found.timeseries = _rows(_read_json(
            rundir.metric_path(run_dir, rundir.FETCH_TIMESERIES), found.missing))
    found.sizes = _rows(_read_json(rundir.metric_path(run_dir, rundir.FETCH_SIZES),
                                   found.missing))
    found.faults = _rows(_read_json(rundir.metric_path(run_dir, rundir.FAULTS), None))
    try:
        found.scenario_text = rundir.read_scenario_text(run_dir)
    except FileNotFoundError:
        found.missing.append(rundir.SCENARIO)
    return found


def dig(value: Any, *path: str) -> Any:
    """value[path[0]][path[1]]…, or None as soon as a key or a dict is missing."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def number(value: Any) -> float | None:
    """`value` when it is a finite number (not a bool), else None: a hand-edited summary.json
    may hold text where a number was, and a page shows that as unknown, never fails on it."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def variants_of(inputs: RunInputs) -> list[str]:
    """run.json order first, then variants only the summary or the metrics know of."""
    names: list[str] = [str(v) for v in (dig(inputs.run, "variants") or {})]
    more = [str(v) for v in (dig(inputs.summary, "variants") or {})]
    rows = inputs.timeseries + inputs.timeline + inputs.sizes
    more += sorted({str(r["variant"]) for r in rows if r.get("variant")})
    for name in more:
        if name not in names:
            names.append(name)
    return names


def status(ok: Any) -> str:
    """A three-state result: True → pass, False → fail, anything else → unknown."""
    return "pass" if ok is True else "fail" if ok is False else "unknown"


def checks_status(checks: Any) -> str:
    """A variant's checks: as their `ok` says, unless the scenario's own expectations judge
    them (a variant that must lose records), in which case those expectations carry the verdict."""
    if isinstance(checks, Mapping) and checks.get("expected_by_scenario"):
        return "pass"
    return status(dig(checks, "ok"))


def merge(statuses: Sequence[str]) -> str:
    """Failed beats unknown beats ok (Jepsen's merge-valid); nothing at all is unknown."""
    if not statuses:
        return "unknown"
    if "fail" in statuses:
        return "fail"
    return "unknown" if "unknown" in statuses else "pass"


def expectation_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """summary.json's expectations as {expect, description, value, status}; odd items skipped."""
    raw = summary.get("expectations")
    rows = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, Mapping):
            rows.append(
                {
                    "expect": str(item.get("expect", "—")),
                    "description": str(item.get("description") or ""),
                    "value": item.get("value"),
                    "status": status(item.get("ok")),
                }
            )
    return rows


def run_statuses(inputs: RunInputs, variants: Sequence[str]) -> list[str]:
    """Each expectation's and each variant's checks' status: what the run's verdict merges."""
    out = [e["status"] for e in expectation_rows(inputs.summary)]
    out += [checks_status(dig(inputs.summary, "variants", v, "checks")) for v in variants]
    return out


def fault_marks(inputs: RunInputs, variants: Sequence[str], run: str = "") -> list[FaultMark]:
    """metrics/faults.json as chart markers, for the variants shown, in time order."""
    marks = []
    for row in inputs.faults:
        t_ms = row.get("t_ms")
        variant = str(row.get("variant") or "")
        if not isinstance(t_ms, int | float) or (variant and variant not in variants):
            continue
        broker = row.get("broker")
        marks.append(
            FaultMark(
                t_s=float(t_ms) / 1000,
                label=str(row.get("label") or row.get("event") or "fault"),
                short=str(row.get("short") or row.get("event") or "fault"),
                event=str(row.get("event") or ""),
                variant=variant,
                broker=broker if isinstance(broker, int) else None,
                run=run,
                fault=row.get("fault") if isinstance(row.get("fault"), int) else None,
            )
        )
    marks.sort(key=lambda m: (m.t_s, m.variant))
    return marks
