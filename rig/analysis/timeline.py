"""The coarse fetch timeline: per-second fetch rows summed over brokers into at most ~2000 buckets.

The per-second table can hold a million rows on a long run; the report draws this one instead, so
a report opens fast whatever the run length. Pure Python over rows the analysis already collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rig.analysis.buckets import MAX_POINTS, TIMELINE_FIELDS, bucket_seconds, span_seconds

__all__ = ["fetch_timeline"]

_ROLES = ("follower", "consumer")


def fetch_timeline(
    rows: Iterable[Mapping[str, Any]],
    durations_ms: Mapping[str, Any],
    variants: Sequence[str] = (),
    *,
    max_points: int = MAX_POINTS,
) -> list[dict[str, Any]]:
    """Sum per-(variant, role, broker, second) rows into (variant, role, bucket) rows.

    One bucket width for the whole run, so every variant's points line up; `second` is the
    bucket's first second and `bucket_s` its width. Buckets without any fetch are left out (a
    reader zero-fills them). Rows come in `variants` order, then roles, then time.
    """
    rows = list(rows)
    bucket = bucket_seconds(span_seconds(rows, durations_ms), max_points)
    sums: dict[tuple[str, str, int], dict[str, int]] = {}
    for row in rows:
        variant, role, second = row.get("variant"), row.get("role"), row.get("second")
        if variant is None or role is None or not isinstance(second, int | float):
            continue
        start = int(second) // bucket * bucket
        entry = sums.setdefault((str(variant), str(role), start), dict.fromkeys(TIMELINE_FIELDS, 0))
        for name in TIMELINE_FIELDS:
            entry[name] += int(row.get(name) or 0)
    v_index = {name: i for i, name in enumerate(variants)}
    r_index = {name: i for i, name in enumerate(_ROLES)}

    def order(key: tuple[str, str, int]) -> tuple[Any, ...]:
        variant, role, start = key
        return (v_index.get(variant, len(v_index)), variant, r_index.get(role, 99), role, start)

    return [
        {"variant": v, "role": r, "second": s, "bucket_s": bucket, **sums[(v, r, s)]}
        for v, r, s in sorted(sums, key=order)
    ]
