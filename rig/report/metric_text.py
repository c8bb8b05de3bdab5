"""A summary metric as the report's tables write it: its label and unit, from its path under
`variants.<name>.`, and its figure, from its value and the unit the path names (durations to the
microsecond in ms or s, partition-seconds to the millisecond, bytes exact below 1 MiB, dollars).
The first screen's rows and expectation marks use them.
"""

from __future__ import annotations

import math
from typing import Any

from rig.report.format import fmt_bytes, fmt_int, fmt_number, fmt_seconds, fmt_usd, human_bytes
from rig.report.inputs import number
from rig.report.recovery.headline import RECOVERY_METRICS

__all__ = ["metric_label", "target_text", "time_text", "value_text"]

_KNOWN = {".".join(path): (label, unit) for label, unit, path, _, _ in RECOVERY_METRICS} | {
    "checks.status": ("Safety checks", "ok, failed or unknown"),
    "checks.ok": ("Safety checks pass", "true, false or null (unknown)"),
}
_WORDS = {"isr": "ISR", "hw": "HW", "p50": "p50", "ms": "ms"}


def metric_label(path: str) -> tuple[str, str]:
    """(label, unit) of a path under `variants.<name>.`: the recovery table's names where it
    has one, else the path in words ("isr.shrink_delay_ms.max" → "isr · shrink delay · max",
    unit "ms")."""
    if path in _KNOWN:
        return _KNOWN[path]
    parts = path.split(".")
    if parts[0] == "fetch" and len(parts) >= 3:  # fetch.follower.request_bytes.p50
        stat = f", {parts[3]}" if len(parts) > 3 else ""
        return f"{parts[1].capitalize()} {parts[2].replace('_', ' ')}{stat}", ""
    unit = ""
    words = []
    for part in parts:
        # A duration's cells carry their own unit (ms below a second, s above: time_text).
        for suffix, name in (("_partition_seconds", "partition-seconds"), ("_ms", ""),
                             ("_seconds", ""), ("_bytes", "bytes")):
            if part.endswith(suffix) and part != suffix.lstrip("_"):
                unit = name
                part = part[: -len(suffix)] + ("" if suffix != "_bytes" else " bytes")
                break
        if part.startswith("usd_"):  # cost.usd_per_month → "Cost: per month", in dollars
            part = part[len("usd_"):]
        words.append(" ".join(_WORDS.get(w, w) for w in part.split("_")))
    if parts[0] == "cost":
        unit = "USD"
    # "sessions.evicted" → "Sessions: evicted"; "isr.shrink_delay_ms.max" → "ISR: shrink delay, max"
    head = words[0][:1].upper() + words[0][1:]
    return (f"{head}: {', '.join(words[1:])}" if len(words) > 1 else head), unit


def time_text(ms: float) -> str:
    """A duration to the microsecond, in ms below a second and in s from one, with the same
    three decimals in every cell of a row: 15001.0 → "15.001 s" (not "15 s" beside
    "8.001 s"), 2.5 → "2.5 ms"."""
    if abs(ms) >= 1000:
        return f"{ms / 1000:,.3f} s"
    return f"{round(ms, 3):,.3f}".rstrip("0").rstrip(".") + " ms"


def value_text(path: str, value: Any) -> tuple[str, str]:
    """(the cell's text, its exact value for a tooltip when the text rounds it): bytes exact
    below 1 MiB, in IEC units above, so a row of six variants fits a screen."""
    if isinstance(value, str):
        return value, ""
    parts = path.split(".")
    if number(value) is not None and any(p.endswith("_partition_seconds") for p in parts):
        return fmt_seconds(value), ""  # as the Recovery table writes them: 36.000 beside 65.971
    if number(value) is not None:
        if any(part.endswith("_ms") for part in parts):
            return time_text(float(value)), f"{fmt_number(value)} ms"
        if any(part.endswith("_seconds") for part in parts):
            return time_text(float(value) * 1000), f"{fmt_number(value)} s"
    if any(part.endswith("bytes") for part in path.split(".")):
        exact = number(value)
        if exact is not None and abs(exact) < 1 << 20:
            return f"{fmt_int(value)} B", ""  # exact: an expectation may judge it to the byte
        return human_bytes(value), fmt_bytes(value)
    if path.split(".")[0] == "cost" and number(value) is not None:  # every figure under cost. is $
        return fmt_usd(value), f"${fmt_number(value)}"
    return fmt_number(value), ""


def target_text(path: str, target: str) -> str:
    """An expectation's number written as its cell's figure is ("<= 9500" on a row of seconds
    reads "<= 9.500 s"); the expectation itself, as written, is the mark's tooltip."""
    try:
        value = float(target)
    except ValueError:
        return target
    if not math.isfinite(value):
        return target
    return value_text(path, int(value) if value == int(value) else value)[0]
