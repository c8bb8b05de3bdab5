"""Two periodic streams of messages on one link: when they first meet (the arithmetic behind
two coasting fetch clients sharing a link, rig.cluster.coast)."""

from __future__ import annotations

from collections.abc import Iterable


def first_meeting(first_a: int, period_a: int, busy_a: int, first_b: int, period_b: int,
                  busy_b: int, limit: int) -> int | None:
    """The first k in [0, limit] for which message k of stream A (sent at first_a + k·period_a,
    busy on the link for busy_a µs) overlaps a message of stream B on the same link, or None.

    B is taken as periodic both ways, so the answer is never late (at worst early: a B message
    before first_b does not exist). With u the position of an A message in B's cycle shifted by
    busy_a − 1, the two overlap when u < busy_a + busy_b − 1; u moves by period_a mod period_b
    per A message, so the search jumps from one wrap of B's cycle to the next."""
    m = period_b
    width = busy_a + busy_b - 1
    if width >= m:
        return 0
    u = (first_a - first_b + busy_a - 1) % m
    if u < width:
        return 0
    step = period_a % m
    if step == 0:
        return None
    if 2 * step > m:
        # Walk the other way: x → (width − 1 − x) mod m maps the meeting zone onto itself.
        u, step = (width - 1 - u) % m, m - step
    k = 0
    while True:
        jump = -(-(m - u) // step)  # messages until the position wraps past the cycle's end
        k += jump
        if k > limit:
            return None
        u += jump * step - m
        if u < width:
            return k


def earliest_meeting_us(first: int, busy: int, period: int,
                        others: Iterable[tuple[int, int, int]], horizon_us: int) -> int | None:
    """When a stream (its first message sent at `first`, each `busy` µs on the link, one every
    `period` µs) first meets one of `others` (each `(first, busy, period)`) before
    `horizon_us`, less that other message's busy time: when to look again; None if never."""
    limit = (horizon_us - first) // period + 1
    earliest: int | None = None
    for other_first, other_busy, other_period in others:
        k = first_meeting(first, period, busy, other_first, other_period, other_busy, limit)
        if k is not None:
            at = first + k * period - other_busy
            earliest = at if earliest is None else min(earliest, at)
    return earliest
