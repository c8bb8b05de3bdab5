"""KIP-320's fence on fetches (2.1+, Fetch v9+): each partition of a follower's fetch carries the
leader epoch the follower follows (PartitionFetchState.currentLeaderEpoch), each of a consumer's
the leader epoch its metadata names (FetchPosition.currentLeader), and the broker checks it
before reading anything (Partition.checkCurrentLeaderEpoch, called through
localLogWithEpochOrException, before the not-leader check):

- FENCED_LEADER_EPOCH when this broker knows a newer epoch of the partition (leader or
  follower): the follower missed a LeaderAndIsr, the consumer's metadata is stale;
- UNKNOWN_LEADER_EPOCH when the fetch carries an epoch this broker has not heard of yet (the
  follower's LeaderAndIsr arrived first, or the consumer's metadata came from a broker that
  heard before this one did).

The partition is not read, the fetch is answered at once (ReplicaManager.fetchMessages:
errorReadingData), and a parked fetch whose epoch went stale is completed once the batch that
made its broker follower is applied (rig.cluster.delayed_fetch.complete_made_followers), else
by the next change announced to its slot (DelayedFetch.tryComplete: FencedLeaderEpochException
→ forceComplete).
A broker with no replica of the partition, or one not yet told its role after a restart, has
no Partition to check and answers as before (rig.cluster.fetch_server). The follower's side is
rig.cluster.fetcher, the consumer's rig.workload.consumer.

Kafka's fetch session keeps each partition's epoch as last listed (CachedPartition) and checks
every partition of the session on every fetch. Here the epochs a fetch client sent are kept per
slot from the partitions its requests changed (a fetch state's epoch is fixed for its life, so
an epoch that changes is always sent), and the verdicts are recomputed only when this broker's
epochs or the client's changed since the last fetch: a pass over the session per leadership
change, not per fetch. A partition whose epoch this broker never received (its requests lost
with a closed connection, or the broker restarted since) is not checked, as a request without
an epoch is not.
"""

from __future__ import annotations

from rig.cluster.high_watermark import Slot
from rig.cluster.messages import FetchRequestMsg
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
from rig.protocol.errors import FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH

Verdicts = dict[TopicPartition, tuple[int, int]]  # partition → (error, the epoch it was sent)
FIRST_CHECKED_VERSION = 9  # current_leader_epoch is in Fetch v9+
NOTHING: Verdicts = {}


class FetchEpochs:
    """The epochs one broker's fetch clients sent, and which of them it fences."""

    __slots__ = ("_changes", "_seen", "_sent", "_verdicts", "enabled", "replicas")

    def __init__(self, replicas: dict[TopicPartition, Replica], enabled: bool):
        self.replicas = replicas
        self.enabled = enabled  # the broker's release checks epochs (2.1+)
        self._sent: dict[Slot, dict[TopicPartition, int]] = {}
        self._verdicts: dict[Slot, Verdicts] = {}
        self._seen: dict[Slot, int] = {}  # the count of epoch changes each verdict saw
        self._changes = 0

    def changed(self) -> None:
        """An epoch of this broker's replicas changed (a LeaderAndIsr, a restart)."""
        self._changes += 1

    def clear(self) -> None:
        """The process died: what its clients sent went with it."""
        self._sent.clear()
        self._verdicts.clear()
        self._seen.clear()
        self._changes += 1

    def arrived(self, slot: Slot, request: FetchRequestMsg) -> Verdicts:
        """Take in what a fetch sent; its partitions this broker fences now."""
        if not self.enabled or request.version < FIRST_CHECKED_VERSION:
            return NOTHING
        updates = request.updates
        if updates:
            sent = self._sent.setdefault(slot, {})
            for key, state in updates.items():
                epoch = state.current_leader_epoch
                if sent.get(key) != epoch:
                    sent[key] = epoch
                    self._seen.pop(slot, None)  # the client's epoch changed: check again
        return self.fenced(slot, request)

    def fenced(self, slot: Slot, request: FetchRequestMsg) -> Verdicts:
        """The partitions of `request` whose epoch this broker fences, as of now."""
        sent = self._sent.get(slot)
        if not sent:
            return NOTHING
        if self._seen.get(slot) != self._changes:
            self._seen[slot] = self._changes
            verdicts: Verdicts = {}
            for key, epoch in sent.items():
                error = check_current_leader_epoch(self.replicas.get(key), epoch)
                if error:
                    verdicts[key] = (error, epoch)
            self._verdicts[slot] = verdicts
        verdicts = self._verdicts[slot]
        if not verdicts:
            return NOTHING
        listed = request.partitions
        return {key: verdict for key, verdict in verdicts.items() if key in listed}


def check_current_leader_epoch(replica: Replica | None, epoch: int) -> int:
    """Partition.checkCurrentLeaderEpoch: 0, or the error for a fetch sent at `epoch` (−1: none
    sent, as a client that knows no epoch sends, and nothing to check)."""
    if epoch < 0 or replica is None or replica.role is Role.NONE:
        return 0  # no Partition here: the not-leader answer, not an epoch one
    if replica.leader_epoch > epoch:
        return FENCED_LEADER_EPOCH
    if replica.leader_epoch < epoch:
        return UNKNOWN_LEADER_EPOCH
    return 0


__all__ = ["FetchEpochs", "Verdicts", "check_current_leader_epoch"]
