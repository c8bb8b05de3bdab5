"""Which of a metadata answer's partitions a client takes: Kafka's Metadata keeps the newest
leader epoch it has seen of each partition (lastSeenLeaderEpochs: from earlier answers, and
from 3.7 a refusal's current leader, KIP-951) and, from 2.2 (KAFKA-7738), takes an answer's
partition only at that epoch or a newer one (Metadata.updateLastSeenEpoch: newEpoch >=
oldEpoch); an older one keeps the cached PartitionInfo. An answer naming no epoch (a partition
the answering broker does not know) is taken as it is. A broker answers from its own metadata
cache, which an UpdateMetadata (or a KRaft delta) may not have reached yet: without the rule, a
client that had learned a new leader went back to the old one.
"""

from __future__ import annotations

from rig.scenario.profiles import profile

__all__ = ["StaleAnswers"]


class StaleAnswers:
    """Tells a metadata answer's partitions to ignore, for a client of release `kafka`."""

    def __init__(self, kafka: str):
        self.checked = profile(kafka).metadata_keeps_newer_epoch

    def ignores(self, answered_epoch: int, seen_epoch: int) -> bool:
        """Whether a partition answered at `answered_epoch` stays as the client knows it, at
        `seen_epoch` (-1: none seen)."""
        return self.checked and 0 <= answered_epoch < seen_epoch
