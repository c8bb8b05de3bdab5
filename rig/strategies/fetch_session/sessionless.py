"""No fetch sessions: every request is a full fetch listing every partition (Fetch ≤ v6, or
session id 0 / epoch −1 from v7 on)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import ClassVar

from rig.strategies.fetch_session.base import (
    FINAL_EPOCH,
    NONE,
    Key,
    SessionContext,
    SessionRequest,
)


class SessionlessClient:
    def next_request(self, partitions: Mapping[Key, None], dirty: Mapping[Key, None],
                     version: int) -> SessionRequest:
        return SessionRequest(session_id=0, epoch=FINAL_EPOCH, full=True)

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        pass

    def on_disconnect(self) -> None:
        pass

    def skip_idle_rounds(self, rounds: int) -> None:
        pass  # nothing to remember between requests


class SessionlessCache:
    """Keeps nothing: each request is answered on its own."""

    def open(self, request: SessionRequest, request_partitions: Mapping[Key, None],
             privileged: bool, now_ms: float) -> SessionContext:
        return SessionContext(NONE, 0, True, request_partitions)

    def mark_changed(self, key: Key) -> None:
        pass

    def sent(self, context: SessionContext, listed: Mapping[Key, None]) -> None:
        pass

    def occupancy(self) -> int:
        return 0

    def skip_idle_rounds(self, session_id: int, rounds: int, last_used_ms: float) -> None:
        pass  # keeps nothing

    def expects(self, session_id: int, epoch: int) -> bool:
        return False  # no sessions: an incremental request is never accepted

    def clear(self) -> None:
        pass


class Sessionless:
    """Every Fetch is full: the request lists every partition, the response answers each."""

    name: ClassVar[str] = "sessionless"
    description: ClassVar[str] = "Full fetches only, as before KIP-227 (Fetch ≤ v6)"
    min_fetch_version: ClassVar[int] = 0

    def new_client(self) -> SessionlessClient:
        return SessionlessClient()

    def new_cache(self, broker: int, slots: int, rng: random.Random) -> SessionlessCache:
        return SessionlessCache()
