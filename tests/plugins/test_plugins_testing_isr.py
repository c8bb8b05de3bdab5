"""rig.testing's isr kit: both built-ins pass, and each planted contract violation is caught with
a message that says what is wrong (a check that cannot fail is worse than none)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from rig.strategies.isr.base import FollowerProgress
from rig.strategies.isr.lag_messages import LagMessages
from rig.strategies.isr.lag_time import LagTime
from rig.strategies.isr.lag_time_only import LagTimeOnly
from rig.testing import ConformanceError, check_isr, check_strategy


@pytest.mark.parametrize(("cls", "options"), [
    (LagTime, {}),
    (LagTimeOnly, {}),
    (LagMessages, {}),
    (LagMessages, {"replica_lag_max_messages": 0}),  # out of sync one message behind: allowed
])
def test_builtin_isr_strategies_pass(cls: type, options: dict[str, Any]) -> None:
    report = check_strategy("isr", cls, **options)
    assert report.kind == "isr" and report.strategy == getattr(cls, "name", None)
    assert any("silent follower" in case for case in report.cases)


# -- planted bugs, each a small change to a built-in ------------------------------------------


class ZeroInterval(LagTime):
    """lag // 2 without the floor of 1: the task would run forever at one instant."""

    def check_interval_ms(self, lag_time_ms: int) -> int:
        return lag_time_ms // 2


class FloatInterval(LagTime):
    def check_interval_ms(self, lag_time_ms: int) -> int:
        return lag_time_ms / 2  # type: ignore[return-value]


class SlowInterval(LagTime):
    def check_interval_ms(self, lag_time_ms: int) -> int:
        return 3 * lag_time_ms


class ForgetsLeo(LagTime):
    """Keeps its own bookkeeping but leaves the LEO the high watermark is computed from."""

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        before = progress.log_end_offset
        super().on_fetch(progress, fetch_offset, leader_leo, now_ms)
        progress.log_end_offset = max(before, 0)


class OffByOne(LagTime):
    """≥ where Kafka has >, and no LEO comparison: out at exactly the lag time."""

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        return now_ms - progress.last_caught_up_ms >= lag_time_ms


class IgnoresEpochStart(LagTime):
    """Kafka before 2.1 — but the model passes the epoch start, and it must be honoured."""

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool:
        return progress.log_end_offset >= high_watermark


class RemembersBest(LagTime):
    """Judges a follower by the best offset it ever fetched, not the current one."""

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        super().on_fetch(progress, fetch_offset, leader_leo, now_ms)
        self.best = max(getattr(self, "best", -1), fetch_offset)

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool:
        return self.best >= high_watermark and self.best >= epoch_start_offset


class NeverJoins(LagTime):
    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool:
        return False


class NeverStuck(LagMessages):
    """0.8's message rule without its "stuck" rule: a dead follower stays in the ISR."""

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        return (progress.log_end_offset >= 0
                and leader_leo - progress.log_end_offset > self.max_messages)


class ResetsOnReport(LagTime):
    """Restarts the follower's clock whenever it reports it: answers flip on a repeat."""

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        out = super().out_of_sync(progress, leader_leo, now_ms, lag_time_ms)
        if out:
            progress.last_caught_up_ms = now_ms
        return out


class FallsOffTheEnd(LagTime):
    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        if super().out_of_sync(progress, leader_leo, now_ms, lag_time_ms):
            return True
        return None  # type: ignore[return-value]


class RatioLag(LagTime):
    """Lag as a fraction of the log: divides by the leader's LEO, which can be 0."""

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool:
        return (leader_leo - progress.log_end_offset) / leader_leo > 0.5 or \
            super().out_of_sync(progress, leader_leo, now_ms, lag_time_ms)


class JitteredInterval(LagTime):
    """Spreads the task over time with the global random module."""

    def check_interval_ms(self, lag_time_ms: int) -> int:
        return max(1, lag_time_ms // 2 - random.randint(0, lag_time_ms // 4))


@pytest.mark.parametrize(("cls", "expected"), [
    (ZeroInterval, "check_interval_ms(1) returned 0: the isr-expiration task needs a positive "
                   "period"),
    (FloatInterval, "check_interval_ms(1) returned float 0.5, expected an int (ms)"),
    (SlowInterval, "check_interval_ms(10000) returned 30000, longer than the lag time"),
    (ForgetsLeo, "the leader keeps the fetch offset as the follower's LEO (docs/kafka.md §8)"),
    (OffByOne, "fetched at the leader's LEO 0 at 1 ms, yet out_of_sync at 11 ms with the LEO "
               "unchanged"),
    (IgnoresEpochStart, "may_join is true for a follower at 0, below the leader epoch's start "
                        "offset 30"),
    (RemembersBest, "may_join is true for a follower at 0, below the high watermark 50"),
    (NeverJoins, "may_join stayed false for 300 s"),
    (NeverStuck, "never out of sync in 10 lag times (100 ms) without a fetch while the leader's "
                 "LEO went from 1000 to 1001: a dead follower must leave the ISR"),
    (ResetsOnReport, "answered True, then False when asked again with nothing changed"),
    (FallsOffTheEnd, "returned NoneType None, expected a bool"),
    (RatioLag, "raised ZeroDivisionError: division by zero"),
    (JitteredInterval, "[a fresh instance] not deterministic"),
])
def test_planted_isr_bugs_are_caught(cls: type, expected: str) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_isr(cls)
    assert str(caught.value).startswith(f"{cls.__qualname__} does not honour the isr contract")
    assert any(expected in problem for problem in caught.value.problems)  # not only the first 20


def test_a_follower_that_leaves_and_comes_back_without_fetching_is_caught() -> None:
    class Flaps(LagTime):
        def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                        lag_time_ms: int) -> bool:
            return super().out_of_sync(progress, leader_leo, now_ms, lag_time_ms) and \
                now_ms < 3 * lag_time_ms

    with pytest.raises(ConformanceError, match=r"\[dead follower: caught up, then silent; one "
                       r"more record, then nothing; lag 10 ms\] out of sync at 15 ms, back in "
                       r"sync at 30 ms without a fetch"):
        check_isr(Flaps)


def test_bad_options_are_reported_as_a_load_problem() -> None:
    with pytest.raises(ConformanceError, match=r"\[load\] LagMessages\(\*\*\{'replica_lag_max_"
                       r"messages': -1\}\) raised ValueError"):
        check_isr(LagMessages, replica_lag_max_messages=-1)


@pytest.mark.parametrize(("cls", "expected"), [
    (NeverStuck, "the dead follower left the ISR of t-0 only at 16001 ms, by the controller: a "
                 "follower that stops fetching leaves the ISR within ten lag times (by 15000 ms"),
    (NeverJoins, "not settled 120000 ms after every fault healed"),
    (JitteredInterval, "not deterministic: the same run twice wrote different event logs"),
])
def test_the_model_run_catches_bugs_in_the_real_broker(cls: type, expected: str) -> None:
    """The same promises, kept (or not) in a run of the real model: a 200 records/s topic keeps
    the message rule's dead follower in the ISR for 4000 / 200 = 20 s, so the controller takes it
    out first, when its 12 s ZooKeeper session expires (16 s); a follower that may never join
    leaves the ISR short for good."""
    with pytest.raises(ConformanceError) as caught:
        check_isr(cls)
    assert any(problem.startswith("[model: 3 brokers") and expected in problem
               for problem in caught.value.problems)
