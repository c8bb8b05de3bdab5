"""Render RUN_DIR/report.html: one offline HTML file from run.json, summary.json and metrics/.

Reads only what earlier stages wrote (never re-simulates, never starts Spark) and tolerates
missing files and keys: whatever is unknown shows as a dash or "unknown".
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from rig.report.charts import PALETTE, Chart, build_charts
from rig.report.format import DASH, fmt_bytes, fmt_int, fmt_number, fmt_rate, fmt_ratio

__all__ = ["RunInputs", "build_context", "load_inputs", "render_report"]

_UNIT_GAP = re.compile(r"(?<=\d) (?=(?:[KMGTPE]iB|B)(?:/s)?\b)")
MAX_VIOLATIONS_SHOWN = 100  # per variant; the rest is counted, summary.json has them all


@dataclass
class RunInputs:
    """Everything the report reads from a run directory (each piece may be empty)."""

    run_dir: Path
    run: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    timeseries: list[dict[str, Any]] = field(default_factory=list)
    sizes: list[dict[str, Any]] = field(default_factory=list)
    scenario_text: str | None = None
    missing: list[str] = field(default_factory=list)


def _read_json(path: Path, missing: list[str]) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except FileNotFoundError:
        missing.append(path.name)
        return None


def load_inputs(run_dir: Path) -> RunInputs:
    """Read run.json, summary.json, metrics/*.json and scenario.yaml from `run_dir`."""
    run_dir = Path(run_dir)
    found = RunInputs(run_dir=run_dir)
    run = _read_json(run_dir / "run.json", found.missing)
    summary = _read_json(run_dir / "summary.json", found.missing)
    found.run = run if isinstance(run, dict) else {}
    found.summary = summary if isinstance(summary, dict) else {}
    for name, attr in (("fetch_timeseries.json", "timeseries"), ("fetch_sizes.json", "sizes")):
        rows = _read_json(run_dir / "metrics" / name, found.missing)
        setattr(
            found, attr, [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
        )
    try:
        found.scenario_text = (run_dir / "scenario.yaml").read_text(encoding="utf-8")
    except FileNotFoundError:
        found.missing.append("scenario.yaml")
    return found


def _dig(value: Any, *path: str) -> Any:
    """value[path[0]][path[1]]…, or None as soon as a key or a dict is missing."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _variants(inputs: RunInputs) -> list[str]:
    """run.json order first, then variants only the summary or the metrics know of."""
    names: list[str] = list((_dig(inputs.run, "variants") or {}).keys())
    more = list((_dig(inputs.summary, "variants") or {}).keys())
    more += sorted(
        {str(r["variant"]) for r in inputs.timeseries + inputs.sizes if r.get("variant")}
    )
    for name in more:
        if name not in names:
            names.append(name)
    return names


def _status(ok: Any) -> str:
    """A three-state result: True → pass, False → fail, anything else → unknown."""
    return "pass" if ok is True else "fail" if ok is False else "unknown"


def _merge(statuses: Sequence[str]) -> str:
    """Failed beats unknown beats ok (Jepsen's merge-valid); nothing at all is unknown."""
    if not statuses:
        return "unknown"
    if "fail" in statuses:
        return "fail"
    return "unknown" if "unknown" in statuses else "pass"


def _requests_cell(stats: Mapping[str, Any]) -> str:
    total = stats.get("requests")
    if total is None:
        return DASH
    full, incr = stats.get("full_requests"), stats.get("incremental_requests")
    if full is None or incr is None:
        return fmt_int(total)
    return f"{fmt_int(total)} ({fmt_int(full)} full, {fmt_int(incr)} incremental)"


def _keep_units(text: str) -> str:
    """Glue each number to its unit with a no-break space: "11.7 KiB" never splits on a phone."""
    return _UNIT_GAP.sub("\u00a0", text)


def _headline(inputs: RunInputs, variants: list[str], role: str) -> dict[str, Any]:
    """Rows × variant columns for one role, plus the "v6 is 364.6× v7" sentence."""
    stats = {v: _dig(inputs.summary, "variants", v, "fetch", role) or {} for v in variants}
    plans = {v: _dig(inputs.run, "variants", v) or {} for v in variants}
    steady = {v: _dig(stats[v], "request_bytes", "p50") for v in variants}
    known = {v: s for v, s in steady.items() if isinstance(s, int | float) and s > 0}
    smallest = min(known, key=lambda v: known[v]) if known else None

    def ratio(v: str) -> str:
        if smallest is None or v not in known:
            return DASH
        text = fmt_ratio(known[v] / known[smallest])
        return f"{text} (smallest)" if known[v] == known[smallest] else text

    rows: list[tuple[str, str, list[str]]] = [
        ("Fetch version", "", [fmt_number(_dig(plans[v], "fetch_version")) for v in variants]),
        (
            "Session strategy",
            "",
            [str(_dig(plans[v], "strategies", "fetch_session") or DASH) for v in variants],
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
            [fmt_bytes(_dig(stats[v], "request_bytes", "max")) for v in variants],
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
            [fmt_bytes(_dig(stats[v], "request_bytes", "total")) for v in variants],
        ),
        (
            "Total response bytes",
            "body",
            [fmt_bytes(_dig(stats[v], "response_bytes", "total")) for v in variants],
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
            {"label": label, "unit": unit, "cells": [_keep_units(c) for c in cells]}
            for label, unit, cells in rows
        ],
        "ratio_sentence": sentence,
    }


def _violation_text(violation: Any) -> str:
    if isinstance(violation, str):
        return violation
    if isinstance(violation, Mapping) and isinstance(violation.get("message"), str):
        rest = {k: v for k, v in violation.items() if k != "message"}
        tail = orjson.dumps(rest, option=orjson.OPT_SORT_KEYS).decode() if rest else ""
        return f"{violation['message']} {tail}".strip()
    return orjson.dumps(violation, option=orjson.OPT_SORT_KEYS, default=str).decode()


def _checks(inputs: RunInputs, variants: list[str]) -> list[dict[str, Any]]:
    out = []
    for v in variants:
        checks = _dig(inputs.summary, "variants", v, "checks")
        violations = _dig(checks, "violations")
        violations = violations if isinstance(violations, list) else []
        out.append(
            {
                "variant": v,
                "status": _status(_dig(checks, "ok")),
                "count": len(violations),
                "shown": [_violation_text(x) for x in violations[:MAX_VIOLATIONS_SHOWN]],
            }
        )
    return out


def _expectations(inputs: RunInputs) -> list[dict[str, str]]:
    raw = inputs.summary.get("expectations")
    rows = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        rows.append(
            {
                "expect": str(item.get("expect", DASH)),
                "value": fmt_number(item.get("value")),
                "status": _status(item.get("ok")),
            }
        )
    return rows


def _has_consumers(inputs: RunInputs, variants: list[str]) -> bool:
    if any(
        (_dig(inputs.summary, "variants", v, "fetch", "consumer", "requests") or 0) > 0
        for v in variants
    ):
        return True
    return any(
        r.get("role") == "consumer" and (r.get("requests") or 0) > 0 for r in inputs.timeseries
    )


def _json_for_script(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no "</script>", no "<!--"."""
    data = orjson.dumps(value)
    for raw, escaped in ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026")):
        data = data.replace(raw, escaped)
    return Markup(data.decode("utf-8"))


def build_context(inputs: RunInputs) -> dict[str, Any]:
    """The template's variables, all plain strings, lists and dicts (formatting done here)."""
    run, summary = inputs.run, inputs.summary
    variants = _variants(inputs)
    with_consumers = _has_consumers(inputs, variants)
    roles = ["follower", "consumer"] if with_consumers else ["follower"]
    durations = {v: _dig(run, "variants", v, "duration_ms") for v in variants}
    charts: list[Chart] = build_charts(
        variants, inputs.timeseries, inputs.sizes, durations, with_consumers=with_consumers
    )
    expectations = _expectations(inputs)
    checks = _checks(inputs, variants)
    statuses = [e["status"] for e in expectations] + [c["status"] for c in checks]
    seed = run.get("seed", summary.get("seed"))
    return {
        "title": str(run.get("scenario") or summary.get("scenario") or inputs.run_dir.name),
        "description": str(run.get("description") or ""),
        "reproduce": {
            "command": str(run.get("command") or ""),
            "rig_version": str(run.get("rig_version") or summary.get("rig_version") or DASH),
            "seed": DASH if seed is None else str(seed),
            "scenario_sha256": str(run.get("scenario_sha256") or DASH),
        },
        "variants": variants,
        "headlines": [_headline(inputs, variants, role) for role in roles],
        "expectations": expectations,
        "checks": checks,
        "overall": _merge(statuses),
        "counts": {s: statuses.count(s) for s in ("pass", "fail", "unknown")},
        "charts": charts,
        "figures_json": _json_for_script({c.id: c.figure for c in charts}),
        "scenario_text": inputs.scenario_text,
        "missing": inputs.missing,
        "palette": PALETTE,
    }


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("rig.report", "templates"),
        autoescape=True,  # always: scenario names and descriptions are user text
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def _plotly_js() -> Markup:
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # Inlined in a <script>: a literal "</script" would end it early (plotly.js has none today).
    return Markup(js.replace("</script", "<\\/script"))


def render_report(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report for `run_dir` to `out` (default RUN_DIR/report.html); return its path."""
    run_dir = Path(run_dir)
    out = Path(out) if out is not None else run_dir / "report.html"
    context = build_context(load_inputs(run_dir))
    html = _environment().get_template("report.html.j2").render(**context, plotly_js=_plotly_js())
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is meant to be shared
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
