"""The client half of KIP-227 sessions: Kafka's FetchSessionHandler. A full fetch (0, 0) asks
for a session; after that a request lists only the partitions that are new or whose fetch data
changed (the fetcher's `dirty`), and forgets those it dropped
(rig.strategies.fetch_session.incremental holds the broker's half)."""

from __future__ import annotations

from collections.abc import Mapping

from rig.strategies.fetch_session.base import (
    FETCH_SESSION_ID_NOT_FOUND,
    INITIAL_EPOCH,
    NONE,
    Key,
    SessionRequest,
    advance_epoch,
    next_epoch,
)


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
        elif session_id == 0:
            # The broker closed the session (it had no partitions left): FetchSessionHandler
            # goes back to (0, 0), a full fetch asking for a new one.
            self.session_id, self.epoch = 0, INITIAL_EPOCH
        else:
            self.epoch = next_epoch(self.epoch)

    def on_disconnect(self) -> None:
        self.epoch = INITIAL_EPOCH

    def skip_idle_rounds(self, rounds: int) -> None:
        """`rounds` incremental requests answered without error or change: the epoch moves."""
        self.epoch = advance_epoch(self.epoch, rounds)
