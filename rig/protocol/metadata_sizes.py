"""The fast size path for Metadata as a producer or consumer sends it and a broker answers it:
exact body sizes from per-version constants (memoized) plus the strings and arrays, without
encoding. `materialize_metadata` builds messages of the same shape, so tests prove
size == len(encode(materialize(...))).

An answer's shape: its brokers as (host, rack), the cluster id, and per topic its name and, per
partition, the lengths of its replica, ISR and offline-replica lists (every other field of a
partition is fixed-width).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from rig.protocol.apis import METADATA
from rig.protocol.metadata import (
    METADATA_REQUEST,
    METADATA_REQUEST_TOPIC,
    METADATA_RESPONSE,
    METADATA_RESPONSE_BROKER,
    METADATA_RESPONSE_PARTITION,
    METADATA_RESPONSE_TOPIC,
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from rig.protocol.primitives import array_prefix_size, string_size
from rig.protocol.schema import Schema, carries, fixed_size

BrokerShape = tuple[str, str | None]  # (host, rack)
PartitionShape = tuple[int, int, int]  # (replicas, ISR, offline replicas): list lengths
TopicShape = tuple[str, Sequence[PartitionShape]]
_INT32 = 4


@cache
def _constants(version: int) -> tuple[bool, int, int, int, int, int, int, bool, bool, bool]:
    """(flexible, request, request topic, response, broker, topic, partition's fixed bytes;
    whether brokers carry a rack, the answer a cluster id, partitions offline replicas)."""
    METADATA.check_version(version)
    return (METADATA.is_flexible(version), fixed_size(METADATA_REQUEST, version),
            fixed_size(METADATA_REQUEST_TOPIC, version), fixed_size(METADATA_RESPONSE, version),
            fixed_size(METADATA_RESPONSE_BROKER, version),
            fixed_size(METADATA_RESPONSE_TOPIC, version),
            fixed_size(METADATA_RESPONSE_PARTITION, version),
            carries(METADATA_RESPONSE_BROKER, "rack", version),
            carries(METADATA_RESPONSE, "cluster_id", version),
            carries(METADATA_RESPONSE_PARTITION, "offline_replicas", version))


def metadata_request_body_size(version: int, topics: Iterable[str]) -> int:
    """len(encode_metadata_request(...)) naming `topics`."""
    flex, top, topic = _constants(version)[:3]
    names = tuple(topics)
    return (top + array_prefix_size(len(names), flex)
            + sum(topic + string_size(name, flex) for name in names))


def _ints(n: int, flex: bool) -> int:
    return array_prefix_size(n, flex) + n * _INT32


def metadata_response_body_size(version: int, brokers: Iterable[BrokerShape],
                                cluster_id: str | None, topics: Iterable[TopicShape]) -> int:
    """len(encode_metadata_response(...)) listing `brokers` and answering `topics`."""
    flex, _, _, top, broker, topic, partition, racks, has_cluster_id, offline = _constants(
        version)
    brokers = tuple(brokers)
    topics = tuple(topics)
    size = top + array_prefix_size(len(brokers), flex) + array_prefix_size(len(topics), flex)
    if has_cluster_id:
        size += string_size(cluster_id, flex)
    for host, rack in brokers:
        size += broker + string_size(host, flex) + (string_size(rack, flex) if racks else 0)
    for name, partitions in topics:
        size += topic + string_size(name, flex) + array_prefix_size(len(partitions), flex)
        for replicas, isr, offline_replicas in partitions:
            size += partition + _ints(replicas, flex) + _ints(isr, flex)
            if offline:
                size += _ints(offline_replicas, flex)
    return size


# -- materializing -------------------------------------------------------------------------------
# Placeholder values are fixed and arbitrary; only their sizes matter.


def materialize_metadata(brokers: Iterable[BrokerShape], cluster_id: str | None,
                         topics: Iterable[TopicShape]) -> tuple[MetadataRequest,
                                                                MetadataResponse]:
    brokers = tuple(brokers)
    topics = tuple(topics)
    request = MetadataRequest(tuple(MetadataRequestTopic(name=name) for name, _ in topics))
    response = MetadataResponse(
        brokers=tuple(MetadataResponseBroker(i, host, 9092, rack)
                      for i, (host, rack) in enumerate(brokers)),
        cluster_id=cluster_id, controller_id=1,
        topics=tuple(MetadataResponseTopic(0, name, bytes(range(16)), False, tuple(
            MetadataResponsePartition(0, i, 1, 3, tuple(range(r)), tuple(range(s)),
                                      tuple(range(o)))
            for i, (r, s, o) in enumerate(partitions)))
                     for name, partitions in topics))
    return request, response


def schemas() -> tuple[Schema, ...]:
    """Every struct description here, for tests that check the descriptions themselves."""
    return (METADATA_REQUEST, METADATA_REQUEST_TOPIC, METADATA_RESPONSE, METADATA_RESPONSE_BROKER,
            METADATA_RESPONSE_TOPIC, METADATA_RESPONSE_PARTITION)
