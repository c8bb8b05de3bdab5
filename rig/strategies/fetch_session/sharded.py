"""One shard of a broker's fetch-session cache: Kafka's FetchSessionCacheShard and its eviction.

Before Kafka 3.8 the whole cache is one shard; from 3.8 (KAFKA-9401) a broker splits its slots
into 8 shards, each with its own session-id range and its own eviction, and never looks across.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from rig.strategies.fetch_session.base import Key

EVICTION_MS = 120_000  # KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
INT_MAX = 2**31 - 1  # Java's Int.MaxValue: session ids are positive Java ints

# Why a session was evicted (kept in the cache's `eviction_reasons`, which tests read; the
# session.evicted event does not carry it).
STALE = "stale"  # idle longer than the eviction time: anyone may take its slot
EVICTABLE_BY_ALL = "evictable_by_all"  # older than the eviction time and outranked
EVICTABLE_BY_PRIVILEGED = "evictable_by_privileged"  # outranked by a privileged newcomer

EvictableKey = tuple[bool, int, int]  # Kafka's EvictableKey: (privileged, cachedSize, id)
LastUsedKey = tuple[float, int]  # Kafka's LastUsedKey: (lastUsedMs, id)


@dataclass(eq=False, slots=True)
class Session:
    """One fetch session. `partitions` iterates in the session's order (Kafka's partitionMap,
    an ImplicitLinkedHashCollection): creation order, new partitions appended, and partitions
    that returned records moved to the end."""

    id: int
    privileged: bool
    partitions: dict[Key, None]
    creation_ms: float
    last_used_ms: float
    epoch: int = 1
    changed: dict[Key, None] = field(default_factory=dict)
    # Kafka's cachedSize: the partition count at the last touch, -1 before the first. Eviction
    # ranks a session by it, not by its live size.
    cached_size: int = -1
    position: dict[Key, int] = field(default_factory=dict)  # key → rank in the session order
    next_position: int = 0

    def __post_init__(self) -> None:
        for key in self.partitions:
            self.position[key] = self.next_position
            self.next_position += 1

    @property
    def evictable_key(self) -> EvictableKey:
        return (self.privileged, self.cached_size, self.id)

    @property
    def last_used_key(self) -> LastUsedKey:
        return (self.last_used_ms, self.id)

    def add(self, key: Key) -> bool:
        """Append `key` to the session order unless present; True if it was added."""
        if key in self.partitions:
            return False
        self.partitions[key] = None
        self.position[key] = self.next_position
        self.next_position += 1
        return True

    def discard(self, key: Key) -> bool:
        """Drop `key` from the session; True if it was there."""
        if key not in self.partitions:
            return False
        del self.partitions[key]
        del self.position[key]
        self.changed.pop(key, None)
        return True

    def move_to_end(self, keys: Iterable[Key]) -> None:
        """Move each of `keys` held by the session to the end of its order, in the order given."""
        for key in keys:
            if key in self.partitions:
                del self.partitions[key]
                self.partitions[key] = None
                self.position[key] = self.next_position
                self.next_position += 1


K = TypeVar("K", EvictableKey, LastUsedKey)


class _SortedIndex(Generic[K]):
    """Kafka's TreeMap[key, FetchSession] as a dict (the truth) plus a heap (the order).

    Removed keys stay in the heap until they surface (lazy deletion); the heap is rebuilt when
    stale entries outnumber live ones, so its size stays O(sessions) however often sessions are
    touched."""

    __slots__ = ("_heap", "_live")

    def __init__(self) -> None:
        self._live: dict[K, Session] = {}
        self._heap: list[K] = []

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def put(self, key: K, session: Session) -> None:
        self._live[key] = session
        heapq.heappush(self._heap, key)
        if len(self._heap) > 2 * len(self._live) + 64:
            self._heap = list(self._live)
            heapq.heapify(self._heap)

    def remove(self, key: K) -> None:
        self._live.pop(key, None)

    def first(self) -> tuple[K, Session] | None:
        heap, live = self._heap, self._live
        while heap:
            key = heap[0]
            session = live.get(key)
            if session is not None:
                return key, session
            heapq.heappop(heap)
        return None

    def clear(self) -> None:
        self._live.clear()
        self._heap.clear()


class CacheShard:
    """Kafka's FetchSessionCacheShard: at most `max_entries` sessions with ids in
    [max(1, number·id_range), (number + 1)·id_range), and the eviction rules of tryEvict.

    A newcomer that finds the shard full may take the slot of
      1. the least recently used session, if it has been idle longer than `eviction_ms`;
      2. else the lowest-ranked session of its pool, if the newcomer's key
         (privileged, partitions, 0) is not lower than that session's (privileged, cached size,
         id). Ids are ≥ 1, so an equal (privileged, partitions) never evicts. The pool of an
         unprivileged newcomer holds sessions that were older than `eviction_ms` when last
         touched; a privileged newcomer's pool adds every unprivileged session.
    Pools are decided when a session is touched, as in Kafka: a session that ages past the
    eviction time becomes evictable by all only at its next touch.
    """

    def __init__(self, number: int, max_entries: int, rng: random.Random,
                 eviction_ms: float = EVICTION_MS, id_range: int = INT_MAX):
        self.number = number
        self.max_entries = max_entries
        self.rng = rng
        self.eviction_ms = eviction_ms
        self.id_low = max(1, number * id_range)  # 0 is INVALID_SESSION_ID: never handed out
        self.id_high = (number + 1) * id_range  # exclusive, like Java's nextInt(low, high)
        self.sessions: dict[int, Session] = {}
        self.partitions_cached = 0  # Kafka's numPartitions: the sum of cached sizes
        self._last_used: _SortedIndex[LastUsedKey] = _SortedIndex()
        self._evictable_by_all: _SortedIndex[EvictableKey] = _SortedIndex()
        self._evictable_by_privileged: _SortedIndex[EvictableKey] = _SortedIndex()

    def __len__(self) -> int:
        return len(self.sessions)

    def owns(self, session_id: int) -> bool:
        return self.id_low <= session_id < self.id_high

    def new_session_id(self) -> int:
        while True:
            candidate = self.rng.randrange(self.id_low, self.id_high)
            if candidate not in self.sessions:
                return candidate

    def maybe_create(self, now_ms: float, privileged: bool, partitions: Mapping[Key, None]
                     ) -> tuple[Session | None, Session | None, str | None]:
        """Kafka's maybeCreateSession: (the new session or None, the evicted one or None, why)."""
        evicted: Session | None = None
        reason: str | None = None
        if len(self.sessions) >= self.max_entries:
            evicted, reason = self.try_evict(privileged, (privileged, len(partitions), 0), now_ms)
            if evicted is None:
                return None, None, None
        session = Session(self.new_session_id(), privileged, dict(partitions), now_ms, now_ms)
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session, evicted, reason

    def try_evict(self, privileged: bool, key: EvictableKey, now_ms: float
                  ) -> tuple[Session | None, str | None]:
        """Kafka's tryEvict: the session removed to make room for a newcomer with `key`."""
        first = self._last_used.first()
        if first is None:
            return None, None
        (last_used_ms, _), stalest = first
        if now_ms - last_used_ms > self.eviction_ms:
            self.remove(stalest)
            return stalest, STALE
        pool = self._evictable_by_privileged if privileged else self._evictable_by_all
        lowest = pool.first()
        if lowest is None or key < lowest[0]:
            return None, None
        victim = lowest[1]
        self.remove(victim)
        return victim, EVICTABLE_BY_PRIVILEGED if privileged else EVICTABLE_BY_ALL

    def touch(self, session: Session, now_ms: float) -> None:
        """Kafka's touch: re-rank `session` by its last use, current size and age."""
        self._last_used.remove((session.last_used_ms, session.id))
        session.last_used_ms = now_ms
        self._last_used.put((now_ms, session.id), session)
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        by_privileged = not session.privileged or old_enough
        size = len(session.partitions)
        if session.cached_size != -1:
            old = (session.privileged, session.cached_size, session.id)
            if (size == session.cached_size and (old in self._evictable_by_all._live) == old_enough
                    and (old in self._evictable_by_privileged._live) == by_privileged):
                return  # same rank, same pools: the steady-state touch skips the re-ranking
            self._evictable_by_privileged.remove(old)
            self._evictable_by_all.remove(old)
            self.partitions_cached -= session.cached_size
        session.cached_size = size
        key = session.evictable_key
        if by_privileged:
            self._evictable_by_privileged.put(key, session)
        if old_enough:
            self._evictable_by_all.put(key, session)
        self.partitions_cached += size

    def remove(self, session: Session) -> bool:
        """Drop `session` from the shard; False if it was not there."""
        if self.sessions.get(session.id) is not session:
            return False
        del self.sessions[session.id]
        self._last_used.remove(session.last_used_key)
        self._evictable_by_all.remove(session.evictable_key)
        self._evictable_by_privileged.remove(session.evictable_key)
        self.partitions_cached -= max(session.cached_size, 0)
        return True

    def evictable(self, privileged: bool) -> list[EvictableKey]:
        """The keys a newcomer could evict now if they ranked high enough, lowest first (for
        tests and reports; O(n log n))."""
        pool = self._evictable_by_privileged if privileged else self._evictable_by_all
        return sorted(pool._live)

    def clear(self) -> None:
        self.sessions.clear()
        self.partitions_cached = 0
        self._last_used.clear()
        self._evictable_by_all.clear()
        self._evictable_by_privileged.clear()
