"""The fast size path for the ZooKeeper-era controller's requests to brokers, LeaderAndIsr,
UpdateMetadata and StopReplica, and their answers: exact body sizes from per-version constants
(memoized) plus what varies (names, the lengths of the replica lists), without encoding. Tests
build messages of the same shape and prove size == len(encode(...)).

Shapes, per partition, in the order the messages carry them:
- LeaderAndIsr: (topic, isr, replicas, adding, removing), each list by its length;
- UpdateMetadata: (topic, isr, replicas, offline);
- StopReplica: (topic, delete);
and the brokers: LeaderAndIsr's live leaders by host name, UpdateMetadata's live brokers as
(host, listener, rack). From v2 (LeaderAndIsr), v5 (UpdateMetadata) and v1 (StopReplica) the
partitions are grouped by topic (each Builder's groupByTopic): a topic's name is counted once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from rig.protocol.leader_and_isr import (
    LEADER_AND_ISR_LIVE_LEADER,
    LEADER_AND_ISR_PARTITION_ERROR,
    LEADER_AND_ISR_PARTITION_STATE,
    LEADER_AND_ISR_REQUEST,
    LEADER_AND_ISR_RESPONSE,
    LEADER_AND_ISR_TOPIC_ERROR,
    LEADER_AND_ISR_TOPIC_STATE,
)
from rig.protocol.primitives import array_prefix_size, string_size, topic_array_size
from rig.protocol.schema import Schema, carries, fixed_size
from rig.protocol.stop_replica import (
    STOP_REPLICA_PARTITION_ERROR,
    STOP_REPLICA_PARTITION_STATE,
    STOP_REPLICA_PARTITION_V0,
    STOP_REPLICA_REQUEST,
    STOP_REPLICA_RESPONSE,
    STOP_REPLICA_TOPIC_STATE,
    STOP_REPLICA_TOPIC_V1,
)
from rig.protocol.update_metadata import (
    UPDATE_METADATA_BROKER,
    UPDATE_METADATA_ENDPOINT,
    UPDATE_METADATA_PARTITION_STATE,
    UPDATE_METADATA_REQUEST,
    UPDATE_METADATA_RESPONSE,
    UPDATE_METADATA_TOPIC_STATE,
)

INT32_BYTES = 4
LeaderAndIsrShape = tuple[str, int, int, int, int]  # topic, isr, replicas, adding, removing
UpdateMetadataShape = tuple[str, int, int, int]  # topic, isr, replicas, offline
BrokerShape = tuple[str, str, str | None]  # host, listener, rack


def _ints(n: int, flex: bool) -> int:
    """An int32 array of `n` elements, its count prefix included."""
    return array_prefix_size(n, flex) + INT32_BYTES * n


@cache
def _fixed(version: int, *schemas: Schema) -> tuple[int, ...]:
    api = schemas[0].api
    api.check_version(version)
    return tuple(fixed_size(s, version) for s in schemas)


def _grouped(flex: bool, topic_fixed: int, counts: dict[str, int]) -> int:
    """The topic array of a grouped version: per topic its fixed part, name, partition count
    (the partitions themselves are counted by the caller)."""
    return topic_array_size(counts.items(), flex, topic_fixed, 0)


# -- LeaderAndIsr --------------------------------------------------------------------------------


def leader_and_isr_request_body_size(version: int, partitions: Sequence[LeaderAndIsrShape],
                                     leaders: Iterable[str]) -> int:
    """len(encode_leader_and_isr_request(...)) for `partitions` and live leaders named so."""
    top, topic, part, leader = _fixed(version, LEADER_AND_ISR_REQUEST, LEADER_AND_ISR_TOPIC_STATE,
                                      LEADER_AND_ISR_PARTITION_STATE, LEADER_AND_ISR_LIVE_LEADER)
    flex = LEADER_AND_ISR_REQUEST.api.is_flexible(version)
    grouped = carries(LEADER_AND_ISR_REQUEST, "topic_states", version)
    moving = carries(LEADER_AND_ISR_PARTITION_STATE, "adding_replicas", version)
    size = top
    counts: dict[str, int] = {}
    for name, isr, replicas, adding, removing in partitions:
        size += part + _ints(isr, flex) + _ints(replicas, flex)
        if moving:
            size += _ints(adding, flex) + _ints(removing, flex)
        if grouped:
            counts[name] = counts.get(name, 0) + 1
        else:
            size += string_size(name, flex)
    size += (_grouped(flex, topic, counts) if grouped
             else array_prefix_size(len(partitions), flex))
    hosts = tuple(leaders)
    return size + array_prefix_size(len(hosts), flex) + sum(
        leader + string_size(h, flex) for h in hosts)


def leader_and_isr_response_body_size(version: int, topics: Iterable[tuple[str, int]]) -> int:
    """len(encode_leader_and_isr_response(...)) answering `topics` (name, partitions): each
    partition named (v0–v4) or under its topic's id (v5+)."""
    top, topic, part = _fixed(version, LEADER_AND_ISR_RESPONSE, LEADER_AND_ISR_TOPIC_ERROR,
                              LEADER_AND_ISR_PARTITION_ERROR)
    flex = LEADER_AND_ISR_RESPONSE.api.is_flexible(version)
    topics = tuple(topics)
    if carries(LEADER_AND_ISR_RESPONSE, "topics", version):
        return top + topic_array_size(topics, flex, topic, part, names=False)
    return top + array_prefix_size(sum(n for _, n in topics), flex) + sum(
        n * (part + string_size(name, flex)) for name, n in topics)


# -- UpdateMetadata ------------------------------------------------------------------------------


def update_metadata_request_body_size(version: int, partitions: Sequence[UpdateMetadataShape],
                                      brokers: Iterable[BrokerShape]) -> int:
    """len(encode_update_metadata_request(...)) for `partitions` and the live brokers, each
    with one endpoint (host, listener) and its rack."""
    top, topic, part, broker, endpoint = _fixed(
        version, UPDATE_METADATA_REQUEST, UPDATE_METADATA_TOPIC_STATE,
        UPDATE_METADATA_PARTITION_STATE, UPDATE_METADATA_BROKER, UPDATE_METADATA_ENDPOINT)
    flex = UPDATE_METADATA_REQUEST.api.is_flexible(version)
    grouped = carries(UPDATE_METADATA_REQUEST, "topic_states", version)
    offline_carried = carries(UPDATE_METADATA_PARTITION_STATE, "offline_replicas", version)
    size = top
    counts: dict[str, int] = {}
    for name, isr, replicas, offline in partitions:
        size += part + _ints(isr, flex) + _ints(replicas, flex)
        if offline_carried:
            size += _ints(offline, flex)
        if grouped:
            counts[name] = counts.get(name, 0) + 1
        else:
            size += string_size(name, flex)
    size += (_grouped(flex, topic, counts) if grouped
             else array_prefix_size(len(partitions), flex))
    v0 = carries(UPDATE_METADATA_BROKER, "v0_host", version)
    listener = carries(UPDATE_METADATA_ENDPOINT, "listener", version)
    rack = carries(UPDATE_METADATA_BROKER, "rack", version)
    live = tuple(brokers)
    size += array_prefix_size(len(live), flex)
    for host, name, rack_id in live:
        size += broker + string_size(host, flex)
        if not v0:
            size += array_prefix_size(1, flex) + endpoint
            size += string_size(name, flex) if listener else 0
        size += string_size(rack_id, flex) if rack else 0
    return size


def update_metadata_response_body_size(version: int) -> int:
    return _fixed(version, UPDATE_METADATA_RESPONSE)[0]


# -- StopReplica ---------------------------------------------------------------------------------


def stop_replica_request_body_size(version: int, partitions: Sequence[tuple[str, bool]]) -> int:
    """len(encode_stop_replica_request(...)) for `partitions` (topic, delete). Before v3 one
    request carries one delete flag: the caller sends one request per flag, as Kafka does."""
    top, v0, v1, topic, part = _fixed(version, STOP_REPLICA_REQUEST, STOP_REPLICA_PARTITION_V0,
                                      STOP_REPLICA_TOPIC_V1, STOP_REPLICA_TOPIC_STATE,
                                      STOP_REPLICA_PARTITION_STATE)
    flex = STOP_REPLICA_REQUEST.api.is_flexible(version)
    if carries(STOP_REPLICA_REQUEST, "ungrouped_partitions", version):
        return top + array_prefix_size(len(partitions), flex) + sum(
            v0 + string_size(name, flex) for name, _ in partitions)
    counts: dict[str, int] = {}
    for name, _ in partitions:
        counts[name] = counts.get(name, 0) + 1
    if carries(STOP_REPLICA_REQUEST, "topics", version):  # v1–v2: partition indexes
        return top + topic_array_size(counts.items(), flex, v1, INT32_BYTES)
    return top + topic_array_size(counts.items(), flex, topic, part)


def stop_replica_response_body_size(version: int, partitions: Sequence[tuple[str, bool]]) -> int:
    """len(encode_stop_replica_response(...)): each partition named, with its error."""
    top, part = _fixed(version, STOP_REPLICA_RESPONSE, STOP_REPLICA_PARTITION_ERROR)
    flex = STOP_REPLICA_RESPONSE.api.is_flexible(version)
    return top + array_prefix_size(len(partitions), flex) + sum(
        part + string_size(name, flex) for name, _ in partitions)
