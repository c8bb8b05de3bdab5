"""Kafka 3.8+'s sharded session cache (KAFKA-9401): slots split per shard, id ranges, round-robin
placement, lookups by id and eviction confined to one shard; and the strategy's `shards` option."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.errors import PluginError
from rig.strategies import registry
from rig.strategies.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    SessionContext,
    SessionRequest,
)
from rig.strategies.fetch_session.incremental import Incremental, IncrementalCache

RANGE_OF_8 = (2**31 - 1) // 8  # 268,435,455 ids per shard


def new_cache(slots: int, shards: int, seed: int = 1) -> IncrementalCache:
    return IncrementalCache(slots, random.Random(seed), shards=shards)


def create(cache: IncrementalCache, size: int, privileged: bool, now: float) -> int:
    request = SessionRequest(0, INITIAL_EPOCH, full=True)
    return cache.open(request, {("t", p): None for p in range(size)}, privileged,
                      now).session_id


def close(cache: IncrementalCache, session_id: int) -> None:
    """(id, -1): close without asking for a new session (no shard is chosen)."""
    cache.open(SessionRequest(session_id, FINAL_EPOCH, full=True), {}, False, 0)


def lookup(cache: IncrementalCache, session_id: int) -> SessionContext:
    return cache.open(SessionRequest(session_id, 1, full=False, listed={}), {}, True, 0)


def shard_of(session_id: int, shards: int = 8) -> int:
    return session_id // ((2**31 - 1) // shards)


def test_slots_are_split_evenly_and_the_remainder_is_lost() -> None:
    assert [s.max_entries for s in new_cache(1000, 8).shards] == [125] * 8
    assert [s.max_entries for s in new_cache(1001, 8).shards] == [125] * 8  # Kafka: 1001 / 8
    cache = new_cache(7, 8)  # 7 / 8 = 0 slots per shard: nobody gets a session
    assert [create(cache, 1, True, 0) for _ in range(16)] == [0] * 16
    assert new_cache(1000, 1).shards[0].max_entries == 1000


def test_sessions_fill_the_shards_in_round_robin_with_ids_in_each_shards_range() -> None:
    cache = new_cache(1000, 8)
    ids = [create(cache, 1, True, 0) for _ in range(24)]
    assert [shard_of(i) for i in ids] == [n % 8 for n in range(24)]
    for i in ids:
        n = shard_of(i)
        assert max(1, n * RANGE_OF_8) <= i < (n + 1) * RANGE_OF_8
    assert cache.shard_occupancy() == (3,) * 8 and cache.occupancy() == 24


def test_a_full_fetch_advances_the_round_robin_even_when_it_gets_no_session() -> None:
    cache = new_cache(2, 2)  # one slot per shard
    a = create(cache, 10, True, 0)  # shard 0
    b = create(cache, 10, True, 0)  # shard 1
    assert (shard_of(a, 2), shard_of(b, 2)) == (0, 1)
    close(cache, b)  # (id, -1) picks no shard
    assert create(cache, 10, True, 1) == 0  # shard 0: full, its session is young
    c = create(cache, 10, True, 2)  # the counter moved on: shard 1, free again
    assert c != 0 and shard_of(c, 2) == 1


def test_eviction_stays_within_the_chosen_shard() -> None:
    cache = new_cache(2, 2)
    x = create(cache, 5, False, 0)  # shard 0
    y = create(cache, 5, False, 0)  # shard 1
    close(cache, y)  # shard 1 now has a free slot …
    follower = create(cache, 1, True, 10)  # … but the newcomer lands on shard 0 and evicts there
    assert follower != 0 and shard_of(follower, 2) == 0 and x not in cache.sessions
    assert cache.shard_occupancy() == (1, 0)
    consumer = create(cache, 1, False, 20)  # shard 1: free slot
    assert shard_of(consumer, 2) == 1
    # Shard 0 is full of a young follower: an unprivileged newcomer sent there gets nothing,
    # though the cache as a whole would have had room before sharding.
    assert create(cache, 1000, False, 30) == 0


def test_a_stale_session_in_another_shard_does_not_make_room() -> None:
    cache = new_cache(2, 2)
    a = create(cache, 1, True, 0)  # shard 0
    b = create(cache, 1, True, 0)  # shard 1, never used again: stale after 120 s
    assert lookup(cache, a).session_id == a  # … but `a` is used at t = 0 …
    cache.open(SessionRequest(a, 2, full=False, listed={}), {}, True, 190_000)  # … and 190 s
    # The newcomer lands on shard 0, where nothing is stale or outranked; b is never considered.
    assert create(cache, 1, False, 200_001) == 0 and b in cache.sessions
    newcomer = create(cache, 1, False, 200_002)  # next in the round robin: shard 1
    assert shard_of(newcomer, 2) == 1 and b not in cache.sessions


def test_lookups_route_by_id_and_ids_outside_every_shard_are_not_found() -> None:
    cache = new_cache(1000, 8)
    ids = [create(cache, 1, True, 0) for _ in range(8)]
    for session_id in ids:
        assert lookup(cache, session_id).session_id == session_id
    for unknown in (0, -5, 8 * RANGE_OF_8, 2**31 - 1, ids[3] + 1):
        assert lookup(cache, unknown).error_code == FETCH_SESSION_ID_NOT_FOUND


def test_a_broker_restart_empties_every_shard() -> None:
    cache = new_cache(80, 8)
    for _ in range(20):
        create(cache, 3, True, 0)
    cache.clear()
    assert cache.shard_occupancy() == (0,) * 8 and cache.partitions_cached() == 0


def test_the_strategy_option_chooses_the_shard_count() -> None:
    rng = random.Random(1)
    assert len(Incremental().new_cache(0, 1000, rng).shards) == 1  # before Kafka 3.8
    assert len(Incremental(shards=8).new_cache(0, 1000, rng).shards) == 8
    strategy = registry.instantiate("fetch_session", "incremental", {"shards": 8})
    assert strategy.new_cache(0, 1000, rng).shard_occupancy() == (0,) * 8
    for bad in (0, -1, "8", True, 2.5):
        with pytest.raises(PluginError, match="shards must be an integer ≥ 1"):
            registry.instantiate("fetch_session", "incremental", {"shards": bad})
    with pytest.raises(PluginError, match="rejected its options"):
        registry.instantiate("fetch_session", "incremental", {"shard": 8})


def test_a_scenario_can_shard_the_cache(write_scenario: Any, tmp_path: Path) -> None:
    from rig.events import names
    from rig.scenario.load import load_scenario
    from rig.simulate import simulate

    path = write_scenario("""
        name: sharded
        seed: 3
        duration: 3s
        kafka: "1.1"
        cluster: {brokers: 2}
        topics: [{name: test, partitions: 10, replication_factor: 2}]
        strategies:
          fetch_session: {name: incremental, options: {shards: 8}}
        """)
    simulate(load_scenario(path).variants[0], tmp_path / "log.jsonl")
    created = [e for e in map(orjson.loads, (tmp_path / "log.jsonl").read_bytes().splitlines())
               if e["event"] == names.SESSION_CREATED]
    # Each broker's first session goes to its shard 0.
    assert len(created) == 2 and all(1 <= e["session_id"] < RANGE_OF_8 for e in created)
