"""Before Kafka 0.11: a new follower truncates its log to its own high watermark.

KIP-101 shows how this loses acknowledged records (the follower's HW lags the leader's by one
round) and lets replicas diverge after a power loss.
"""

from __future__ import annotations

from typing import ClassVar

from rig.strategies.replication.base import Decision, FollowerView, TruncateTo


class HwTruncation:
    name: ClassVar[str] = "hw-truncation"
    description: ClassVar[str] = ("Truncate to the local high watermark on becoming follower "
                                  "(before Kafka 0.11)")

    def on_become_follower(self, view: FollowerView) -> Decision:
        return TruncateTo(min(view.high_watermark, view.log_end_offset))

    def on_epoch_end(self, view: FollowerView, asked: int, leader_epoch: int,
                     leader_end_offset: int) -> Decision:
        return TruncateTo(min(view.high_watermark, view.log_end_offset))
