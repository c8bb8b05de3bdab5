"""KIP-227 sessions: the client and cache state machines, and Kafka's eviction rules."""

from __future__ import annotations

import random

from rig.cluster.messages import listed_incremental
from rig.strategies.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    SessionContext,
    next_epoch,
)
from rig.strategies.fetch_session.base import summarises_idle_rounds
from rig.strategies.fetch_session.incremental import IncrementalCache, IncrementalClient
from rig.strategies.fetch_session.sessionless import SessionlessClient

PARTS = {("t", p): None for p in range(4)}


def test_epochs_start_at_one_and_wrap_to_one() -> None:
    assert next_epoch(1) == 2
    assert next_epoch(2**31 - 1) == 1


def test_sessionless_client_always_sends_full_fetches() -> None:
    client = SessionlessClient()
    request = client.next_request(PARTS, {}, 7)
    assert (request.session_id, request.epoch, request.full) == (0, FINAL_EPOCH, True)


def test_full_fetch_creates_a_session_then_incremental_epochs_follow() -> None:
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, dict(PARTS), 7)
    assert (first.session_id, first.epoch, first.full) == (0, INITIAL_EPOCH, True)
    context = cache.open(first, PARTS, privileged=True, now_ms=0)
    assert context.created and context.session_id != 0 and context.full
    client.on_response(first, NONE, context.session_id)
    for epoch in (1, 2, 3):
        request = client.next_request(PARTS, {}, 7)
        assert (request.session_id, request.epoch, request.full) == (context.session_id, epoch,
                                                                      False)
        assert request.listed == {} and request.forgotten == {}
        answer = cache.open(request, PARTS, privileged=True, now_ms=epoch)
        assert answer.error_code == NONE and answer.changed == {}
        client.on_response(request, NONE, answer.session_id)


def test_incremental_requests_list_changed_and_forget_removed_partitions() -> None:
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, {}, 7)
    client.on_response(first, NONE, cache.open(first, PARTS, True, 0).session_id)
    now = dict(PARTS)
    del now[("t", 3)]
    now[("u", 0)] = None
    dirty = {("t", 1): None, ("t", 3): None, ("u", 0): None}
    request = client.next_request(now, dirty, 7)
    assert list(request.listed or {}) == [("t", 1), ("u", 0)]
    assert list(request.forgotten) == [("t", 3)]
    context = cache.open(request, now, True, 1)
    assert set(context.partitions) == set(now)
    # A new partition is answered in the next response, then settles; one listed again with
    # new fetch data is answered only if its response data changes (records, a new HW, an
    # error: Kafka's CachedPartition.maybeUpdateResponseData).
    assert list(context.changed or {}) == [("u", 0)]
    cache.sent(context, dict(context.changed or {}))
    assert context.changed == {}


def test_a_partition_answered_with_an_error_is_listed_again_once() -> None:
    # Kafka caches -1 as the high watermark of a partition answered with an error, so the next
    # response lists it whatever it holds (CachedPartition.maybeUpdateResponseData).
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, {}, 7)
    created = cache.open(first, PARTS, True, 0)
    client.on_response(first, NONE, created.session_id)
    cache.answered_errors(created, {("t", 1): 6})  # the full response's error

    def next_context(now_ms: int) -> SessionContext:
        request = client.next_request(PARTS, {}, 7)
        context = cache.open(request, PARTS, True, now_ms)
        client.on_response(request, NONE, context.session_id)
        return context

    context = next_context(1)
    assert list(context.changed or {}) == [("t", 1)]
    listed = listed_incremental(cache, context, {}, {("t", 1): 6})  # the error again
    assert listed == {("t", 1): None}
    context = next_context(2)
    assert list(context.changed or {}) == [("t", 1)]
    assert listed_incremental(cache, context, {}, {}) == {("t", 1): None}  # the error gone
    assert listed_incremental(cache, next_context(3), {}, {}) == {}  # then it settles


def test_high_watermark_changes_are_answered_only_by_sessions_holding_the_partition() -> None:
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, {}, 7)
    client.on_response(first, NONE, cache.open(first, PARTS, True, 0).session_id)
    cache.mark_changed(("t", 2))
    cache.mark_changed(("elsewhere", 0))
    context = cache.open(client.next_request(PARTS, {}, 7), PARTS, True, 1)
    assert list(context.changed or {}) == [("t", 2)]


def test_unknown_session_and_wrong_epoch_errors_and_the_clients_reaction() -> None:
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, {}, 7)
    session_id = cache.open(first, PARTS, True, 0).session_id
    client.on_response(first, NONE, session_id)
    request = client.next_request(PARTS, {}, 7)
    request.epoch = 5  # a client that lost count
    context = cache.open(request, PARTS, True, 1)
    assert (context.error_code, context.session_id) == (INVALID_FETCH_SESSION_EPOCH, 0)
    client.on_response(request, context.error_code, 0)
    retry = client.next_request(PARTS, {}, 7)
    assert (retry.session_id, retry.epoch, retry.full) == (session_id, INITIAL_EPOCH, True)

    cache.clear()  # the broker restarted
    client2 = IncrementalClient()
    client2.session_id, client2.epoch = session_id, 3
    lost = client2.next_request(PARTS, {}, 7)
    context = cache.open(lost, PARTS, True, 2)
    assert context.error_code == FETCH_SESSION_ID_NOT_FOUND
    client2.on_response(lost, context.error_code, 0)
    again = client2.next_request(PARTS, {}, 7)
    assert (again.session_id, again.epoch, again.full) == (0, INITIAL_EPOCH, True)


def test_closing_a_session_with_id_and_epoch_zero_replaces_it() -> None:
    client, cache = IncrementalClient(), IncrementalCache(10, random.Random(1))
    first = client.next_request(PARTS, {}, 7)
    old = cache.open(first, PARTS, True, 0).session_id
    client.on_response(first, NONE, old)
    client.on_disconnect()
    reopen = client.next_request(PARTS, {}, 7)
    assert (reopen.session_id, reopen.epoch) == (old, INITIAL_EPOCH)
    new = cache.open(reopen, PARTS, True, 1).session_id
    assert new != old and cache.occupancy() == 1


def _create(cache: IncrementalCache, size: int, privileged: bool, now: float) -> int:
    client = IncrementalClient()
    parts = {("t", p): None for p in range(size)}
    return cache.open(client.next_request(parts, {}, 7), parts, privileged, now).session_id


def test_a_full_cache_gives_no_session_to_a_lower_ranked_newcomer() -> None:
    cache = IncrementalCache(2, random.Random(1))
    assert _create(cache, 10, True, 0) and _create(cache, 10, True, 0)
    assert _create(cache, 10, True, 1000) == 0  # equal rank, nobody older than 120 s
    assert cache.occupancy() == 2


def test_a_stale_session_is_evicted_by_anyone() -> None:
    cache = IncrementalCache(1, random.Random(1))
    old = _create(cache, 500, True, 0)
    new = _create(cache, 1, False, 120_001)  # idle for more than 120 s
    assert new != 0 and old not in cache.sessions


def test_privileged_newcomer_evicts_an_unprivileged_session() -> None:
    cache = IncrementalCache(1, random.Random(1))
    consumer = _create(cache, 1000, False, 0)
    follower = _create(cache, 1, True, 10)
    assert follower != 0 and consumer not in cache.sessions


def test_unprivileged_newcomer_may_evict_only_sessions_older_than_the_eviction_time() -> None:
    cache = IncrementalCache(1, random.Random(1))
    small = _create(cache, 1, False, 0)
    assert _create(cache, 50, False, 1000) == 0  # `small` is young: not evictable by all
    # Touched after 120 s of age (but not idle that long), it becomes evictable by all …
    session = cache.sessions[small]
    client = IncrementalClient()
    client.session_id, client.epoch = small, session.epoch
    cache.open(client.next_request({("t", 0): None}, {}, 7), {}, False, 130_000)
    # … by a newcomer that ranks at least as high: more partitions.
    assert _create(cache, 50, False, 131_000) != 0 and small not in cache.sessions


def test_zero_slots_means_no_sessions() -> None:
    cache = IncrementalCache(0, random.Random(1))
    assert _create(cache, 5, True, 0) == 0


class _Counting(IncrementalClient):
    """A plugin's client that counts its requests: its skipped rounds would count too."""

    def next_request(self, *args: object, **kwargs: object) -> object:
        return super().next_request(*args, **kwargs)  # type: ignore[arg-type]


class _CountingWithSkip(_Counting):
    def skip_idle_rounds(self, rounds: int) -> None:
        super().skip_idle_rounds(rounds)


def test_only_a_class_with_every_call_it_skips_summarises_idle_rounds() -> None:
    """A subclass of a built-in that overrides a call a skipped round stands for, and not
    skip_idle_rounds, has every round simulated (rig.cluster.coast_begin)."""
    calls = ("next_request", "on_response", "on_disconnect")
    assert summarises_idle_rounds(IncrementalClient(), calls)
    assert summarises_idle_rounds(SessionlessClient(), calls)
    assert not summarises_idle_rounds(_Counting(), calls)
    assert summarises_idle_rounds(_CountingWithSkip(), calls)
    assert not summarises_idle_rounds(object(), calls)
    cache = IncrementalCache(4, random.Random(1))
    assert summarises_idle_rounds(cache, ("open", "mark_changed", "sent"))
