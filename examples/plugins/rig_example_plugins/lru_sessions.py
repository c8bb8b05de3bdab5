"""An LRU fetch-session cache without privileges: when the cache is full, a new session always
evicts the least recently used one, whoever asks and however young it is.

Kafka's cache (KIP-227) protects sessions younger than 120 s and ranks followers above consumers
and large sessions above small ones, so a full cache mostly turns newcomers away. This policy does
the opposite, which is what a comparison with fewer slots than fetchers shows: evictions, then
FETCH_SESSION_ID_NOT_FOUND and full fetches. The client half is Kafka's own (rig's
IncrementalClient): only the broker's policy changes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rig.strategies.fetch_session import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    SessionContext,
    SessionRequest,
    next_epoch,
)
from rig.strategies.fetch_session.incremental import IncrementalClient


@dataclass(eq=False)
class _Session:
    id: int
    partitions: dict[Any, None]
    epoch: int = 1
    changed: dict[Any, None] = field(default_factory=dict)


class LruCache:
    """`slots` sessions; the least recently used goes when a new one needs room."""

    def __init__(self, slots: int, rng: random.Random):
        self.slots = slots
        self.rng = rng
        self.sessions: dict[int, _Session] = {}  # least recently used first
        self._holders: dict[Any, dict[int, None]] = {}  # partition → sessions holding it

    def open(self, request: SessionRequest, request_partitions: Mapping[Any, None],
             privileged: bool, now_ms: float) -> SessionContext:
        if request.full:
            if request.session_id != 0:
                self._remove(request.session_id)  # a full fetch closes the session it names
            if request.epoch == FINAL_EPOCH or self.slots <= 0:
                return SessionContext(NONE, 0, True, request_partitions)
            evicted: tuple[int, ...] = ()
            if len(self.sessions) >= self.slots:
                victim = next(iter(self.sessions))
                self._remove(victim)
                evicted = (victim,)
            session = _Session(self._new_id(), dict(request_partitions))
            self.sessions[session.id] = session
            for key in session.partitions:
                self._holders.setdefault(key, {})[session.id] = None
            return SessionContext(NONE, session.id, True, request_partitions, created=True,
                                  evicted=evicted)
        found = self.sessions.get(request.session_id)
        if found is None:
            return SessionContext(FETCH_SESSION_ID_NOT_FOUND, 0, False, {}, changed={})
        if found.epoch != request.epoch:
            return SessionContext(INVALID_FETCH_SESSION_EPOCH, 0, False, {}, changed={})
        for key in request.listed or ():
            if key not in found.partitions:
                found.partitions[key] = None
                self._holders.setdefault(key, {})[found.id] = None
            found.changed[key] = None  # new or changed: the next response answers it
        for key in request.forgotten:
            if key in found.partitions:
                del found.partitions[key]
                found.changed.pop(key, None)
                self._unhold(key, found.id)
        found.epoch = next_epoch(found.epoch)
        self.sessions[found.id] = self.sessions.pop(found.id)  # now the most recently used
        return SessionContext(NONE, found.id, False, found.partitions, found.changed)

    def mark_changed(self, key: Any) -> None:
        for session_id in self._holders.get(key, ()):
            self.sessions[session_id].changed[key] = None

    def sent(self, context: SessionContext, listed: Mapping[Any, None]) -> None:
        if context.changed is not None:
            for key in listed:
                context.changed.pop(key, None)

    def occupancy(self) -> int:
        return len(self.sessions)

    def clear(self) -> None:
        self.sessions.clear()
        self._holders.clear()

    def _new_id(self) -> int:
        # A Java int, non-zero and not in use, from the cache's own stream (rig's determinism).
        while True:
            candidate = self.rng.getrandbits(32)
            candidate -= (1 << 32) if candidate & 0x80000000 else 0
            if candidate != 0 and candidate not in self.sessions:
                return candidate

    def _remove(self, session_id: int) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            for key in session.partitions:
                self._unhold(key, session_id)

    def _unhold(self, key: Any, session_id: int) -> None:
        holders = self._holders.get(key)
        if holders is not None:
            holders.pop(session_id, None)
            if not holders:
                del self._holders[key]


class LruSessions:
    """KIP-227 incremental fetch sessions with an LRU cache that ignores privileges."""

    name: ClassVar[str] = "lru"
    description: ClassVar[str] = ("Example plugin: KIP-227 sessions, but a full cache evicts "
                                  "its least recently used session (no privileges, no 120 s "
                                  "protection)")
    api_version: ClassVar[int] = 1
    min_fetch_version: ClassVar[int] = 7

    def new_client(self) -> IncrementalClient:
        return IncrementalClient()

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> LruCache:
        return LruCache(slots, rng)
