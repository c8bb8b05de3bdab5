"""Kafka 0.11 to 1.1: ask the leader once where our latest epoch ends, and truncate there.

ReplicaFetcherThread.maybeTruncate (0.11–1.1) with OffsetsForLeaderEpoch v0, whose answer is an
offset only: undefined → truncate to the own high watermark; at or past our log end → keep the
log; otherwise truncate to the leader's offset. There is no second question: a leader that
never had our epoch answers with the start of its next epoch, and the follower keeps records
the leader does not have below that offset. That is KAFKA-6361's divergence after fast
back-and-forth fail-overs, which KIP-279 (Kafka 2.0, the `leader-epoch` strategy) fixes.
"""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.replication.base import Decision, FollowerView, TruncateTo
from rig.strategies.replication.leader_epoch import UNDEFINED, LeaderEpoch


class LeaderEpochOnce(LeaderEpoch):
    """The first question is KIP-101's, as in `leader-epoch`; only the answer is read another
    way."""

    name: ClassVar[str] = "leader-epoch-once"
    description: ClassVar[str] = ("Truncate to the leader's end offset of our latest epoch, "
                                  "asked once (KIP-101 as in Kafka 0.11–1.1, KAFKA-6361)")

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        # v0 carries no epoch: `leader_epoch` is not looked at, only the offset.
        if leader_end_offset == UNDEFINED:
            return TruncateTo(min(view.high_watermark, view.log_end_offset))
        return TruncateTo(min(leader_end_offset, view.log_end_offset))
