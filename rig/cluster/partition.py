"""Partition state: the leader's view of a partition and a follower's fetch position in it."""

from __future__ import annotations

from dataclasses import dataclass, field

TopicPartition = tuple[str, int]


@dataclass(eq=False, slots=True)
class LeaderPartition:
    """A partition as its leader sees it (offsets of the leader's log)."""

    key: TopicPartition
    replicas: tuple[int, ...]
    leader_epoch: int = 0
    log_start_offset: int = 0
    log_end_offset: int = 0
    high_watermark: int = 0
    # The fetch offset each follower sent last: the leader's record of follower LEOs.
    follower_offsets: dict[int, int] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class FetchState:
    """What a follower sends for one partition: where to fetch from, and its own log start."""

    fetch_offset: int = 0
    log_start_offset: int = 0
    current_leader_epoch: int = 0
