"""The ISR Protocol: judges followers from what the leader records of their fetches.

The leader calls `on_fetch` while handling a follower's fetch (to decide expansion) and
`out_of_sync` from its periodic `isr-expiration` task every `check_interval_ms` (to decide
shrinking). The leader itself is always in the ISR.

A strategy may also have `on_failed_read(progress, now_ms)`: on a release before 2.4 the leader
calls it for a partition of a follower's fetch it answered with an error (an offset out of range,
a fenced or unknown leader epoch), where Kafka recorded the failed read as a fetch at an unknown
offset (KAFKA-8400). It is optional (the contract's v1 has no such call); without it the failed
read changes nothing, as from 2.4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

# Kafka's lastCaughtUpTimeMs = 0 on a wall clock: never caught up. Simulated time starts at 0,
# so "never" is minus infinity here (0 would read as caught up during the first lag time).
NEVER_CAUGHT_UP = float("-inf")


@dataclass(slots=True)
class FollowerProgress:
    """The leader's record of one follower of one partition."""

    log_end_offset: int = -1  # the last fetch offset it sent (−1: none since leadership began)
    last_caught_up_ms: float = 0.0  # lastCaughtUpTimeMs
    last_fetch_ms: float = 0.0
    last_fetch_leader_leo: int = 0  # the leader's LEO when it handled the previous fetch
    # The follower's broker epoch from its latest fetch (ReplicaState, Fetch v15+; -1: not
    # known): the ISR a KRaft leader proposes carries it (KIP-903, ReplicaState.brokerEpoch)
    broker_epoch: int = -1

    def reset_caught_up(self, leader_leo: int, now_ms: float, last_caught_up_ms: float) -> None:
        """The leader took a new ISR from the controller (Kafka's
        Replica.resetLastCaughtUpTime, called by Partition.makeLeader)."""
        self.last_fetch_leader_leo = leader_leo
        self.last_fetch_ms = now_ms
        self.last_caught_up_ms = last_caught_up_ms

    def record_caught_up_fetch(self, fetch_ms: float, leader_leo: int) -> None:
        """A fetch at `fetch_ms` found the follower at the leader's LEO `leader_leo`. The leader
        records such fetches lazily (an idle partition's fetches change nothing until an append
        or an ISR check asks); a fetch older than the last one recorded, or than the
        controller's last ISR reset, no longer counts."""
        if fetch_ms > self.last_fetch_ms:
            self.last_caught_up_ms = max(self.last_caught_up_ms, fetch_ms)
            self.last_fetch_ms = fetch_ms
            self.last_fetch_leader_leo = leader_leo


class IsrStrategy(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]

    def check_interval_ms(self, lag_time_ms: int) -> int: ...

    def on_fetch(self, progress: FollowerProgress, fetch_offset: int, leader_leo: int,
                 now_ms: float) -> None:
        """Update `progress` for a fetch at `fetch_offset` (before the leader reads)."""
        ...

    def out_of_sync(self, progress: FollowerProgress, leader_leo: int, now_ms: float,
                    lag_time_ms: int) -> bool: ...

    def may_join(self, progress: FollowerProgress, high_watermark: int,
                 epoch_start_offset: int) -> bool: ...


def record_failed_read(strategy: IsrStrategy, progress: FollowerProgress, now_ms: float) -> None:
    """The leader answered a fetch of this follower's partition with an error, on a release that
    records it (KAFKA-8400: before 2.4): the strategy's `on_failed_read`, if it has one."""
    hook = getattr(strategy, "on_failed_read", None)
    if hook is not None:
        hook(progress, now_ms)
