"""Truncation on fetch, the leader's half (Kafka 2.8+ at inter.broker.protocol.version 2.7+,
KAFKA-10554; the Fetch v12 fields of KIP-595): a follower's fetch carries the epoch of the last
record it holds (`last_fetched_epoch`), and the leader checks it against its own log before it
reads. Partition.readRecords (2.8):

- the leader's end offset for that epoch (lastOffsetForLeaderEpoch, as OffsetsForLeaderEpoch
  answers it) is undefined: OFFSET_OUT_OF_RANGE ("Could not determine the end offset of the last
  fetched epoch");
- the leader's largest epoch ≤ the follower's is smaller, or it ends before the fetch offset:
  the follower's log diverges. The partition is answered with no records and
  `diverging_epoch` = (that epoch, its end offset), with the HW and log start as usual, and the
  fetch is answered at once (ReplicaManager.fetchMessages: hasDivergingEpoch);
- otherwise it is read as any fetch.

The follower's fetch offset of a diverging partition is not progress: the leader does not
record it (ReplicaManager.updateFollowerFetchState skips a read result with a diverging epoch,
KAFKA-13141, in 2.8.1 and 3.0; 2.8.0 recorded it).

Kafka checks every partition of an incremental session, not only those the request lists: the
session's CachedPartition keeps each partition's fetch offset and lastFetchedEpoch as last
listed (updateRequestParams), and IncrementalFetchContext.foreachPartition hands all of them
to fetchMessages (FetchSession.scala, 2.8 to 3.9). rig checks the listed ones only, which gives
the same answers without a pass over the session on every fetch: an unlisted partition's
(fetch offset F, epoch E) passed this check when last listed, at a leader that has stayed
leader since (a new leader, or the same one after a leadership elsewhere, reaches the follower
as a LeaderAndIsr that re-adds the partition to its fetcher, which lists it; a follower that
missed it fetches with an old current leader epoch and is answered FENCED_LEADER_EPOCH). While
it stays leader its epoch cache only gains epochs starting at its log end (≥ F) and loses,
at its log start, epochs ending at or before it, so its end offset for E stays ≥ F and its
epoch for E stays E. (Checked by instrumenting the leader to check the unlisted partitions
too: no divergence across tests/properties and every scenario, 2026-11-27.)
"""

from __future__ import annotations

from rig.cluster.messages import FetchRequestMsg
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Role
from rig.cluster.replica_manager import ReplicaManager
from rig.protocol.errors import OFFSET_OUT_OF_RANGE

UNDEFINED = -1
OUT_OF_RANGE = (UNDEFINED, UNDEFINED)  # the answer that is an error, not a diverging epoch


def check(rm: ReplicaManager, request: FetchRequestMsg
          ) -> dict[TopicPartition, tuple[int, int]] | None:
    """The partitions of `request` whose follower log diverges from this leader's: the
    leader's (epoch, end offset) for each, OUT_OF_RANGE where the leader cannot tell; None
    when there is none."""
    if request.version < 12 or request.fetcher.role != "follower":
        return None
    found: dict[TopicPartition, tuple[int, int]] | None = None
    for key, state in request.updates.items():
        fetched = state.last_fetched_epoch
        if fetched == UNDEFINED:
            continue
        replica = rm.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER:
            continue  # answered NOT_LEADER_OR_FOLLOWER
        epoch, end = replica.log.end_offset_for_epoch(fetched,
                                                      rm.config.epoch_end_before_first_known)
        if epoch == UNDEFINED or end == UNDEFINED:
            answer = OUT_OF_RANGE
        elif epoch < fetched or end < state.fetch_offset:
            answer = (epoch, end)
        else:
            continue
        if found is None:
            found = {}
        found[key] = answer
    return found


def answer(request: FetchRequestMsg, rm: ReplicaManager, hws: dict[TopicPartition, int],
           errors: dict[TopicPartition, int]) -> dict[TopicPartition, tuple[int, int]]:
    """What the response says of the diverging partitions of `request`: their diverging
    epochs (returned), HWs and errors (filled in)."""
    diverging: dict[TopicPartition, tuple[int, int]] = {}
    for key, found in (request.diverging or {}).items():
        replica = rm.replicas.get(key)
        if replica is None or replica.role is not Role.LEADER:
            continue  # not leader any more: the read path answers it
        if found == OUT_OF_RANGE:
            errors[key] = OFFSET_OUT_OF_RANGE
        else:
            diverging[key] = found
            hws[key] = replica.high_watermark
    return diverging
