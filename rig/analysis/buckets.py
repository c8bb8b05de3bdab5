"""The bucketing rule every timeline of a run shares: at most MAX_POINTS buckets of one "nice"
width over the run's span, so the analysis's coarse tables line up and the report draws them as
they are, and the columns a fetch timeline row sums. Pure Python; the report imports both from
here (analysis never imports the report).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_POINTS", "NICE_BUCKETS", "TIMELINE_FIELDS", "bucket_seconds", "span_seconds"]

MAX_POINTS = 2000  # per trace; beyond that a browser gets sluggish and the eye sees no more
# The sums of each (variant, role, bucket) row of metrics/fetch_timeline.json.
TIMELINE_FIELDS: tuple[str, ...] = (
    "requests",
    "responses",
    "request_bytes",
    "response_bytes",
    "wire_request_bytes",
    "wire_response_bytes",
)
# Bucket widths a reader can reason about ("each point averages 10 s"), smallest first.
NICE_BUCKETS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400)


def bucket_seconds(span_s: int, max_points: int = MAX_POINTS) -> int:
    """The smallest "nice" bucket width that puts `span_s` seconds in at most `max_points`."""
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    need = max(1, math.ceil(max(span_s, 0) / max_points))
    for width in NICE_BUCKETS:
        if width >= need:
            return width
    return NICE_BUCKETS[-1] * math.ceil(need / NICE_BUCKETS[-1])


def span_seconds(rows: Sequence[Mapping[str, Any]], durations_ms: Mapping[str, Any]) -> int:
    """Seconds the longest variant covers: its declared duration, or further if data goes on
    (rows carry a `second`). Every per-second table of a run is bucketed over this span."""
    declared = [
        math.ceil(d / 1000) for d in durations_ms.values()
        if isinstance(d, int | float) and not isinstance(d, bool) and d > 0
    ]
    seen = [int(r["second"]) + 1 for r in rows if isinstance(r.get("second"), int | float)]
    return max([*declared, *seen, 0])
