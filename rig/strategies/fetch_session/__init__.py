"""Fetch sessions (KIP-227): how a fetcher and a broker agree on what a Fetch request omits."""

from rig.strategies.fetch_session.base import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    FetchSessionStrategy,
    SessionCache,
    SessionClient,
    SessionContext,
    SessionRequest,
    next_epoch,
)

__all__ = [
    "FETCH_SESSION_ID_NOT_FOUND",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_FETCH_SESSION_EPOCH",
    "NONE",
    "FetchSessionStrategy",
    "SessionCache",
    "SessionClient",
    "SessionContext",
    "SessionRequest",
    "next_epoch",
]
