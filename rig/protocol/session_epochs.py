"""Fetch-session epochs on the wire (KIP-227): what a request's session id and epoch say, and
how the epoch advances. Shared by the session strategies and by readers of the event log."""

from __future__ import annotations

from typing import Final

INITIAL_EPOCH: Final = 0  # with session id 0: a full fetch asking for a new session
FINAL_EPOCH: Final = -1  # with session id 0: a sessionless full fetch
MAX_EPOCH: Final = 2**31 - 1


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch`: sessions start at 1 and wrap from 2^31−1 back to 1."""
    return 1 if epoch >= MAX_EPOCH else epoch + 1


def advance_epoch(epoch: int, rounds: int) -> int:
    """`next_epoch` applied `rounds` times, in O(1)."""
    return (epoch - 1 + rounds) % MAX_EPOCH + 1 if rounds else epoch
