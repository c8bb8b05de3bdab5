"""The fetch-session Protocols: a client half (in each fetcher) and a cache half (in each broker).

Partitions are opaque hashable keys to a strategy. Collections passed in are insertion-ordered
dicts used as ordered sets, so strategies stay deterministic without sorting. The contracts below
are checked at run time (rig.strategies.guard) and by `rig.testing.check_fetch_session`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

# The error codes a session strategy answers with, re-exported for strategy authors.
from rig.protocol.errors import (  # noqa: F401
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
)
from rig.protocol.session_epochs import (  # noqa: F401  (the epoch rules, for strategy authors)
    FINAL_EPOCH,
    INITIAL_EPOCH,
    MAX_EPOCH,
    advance_epoch,
    next_epoch,
)

Key = Any  # a partition, opaque to strategies; hashable


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
    """The fetcher's half (Kafka's FetchSessionHandler). One per fetcher.

    Contract (KIP-227):
      - `next_request` returns a SessionRequest; an incremental one (full=False) carries
        `listed` (a dict, empty when nothing changed) and names the session id of the last
        successful response, with epoch 1 after the full fetch that created the session, then
        `next_epoch` of the previous epoch after each successful incremental response;
      - after an error response (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) or
        `on_disconnect`, the next request is a full fetch;
      - a client never uses a session id the broker did not give it; it uses no randomness.
    """

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

    # Optional: IdleRoundsClient.


class SessionCache(Protocol):
    """The broker's half (Kafka's FetchManager + FetchSessionCache). One per broker.

    Contract:
      - `open` returns a SessionContext; it never leaves more than `slots` sessions cached
        (`occupancy() <= slots` at all times);
      - a created session has a non-zero id unique among live sessions, drawn from the cache's
        `rng`; `evicted` lists every session removed to make room, so that a client's later
        FETCH_SESSION_ID_NOT_FOUND is explained;
      - an incremental request for an unknown session answers FETCH_SESSION_ID_NOT_FOUND, for a
        known session with another epoch INVALID_FETCH_SESSION_EPOCH; a full request with epoch
        FINAL_EPOCH is sessionless (session id 0, nothing created).
    """

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

    # Optional: IdleRoundsCache.


def summarises_idle_rounds(half: object, methods: tuple[str, ...]) -> bool:
    """Whether `half` (a session client or cache) has `skip_idle_rounds` from a class that also
    has each of `methods`, the calls skipped rounds stand for: defined there or in a class it
    extends. A subclass that overrides one of them (a plugin extending a built-in) but not
    `skip_idle_rounds` does not say what its skipped rounds would have done: every round of it
    is simulated (rig.cluster.coast_begin)."""
    mro = type(half).__mro__
    owner = next((cls for cls in mro if "skip_idle_rounds" in vars(cls)), None)
    return owner is not None and all(
        next((cls for cls in mro if method in vars(cls)), None) in owner.__mro__
        for method in methods)


@runtime_checkable
class IdleRoundsClient(Protocol):
    """Optional for a SessionClient (rig.cluster.coast). With it on both halves, idle fetch
    rounds advance in closed form (the log is the same); without it, every round is
    simulated. A subclass that overrides `next_request`, `on_response` or `on_disconnect` must
    define its own (`summarises_idle_rounds`), else its rounds are all simulated."""

    def skip_idle_rounds(self, rounds: int) -> None:
        """As if `rounds` requests that listed nothing had each been answered without error
        and without change."""
        ...


@runtime_checkable
class IdleRoundsCache(Protocol):
    """Optional for a SessionCache: the broker's half of IdleRoundsClient (the same rule for
    a subclass overriding `open`, `mark_changed` or `sent`)."""

    def skip_idle_rounds(self, session_id: int, rounds: int, last_used_ms: float) -> None:
        """As if session `session_id` had opened `rounds` requests listing nothing, the last
        at `last_used_ms`."""
        ...

    def expects(self, session_id: int, epoch: int) -> bool:
        """Whether an incremental request of `session_id` at `epoch` would be accepted now."""
        ...


class FetchSessionStrategy(Protocol):
    """A kind of fetch sessions (Protocol version 1): builds the client and cache halves.

    `min_fetch_version`: the lowest Fetch version it works with (a variant sending less is
    refused before it runs). The model calls `new_cache(broker, slots, rng)` once per broker
    (slots = max.incremental.fetch.session.cache.slots, rng a stream of its own) and
    `new_client()` once per replica fetcher. `rig.testing.check_fetch_session(cls)` checks the
    contracts of both halves on short simulated runs.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    api_version: ClassVar[int]
    min_fetch_version: ClassVar[int]

    def new_client(self) -> SessionClient: ...

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> SessionCache: ...
