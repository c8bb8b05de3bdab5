"""The fetch-session Protocols: a client half (in each fetcher) and a cache half (in each broker).

Partitions are opaque hashable keys to a strategy. Collections passed in are insertion-ordered
dicts used as ordered sets, so strategies stay deterministic without sorting.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

NONE = 0
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71

INITIAL_EPOCH = 0  # with session id 0: a full fetch asking for a new session
FINAL_EPOCH = -1  # with session id 0: a sessionless full fetch
MAX_EPOCH = 2**31 - 1

Key = Any  # a partition, opaque to strategies; hashable


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch`: sessions start at 1 and wrap from 2^31−1 back to 1."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@dataclass(slots=True)
class SessionRequest:
    """What the client half decided for one Fetch request.

    `full`: the request lists every partition of the fetcher, and `listed` is None.
    Otherwise `listed` holds the partitions the request carries (new to the session, or whose
    fetch data changed) and `forgotten` those the session should drop.
    """

    session_id: int
    epoch: int
    full: bool
    listed: dict[Key, None] | None = None
    forgotten: dict[Key, None] = field(default_factory=dict)


@dataclass(slots=True)
class SessionContext:
    """The broker's reading of a request's session fields.

    `partitions` are the partitions this fetch covers (for a full fetch the request's; for an
    incremental one the whole session's) and `changed` are those an incremental response must
    list even without records. `session_id` is what the response carries.
    """

    error_code: int
    session_id: int
    full: bool
    partitions: Mapping[Key, None]
    changed: dict[Key, None] | None = None  # None for full: a full response lists everything
    created: bool = False
    evicted: tuple[int, ...] = ()


class SessionClient(Protocol):
    """The fetcher's half (Kafka's FetchSessionHandler). One per fetcher."""

    def next_request(self, partitions: Mapping[Key, None], dirty: Mapping[Key, None],
                     version: int) -> SessionRequest:
        """Decide the session fields and partitions of the next request.

        `partitions`: everything the fetcher fetches now; `dirty`: partitions added, removed or
        whose fetch data changed since the last request was sent.
        """
        ...

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        """Take the response's top-level error and session id into account."""
        ...

    def on_disconnect(self) -> None:
        """The connection or the leader went away: the next request starts over."""
        ...


class SessionCache(Protocol):
    """The broker's half (Kafka's FetchManager + FetchSessionCache). One per broker."""

    def open(self, request: SessionRequest, request_partitions: Mapping[Key, None],
             privileged: bool, now_ms: float) -> SessionContext:
        """Interpret a request: resolve or create its session, or answer with an error."""
        ...

    def mark_changed(self, key: Key) -> None:
        """A partition's high watermark, log start or error changed: sessions holding it must
        list it in their next incremental response."""
        ...

    def sent(self, context: SessionContext, listed: Mapping[Key, None]) -> None:
        """A response for `context` listed `listed`; those are no longer changed."""
        ...

    def occupancy(self) -> int:
        """Sessions in the cache now."""
        ...

    def clear(self) -> None:
        """The broker restarted: every session is gone."""
        ...


class FetchSessionStrategy(Protocol):
    """A kind of fetch sessions: builds the client and cache halves."""

    name: ClassVar[str]
    description: ClassVar[str]
    min_fetch_version: ClassVar[int]

    def new_client(self) -> SessionClient: ...

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> SessionCache: ...
