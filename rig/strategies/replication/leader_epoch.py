"""Kafka 0.11+: truncate to where the leader says our latest epoch ends (KIP-101), repeating
with older epochs until both sides know the epoch (KIP-279, Kafka 2.0)."""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.replication.base import AskLeader, Decision, FollowerView, TruncateTo

UNDEFINED = -1


class LeaderEpoch:
    name: ClassVar[str] = "leader-epoch"
    description: ClassVar[str] = ("Truncate to the leader's end offset of our latest epoch "
                                  "(KIP-101), walking back epochs as KIP-279 does")

    def on_become_follower(self, view: FollowerView) -> Decision:
        if view.latest_epoch == UNDEFINED:
            # No epoch in our log: nothing to compare, fall back to the high watermark.
            return TruncateTo(min(view.high_watermark, view.log_end_offset))
        return AskLeader(view.latest_epoch)

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        if leader_epoch == UNDEFINED or leader_end_offset == UNDEFINED:
            return TruncateTo(min(view.high_watermark, view.log_end_offset))
        own_epoch, own_end = view.end_offset_for_epoch(leader_epoch)
        if own_epoch == leader_epoch:
            return TruncateTo(min(leader_end_offset, own_end, view.log_end_offset))
        if own_epoch == UNDEFINED:
            # We know no epoch as old as the leader's answer: everything we have is suspect.
            return TruncateTo(min(leader_end_offset, view.log_end_offset))
        # KIP-279: the leader's epoch is unknown to us; ask again about our older one.
        return AskLeader(own_epoch)
