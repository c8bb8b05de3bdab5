"""`replica.lag.max.messages` (Kafka 0.8): the slow rule (more than N messages behind), the stuck
rule (behind and no fetch for replica.lag.time.max.ms), rejoining at the HW. docs/kafka.md §10."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.errors import PluginError
from rig.strategies import registry
from rig.strategies.isr.base import FollowerProgress
from rig.strategies.isr.lag_messages import DEFAULT_MAX_MESSAGES, LagMessages

LAG = 10_000


def progress(leo: int = 0, last_fetch: float = 0.0) -> FollowerProgress:
    return FollowerProgress(leo, 0.0, last_fetch, 0)


def test_default_is_4000_messages() -> None:
    assert DEFAULT_MAX_MESSAGES == 4000 == LagMessages().max_messages


# -- slow: more than N messages behind ---------------------------------------------------------
def test_slow_only_strictly_more_than_the_limit_behind() -> None:
    strategy = LagMessages(replica_lag_max_messages=100)
    assert not strategy.out_of_sync(progress(leo=900, last_fetch=5.0), 1000, 10.0, LAG)
    assert strategy.out_of_sync(progress(leo=899, last_fetch=5.0), 1000, 10.0, LAG)


def test_slow_whatever_the_time() -> None:
    # It fetched a millisecond ago: still out, because it is too far behind in messages.
    strategy = LagMessages()
    assert strategy.out_of_sync(progress(leo=0, last_fetch=999.0), 4001, 1000.0, LAG)


def test_unknown_leo_is_not_slow() -> None:
    # Kafka checks logEndOffset >= 0: a follower that has not fetched since leadership began.
    assert not LagMessages().out_of_sync(progress(leo=-1, last_fetch=0.0), 10**9, 1.0, LAG)


# -- stuck: behind, and no fetch for the lag time ------------------------------------------
def test_stuck_strictly_after_the_lag_time_without_a_fetch() -> None:
    strategy = LagMessages()
    p = progress(leo=5, last_fetch=1000.0)
    assert not strategy.out_of_sync(p, 6, 1000.0 + LAG, LAG)
    assert strategy.out_of_sync(p, 6, 1000.0 + LAG + 1, LAG)


def test_a_silent_follower_that_has_everything_is_not_stuck() -> None:
    assert not LagMessages().out_of_sync(progress(leo=10, last_fetch=0.0), 10, 10 * LAG, LAG)


def test_every_fetch_refreshes_it_even_without_progress() -> None:
    # 0.8's logEndOffsetUpdateTimeMs: a follower that fetches the same offset again and again is
    # never stuck, and a few messages behind it is never slow: in sync for ever.
    strategy, p = LagMessages(), progress(leo=5)
    for i in range(1, 100):
        strategy.on_fetch(p, fetch_offset=5, leader_leo=8, now_ms=i * 1000.0)
        assert not strategy.out_of_sync(p, 8, i * 1000.0 + 1, LAG)
    assert (p.log_end_offset, p.last_fetch_ms, p.last_fetch_leader_leo) == (5, 99_000.0, 8)


def test_fetches_never_mark_it_caught_up() -> None:
    # 0.8 had no lastCaughtUpTimeMs: a follower outside the ISR never holds the HW back.
    p = progress(leo=5)
    LagMessages().on_fetch(p, fetch_offset=8, leader_leo=8, now_ms=1000.0)
    assert p.last_caught_up_ms == float("-inf")


@given(leo=st.integers(-1, 10_000), leader_leo=st.integers(0, 10_000),
       last_fetch=st.floats(0, 1e6), now=st.floats(0, 2e6), lag=st.integers(1, 60_000),
       limit=st.integers(0, 5000))
def test_out_of_sync_rule(leo: int, leader_leo: int, last_fetch: float, now: float, lag: int,
                          limit: int) -> None:
    # Partition.getOutOfSyncReplicas (0.8.1): stuck ++ slow.
    stuck = leo < leader_leo and now - last_fetch > lag
    slow = leo >= 0 and leader_leo - leo > limit
    assert LagMessages(limit).out_of_sync(progress(leo, last_fetch), leader_leo, now, lag) == (
        stuck or slow)


@pytest.mark.parametrize("lag", [10_000, 30_000, 1])
def test_isr_expiration_runs_every_lag_time(lag: int) -> None:
    # 0.8's ReplicaManager scheduled isr-expiration every replicaLagTimeMaxMs (not lag / 2).
    assert LagMessages().check_interval_ms(lag) == lag


# -- rejoining ---------------------------------------------------------------------------------
def test_may_join_at_the_high_watermark() -> None:
    strategy = LagMessages()
    assert strategy.may_join(progress(leo=20), high_watermark=20, epoch_start_offset=0)
    assert not strategy.may_join(progress(leo=19), high_watermark=20, epoch_start_offset=0)


# -- options -------------------------------------------------------------------------------------
def test_the_limit_comes_from_the_scenarios_options() -> None:
    strategy = registry.instantiate("isr", "lag-messages", {"replica_lag_max_messages": 7})
    assert strategy.max_messages == 7


@pytest.mark.parametrize("bad", [-1, 1.5, True, "4000"])
def test_a_bad_limit_is_refused_with_the_option_named(bad: object) -> None:
    with pytest.raises(PluginError, match="replica_lag_max_messages"):
        registry.instantiate("isr", "lag-messages", {"replica_lag_max_messages": bad})


# -- 0.8.2: stuck whatever the follower's offset ------------------------------------------------
def test_0_8_2_a_silent_follower_at_the_log_end_is_stuck() -> None:
    # 0.8.2's Partition.getOutOfSyncReplicas filters every ISR follower on
    # (now - logEndOffsetUpdateTimeMs) > keepInSyncTimeMs: a dead follower of an idle partition
    # leaves the ISR after the lag time (0.8.0–0.8.1 asked only of followers behind).
    strategy = LagMessages(stuck_only_behind=False)
    p = progress(leo=10, last_fetch=1000.0)
    assert not strategy.out_of_sync(p, 10, 1000.0 + LAG, LAG)
    assert strategy.out_of_sync(p, 10, 1000.0 + LAG + 1, LAG)
    assert not LagMessages().out_of_sync(p, 10, 1000.0 + LAG + 1, LAG)


def test_stuck_only_behind_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="stuck_only_behind"):
        LagMessages(stuck_only_behind="no")  # type: ignore[arg-type]
