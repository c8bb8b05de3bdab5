"""Bars of how many fetch requests (or responses) had each body size: one bar per exact size
while there are few of them, else one per power-of-two range of sizes.
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
MAX_LABELLED_BARS = 32


def size_chart(
    groups: Sequence[tuple[str, str, str, Mapping[int, int]]],
    style: Styler,
    kind: str,
    *,
    chart_id: str | None = None,
) -> Chart | None:
    """Bars of how many requests (or responses) had each exact body size, or, over
    MAX_SIZE_CATEGORIES distinct sizes, a size in each power-of-two range.

    `groups` are (run, variant, role, {size: count}) in drawing order.
    """
    groups = [g for g in groups if g[3]]
    if not groups:
        return None
    distinct = sorted({size for *_, per in groups for size in per})
    exact = len(distinct) <= MAX_SIZE_CATEGORIES
    # Every bar's category: its exact size, or the power-of-two range holding it (a bar per
    # exact size of a busy run drew tens of thousands of one-response markers).
    if exact:
        category = {size: f"{size:,} B" for size in distinct}
        categories = list(category.values())
    else:  # every range from the smallest size's to the largest's, empty ones too: a histogram
        first = _range_of(distinct[0])
        categories = [_range_label(k) for k in range(first, _range_of(distinct[-1]) + 1)]
        category = {size: categories[_range_of(size) - first] for size in distinct}
    noun = "requests" if kind == "request" else "responses"
    traces = []
    counted: list[int] = []
    for run, variant, role, per in groups:
        look = style(run, variant, role)
        bars: dict[str, int] = {}
        for size in sorted(per):
            bars[category[size]] = bars.get(category[size], 0) + per[size]
        counted += bars.values()
        # Hatching tells what the dash tells on a line: consumers, or a later run.
        shape = "/" if role != "follower" and look.dash == "dash" else BAR_PATTERNS.get(
            look.dash, "")
        trace: dict[str, Any] = {
            "type": "bar",
            "name": look.name,
            "x": list(bars),
            "y": list(bars.values()),
            "marker": {"color": look.color} | ({"pattern": {"shape": shape}} if shape else {}),
            "hovertemplate": f"%{{y:,}} {noun} of %{{x}}<extra>{look.name}</extra>",
        }
        # The count above each bar while bars are wide enough to read it (more than four per
        # size and the counts overlap; more than ~32 bars and plotly shrinks them to specks).
        if len(groups) <= 4 and len(groups) * len(categories) <= MAX_LABELLED_BARS:
            trace.update(
                text=[f"{n:,}" for n in bars.values()], textposition="outside",
                cliponaxis=False,
            )
        traces.append(trace)
    title = f"Fetch {kind} body sizes"
    log_y = max(counted) / max(min(counted), 1) > 20
    layout = base_layout(
        title,
        f"{kind} body size" + (" (bytes)" if exact else ", in power-of-two ranges"),
        f"{noun} (count)",
        log_y=log_y,
        x_type="category",
    )
    layout["hovermode"] = "closest"
    layout["barmode"] = "group"
    layout["xaxis"]["categoryorder"] = "array"
    layout["xaxis"]["categoryarray"] = categories
    caption = (
        (f"How many {noun} had each exact body size: one bar per distinct size" if exact else
         f"How many {noun} had a body size in each power-of-two range (a range from 1 KiB "
         f"holds 1,024 B up to 2,047 B; {len(distinct):,} distinct sizes)")
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


def _range_of(size: int) -> int:
    """The power of two opening the range [2^k, 2^(k+1)) that holds `size` (0 and 1 in 2^0)."""
    return max(size, 1).bit_length() - 1


def _power_of_two(exponent: int) -> tuple[int, str]:
    """2^exponent as (number, unit) in IEC units: 2^11 → (2, "KiB")."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    unit = min(exponent // 10, len(units) - 1)
    return 2 ** (exponent - 10 * unit), units[unit]


def _range_label(exponent: int) -> str:
    """[2^k, 2^(k+1)) as people read it: "1–2 KiB", "512 B–1 KiB", "64–128 B"."""
    (low, low_unit), (high, high_unit) = _power_of_two(exponent), _power_of_two(exponent + 1)
    if low_unit == high_unit:
        return f"{low:,}–{high:,} {high_unit}"
    return f"{low:,} {low_unit}–{high:,} {high_unit}"


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
