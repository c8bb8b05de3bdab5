"""Session order (KIP-227 fairness): responses list partitions in the session's order, and
partitions that returned records move to its end so a size-limited response rotates."""

from __future__ import annotations

import random
from collections.abc import Iterable

from rig.strategies.fetch_session import (
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    SessionContext,
    SessionRequest,
)
from rig.strategies.fetch_session.incremental import IncrementalCache

T = [("t", p) for p in range(5)]


def session_with(keys: list[tuple[str, int]]) -> tuple[IncrementalCache, int]:
    cache = IncrementalCache(10, random.Random(1))
    context = cache.open(SessionRequest(0, INITIAL_EPOCH, full=True), dict.fromkeys(keys),
                         True, 0)
    return cache, context.session_id


def fetch(cache: IncrementalCache, session_id: int, listed: Iterable[object] = (),
          forgotten: Iterable[object] = ()) -> SessionContext:
    epoch = cache.sessions[session_id].epoch
    return cache.open(SessionRequest(session_id, epoch, full=False, listed=dict.fromkeys(listed),
                                     forgotten=dict.fromkeys(forgotten)), {}, True, 1)


def order(cache: IncrementalCache, session_id: int) -> list[object]:
    return list(cache.sessions[session_id].partitions)


def test_changed_partitions_are_listed_in_session_order_not_in_marking_order() -> None:
    cache, sid = session_with(T)
    cache.mark_changed(T[3])
    cache.mark_changed(T[1])
    context = fetch(cache, sid)
    assert list(context.changed or {}) == [T[3], T[1]]
    assert list(cache.listed_in_order(context, context.changed or {})) == [T[1], T[3]]


def test_partitions_with_records_move_to_the_end_in_response_order() -> None:
    cache, sid = session_with(T)
    context = fetch(cache, sid)
    cache.moved_to_end(context, [T[1], T[0]])
    assert order(cache, sid) == [T[2], T[3], T[4], T[1], T[0]]
    assert list(cache.listed_in_order(context, [T[0], T[2], T[1]])) == [T[2], T[1], T[0]]
    cache.moved_to_end(context, [("elsewhere", 9)])  # not in the session: ignored
    assert order(cache, sid) == [T[2], T[3], T[4], T[1], T[0]]


def test_a_size_limited_response_rotates_over_every_partition() -> None:
    # Every partition has records and a response fits two: without the move to the end the
    # first two partitions would be served forever.
    cache, sid = session_with(T)
    served: list[object] = []
    for _ in range(5):
        context = fetch(cache, sid)
        batch = list(cache.listed_in_order(context, T))[:2]
        served += batch
        cache.moved_to_end(context, batch)
    assert served[:6] == [T[0], T[1], T[2], T[3], T[4], T[0]]
    assert {served.count(k) for k in T} == {2}


def test_new_partitions_join_the_end_and_relisted_ones_keep_their_place() -> None:
    cache, sid = session_with(T[:3])
    fetch(cache, sid, listed=[("u", 0), T[0]])  # u-0 is new; t-0 only changed its fetch data
    assert order(cache, sid) == [T[0], T[1], T[2], ("u", 0)]
    fetch(cache, sid, forgotten=[T[0]])
    fetch(cache, sid, listed=[T[0]])  # forgotten, then added again: a newcomer
    assert order(cache, sid) == [T[1], T[2], ("u", 0), T[0]]


def test_full_and_error_contexts_keep_the_request_order_and_move_nothing() -> None:
    cache = IncrementalCache(10, random.Random(1))
    request_order = {T[4]: None, T[0]: None, T[2]: None}
    full = cache.open(SessionRequest(0, INITIAL_EPOCH, full=True), request_order, True, 0)
    assert list(cache.listed_in_order(full, [T[2], ("x", 1), T[4]])) == [T[4], T[2], ("x", 1)]
    cache.moved_to_end(full, [T[4]])  # a full fetch's answer does not reorder the session
    assert order(cache, full.session_id) == [T[4], T[0], T[2]]
    error = cache.open(SessionRequest(full.session_id, 9, full=False, listed={}), {}, True, 1)
    assert error.error_code == INVALID_FETCH_SESSION_EPOCH
    cache.moved_to_end(error, [T[4]])
    assert order(cache, full.session_id) == [T[4], T[0], T[2]]
