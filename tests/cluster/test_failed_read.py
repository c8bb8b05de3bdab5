"""A follower fetch the leader answers with an error, before and after KAFKA-8400 (2.4).

Before 2.4 ReplicaManager.updateFollowerLogReadResults handed every read result to
Replica.updateLogReadResult, a failed one too: its offset, the leader's LEO and its fetch time
are all -1 (LogReadResult for UnknownTopicOrPartition, NotLeaderForPartition, the epoch errors
and OffsetOutOfRange), so the leader forgets where the follower is: its log end offset becomes
unknown, the caught-up time stays (max with -1). From 2.4 updateFollowerFetchState skips a read
with an error. Seen from outside: under 2.1–2.3 a fenced follower of an idle partition is no
longer "at the leader's log end" (KAFKA-7152), so the leader takes it out of the ISR after the
lag time; 2.4 keeps it.
"""

from __future__ import annotations

import pytest

from rig.protocol.errors import FENCED_LEADER_EPOCH
from rig.strategies.isr.base import FollowerProgress
from rig.strategies.isr.lag_messages import LagMessages
from rig.strategies.isr.lag_time import LagTime
from rig.strategies.isr.lag_time_only import LagTimeOnly
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture
from tests.cluster.test_fetch_epochs import _answer, _fetch, _leader_at

LAG_MS = 30_000  # BrokerConfig's replica.lag.time.max.ms


def _caught_up_then_fenced(before_2_4: bool) -> Fixture:
    """Leader at epoch 2, LEO 10; followers 1 and 2 fetch at 10 (caught up at 0 ms), then at
    1 ms follower 1 sends a fetch at the epoch it knew before (1): fenced."""
    one = _leader_at(2, failed_read_resets_follower=before_2_4)
    one.broker.start_tasks()  # isr-expiration among them
    one.fetch(FakeFetcher(1), 10)
    one.fetch(FakeFetcher(2), 10)
    one.wire.deliver_all()
    one.sim.run(until_us=1_000)
    response = _answer(one, _fetch(one, 1, offset=10))
    assert response.errors == {KEY: FENCED_LEADER_EPOCH}
    return one


def test_before_2_4_a_fenced_read_makes_the_followers_end_unknown() -> None:
    one = _caught_up_then_fenced(before_2_4=True)
    progress = one.broker.replicas[KEY].follower(1)
    assert progress.log_end_offset == -1
    assert progress.last_caught_up_ms == 0.0  # max(0, -1): the failed read's time is -1
    assert (progress.last_fetch_leader_leo, progress.last_fetch_ms) == (-1, -1.0)


def test_from_2_4_a_fenced_read_changes_nothing() -> None:
    one = _caught_up_then_fenced(before_2_4=False)
    progress = one.broker.replicas[KEY].follower(1)
    assert (progress.log_end_offset, progress.last_caught_up_ms) == (10, 0.0)
    assert (progress.last_fetch_leader_leo, progress.last_fetch_ms) == (10, 0.0)


@pytest.mark.parametrize("before_2_4", [True, False])
def test_the_idle_partitions_fenced_follower_leaves_the_isr_only_before_2_4(
        before_2_4: bool) -> None:
    """KAFKA-7152 (2.1+) keeps a follower whose LEO is the leader's; before 2.4 a fenced one's
    is unknown, so after the lag time the leader's isr-expiration takes it out."""
    one = _caught_up_then_fenced(before_2_4)
    replica = one.broker.replicas[KEY]
    one.sim.run(until_us=(LAG_MS + 20_000) * 1000)
    out = LagTime().out_of_sync(replica.follower(1), replica.leo, one.broker.now_ms, LAG_MS)
    assert out is before_2_4
    assert one.isr_writes.changes == ([((0, 2), [1], None)] if before_2_4 else [])


def test_before_2_4_a_fetch_past_the_leaders_end_is_not_progress_and_forgets_the_follower(
        ) -> None:
    one = Fixture(min_isr=1, failed_read_resets_follower=True)
    one.produce(acks=1)  # LEO 10
    fetcher = FakeFetcher(1)
    one.fetch(fetcher, 10)
    one.fetch(fetcher, 12)  # past the end: OFFSET_OUT_OF_RANGE
    one.wire.deliver_all()
    assert one.broker.replicas[KEY].follower(1).log_end_offset == -1


def test_a_fetch_below_the_leaders_log_start_is_not_progress() -> None:
    """Out of range below the log start too (Log.read's range check): from 2.4 the leader
    records nothing of it; it used to take the offset as the follower's log end."""
    one = Fixture(min_isr=1)
    one.produce(acks=1)  # LEO 10
    replica = one.broker.replicas[KEY]
    fetcher = FakeFetcher(1)
    one.fetch(fetcher, 10)
    replica.log.log_start_offset = 5  # (as retention or a log-start increment moves it)
    one.fetch(fetcher, 3)
    one.wire.deliver_all()
    assert replica.follower(1).log_end_offset == 10


def test_each_strategy_records_a_failed_read_as_its_release_did() -> None:
    progress = FollowerProgress(log_end_offset=10, last_caught_up_ms=5.0, last_fetch_ms=5.0,
                                last_fetch_leader_leo=10)
    LagTime().on_failed_read(progress, 9.0)  # 0.10.2–2.3: everything -1, caught-up time kept
    assert (progress.log_end_offset, progress.last_caught_up_ms, progress.last_fetch_ms,
            progress.last_fetch_leader_leo) == (-1, 5.0, -1.0, -1)
    progress = FollowerProgress(log_end_offset=10, last_caught_up_ms=5.0, last_fetch_ms=5.0,
                                last_fetch_leader_leo=10)
    LagTimeOnly(kafka_4485=False).on_failed_read(progress, 9.0)  # 0.9–0.10.1: the LEO only
    assert (progress.log_end_offset, progress.last_caught_up_ms, progress.last_fetch_ms,
            progress.last_fetch_leader_leo) == (-1, 5.0, 5.0, 10)
    progress = FollowerProgress(log_end_offset=10, last_fetch_ms=5.0)
    LagMessages().on_failed_read(progress, 9.0)  # 0.8.2: the LEO's update time is stamped
    assert (progress.log_end_offset, progress.last_fetch_ms) == (-1, 9.0)
    # ... so the follower is neither stuck nor slow
    assert not LagMessages(stuck_only_behind=False).out_of_sync(progress, 10_000, 9.0, 10_000)


def test_a_good_fetch_after_a_failed_read_does_not_count_as_caught_up_by_the_old_leo() -> None:
    """0.10.2–2.3: the failed read set lastFetchLeaderLogEndOffset and lastFetchTimeMs to -1, so
    the next fetch short of the leader's LEO catches up to max(caught up, -1): no change."""
    strategy = LagTime()
    progress = FollowerProgress(log_end_offset=10, last_caught_up_ms=5.0, last_fetch_ms=5.0,
                                last_fetch_leader_leo=10)
    strategy.on_failed_read(progress, 9.0)
    strategy.on_fetch(progress, 10, 12, 20.0)  # behind the leader's 12, past the old 10
    assert progress.last_caught_up_ms == 5.0
    assert progress.log_end_offset == 10
