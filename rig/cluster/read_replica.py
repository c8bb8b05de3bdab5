"""Fetch from follower (KIP-392, Kafka 2.4+; docs/kafka.md §13): which replica a consumer should
read a partition from, and which replicas may serve a consumer's fetch.

The leader answers a consumer's fetch with a preferred read replica when `replica.selector.class`
is set: Kafka's ReplicaManager.findPreferredReadReplica builds one view per candidate replica and
asks the selector (org.apache.kafka.common.replica.RackAwareReplicaSelector) to choose. A
preferred replica that is the leader itself is not sent ("we don't want to send it out with the
FetchResponse"), so the consumer stays. A follower serves a consumer's fetch only when the request
carries client metadata (Fetch v11+: KafkaApis builds a ClientMetadata from rack_id for v11+, and
FetchParams.fetchOnlyLeader is isFromFollower || (isFromConsumer && clientMetadata.isEmpty));
followers never fetch from followers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rig.cluster.messages import FetchRequestMsg
from rig.cluster.replica import Replica, Role

RACK_AWARE = "rack-aware"
FETCH_FROM_FOLLOWER_VERSION = 11  # the first Fetch version with rack_id and preferred_read_replica


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """Kafka's ReplicaView: a replica's endpoint (broker, rack), its LEO and how long ago it was
    last caught up (0 for the leader)."""

    broker: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: float


def _comparator(view: ReplicaView) -> tuple[int, float, int]:
    """ReplicaView.comparator(): by LEO, then by the smaller time since last caught up. Kafka takes
    `max` of a HashSet, so a full tie has no defined winner there; rig picks the lowest broker id
    (deterministic runs)."""
    return (view.log_end_offset, -view.time_since_last_caught_up_ms, -view.broker)


def rack_aware_select(client_rack: str, leader: ReplicaView,
                      replicas: Iterable[ReplicaView]) -> ReplicaView:
    """RackAwareReplicaSelector.select: no client rack → the leader; no replica in the client's
    rack → the leader; the leader in that rack → the leader; else the most caught-up replica of
    that rack."""
    if not client_rack:
        return leader
    same_rack = [view for view in replicas if view.rack == client_rack]
    if not same_rack:
        return leader
    if leader in same_rack:
        return leader
    return max(same_rack, key=_comparator)


def find_preferred_read_replica(replica: Replica, client_rack: str, fetch_offset: int,
                                now_ms: float, rack_of: Callable[[int], str | None]
                                ) -> int | None:
    """ReplicaManager.findPreferredReadReplica at the leader of `replica`, for a consumer fetch
    at `fetch_offset`: the broker to read from instead, or None (read here).

    Candidates are the leader and each remote replica in the ISR whose LEO ≥ the fetch offset ≥
    its log start (current Kafka excludes replicas outside the ISR, "as the follower may lag
    behind"; 2.4 filtered on the offsets only). rig does not track a follower's log start at the
    leader (retention runs alike on every replica), so the leader's own log start stands for it.
    """
    if replica.role is not Role.LEADER:
        return None  # partition.leaderIdIfLocal: only a leader redirects
    log_start = replica.log.log_start_offset
    views = []
    for broker, progress in sorted(replica.followers.items()):
        if (broker in replica.isr and progress.log_end_offset >= fetch_offset
                and log_start <= fetch_offset):
            views.append(ReplicaView(broker, rack_of(broker), progress.log_end_offset,
                                     now_ms - progress.last_caught_up_ms))
    leader = ReplicaView(replica.broker, rack_of(replica.broker), replica.leo, 0.0)
    views.append(leader)
    chosen = rack_aware_select(client_rack, leader, views)
    return None if chosen == leader else chosen.broker


def preferred_read_replicas(selector: str, request: FetchRequestMsg,
                            replicas: Mapping[tuple[str, int], Replica],
                            pending: Iterable[tuple[str, int]],
                            offset_of: Callable[[Replica], int], now_ms: float,
                            rack_of: Callable[[int], str | None]) -> dict[tuple[str, int], int]:
    """The partitions of one consumer fetch that go to another replica, with that broker
    (ReplicaManager.readFromLog asks findPreferredReadReplica for each partition it reads;
    only a v11+ fetch carries the ClientMetadata, and only with a replica selector set).

    The leader looks at the partitions whose position the request sets and those it would read
    (`pending`); rig's leader does not walk the others on every fetch
    (rig.cluster.replica_manager), so an idle partition is redirected at its next change."""
    if (request.fetcher.role != "consumer" or request.version < FETCH_FROM_FOLLOWER_VERSION
            or selector != RACK_AWARE or not request.rack_id):
        return {}
    chosen: dict[tuple[str, int], int] = {}
    for key in dict.fromkeys((*request.updates, *pending)):
        replica = replicas.get(key)
        if replica is None or key not in request.partitions:
            continue
        offset = offset_of(replica)
        if offset < 0:
            continue
        broker = find_preferred_read_replica(replica, request.rack_id, offset, now_ms, rack_of)
        if broker is not None:
            chosen[key] = broker
    return chosen


def serves_consumer(replica: Replica | None, version: int, rack_id: str) -> bool:
    """Whether this broker's `replica` may answer a consumer's fetch of `version`: its leader
    always; a follower only for Fetch v11+ (a request with client metadata) from a consumer with
    a client.rack. (Kafka serves any v11+ consumer at a follower, and one that reached a former
    leader stays there until its metadata refreshes; rig sends a consumer without a client.rack
    NOT_LEADER_OR_FOLLOWER as before, so runs without racked clients are unchanged.)"""
    if replica is None:
        return False
    return replica.role is Role.LEADER or (
        replica.role is Role.FOLLOWER and version >= FETCH_FROM_FOLLOWER_VERSION
        and bool(rack_id))


def answers(request: FetchRequestMsg, replica: Replica | None) -> bool:
    """Whether a broker answers `request` for its `replica`: as the leader, or as a follower
    for a racked consumer's v11+ fetch (serves_consumer)."""
    if request.fetcher.role == "consumer":
        return serves_consumer(replica, request.version, request.rack_id)
    return replica is not None and replica.role is Role.LEADER
