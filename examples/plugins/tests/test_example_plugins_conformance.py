"""The example strategies honour their kinds' contracts: one call each to rig's conformance kit."""

from __future__ import annotations

import random

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.testing import check_strategy

from rig_example_plugins import LeastLoadedPlacement, LruSessions


def test_least_loaded_honours_the_placement_contract() -> None:
    check_strategy("placement", LeastLoadedPlacement)


def test_lru_sessions_honour_the_fetch_session_contract() -> None:
    check_strategy("fetch_session", LruSessions)


def test_least_loaded_balances_leaders_and_spreads_racks() -> None:
    brokers = [BrokerSpec(i, "abc"[i % 3]) for i in range(6)]
    assignment = LeastLoadedPlacement().assign(brokers, TopicSpec("t", 12, 3), random.Random(1))
    leaders = [replicas[0] for replicas in assignment]
    assert sorted(leaders.count(b) for b in range(6)) == [2] * 6
    assert all(len({brokers[b].rack for b in replicas}) == 3 for replicas in assignment)


def test_the_lru_cache_evicts_the_least_recently_used_session() -> None:
    from rig.strategies.fetch_session import INITIAL_EPOCH, SessionRequest

    cache = LruSessions().new_cache(0, 2, random.Random(1))
    opened = [cache.open(SessionRequest(0, INITIAL_EPOCH, full=True), {("t", i): None},
                         privileged=True, now_ms=i) for i in range(2)]
    first, second = (c.session_id for c in opened)
    cache.open(SessionRequest(first, 1, full=False, listed={}), {}, True, 2.0)  # first is used
    third = cache.open(SessionRequest(0, INITIAL_EPOCH, full=True), {("t", 9): None}, True, 3.0)
    assert third.created and third.evicted == (second,)
