"""`replica.lag.time.max.ms`: when a follower counts as caught up (lastCaughtUpTimeMs), when it
leaves the ISR and when it may rejoin. docs/kafka.md §10."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.strategies.isr.base import FollowerProgress
from rig.strategies.isr.lag_time import LagTime

LAG = 10_000


def progress(leo: int = 0, caught_up: float = 0.0, last_fetch: float = 0.0,
             leader_leo_then: int = 0) -> FollowerProgress:
    return FollowerProgress(leo, caught_up, last_fetch, leader_leo_then)


# -- lastCaughtUpTimeMs -----------------------------------------------------------------------
def test_fetch_reaching_the_leaders_leo_is_caught_up_now() -> None:
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    LagTime().on_fetch(p, fetch_offset=12, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 1000.0


def test_fetch_reaching_the_previous_fetchs_leader_leo_is_caught_up_as_of_that_fetch() -> None:
    # 0.10.2+: the follower has everything the leader had when it last fetched, so it was
    # caught up at that (previous) fetch time, though the leader has appended since.
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    LagTime().on_fetch(p, fetch_offset=9, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 900.0


def test_fetch_below_both_leos_leaves_caught_up_time_alone() -> None:
    # Not on every fetch: a fetch that is still behind does not refresh lastCaughtUpTimeMs.
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    LagTime().on_fetch(p, fetch_offset=8, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 100.0


def test_caught_up_time_never_goes_back() -> None:
    # Kafka takes max(lastCaughtUpTimeMs, lastFetchTimeMs) in the previous-fetch case.
    p = progress(leo=9, caught_up=950.0, last_fetch=900.0, leader_leo_then=9)
    LagTime().on_fetch(p, fetch_offset=9, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 950.0


def test_fetch_records_offset_leader_leo_and_time_for_the_next_one() -> None:
    p = progress()
    LagTime().on_fetch(p, fetch_offset=7, leader_leo=12, now_ms=1000.0)
    assert (p.log_end_offset, p.last_fetch_leader_leo, p.last_fetch_ms) == (7, 12, 1000.0)


def test_steady_follower_under_load_stays_caught_up() -> None:
    # Every fetch reaches the LEO the leader had at the previous one, never the current one
    # (the leader appends between fetches): it is never out of sync.
    strategy, p = LagTime(), progress()
    leader_leo = 0
    for i in range(1, 200):
        now = i * 500.0
        strategy.on_fetch(p, fetch_offset=leader_leo, leader_leo=leader_leo + 10, now_ms=now)
        leader_leo += 10
        assert not strategy.out_of_sync(p, leader_leo, now + 1, LAG)
    assert p.last_caught_up_ms == 198 * 500.0


def test_follower_that_falls_further_behind_goes_out_of_sync() -> None:
    strategy, p = LagTime(), progress()
    leader_leo = 0
    for i in range(1, 40):
        now = i * 500.0
        strategy.on_fetch(p, fetch_offset=leader_leo // 2, leader_leo=leader_leo, now_ms=now)
        leader_leo += 10
    assert strategy.out_of_sync(p, leader_leo, 40 * 500.0, LAG)


# -- leaving the ISR --------------------------------------------------------------------------
def test_out_of_sync_only_strictly_after_the_lag_time() -> None:
    p = progress(leo=3, caught_up=1000.0)
    strategy = LagTime()
    assert not strategy.out_of_sync(p, 10, 1000.0 + LAG, LAG)
    assert strategy.out_of_sync(p, 10, 1000.0 + LAG + 1, LAG)


def test_never_out_of_sync_when_the_leos_are_equal() -> None:
    # An idle partition: the follower has everything, however long ago it was "caught up".
    p = progress(leo=10, caught_up=0.0)
    assert not LagTime().out_of_sync(p, 10, 10 * LAG, LAG)


@given(leo=st.integers(-1, 100), leader_leo=st.integers(0, 100),
       caught_up=st.floats(0, 1e6), now=st.floats(0, 2e6), lag=st.integers(1, 60_000))
def test_out_of_sync_rule(leo: int, leader_leo: int, caught_up: float, now: float,
                          lag: int) -> None:
    # Partition.isFollowerOutOfSync: leo != leaderLeo && now − lastCaughtUp > lag.
    p = progress(leo=leo, caught_up=caught_up)
    assert LagTime().out_of_sync(p, leader_leo, now, lag) == (
        leo != leader_leo and now - caught_up > lag)


@pytest.mark.parametrize(("lag", "interval"), [(10_000, 5_000), (30_000, 15_000), (1, 1)])
def test_isr_expiration_runs_every_half_lag(lag: int, interval: int) -> None:
    # The leader's isr-expiration task is scheduled every replica.lag.time.max.ms / 2.
    assert LagTime().check_interval_ms(lag) == interval


# -- rejoining the ISR ------------------------------------------------------------------------
def test_may_join_at_the_high_watermark_and_the_epoch_start() -> None:
    assert LagTime().may_join(progress(leo=20), high_watermark=20, epoch_start_offset=15)


def test_may_not_join_below_the_high_watermark() -> None:
    assert not LagTime().may_join(progress(leo=19), high_watermark=20, epoch_start_offset=15)


def test_may_not_join_below_the_leaders_epoch_start() -> None:
    # 2.1+: the follower must also have reached the start of the leader's current epoch, or an
    # HW below the epoch start would let it in before it holds any of the new leader's data.
    assert not LagTime().may_join(progress(leo=20), high_watermark=12, epoch_start_offset=25)


def test_follower_that_has_not_fetched_may_not_join() -> None:
    assert not LagTime().may_join(progress(leo=-1), high_watermark=0, epoch_start_offset=0)


# -- lastCaughtUpTimeMs edge cases ------------------------------------------------------------
def test_reaching_the_old_leo_after_a_long_silence_dates_back_to_the_previous_fetch() -> None:
    # The follower reaches the LEO the leader had at its previous fetch, 20 s ago: it was caught
    # up then, not now, so it is out of sync although its fetch just arrived.
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    strategy = LagTime()
    strategy.on_fetch(p, fetch_offset=9, leader_leo=20, now_ms=20_900.0)
    assert p.last_caught_up_ms == 900.0
    assert strategy.out_of_sync(p, 20, 20_900.0, LAG)


def test_a_fetch_past_the_leaders_leo_counts_as_caught_up() -> None:
    # An offset beyond the leader's log end (answered with OFFSET_OUT_OF_RANGE) still compares
    # as >= the LEO: the rule is a comparison, not an equality.
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    LagTime().on_fetch(p, fetch_offset=15, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 1000.0


# -- before KAFKA-4485 (0.9–0.10.1) -------------------------------------------------------------
def test_before_kafka_4485_only_a_fetch_at_the_leaders_leo_catches_up() -> None:
    # A follower that keeps up under steady load but is never exactly at the LEO when it
    # fetches is not caught up: the pre-0.10.2 flapping KAFKA-4485 fixed.
    p = progress(leo=5, caught_up=100.0, last_fetch=900.0, leader_leo_then=9)
    LagTime(kafka_4485=False).on_fetch(p, fetch_offset=9, leader_leo=12, now_ms=1000.0)
    assert p.last_caught_up_ms == 100.0
    LagTime(kafka_4485=False).on_fetch(p, fetch_offset=12, leader_leo=12, now_ms=1100.0)
    assert p.last_caught_up_ms == 1100.0


def test_before_kafka_4485_the_expiry_task_runs_every_lag() -> None:
    # ReplicaManager.startup: period = replicaLagTimeMaxMs (0.9–0.10.1), / 2 from 0.10.2.
    assert LagTime(kafka_4485=False).check_interval_ms(LAG) == LAG
    assert LagTime().check_interval_ms(LAG) == LAG // 2
