"""The discrete-event kernel: a clock, one ordered queue, and nothing about Kafka.

Time is an integer number of microseconds, so arithmetic is exact and runs are reproducible on
any machine. Events fire in (time, priority, insertion order); the insertion counter belongs to
one Simulation, never to a class, so runs cannot influence each other.

Every entry also carries the time it was scheduled at. Insertion order already follows it, so it
changes no order. It is what lets a model skip simulating a stretch of repetitive work and work
it out in closed form afterwards: an action computed after the fact is queued where it would
have been (`at(..., scheduled_us=)`), and `ran_before` says whether an action that was never
queued, due now, would already have run. Such a model keeps the order of entries that tie on
(time, priority, scheduling time), which insertion decides, by watching what is queued
(`watch_queueing`): whatever of its own would have been queued ahead of a new entry, it queues
first.

An entry is a plain tuple `(time, priority, scheduled at, insertion, item)`: the item is the
action itself when nobody can cancel it (`call_at`), or a `Timer` (`at`) when someone can.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container
from heapq import heappush
from typing import Any, final

Action = Callable[[], Any]

URGENT = 0
NORMAL = 1

# What `ran_before` compares with outside `run`: after everything due (priority infinite).
_IDLE: tuple[Any, ...] = (0, float("inf"), 0, 0)


def _cancelled() -> None:
    """What a cancelled timer holds instead of its action (never run)."""


# A cancelled timer stays queued until its time comes (skipped then) or until the cancelled ones
# are more than half of the queue and more than this many: then they are swept out at once, as
# asyncio's event loop does with cancelled TimerHandles (BaseEventLoop._run_once). Most timers
# are cancelled (a request's timeout when its answer comes): in the million-record benchmark
# they were 87 % of a queue of 27,000 entries on average, and every push and pop paid for them.
SWEEP_CANCELLED = 32


@final
class Timer:
    """A scheduled action that can still be cancelled; cancelled timers are skipped lazily.
    Cancelling lets go of the action at once, and whatever it refers to with it."""

    __slots__ = ("_sim", "action", "cancelled", "time_us")

    def __init__(self, time_us: int, action: Action, sim: Simulation):
        self.time_us = time_us
        self.action = action
        self.cancelled = False
        self._sim: Simulation | None = sim  # whose queue holds it, until it runs or is cancelled

    def cancel(self) -> None:
        if self.cancelled:
            return
        self.cancelled = True
        self.action = _cancelled
        sim, self._sim = self._sim, None
        if sim is not None:
            sim._cancelled_one()


class Simulation:
    """Runs actions in simulated time order.

    Invariants: `now_us` never decreases; two actions at the same time and priority run in the
    order they were scheduled; an action may schedule more actions, including at `now_us`.
    """

    def __init__(self) -> None:
        self.now_us = 0
        self._queue: list[tuple[int, int, int, int, Timer | Action]] = []
        self._inserted = 0
        self._cancelled = 0  # cancelled timers still in the queue
        self.steps = 0
        self._stopped = False
        # The running action's queue entry (its priority and scheduling time are what
        # `ran_before` compares with); outside `run`, an entry after everything due.
        self._running: tuple[Any, ...] = _IDLE

    @property
    def now_ms(self) -> float:
        return self.now_us / 1000

    def at(self, time_us: int, action: Action, priority: int = NORMAL,
           scheduled_us: int | None = None) -> Timer:
        """Run `action` at absolute time `time_us` (not before now); the Timer cancels it.

        `scheduled_us` (default now) is when the action counts as scheduled: an earlier time
        puts it before actions scheduled later for the same time and priority, as if it had
        been queued then."""
        timer = Timer(time_us, action, self)
        self._push(time_us, priority, scheduled_us, timer)
        return timer

    def call_at(self, time_us: int, action: Action, priority: int = NORMAL,
                scheduled_us: int | None = None) -> None:
        """`at` for an action nobody cancels: it is queued as it is, without a Timer."""
        self._push(time_us, priority, scheduled_us, action)

    def after(self, delay_us: int, action: Action, priority: int = NORMAL) -> Timer:
        """Run `action` `delay_us` microseconds from now."""
        timer = Timer(self.now_us + delay_us, action, self)
        self._push(timer.time_us, priority, None, timer)
        return timer

    def call_after(self, delay_us: int, action: Action, priority: int = NORMAL) -> None:
        """`after` for an action nobody cancels (no Timer)."""
        self._push(self.now_us + delay_us, priority, None, action)

    def _push(self, time_us: int, priority: int, scheduled_us: int | None,
              item: Action | Timer) -> None:
        """Queue `item` as `(time, priority, scheduled at, insertion, item)`."""
        now = self.now_us
        if time_us < now:
            raise ValueError(f"cannot schedule in the past: {time_us} < now {now}")
        inserted = self._inserted = self._inserted + 1
        heappush(self._queue, (time_us, priority, now if scheduled_us is None else scheduled_us,
                               inserted, item))

    def watch_queueing(self, before: Callable[[int, int, int], None],
                       delays: Container[int]) -> None:
        """From now on call `before(time_us, priority, scheduled_us)` as each entry whose delay
        (time less scheduling time) is in `delays` (which the watcher may change) is queued,
        ahead of it taking its place: whatever `before` queues goes ahead of it."""
        push = Simulation._push

        def watched(time_us: int, priority: int, scheduled_us: int | None,
                    item: Action | Timer) -> None:
            scheduled = self.now_us if scheduled_us is None else scheduled_us
            if time_us - scheduled in delays:
                before(time_us, priority, scheduled)
            push(self, time_us, priority, scheduled_us, item)

        self._push = watched  # type: ignore[method-assign]

    def stop_watching_queueing(self) -> None:
        """Stop calling the watcher `watch_queueing` set (nothing if there is none)."""
        self.__dict__.pop("_push", None)

    def running_order(self) -> tuple[int, int, int]:
        """(priority, scheduling time, insertion) of the running action: its place among the
        actions due at the same time. Outside `run`, after everything due."""
        running = self._running
        return running[1], running[2], running[3]

    def _cancelled_one(self) -> None:
        """A queued timer was cancelled; sweep the cancelled ones out when they are most of the
        queue. The order of what is left is its entries' own, so no action moves."""
        self._cancelled += 1
        queue = self._queue
        if self._cancelled > SWEEP_CANCELLED and 2 * self._cancelled > len(queue):
            queue[:] = [entry for entry in queue
                        if type(entry[4]) is not Timer or not entry[4].cancelled]
            heapq.heapify(queue)
            self._cancelled = 0

    def peek(self) -> int | None:
        """The time of the next live action, or None when the queue is empty."""
        queue = self._queue
        while queue:
            item = queue[0][4]
            if type(item) is not Timer or not item.cancelled:
                return queue[0][0]
            heapq.heappop(queue)
            self._cancelled -= 1
        return None

    def ran_before(self, time_us: int, scheduled_us: int, priority: int = NORMAL) -> bool:
        """Whether an action due at `time_us`, scheduled at `scheduled_us`, would have run by
        now: it is due earlier, or now and ahead of the running action in the queue's order.
        A tie on the scheduling time counts as behind: the running action was queued first (a
        model that watches what is queued queues its own tied actions ahead of the others,
        `watch_queueing`). Outside `run`, everything due has run."""
        if time_us != self.now_us:
            return time_us < self.now_us
        running = self._running
        return (priority, scheduled_us) < (running[1], running[2])

    def stop(self) -> None:
        """Make `run` return after the current action."""
        self._stopped = True

    def run(self, until_us: int, on_progress: Callable[[int], None] | None = None,
            progress_every: int = 100_000) -> None:
        """Run every action due at or before `until_us`, then set the clock to `until_us`."""
        queue = self._queue
        pop = heapq.heappop
        self._stopped = False
        steps = self.steps
        try:
            while queue and not self._stopped:
                entry = pop(queue)
                if entry[0] > until_us:
                    heappush(queue, entry)  # (the same entry: the same place in the order)
                    break
                item = entry[4]
                if type(item) is Timer:
                    if item.cancelled:
                        self._cancelled -= 1
                        continue
                    item._sim = None  # it runs: cancelling it now leaves nothing queued
                    item = item.action
                self.now_us = entry[0]
                self._running = entry  # its priority and scheduling time, for `ran_before`
                item()
                steps += 1
                if on_progress is not None and steps % progress_every == 0:
                    on_progress(self.now_us)
        finally:
            self.steps = steps
            self._running = _IDLE
        if not self._stopped:
            self.now_us = max(self.now_us, until_us)
