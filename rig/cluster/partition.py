"""A fetch client's position in one partition: what it sends for it in a Fetch request."""

from __future__ import annotations

from dataclasses import dataclass

TopicPartition = tuple[str, int]


@dataclass(eq=False, slots=True)
class FetchState:
    """What a follower sends for one partition: where to fetch from, and its own log start."""

    fetch_offset: int = 0
    log_start_offset: int = 0
    current_leader_epoch: int = 0
