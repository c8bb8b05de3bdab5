"""KIP-951 (Kafka 3.7): a broker that refuses a client's partition because it does not lead it
names the leader it knows, so the client need not ask for metadata first. Produce v10+ answers
NOT_LEADER_OR_FOLLOWER so, Fetch v16+ NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH; either
response also carries the NodeEndpoints of those leaders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rig.cluster.metadata_cache import MetadataCache
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica, Role
from rig.protocol.errors import FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER


@dataclass(frozen=True, slots=True)
class CurrentLeaders:
    """Each refused partition's leader and leader epoch as the broker knows them, and the live
    brokers among those leaders (the response's NodeEndpoints)."""

    leaders: dict[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    nodes: tuple[int, ...] = ()


NO_LEADERS = CurrentLeaders()


def current_leaders(replicas: Mapping[TopicPartition, Replica], cache: MetadataCache,
                    refused: Iterable[TopicPartition]) -> CurrentLeaders:
    """KafkaApis.getCurrentLeader for each of `refused`: the leader and epoch of the replica
    the broker hosts, if any, else of its metadata cache; a partition it knows no leader of
    (-1, -1) is left out, as the response's default leaves it. A leader's endpoint goes with
    it if the cache has that broker alive (getAliveBrokerNode)."""
    leaders: dict[TopicPartition, tuple[int, int]] = {}
    for key in refused:
        replica = replicas.get(key)
        if replica is not None and replica.role is not Role.NONE:
            leader = (replica.leader, replica.leader_epoch)
        else:
            leader = (cache.leaders.get(key, -1), cache.epochs.get(key, -1))
        if leader != (-1, -1):
            leaders[key] = leader
    if not leaders:
        return NO_LEADERS
    return CurrentLeaders(leaders, tuple(sorted({leader for leader, _ in leaders.values()
                                                 if leader in cache.alive})))


FETCH_CURRENT_LEADER_VERSION = 16  # FetchResponse v16 (KIP-951, Kafka 3.7)
_REFUSED_FETCH = frozenset({NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH})


def fetch_current_leaders(version: int, errors: Mapping[TopicPartition, int],
                          replicas: Mapping[TopicPartition, Replica],
                          cache: MetadataCache) -> CurrentLeaders:
    """KafkaApis.handleFetchRequest's processResponseCallback: from v16, each partition answered
    NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH names its current leader (a follower's fetch
    too, though only clients read it)."""
    if version < FETCH_CURRENT_LEADER_VERSION:
        return NO_LEADERS
    refused = [key for key, error in errors.items() if error in _REFUSED_FETCH]
    return current_leaders(replicas, cache, refused) if refused else NO_LEADERS
