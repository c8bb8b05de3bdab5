"""The session cache's eviction rules, one test per rule of Kafka's FetchSessionCache(Shard):
touch, lastUsed, evictableByAll, evictableByPrivileged and tryEvict; ids; closing sessions."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from rig.strategies.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    SessionContext,
    SessionRequest,
)
from rig.strategies.fetch_session.incremental import IncrementalCache, IncrementalClient
from rig.strategies.fetch_session.sharded import (
    EVICTABLE_BY_ALL,
    EVICTABLE_BY_PRIVILEGED,
    STALE,
)

EVICTION_MS = 120_000


def new_cache(slots: int, seed: int = 1) -> IncrementalCache:
    return IncrementalCache(slots, random.Random(seed))


def create(cache: IncrementalCache, size: int, privileged: bool, now: float) -> int:
    """The id a (0, 0) full fetch of `size` partitions got, or 0 if the cache had no slot."""
    request = SessionRequest(0, INITIAL_EPOCH, full=True)
    return cache.open(request, {("t", p): None for p in range(size)}, privileged,
                      now).session_id


def incremental(cache: IncrementalCache, session_id: int, now: float,
                listed: Iterable[object] = (), forgotten: Iterable[object] = (),
                epoch: int | None = None) -> SessionContext:
    """An incremental fetch, at the session's expected epoch unless `epoch` is given."""
    session = cache.sessions.get(session_id)
    expected = session.epoch if session is not None else 1
    request = SessionRequest(session_id, expected if epoch is None else epoch, full=False,
                             listed=dict.fromkeys(listed), forgotten=dict.fromkeys(forgotten))
    return cache.open(request, {}, True, now)


# -- ids -----------------------------------------------------------------------------------------


def test_session_ids_are_unique_positive_java_ints_drawn_from_the_seeded_stream() -> None:
    cache = new_cache(3000)
    ids = [create(cache, 1, True, 0) for _ in range(3000)]
    assert len(set(ids)) == 3000 and all(1 <= i < 2**31 - 1 for i in ids)
    assert [create(new_cache(5, seed=9), 1, True, 0) for _ in range(2)] == [
        create(new_cache(5, seed=9), 1, True, 0) for _ in range(2)]


# -- tryEvict: stale entries ---------------------------------------------------------------------


def test_an_entry_idle_longer_than_the_eviction_time_is_evicted_by_anyone() -> None:
    cache = new_cache(1)
    follower = create(cache, 1000, True, 0)
    assert create(cache, 1, False, EVICTION_MS) == 0  # idle exactly 120 s: not stale yet
    consumer = create(cache, 1, False, EVICTION_MS + 1)
    assert consumer != 0 and follower not in cache.sessions
    assert cache.eviction_reasons == {follower: STALE} and cache.evictions == 1


def test_the_stale_victim_is_the_least_recently_used_lowest_id_first() -> None:
    cache = new_cache(3)
    a, b = create(cache, 5, True, 0), create(cache, 5, True, 0)
    c = create(cache, 5, True, 10)
    first = min(a, b)  # same last use: LastUsedKey orders by id
    assert create(cache, 1, False, EVICTION_MS + 5) != 0
    assert first not in cache.sessions and max(a, b) in cache.sessions
    assert create(cache, 1, False, EVICTION_MS + 6) != 0 and max(a, b) not in cache.sessions
    # c was last used at 10: idle 119,997 ms, not stale; and too young to be evictable by all.
    assert create(cache, 1, False, EVICTION_MS + 7) == 0 and c in cache.sessions


def test_a_touch_makes_an_entry_recently_used_again() -> None:
    cache = new_cache(2)
    a, b = create(cache, 5, True, 0), create(cache, 5, True, 0)
    incremental(cache, min(a, b), 100_000)
    assert create(cache, 1, False, EVICTION_MS + 1) != 0
    assert min(a, b) in cache.sessions and max(a, b) not in cache.sessions


def test_session_errors_do_not_touch_the_session() -> None:
    cache = new_cache(1)
    session = create(cache, 5, True, 0)
    assert incremental(cache, session, 100_000, epoch=7).error_code == INVALID_FETCH_SESSION_EPOCH
    assert create(cache, 1, False, EVICTION_MS + 1) != 0 and session not in cache.sessions


# -- tryEvict: ranking ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_a_newcomer_of_equal_rank_never_evicts(seed: int) -> None:
    # Kafka's newcomer key is (privileged, size, 0) and ids are ≥ 1, so equal (privileged,
    # size) ranks strictly lower than every session: the incumbent stays, whatever its id.
    for privileged in (False, True):
        cache = new_cache(1, seed)
        incumbent = create(cache, 10, privileged, 0)
        incremental(cache, incumbent, 130_000)  # touched when older than 120 s: evictable
        assert create(cache, 10, privileged, 131_000) == 0
        assert create(cache, 11, privileged, 131_000) != 0 and incumbent not in cache.sessions


def test_a_privileged_newcomer_evicts_the_smallest_unprivileged_session_of_any_age() -> None:
    cache = new_cache(3)
    small, big = create(cache, 5, False, 0), create(cache, 500, False, 0)
    create(cache, 1, True, 0)
    assert create(cache, 1, True, 1000) != 0  # both consumers are young: no matter
    assert small not in cache.sessions and cache.eviction_reasons == {
        small: EVICTABLE_BY_PRIVILEGED}
    assert create(cache, 1, True, 1001) != 0 and big not in cache.sessions
    assert create(cache, 1000, True, 1002) == 0  # only young followers are left


def test_an_unprivileged_newcomer_never_evicts_a_young_session_even_a_smaller_one() -> None:
    cache = new_cache(1)
    small = create(cache, 1, False, 0)
    assert create(cache, 1000, False, 1000) == 0 and small in cache.sessions


def test_an_unprivileged_newcomer_never_evicts_a_privileged_session() -> None:
    cache = new_cache(1)
    follower = create(cache, 1, True, 0)
    incremental(cache, follower, 130_000)  # old: evictable by all, but ranks above consumers
    assert create(cache, 10_000, False, 131_000) == 0 and follower in cache.sessions


def test_an_unprivileged_newcomer_evicts_an_old_smaller_session() -> None:
    cache = new_cache(1)
    small = create(cache, 1, False, 0)
    incremental(cache, small, 130_000)
    assert create(cache, 2, False, 131_000) != 0
    assert cache.eviction_reasons == {small: EVICTABLE_BY_ALL}


def test_a_young_privileged_session_is_safe_from_privileged_newcomers() -> None:
    cache = new_cache(1)
    follower = create(cache, 1, True, 0)
    assert create(cache, 1000, True, 1000) == 0
    incremental(cache, follower, 130_000)  # now older than 120 s at its last touch
    assert create(cache, 1, True, 131_000) == 0  # equal rank
    assert create(cache, 2, True, 131_000) != 0 and follower not in cache.sessions


def test_evictability_is_decided_when_a_session_is_touched() -> None:
    # Kafka's quirk: a session that ages past 120 s joins evictableByAll only at its next touch.
    cache = new_cache(1)
    session = create(cache, 1, False, 0)
    incremental(cache, session, 100_000)  # 100 s old at this touch: not evictable by all
    assert create(cache, 50, False, 200_000) == 0  # 200 s old, idle 100 s: still safe
    incremental(cache, session, 200_000)
    assert create(cache, 50, False, 200_001) != 0 and session not in cache.sessions


def test_a_session_ranks_by_its_partition_count_at_its_last_touch() -> None:
    cache = new_cache(1)
    session = create(cache, 2, False, 0)
    incremental(cache, session, 130_000, listed=[("u", p) for p in range(8)])  # now 10
    assert cache.sessions[session].cached_size == 10
    assert create(cache, 9, False, 131_000) == 0
    assert create(cache, 10, False, 131_000) == 0
    assert create(cache, 11, False, 131_000) != 0


def test_no_slots_no_sessions_and_a_full_cache_keeps_its_sessions() -> None:
    assert create(new_cache(0), 5, True, 0) == 0
    cache = new_cache(2)
    kept = {create(cache, 10, True, 0), create(cache, 10, True, 0)}
    assert create(cache, 10, True, 1000) == 0 and set(cache.sessions) == kept


# -- closing sessions ----------------------------------------------------------------------------


def test_a_full_fetch_with_epoch_minus_one_closes_the_session_without_a_new_one() -> None:
    cache = new_cache(5)
    session = create(cache, 3, True, 0)
    request = SessionRequest(session, FINAL_EPOCH, full=True)
    context = cache.open(request, {("t", 0): None}, True, 1)
    assert (context.error_code, context.session_id, context.created) == (NONE, 0, False)
    assert cache.occupancy() == 0 and cache.partitions_cached() == 0


def test_a_session_left_without_partitions_is_closed_and_the_client_starts_over() -> None:
    cache, client = new_cache(5), IncrementalClient()
    keys = {("t", 0): None, ("t", 1): None}
    first = client.next_request(keys, {}, 7)
    session = cache.open(first, keys, True, 0).session_id
    client.on_response(first, NONE, session)
    request = client.next_request({}, keys, 7)  # the fetcher dropped both partitions
    assert list(request.forgotten) == list(keys)
    context = cache.open(request, {}, True, 1)
    assert (context.error_code, context.session_id) == (NONE, 0)  # Kafka: sessionless answer
    assert session not in cache.sessions
    client.on_response(request, context.error_code, context.session_id)
    again = client.next_request(keys, keys, 7)
    assert (again.session_id, again.epoch, again.full) == (0, INITIAL_EPOCH, True)


def test_unknown_ids_are_not_found() -> None:
    cache = new_cache(5)
    create(cache, 1, True, 0)
    for unknown in (12345, -7, 2**31 - 1):
        assert incremental(cache, unknown, 1, epoch=1).error_code == FETCH_SESSION_ID_NOT_FOUND


def test_metrics_count_evictions_and_cached_partitions() -> None:
    cache = new_cache(2)
    a = create(cache, 10, False, 0)
    create(cache, 20, True, 0)
    assert (cache.occupancy(), cache.partitions_cached()) == (2, 30)
    incremental(cache, a, 5, listed=[("u", 0)])
    assert cache.partitions_cached() == 31
    create(cache, 1, True, 10)  # evicts the consumer
    assert (cache.evictions, cache.partitions_cached()) == (1, 21)
    cache.clear()
    assert (cache.occupancy(), cache.partitions_cached(), cache.shard_occupancy()) == (0, 0, (0,))
