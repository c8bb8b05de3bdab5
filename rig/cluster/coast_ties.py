"""Coasting fetch clients keep their place among entries queued for the same instant.

The kernel runs entries of one (time, priority, scheduling time) in the order they were
queued, so in the full run an idle round's entries (its request on the wire, its timeout, its
parked fetch's max wait, its response on the wire) sit among those of other clients whose
rounds run in step with it by the order of the actions that queued them. A coast queues nothing
while it coasts; woken, it queues the entries of the round in progress, later than the full run
did. So whenever an entry is queued, every coast with a tied entry that the full run had queued
first wakes ahead of it (Simulation.watch_queueing): its entries go in first, as they did.

Which of two tied entries was queued first follows from what queued them, both due at the
entry's scheduling time: the one scheduled earlier ran first; on a tie, the one queued first,
and so on back. A coast's rounds are periodic, so the actions behind a skipped entry are known
in closed form back to the one the coast began in, a real action with its place in the queue
(`Coast.begin_order`). A real action tied with a skipped one ran first: had the skipped one been
first, the coast would have woken when the real one was queued.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from functools import cmp_to_key
from typing import Protocol

from rig.engine import NORMAL

# The entries of a round k (each queued by the one before it; SEND is the action that sends
# the request: the previous round's response arriving, or for k = 0 the action the coast began
# in), and the phase of a woken round (rig.cluster.coast_rounds) that still has each one queued.
SEND, REQUEST, TIMEOUT, EXPIRY, RESPONSE = "send", "request", "timeout", "expiry", "response"
IN_FLIGHT = {"sent": REQUEST, "parked": EXPIRY, "answered": RESPONSE}

Step = tuple[str, int]  # (kind of entry, round)


class Coast(Protocol):
    """What the order of its entries takes of a coast (rig.cluster.coast.Coast)."""

    start_us: int
    period_us: int
    to_leader_us: int
    wait_us: int
    to_client_us: int
    timeout_us: int
    begin_order: tuple[int, int, int]  # the action it began in: (priority, scheduled, inserted)

    def _where(self, now: int) -> tuple[int, str]: ...

    def wake(self) -> None: ...


class Queue(Protocol):
    now_us: int

    def watch_queueing(self, before: Callable[[int, int, int], None],
                       delays: Container[int]) -> None: ...

    def stop_watching_queueing(self) -> None: ...


def _parent(kind: str, k: int) -> Step:
    if kind in (REQUEST, TIMEOUT):
        return SEND, k
    if kind == EXPIRY:
        return REQUEST, k
    if kind == RESPONSE:
        return EXPIRY, k
    return EXPIRY, k - 1  # SEND of round k ≥ 1: the response of round k − 1 arrives


def _order(coast: Coast, node: Step) -> tuple[int, int]:
    """(priority, scheduling time) of one of the coast's actions."""
    kind, k = node
    if node == (SEND, 0):
        return coast.begin_order[0], coast.begin_order[1]
    sent = coast.start_us + k * coast.period_us
    if kind == SEND:
        return NORMAL, sent - coast.to_client_us
    if kind == EXPIRY:
        return NORMAL, sent + coast.to_leader_us
    return NORMAL, sent  # REQUEST (TIMEOUT and RESPONSE queue nothing: never a parent)


def _shape(coast: Coast) -> tuple[int, int, int]:
    return coast.to_leader_us, coast.wait_us, coast.to_client_us


def _levels_to_begin(node: Step) -> int:
    kind, k = node
    return 3 * k + {SEND: 0, REQUEST: 1, EXPIRY: 2}[kind]


def queued_first(a: Coast, a_node: Step, b: Coast, b_node: Step) -> bool:
    """Whether `a`'s entry `a_node` went into the full run's queue before `b`'s tied one."""
    if a_node[0] == b_node[0] and _shape(a) == _shape(b):
        # Rounds of one shape, tied now: in step back to where the later one began.
        if a.start_us != b.start_us:
            return a.start_us > b.start_us
        return a.begin_order < b.begin_order
    pa, pb = _parent(*a_node), _parent(*b_node)
    for _ in range(3):
        oa, ob = _order(a, pa), _order(b, pb)
        if oa != ob:
            return oa < ob
        a_real, b_real = pa == (SEND, 0), pb == (SEND, 0)
        if a_real and b_real:
            return a.begin_order < b.begin_order
        if a_real or b_real:
            return a_real
        pa, pb = _parent(*pa), _parent(*pb)
    # Tied over a whole round: the two run in step back to where the later one began.
    la, lb = _levels_to_begin(pa), _levels_to_begin(pb)
    if la != lb:
        return la < lb
    return a.begin_order < b.begin_order


def _first_of_two(x: tuple[Coast, Step], y: tuple[Coast, Step]) -> int:
    return -1 if queued_first(x[0], x[1], y[0], y[1]) else 1


def _series(coast: Coast) -> tuple[tuple[str, int, int], ...]:
    """(kind, delay from scheduling to due time, first scheduling time) of each entry the
    coast's rounds queue (the first round's request and timeout go with the action it began
    in)."""
    sent, arrived = coast.start_us, coast.start_us + coast.to_leader_us
    return ((REQUEST, coast.to_leader_us, sent), (TIMEOUT, coast.timeout_us, sent),
            (EXPIRY, coast.wait_us, arrived), (RESPONSE, coast.to_client_us,
                                               arrived + coast.wait_us))


def queued_now(coast: Coast, now: int) -> tuple[Step, Step]:
    """The entries the coast's skipped rounds would have in the queue now: the timeout of the
    round in progress, and its request, parked fetch or response."""
    current, phase = coast._where(now)
    return (TIMEOUT, current), (IN_FLIGHT[phase], current)


class Ties:
    """The coasts under way, indexed by the entries their skipped rounds would queue: (delay
    from scheduling to due time, period, scheduling time modulo the period). `before` is to
    watch the kernel's queueing (Simulation.watch_queueing), as it does with `watch`."""

    def __init__(self, queue: Queue, watch: bool):
        self.clock = queue
        self._periods: dict[int, dict[int, int]] = {}  # delay → period → series with it
        self._series: dict[tuple[int, int, int], dict[tuple[Coast, str, int], None]] = {}
        # The coast queueing a woken round's entry now, and that entry.
        self.resuming: list[tuple[Coast, Step]] = []
        self.closed = False  # the run is over: nothing queued runs any more
        # The kernel's queueing is watched while there are coasts (each push costs a call).
        self._queue, self._watch, self._watching = queue, watch, False

    def _keys(self, coast: Coast) -> list[tuple[tuple[int, int, int], tuple[Coast, str, int]]]:
        period = coast.period_us
        return [((delay, period, first % period), (coast, kind, first))
                for kind, delay, first in _series(coast)]

    def add(self, coast: Coast) -> None:
        if self._watch and not self._watching:
            self._queue.watch_queueing(self.before, self._periods)
            self._watching = True
        for key, entry in self._keys(coast):
            self._series.setdefault(key, {})[entry] = None
            periods = self._periods.setdefault(key[0], {})
            periods[key[1]] = periods.get(key[1], 0) + 1

    def remove(self, coast: Coast) -> None:
        for key, entry in self._keys(coast):
            series = self._series.get(key)
            if series is None or entry not in series:
                continue
            del series[entry]
            if not series:
                del self._series[key]
            periods = self._periods[key[0]]
            periods[key[1]] -= 1
            if not periods[key[1]]:
                del periods[key[1]]
                if not periods:
                    del self._periods[key[0]]
        if self._watching and not self._periods:
            self._queue.stop_watching_queueing()
            self._watching = False

    def before(self, time_us: int, priority: int, scheduled_us: int) -> None:
        """An entry is about to be queued: wake first the coasts holding a tied entry that the
        full run had queued before it, in that order."""
        if priority != NORMAL or self.closed:
            return
        delay = time_us - scheduled_us
        periods = self._periods.get(delay)
        if not periods:
            return
        now = self.clock.now_us
        tied: list[tuple[Coast, Step]] = []
        for period in periods:
            for coast, kind, first in self._series.get((delay, period,
                                                         scheduled_us % period), ()):
                if scheduled_us >= first:
                    node = (kind, (scheduled_us - first) // period)
                    if node in queued_now(coast, now):
                        tied.append((coast, node))
        if not tied:
            return
        if self.resuming:  # a woken round's entry: the order of the two skipped rounds
            pusher, pushed = self.resuming[-1]
            tied = [(c, n) for c, n in tied if queued_first(c, n, pusher, pushed)]
        # (else a real action queues it: every tied entry already queued went first)
        tied.sort(key=cmp_to_key(_first_of_two))
        for coast, _ in tied:
            coast.wake()
