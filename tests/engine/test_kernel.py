from __future__ import annotations

import pytest

from rig.engine import NORMAL, URGENT, Simulation
from rig.engine.kernel import SWEEP_CANCELLED


def test_actions_run_in_time_then_priority_then_insertion_order() -> None:
    sim = Simulation()
    seen: list[str] = []
    sim.at(20, lambda: seen.append("late"))
    sim.at(10, lambda: seen.append("normal-1"), NORMAL)
    sim.at(10, lambda: seen.append("urgent"), URGENT)
    sim.at(10, lambda: seen.append("normal-2"), NORMAL)
    sim.run(100)
    assert seen == ["urgent", "normal-1", "normal-2", "late"]
    assert sim.now_us == 100


def test_run_stops_at_the_horizon_and_resumes() -> None:
    sim = Simulation()
    seen: list[int] = []
    for t in (5, 15, 25):
        sim.at(t, lambda t=t: seen.append(t))
    sim.run(15)
    assert seen == [5, 15] and sim.now_us == 15
    assert sim.peek() == 25
    sim.run(30)
    assert seen == [5, 15, 25]


def test_cancelled_timers_do_not_fire() -> None:
    sim = Simulation()
    seen: list[str] = []
    timer = sim.after(10, lambda: seen.append("cancelled"))
    sim.after(10, lambda: seen.append("kept"))
    timer.cancel()
    sim.run(20)
    assert seen == ["kept"]
    assert sim.steps == 1


def test_actions_can_schedule_at_now_and_clock_never_goes_back() -> None:
    sim = Simulation()
    times: list[int] = []

    def chain(n: int) -> None:
        times.append(sim.now_us)
        if n:
            sim.after(0 if n % 2 else 3, lambda: chain(n - 1))

    sim.at(1, lambda: chain(5))
    sim.run(100)
    assert times == sorted(times) and len(times) == 6


def test_scheduling_in_the_past_is_refused() -> None:
    sim = Simulation()
    sim.run(50)
    with pytest.raises(ValueError, match="past"):
        sim.at(10, lambda: None)


def test_stop_ends_the_run_after_the_current_action() -> None:
    sim = Simulation()
    seen: list[int] = []
    sim.at(1, lambda: (seen.append(1), sim.stop()))
    sim.at(2, lambda: seen.append(2))
    sim.run(10)
    assert seen == [1] and sim.now_us == 1


def test_uncancellable_actions_keep_the_same_order_as_timers() -> None:
    """`call_at`/`call_after` queue the action without a Timer; the order is the one `at` and
    `after` give (time, priority, scheduled at, insertion), whichever of them queued it."""
    sim = Simulation()
    seen: list[str] = []
    sim.at(10, lambda: seen.append("timer-1"))
    sim.call_at(10, lambda: seen.append("plain-2"))
    sim.call_at(10, lambda: seen.append("urgent"), URGENT)
    sim.after(10, lambda: seen.append("timer-3"))
    sim.call_after(5, lambda: seen.append("plain-early"))
    sim.run(100)
    assert seen == ["plain-early", "urgent", "timer-1", "plain-2", "timer-3"]
    with pytest.raises(ValueError, match="past"):
        sim.call_at(10, lambda: None)


def test_peek_skips_cancelled_timers_but_not_plain_actions() -> None:
    sim = Simulation()
    sim.at(3, lambda: None).cancel()
    sim.call_at(7, lambda: None)
    assert sim.peek() == 7


def test_cancelled_timers_are_swept_out_and_the_rest_keeps_its_order() -> None:
    """When cancelled timers are most of the queue they leave it at once; what is left runs in
    exactly the order it would have (times, priorities and insertion ties mixed)."""
    def schedule(sim: Simulation, seen: list[int]) -> list[int]:
        kept = []
        for i in range(400):
            time_us, priority = 10 + (i * 7919) % 50, (URGENT if i % 3 == 0 else NORMAL)
            if i % 5 == 0:
                sim.call_at(time_us, lambda i=i: seen.append(i), priority)  # never cancelled
                kept.append(i)
                continue
            timer = sim.at(time_us, lambda i=i: seen.append(i), priority)
            if i % 4:
                timer.cancel()
                timer.cancel()  # twice: counted once
            else:
                kept.append(i)
        return kept

    swept, seen = Simulation(), []
    kept = schedule(swept, seen)
    queue = swept._queue
    left = sum(1 for entry in queue if getattr(entry[4], "cancelled", False))
    assert len(queue) < 400  # some were swept, not merely skipped when due
    assert left == swept._cancelled <= max(SWEEP_CANCELLED, len(queue) // 2)
    swept.run(100)
    order = sorted(kept, key=lambda i: (10 + (i * 7919) % 50, URGENT if i % 3 == 0 else NORMAL,
                                        0, i))
    assert seen == order and swept._cancelled == 0


def test_a_timer_cancelled_after_it_ran_is_not_counted_as_queued() -> None:
    sim = Simulation()
    timers = [sim.at(1, lambda: None) for _ in range(100)]
    sim.run(10)
    for timer in timers:
        timer.cancel()
    assert sim._cancelled == 0 and sim.peek() is None


def test_a_watcher_of_the_queue_queues_its_own_entries_ahead_of_the_one_being_queued() -> None:
    """watch_queueing: the watcher hears (time, priority, scheduled at) of every entry before
    it takes its place, so what the watcher queues then goes ahead of it on a tie."""
    sim = Simulation()
    seen: list[str] = []
    heard: list[tuple[int, int, int]] = []
    pending = [lambda: seen.append("computed")]

    def before(time_us: int, priority: int, scheduled_us: int) -> None:
        heard.append((time_us, priority, scheduled_us))
        if time_us == 50 and pending:  # a computed entry, queued where it would have been
            sim.call_at(50, pending.pop(), scheduled_us=10)

    sim.watch_queueing(before, {10, 40})
    sim.at(10, lambda: sim.call_after(40, lambda: seen.append("real")))
    sim.at(30, lambda: sim.call_after(5, lambda: seen.append("unwatched")))
    sim.run(100)
    assert seen == ["unwatched", "computed", "real"]
    assert heard == [(10, NORMAL, 0), (50, NORMAL, 10), (50, NORMAL, 10)]


def test_a_watcher_that_stopped_watching_hears_no_more() -> None:
    sim = Simulation()
    heard: list[int] = []
    sim.watch_queueing(lambda time_us, _priority, _scheduled: heard.append(time_us), {10})
    sim.call_at(10, lambda: None)
    sim.stop_watching_queueing()
    sim.call_at(20, lambda: None, scheduled_us=10)
    sim.stop_watching_queueing()  # (twice: nothing)
    sim.run(30)
    assert heard == [10] and sim.steps == 2


def test_ran_before_counts_a_tie_with_the_running_action_as_behind_it() -> None:
    sim = Simulation()
    answers: list[tuple[bool, bool, bool, bool]] = []

    def running() -> None:
        assert sim.running_order()[:2] == (NORMAL, 5)
        answers.append((sim.ran_before(20, 4), sim.ran_before(20, 5),
                        sim.ran_before(20, 5, URGENT), sim.ran_before(19, 9)))

    sim.at(5, lambda: sim.at(20, running))
    sim.run(30)
    assert answers == [(True, False, True, True)]
    assert sim.ran_before(30, 30)  # outside `run`, everything due has run
