"""KIP-227 incremental fetch sessions, as Kafka's FetchSessionHandler and FetchSessionCache do.

Client: a full fetch (0, 0) asks for a session; after that, requests list only partitions that
are new or whose fetch data changed. Cache: `slots` sessions per broker, optionally split into
shards as Kafka 3.8+ does (8 shards); eviction rules in rig.strategies.fetch_session.sharded.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from rig.errors import PluginError
from rig.strategies.fetch_session.base import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    Key,
    SessionContext,
    SessionRequest,
    advance_epoch,
    next_epoch,
)
from rig.strategies.fetch_session.session_handler import IncrementalClient
from rig.strategies.fetch_session.sharded import (
    EVICTION_MS,
    INT_MAX,
    CacheShard,
    Session,
)

__all__ = ["EVICTION_MS", "Incremental", "IncrementalCache", "IncrementalClient", "Session"]

KAFKA_SHARDS = 8  # KafkaBroker.NumFetchSessionCacheShards, Kafka 3.8+


class IncrementalCache:
    """Kafka's FetchSessionCache (its shards) plus the session half of FetchManager.newContext.

    `shards` = 1 is the cache before Kafka 3.8: one pool of `slots` sessions, ids in
    [1, 2^31 − 1). With n shards (Kafka 3.8+: 8), each shard holds slots // n sessions (the
    remainder is lost, as in Kafka) and ids in its own range of (2^31 − 1) // n; a full fetch
    asking for a session goes to the next shard in round robin (whether or not it gets one)
    and may evict only within that shard, even if another shard has free slots.

    Beyond the SessionCache Protocol:
      - `listed_in_order(context, keys)` orders a response's partitions as Kafka lists them;
      - `moved_to_end(context, keys)` moves partitions that returned records to the end of the
        session's order, so the response size limit rotates fairly over partitions (KIP-227);
      - `evictions`, `eviction_reasons`, `shard_occupancy()` and `partitions_cached()` for
        metrics.
    """

    def __init__(self, slots: int, rng: random.Random, eviction_ms: float = EVICTION_MS,
                 shards: int = 1):
        _check_shards(shards)
        self.slots = slots
        self.rng = rng
        self.eviction_ms = eviction_ms
        self.id_range = INT_MAX // shards
        self.shards = tuple(CacheShard(n, max(slots, 0) // shards, rng, eviction_ms,
                                       self.id_range) for n in range(shards))
        self.sessions: dict[int, Session] = {}  # every shard's, by id (shard ranges are disjoint)
        self.evictions = 0
        # Why each session evicted by the last `open` went: session id → reason (see sharded).
        self.eviction_reasons: dict[int, str] = {}
        self._holders: dict[Key, dict[int, None]] = {}
        self._round_robin = 0  # FetchSessionCache.counter: one per broker process

    # -- the Protocol ------------------------------------------------------------------------
    def open(self, request: SessionRequest, request_partitions: Mapping[Key, None],
             privileged: bool, now_ms: float) -> SessionContext:
        if self.eviction_reasons:
            self.eviction_reasons = {}
        if request.full:
            if request.session_id != 0:
                self._remove(request.session_id)  # a full fetch closes the session it names
            if request.epoch == FINAL_EPOCH:
                return SessionContext(NONE, 0, True, request_partitions)
            session, evicted = self._maybe_create(now_ms, privileged, request_partitions)
            return SessionContext(NONE, session.id if session else 0, True, request_partitions,
                                  created=session is not None, evicted=evicted)
        session = self.sessions.get(request.session_id)
        if session is None:
            return SessionContext(FETCH_SESSION_ID_NOT_FOUND, 0, False, {}, changed={})
        if session.epoch != request.epoch:
            return SessionContext(INVALID_FETCH_SESSION_EPOCH, 0, False, {}, changed={})
        for key in request.listed or ():
            if session.add(key):
                self._holders.setdefault(key, {})[session.id] = None
                # A new partition is answered (its cached high watermark is unknown, −1); one
                # listed again with new fetch data only if its response data changed
                # (CachedPartition.updateRequestParams, maybeUpdateResponseData).
                session.changed[key] = None
        for key in request.forgotten:
            if session.discard(key):
                self._unhold(key, session.id)
        if not session.partitions:
            # Kafka closes a session left without partitions and answers sessionless (id 0).
            self._remove(session.id)
            return SessionContext(NONE, 0, True, dict(request.listed or {}))
        self._shard_of(session.id).touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return SessionContext(NONE, session.id, False, session.partitions, session.changed)

    def mark_changed(self, key: Key) -> None:
        for session_id in self._holders.get(key, ()):
            self.sessions[session_id].changed[key] = None

    def sent(self, context: SessionContext, listed: Mapping[Key, None]) -> None:
        if context.changed is None:
            return
        for key in listed:
            context.changed.pop(key, None)

    def answered_errors(self, context: SessionContext, keys: Iterable[Key]) -> None:
        """A response gave these partitions an error: the session caches their high watermark
        as −1, so the next response lists them again, error or not
        (CachedPartition.maybeUpdateResponseData; a session a full fetch created caches the
        error response's −1 the same way)."""
        session = self.sessions.get(context.session_id) if context.error_code == NONE else None
        if session is None:
            return
        for key in keys:
            if key in session.partitions:
                session.changed[key] = None

    def occupancy(self) -> int:
        return len(self.sessions)

    def expects(self, session_id: int, epoch: int) -> bool:
        """Whether an incremental request of `session_id` at `epoch` would be accepted now."""
        session = self.sessions.get(session_id)
        return session is not None and session.epoch == epoch

    def skip_idle_rounds(self, session_id: int, rounds: int, last_used_ms: float) -> None:
        """`rounds` incremental requests of `session_id` that listed nothing: its epoch moves
        on and it was last touched at `last_used_ms` (a touch's effect depends only on the last
        one while the session's size stays the same)."""
        session = self.sessions.get(session_id)
        if session is None or not rounds:
            return
        session.epoch = advance_epoch(session.epoch, rounds)
        self._shard_of(session_id).touch(session, last_used_ms)

    def clear(self) -> None:
        self.sessions.clear()
        self._holders.clear()
        for shard in self.shards:
            shard.clear()

    # -- response order (KIP-227 fairness) ---------------------------------------------------
    def listed_in_order(self, context: SessionContext, keys: Iterable[Key]) -> dict[Key, None]:
        """`keys` in the order a response lists them.

        For an incremental context that is the session's order (Kafka walks the session's
        partition map); otherwise the order of `context.partitions` (the request's). Keys the
        order does not know come last, as given. O(k log k) for k keys in a session."""
        wanted = dict.fromkeys(keys)
        session = self._session_of(context)
        if session is None:
            ordered = {k: None for k in context.partitions if k in wanted}
        else:
            position = session.position
            ordered = dict.fromkeys(sorted(filter(position.__contains__, wanted),
                                           key=position.__getitem__))
        for key in wanted:
            ordered.setdefault(key)
        return ordered

    def moved_to_end(self, context: SessionContext, keys: Iterable[Key]) -> None:
        """Partitions that returned records in the response to `context` move to the end of
        its session's order, in the order given (the response's).

        Kafka's IncrementalFetchContext does this so that the partitions at the front, the
        first to be read up to the response size limit, take turns; since KAFKA-12330 only
        records move a partition, not a changed high watermark or log start offset. Full and
        sessionless contexts have no order to keep: a no-op."""
        session = self._session_of(context)
        if session is not None:
            session.move_to_end(keys)

    # -- metrics -----------------------------------------------------------------------------
    def shard_occupancy(self) -> tuple[int, ...]:
        """Sessions per shard, in shard order."""
        return tuple(len(shard) for shard in self.shards)

    def partitions_cached(self) -> int:
        """Kafka's NumIncrementalFetchPartitionsCached: partitions over all sessions."""
        return sum(shard.partitions_cached for shard in self.shards)

    # -- Kafka's cache mechanics -------------------------------------------------------------
    def _shard_of(self, session_id: int) -> CacheShard:
        """FetchSessionCache.getCacheShard; only for ids of live sessions."""
        return self.shards[session_id // self.id_range]

    def _session_of(self, context: SessionContext) -> Session | None:
        if context.full or context.error_code != NONE:
            return None
        return self.sessions.get(context.session_id)

    def _maybe_create(self, now_ms: float, privileged: bool, partitions: Mapping[Key, None]
                      ) -> tuple[Session | None, tuple[int, ...]]:
        # getNextCacheShard: the counter advances for every full fetch that asks for a session.
        shard = self.shards[self._round_robin % len(self.shards)]
        self._round_robin = (self._round_robin + 1) & INT_MAX  # Utils.toPositive
        session, evicted, reason = shard.maybe_create(now_ms, privileged, partitions)
        if evicted is not None:
            self._forget(evicted)
            self.evictions += 1
            self.eviction_reasons[evicted.id] = reason or ""
        if session is None:
            return None, ()
        self.sessions[session.id] = session
        for key in session.partitions:
            self._holders.setdefault(key, {})[session.id] = None
        return session, (() if evicted is None else (evicted.id,))

    def _remove(self, session_id: int) -> None:
        session = self.sessions.get(session_id)
        if session is not None and self._shard_of(session_id).remove(session):
            self._forget(session)

    def _forget(self, session: Session) -> None:
        """Drop a session the shard no longer holds from the broker-wide indexes."""
        self.sessions.pop(session.id, None)
        for key in session.partitions:
            self._unhold(key, session.id)

    def _unhold(self, key: Key, session_id: int) -> None:
        holders = self._holders.get(key)
        if holders is not None:
            holders.pop(session_id, None)
            if not holders:
                del self._holders[key]


def _check_shards(shards: Any) -> None:
    if type(shards) is not int or shards < 1:
        raise PluginError(f"fetch_session strategy 'incremental': option shards must be an "
                          f"integer ≥ 1 (got {shards!r}); Kafka 3.8+ uses {KAFKA_SHARDS}")


class Incremental:
    """KIP-227: one full fetch creates a session, then requests list only what changed.

    Options: `shards` (default 1, the cache before Kafka 3.8; Kafka 3.8+ uses 8) splits each
    broker's `max.incremental.fetch.session.cache.slots` into that many shards."""

    name: ClassVar[str] = "incremental"
    description: ClassVar[str] = ("KIP-227 fetch sessions with Kafka's session cache "
                                  "(slots, optional 3.8+ shards, privileged followers, 120 s "
                                  "eviction)")
    api_version: ClassVar[int] = 1
    min_fetch_version: ClassVar[int] = 7

    def __init__(self, shards: int = 1) -> None:
        _check_shards(shards)
        self.shards = shards

    def new_client(self) -> IncrementalClient:
        return IncrementalClient()

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return IncrementalCache(slots, rng, shards=self.shards)
