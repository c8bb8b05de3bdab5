"""When a follower's fetch makes the leader recompute a high watermark, before and after
KAFKA-8841 (2.4).

Before 2.4 Partition.maybeExpandIsr ended with maybeIncrementLeaderHW for every partition of
every follower fetch. From 2.4 Partition.updateFollowerFetchState calls it only when the fetch
moved that follower's log end offset (`prevFollowerEndOffset != followerReplica.logEndOffset`).
The two differ when what held the HW ages out with time alone: a follower outside the ISR that
was caught up within replica.lag.time.max.ms counts towards the HW (Partition.
maybeIncrementLeaderHW); once that time has passed, an idle fetch of another follower moves
the HW before 2.4, and from 2.4 it waits for the next append or log-end change.
"""

from __future__ import annotations

import pytest

from rig.cluster.zookeeper import PartitionState
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture

LAG_MS = 30_000  # BrokerConfig's replica.lag.time.max.ms


def _held_by_an_outsider(before_2_4: bool) -> Fixture:
    """ISR (0, 1); follower 2 outside it. Both followers fetch the first 10 records at 0 ms, so
    both are caught up; 10 more come, follower 1 fetches them, follower 2 fetches no more: the
    HW stays at 10, held by follower 2 (caught up within the lag time)."""
    one = Fixture(min_isr=1, hw_on_follower_leo_change=not before_2_4)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1), 1)})
    one.produce(acks=1)  # LEO 10
    one.fetch(FakeFetcher(1), 10)
    one.fetch(FakeFetcher(2), 10)  # caught up: its expansion is asked for, not made here
    one.produce(acks=1)  # LEO 20
    one.fetch(FakeFetcher(1), 20)
    assert one.broker.replicas[KEY].high_watermark == 10
    return one


@pytest.mark.parametrize("before_2_4", [True, False])
def test_an_idle_fetch_moves_a_hw_that_time_freed_only_before_2_4(before_2_4: bool) -> None:
    one = _held_by_an_outsider(before_2_4)
    replica = one.broker.replicas[KEY]
    one.sim.run(until_us=(LAG_MS + 1_000) * 1000)  # follower 2's caught-up time is past
    one.fetch(FakeFetcher(1), 20)  # nothing new from follower 1: its log end stays 20
    assert replica.high_watermark == (20 if before_2_4 else 10)
    one.produce(acks=1)  # the leader's append recomputes it in every release
    assert replica.high_watermark == 20


def test_from_2_4_a_fetch_that_moves_the_followers_end_recomputes_it() -> None:
    one = _held_by_an_outsider(before_2_4=False)
    one.sim.run(until_us=(LAG_MS + 1_000) * 1000)
    one.produce(acks=1, records=5)  # LEO 25; the append itself frees the HW up to follower 1
    replica = one.broker.replicas[KEY]
    assert replica.high_watermark == 20
    one.fetch(FakeFetcher(1), 25)
    assert replica.high_watermark == 25
