"""The replication Protocol: the truncation decision of a replica that becomes follower.

The model calls `on_become_follower` with what the replica knows; the strategy answers either
"truncate to this offset now" or "ask the leader where epoch E ends" (OffsetsForLeaderEpoch),
then `on_epoch_end` with the answer, until it truncates. A further AskLeader(e) truncates the
replica at once to the end of its epoch e (Kafka's intermediate truncation, KIP-279) and the
next question is about its latest epoch after that cut. On brokers that truncate on fetch
(Kafka 2.8+, KAFKA-10554: rig.cluster.diverging_epoch) an AskLeader is not sent: the replica
fetches with its latest epoch, and a leader's diverging epoch comes to `on_epoch_end` as an answer
would; a further AskLeader(e) then truncates to the end of the replica's epoch e (Kafka's
intermediate truncation) and the next fetch carries e. Invariant: a strategy never asks for a
truncation above the replica's LEO. The model clamps such an offset to the LEO and goes on (it
does not count it as an error); the conformance kit (rig.testing.check_replication) reports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol


@dataclass(frozen=True)
class TruncateTo:
    offset: int


@dataclass(frozen=True)
class AskLeader:
    epoch: int


Decision = TruncateTo | AskLeader


@dataclass(frozen=True)
class FollowerView:
    """What a replica knows about itself when it becomes follower."""

    log_end_offset: int
    high_watermark: int  # after a restart: the checkpointed one
    latest_epoch: int  # −1 when its log has no epoch
    end_offset_for_epoch: Callable[[int], tuple[int, int]]  # own (epoch ≤ e, end offset)


class ReplicationStrategy(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]

    def on_become_follower(self, view: FollowerView) -> Decision: ...

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        """The leader's answer to AskLeader(asked): its largest epoch ≤ asked and where it
        ends (−1, −1 when the leader knows no such epoch)."""
        ...
