"""KIP-227 incremental fetch sessions, as Kafka's FetchSessionHandler and FetchSessionCache do.

Client: a full fetch (0, 0) asks for a session; after that, requests list only partitions that
are new or whose fetch data changed. Cache: `slots` sessions per broker; when full, a stale entry
(idle > 120 s) goes first, else a newcomer may evict the lowest-ranked evictable session if it
ranks at least as high by (privileged, partition count, id) — Kafka's tryEvict, including the
quirk that evictability is decided when a session is touched.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from rig.strategies.fetch_session.base import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    Key,
    SessionContext,
    SessionRequest,
    next_epoch,
)

EVICTION_MS = 120_000  # FetchSessionCache's evictionMs


class IncrementalClient:
    """Kafka's FetchSessionHandler: remembers what the broker's session holds."""

    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = INITIAL_EPOCH
        self.session_partitions: dict[Key, None] = {}

    def next_request(self, partitions: Mapping[Key, None], dirty: Mapping[Key, None],
                     version: int) -> SessionRequest:
        if self.session_id == 0 or self.epoch == INITIAL_EPOCH:
            self.session_partitions = dict(partitions)
            return SessionRequest(self.session_id, INITIAL_EPOCH, full=True)
        listed: dict[Key, None] = {}
        forgotten: dict[Key, None] = {}
        for key in dirty:
            if key in partitions:
                listed[key] = None
                self.session_partitions[key] = None
            elif key in self.session_partitions:
                forgotten[key] = None
                del self.session_partitions[key]
        return SessionRequest(self.session_id, self.epoch, full=False, listed=listed,
                              forgotten=forgotten)

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        if error_code == FETCH_SESSION_ID_NOT_FOUND:
            self.session_id, self.epoch = 0, INITIAL_EPOCH
        elif error_code != NONE:
            self.epoch = INITIAL_EPOCH  # (id, 0): close the session and start over
        elif request.full:
            self.session_id = session_id  # 0 when the broker had no slot: stay on full fetches
            self.epoch = 1 if session_id else INITIAL_EPOCH
        else:
            self.epoch = next_epoch(self.epoch)

    def on_disconnect(self) -> None:
        self.epoch = INITIAL_EPOCH


@dataclass(eq=False, slots=True)
class Session:
    id: int
    privileged: bool
    partitions: dict[Key, None]
    creation_ms: float
    last_used_ms: float
    epoch: int = 1
    changed: dict[Key, None] = field(default_factory=dict)
    evictable_key: tuple[bool, int, int] | None = None


class IncrementalCache:
    """Kafka's FetchSessionCache plus the session half of FetchManager.newContext."""

    def __init__(self, slots: int, rng: random.Random, eviction_ms: int = EVICTION_MS):
        self.slots = slots
        self.rng = rng
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, Session] = {}
        self._holders: dict[Key, dict[int, None]] = {}
        self._evictable_by_all: dict[tuple[bool, int, int], Session] = {}
        self._evictable_by_privileged: dict[tuple[bool, int, int], Session] = {}

    # -- the Protocol ------------------------------------------------------------------------
    def open(self, request: SessionRequest, request_partitions: Mapping[Key, None],
             privileged: bool, now_ms: float) -> SessionContext:
        if request.full:
            if request.session_id != 0:
                self._remove(request.session_id)
            if request.epoch == FINAL_EPOCH:
                return SessionContext(NONE, 0, True, request_partitions)
            session_id, evicted = self._maybe_create(now_ms, privileged, request_partitions)
            return SessionContext(NONE, session_id, True, request_partitions,
                                  created=session_id != 0, evicted=evicted)
        session = self.sessions.get(request.session_id)
        if session is None:
            return SessionContext(FETCH_SESSION_ID_NOT_FOUND, 0, False, {}, changed={})
        if session.epoch != request.epoch:
            return SessionContext(INVALID_FETCH_SESSION_EPOCH, 0, False, {}, changed={})
        for key in request.listed or ():
            if key not in session.partitions:
                session.partitions[key] = None
                self._holders.setdefault(key, {})[session.id] = None
            # A listed partition is new or changed: the next response answers it.
            session.changed[key] = None
        for key in request.forgotten:
            if key in session.partitions:
                del session.partitions[key]
                session.changed.pop(key, None)
                self._unhold(key, session.id)
        session.epoch = next_epoch(session.epoch)
        self._touch(session, now_ms)
        return SessionContext(NONE, session.id, False, session.partitions, session.changed)

    def mark_changed(self, key: Key) -> None:
        for session_id in self._holders.get(key, ()):
            self.sessions[session_id].changed[key] = None

    def sent(self, context: SessionContext, listed: Mapping[Key, None]) -> None:
        if context.changed is None:
            return
        for key in listed:
            context.changed.pop(key, None)

    def occupancy(self) -> int:
        return len(self.sessions)

    def clear(self) -> None:
        self.sessions.clear()
        self._holders.clear()
        self._evictable_by_all.clear()
        self._evictable_by_privileged.clear()

    # -- Kafka's cache mechanics -------------------------------------------------------------
    def _new_id(self) -> int:
        while True:
            candidate = self.rng.getrandbits(32)
            candidate -= (1 << 32) if candidate & 0x80000000 else 0  # a Java int
            if candidate != 0 and candidate not in self.sessions:
                return candidate

    def _maybe_create(self, now_ms: float, privileged: bool,
                      partitions: Mapping[Key, None]) -> tuple[int, tuple[int, ...]]:
        evicted: tuple[int, ...] = ()
        if len(self.sessions) >= self.slots:
            victim = self._try_evict(privileged, (privileged, len(partitions), 0), now_ms)
            if victim is None:
                return 0, ()
            evicted = (victim,)
        session = Session(self._new_id(), privileged, dict(partitions), now_ms, now_ms)
        self.sessions[session.id] = session
        for key in session.partitions:
            self._holders.setdefault(key, {})[session.id] = None
        self._touch(session, now_ms)
        return session.id, evicted

    def _touch(self, session: Session, now_ms: float) -> None:
        if session.evictable_key is not None:
            self._evictable_by_all.pop(session.evictable_key, None)
            self._evictable_by_privileged.pop(session.evictable_key, None)
        session.last_used_ms = now_ms
        key = (session.privileged, len(session.partitions), session.id)
        session.evictable_key = key
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        if not session.privileged or old_enough:
            self._evictable_by_privileged[key] = session
        if old_enough:
            self._evictable_by_all[key] = session

    def _try_evict(self, privileged: bool, key: tuple[bool, int, int],
                   now_ms: float) -> int | None:
        if not self.sessions:
            return None
        stalest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stalest.last_used_ms > self.eviction_ms:
            self._remove(stalest.id)
            return stalest.id
        pool = self._evictable_by_privileged if privileged else self._evictable_by_all
        if not pool:
            return None
        lowest = min(pool)
        if key < lowest:
            return None
        victim = pool[lowest].id
        self._remove(victim)
        return victim

    def _remove(self, session_id: int) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return
        for key in session.partitions:
            self._unhold(key, session_id)
        if session.evictable_key is not None:
            self._evictable_by_all.pop(session.evictable_key, None)
            self._evictable_by_privileged.pop(session.evictable_key, None)

    def _unhold(self, key: Key, session_id: int) -> None:
        holders = self._holders.get(key)
        if holders is not None:
            holders.pop(session_id, None)
            if not holders:
                del self._holders[key]


class Incremental:
    """KIP-227: one full fetch creates a session, then requests list only what changed."""

    name: ClassVar[str] = "incremental"
    description: ClassVar[str] = ("KIP-227 fetch sessions with Kafka's session cache "
                                  "(slots, privileged followers, 120 s eviction)")
    min_fetch_version: ClassVar[int] = 7

    def new_client(self) -> IncrementalClient:
        return IncrementalClient()

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> IncrementalCache:
        return IncrementalCache(slots, rng)
