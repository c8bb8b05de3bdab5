"""A fetch client's position in one partition: what it sends for it in a Fetch request."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TopicPartition = tuple[str, int]


def partitions_by_topic(keys: Iterable[TopicPartition]) -> dict[str, int]:
    """How many of `keys` each topic has, topics in first-seen order: the per-topic arrays of
    a request or answer that names partitions."""
    counts: dict[str, int] = {}
    for topic, _ in keys:
        counts[topic] = counts.get(topic, 0) + 1
    return counts


@dataclass(eq=False, slots=True)
class FetchState:
    """What a follower sends for one partition: where to fetch from, its own log start, and
    (Fetch v12+, truncation on fetch) the epoch of the last record it holds."""

    fetch_offset: int = 0
    log_start_offset: int = 0
    current_leader_epoch: int = 0
    last_fetched_epoch: int = -1  # −1: not sent (PartitionFetchState.lastFetchedEpoch = None)
