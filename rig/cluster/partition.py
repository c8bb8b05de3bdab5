"""A fetch client's position in one partition: what it sends for it in a Fetch request."""

from __future__ import annotations

from dataclasses import dataclass

TopicPartition = tuple[str, int]


@dataclass(eq=False, slots=True)
class FetchState:
    """What a follower sends for one partition: where to fetch from, its own log start, and
    (Fetch v12+, truncation on fetch) the epoch of the last record it holds."""

    fetch_offset: int = 0
    log_start_offset: int = 0
    current_leader_epoch: int = 0
    last_fetched_epoch: int = -1  # −1: not sent (PartitionFetchState.lastFetchedEpoch = None)
