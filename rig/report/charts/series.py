"""The per-bucket fetch sums a timeline draws (Series), read from the per-second table or the
analysis's coarse timeline; one bucketing rule for every timeline, the analysis's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# One bucketing rule for every timeline, the analysis's: its tables come bucketed already.
from rig.analysis.buckets import MAX_POINTS, TIMELINE_FIELDS, bucket_seconds

__all__ = [
    "Series",
    "downsample",
    "fetch_series",
    "per_second",
]


@dataclass(frozen=True)
class Series:
    """What one line of a timeline draws: per-bucket sums of one (run, variant, role).

    Bucket i covers seconds [i * bucket_s, (i + 1) * bucket_s) clipped to `span_s`; every field
    of TIMELINE_FIELDS has one sum per bucket, zero where nothing was fetched. `cut` says that
    data went on past the declared duration (the quiesce after it), so the run's true end, and
    with it the width of the last bucket, is not known: a rate must leave that bucket out.
    """

    variant: str
    role: str
    bucket_s: int
    span_s: float
    sums: Mapping[str, Sequence[int]]
    run: str = ""  # the run's label in a comparison, "" in a one-run report
    cut: bool = False

    def covered(self, i: int) -> float:
        """Seconds bucket i covers (the last may be short: a rate divides by this, so a
        partial last bucket is not drawn as a drop)."""
        return max(1e-3, min(float(self.bucket_s), self.span_s - i * self.bucket_s))

    def partial(self) -> bool:
        """Is the last bucket shorter than the others?"""
        n = max((len(v) for v in self.sums.values()), default=0)
        return n > 0 and not self.cut and self.covered(n - 1) < self.bucket_s

    def total(self, fields: Sequence[str]) -> list[int]:
        n = max((len(self.sums.get(f, ())) for f in fields), default=0)
        out = [0] * n
        for name in fields:
            for i, value in enumerate(self.sums.get(name, ())):
                out[i] += value
        return out


def downsample(
    xs: Sequence[float], ys: Sequence[float], max_points: int, how: Literal["mean", "last"]
) -> tuple[list[float], list[float], int]:
    """Shrink a series to at most `max_points` by grouping consecutive points in equal buckets.

    "mean" averages each bucket (for rates: preserves the area under the curve) and places it at
    the bucket's first x; "last" keeps each bucket's last point (for cumulative series: exact at
    bucket ends). Returns (xs, ys, bucket size); the bucket size is 1 when nothing was done.
    """
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    if n <= max_points:
        return list(xs), list(ys), 1
    bucket = math.ceil(n / max_points)
    out_x: list[float] = []
    out_y: list[float] = []
    for start in range(0, n, bucket):
        chunk = ys[start : start + bucket]
        if how == "mean":
            out_x.append(xs[start])
            out_y.append(sum(chunk) / len(chunk))
        else:
            out_x.append(xs[start + len(chunk) - 1])
            out_y.append(chunk[-1])
    return out_x, out_y, bucket


def per_second(
    rows: Iterable[Mapping[str, Any]], variant: str, role: str, field: str, seconds: int
) -> list[int]:
    """Sum `field` over brokers for each second 0..seconds-1 (longer if the data goes on);
    seconds without a row are zero, since no fetch then means no bytes."""
    totals: dict[int, int] = {}
    for row in rows:
        if row.get("variant") == variant and row.get("role") == role:
            second = int(row.get("second") or 0)
            totals[second] = totals.get(second, 0) + int(row.get(field) or 0)
    length = max([seconds, *(s + 1 for s in totals)]) if totals else seconds
    return [totals.get(s, 0) for s in range(max(length, 0))]


def _seconds(duration_ms: Any) -> int:
    return math.ceil(_exact_seconds(duration_ms))


def _exact_seconds(duration_ms: Any) -> float:
    ok = isinstance(duration_ms, int | float) and not isinstance(duration_ms, bool)
    return duration_ms / 1000 if ok and duration_ms > 0 else 0.0


def _grouped(
    rows: Iterable[Mapping[str, Any]], variants: Sequence[str], roles: Sequence[str]
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    wanted_v, wanted_r = set(variants), set(roles)
    for row in rows:
        key = (row.get("variant"), row.get("role"))
        if key[0] in wanted_v and key[1] in wanted_r and isinstance(row.get("second"), int | float):
            groups.setdefault(key, []).append(row)  # type: ignore[arg-type]
    return groups


def _series(
    groups: Mapping[tuple[str, str], list[Mapping[str, Any]]],
    variants: Sequence[str],
    roles: Sequence[str],
    durations_ms: Mapping[str, Any],
    bucket: int,
    run: str,
) -> list[Series]:
    out = []
    for variant in variants:
        for role in roles:
            rows = groups.get((variant, role), [])
            last = max((int(r["second"]) + 1 for r in rows), default=0)
            declared = _exact_seconds(durations_ms.get(variant))
            # Data past the declared duration (the quiesce) ends at a moment no table records.
            cut = last > math.ceil(declared)
            span = float(last) if cut else declared
            n = math.ceil(span / bucket)
            sums = {name: [0] * n for name in TIMELINE_FIELDS}
            for row in rows:
                i = int(row["second"]) // bucket
                for name in TIMELINE_FIELDS:
                    sums[name][i] += int(row.get(name) or 0)
            if n and any(any(values) for values in sums.values()):
                out.append(Series(variant, role, bucket, span, sums, run, cut))
    return out


def fetch_series(
    timeline: Sequence[Mapping[str, Any]] | None,
    timeseries: Iterable[Mapping[str, Any]],
    variants: Sequence[str],
    roles: Sequence[str],
    durations_ms: Mapping[str, Any],
    *,
    run: str = "",
    max_points: int = MAX_POINTS,
) -> list[Series]:
    """The fetch series of one run, from the coarse `timeline` (metrics/fetch_timeline.json)
    in its buckets as analysed when it has rows, else from the per-second `timeseries`
    (metrics/fetch_timeseries.json) bucketed here, one width for the run: runs analysed before
    the coarse timeline existed.
    """
    groups = _grouped(timeline or timeseries, variants, roles)
    if timeline:
        widths = {int(r.get("bucket_s") or 1) for g in groups.values() for r in g}
        # One width per run by construction; a hand-edited mix falls back to the widest.
        bucket = max(widths, default=1)
    else:
        last = max((int(r["second"]) + 1 for g in groups.values() for r in g), default=0)
        span = max([last, *(_seconds(durations_ms.get(v)) for v in variants)])
        bucket = bucket_seconds(span, max_points)
    return _series(groups, variants, roles, durations_ms, bucket, run)
