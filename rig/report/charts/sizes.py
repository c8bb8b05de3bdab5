"""Bars of how many fetch requests (or responses) had each exact body size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rig.report.charts.figure import Chart, base_layout
from rig.report.charts.styles import BAR_PATTERNS, Styler

__all__ = [
    "size_chart",
    "size_groups",
]

MAX_SIZE_CATEGORIES = 40  # more distinct sizes than this and bars stop being readable


def size_chart(
    groups: Sequence[tuple[str, str, str, Mapping[int, int]]],
    style: Styler,
    kind: str,
    *,
    chart_id: str | None = None,
) -> Chart | None:
    """Bars of how many requests (or responses) had each exact body size.

    `groups` are (run, variant, role, {size: count}) in drawing order.
    """
    groups = [g for g in groups if g[3]]
    if not groups:
        return None
    distinct = sorted({size for *_, per in groups for size in per})
    categorical = len(distinct) <= MAX_SIZE_CATEGORIES
    noun = "requests" if kind == "request" else "responses"
    traces = []
    for run, variant, role, per in groups:
        look = style(run, variant, role)
        ordered = sorted(per)
        trace: dict[str, Any] = {
            "name": look.name,
            "y": [per[s] for s in ordered],
            "hovertemplate": f"%{{y:,}} {noun} of %{{x}}<extra>{look.name}</extra>",
        }
        if categorical:
            # Hatching tells what the dash tells on a line: consumers, or a later run.
            shape = "/" if role != "follower" and look.dash == "dash" else BAR_PATTERNS.get(
                look.dash, "")
            trace.update(
                type="bar",
                x=[f"{s:,} B" for s in ordered],
                marker={"color": look.color} | ({"pattern": {"shape": shape}} if shape else {}),
            )
            if len(groups) <= 4:  # more bars than that per size and the counts overlap
                trace.update(
                    text=[f"{per[s]:,}" for s in ordered], textposition="outside",
                    cliponaxis=False,
                )
        else:
            trace.update(
                type="scatter",
                mode="markers",
                x=ordered,
                marker={"color": look.color, "size": 7, "opacity": 0.8},
                hovertemplate=f"%{{y:,}} {noun} of %{{x:,}} B<extra>{look.name}</extra>",
            )
        traces.append(trace)
    title = f"Fetch {kind} body sizes"
    all_counts = [c for *_, per in groups for c in per.values()]
    log_y = max(all_counts) / max(min(all_counts), 1) > 20
    layout = base_layout(
        title,
        f"{kind} body size (bytes)",
        f"{noun} (count)",
        log_y=log_y,
        x_type="category" if categorical else "log",
    )
    layout["hovermode"] = "closest"
    if categorical:
        layout["barmode"] = "group"
        layout["xaxis"]["categoryorder"] = "array"
        layout["xaxis"]["categoryarray"] = [f"{s:,} B" for s in distinct]
    caption = (
        f"How many {noun} had each exact body size"
        + (": one bar per distinct size" if categorical else " (log-scale size axis)")
        + (", log-scale counts" if log_y else "")
        + (
            "; a session-less fetch repeats one large size, an incremental one is large once "
            "and tiny after."
            if kind == "request"
            else "."
        )
    )
    return Chart(chart_id or f"chart-{kind}-sizes", title, caption,
                 {"data": traces, "layout": layout})


def size_groups(
    sizes: Iterable[Mapping[str, Any]],
    variants: Sequence[str],
    roles: Sequence[str],
    kind: str,
    run: str = "",
) -> list[tuple[str, str, str, dict[int, int]]]:
    """(run, variant, role, {size: count}) from metrics/fetch_sizes.json rows of one `kind`."""
    counts: dict[tuple[str, str], dict[int, int]] = {}
    for row in sizes:
        if row.get("kind") != kind or not isinstance(row.get("body_bytes"), int | float):
            continue
        key = (row.get("variant"), row.get("role"))
        if key[0] in variants and key[1] in roles:
            per = counts.setdefault(key, {})  # type: ignore[arg-type]
            size = int(row["body_bytes"])
            per[size] = per.get(size, 0) + int(row.get("count") or 0)
    return [
        (run, v, r, counts[(v, r)]) for v in variants for r in roles if counts.get((v, r))
    ]
