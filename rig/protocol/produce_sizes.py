"""The fast size path for Produce: exact request and response body sizes from a *shape*, without
encoding: per-version constants worked out once from the message description, then arithmetic per
topic and partition. `materialize_*` builds a message of a shape, so tests prove
size(shape) == len(encode(materialize(shape))).

The request's shape is the records bytes of each partition (Batch.size: a v2 record batch or a
legacy message set, whichever the batch holds); transactional_id is null (rig's producers are not
transactional). The response's is the partitions answered per topic: every field of a partition
is fixed-width once record_errors is empty, error_message null and the v10+ tagged fields
default, which is what a broker sends for an append that succeeded or failed as a whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from rig.errors import ProtocolError
from rig.protocol.apis import PRODUCE
from rig.protocol.errors import NOT_LEADER_OR_FOLLOWER
from rig.protocol.primitives import (
    RecordsLength,
    array_prefix_size,
    bytes_size,
    string_size,
    topic_array_size,
)
from rig.protocol.produce import (
    PARTITION_PRODUCE_DATA,
    PARTITION_PRODUCE_RESPONSE,
    PRODUCE_LEADER_ID_AND_EPOCH,
    PRODUCE_NODE_ENDPOINT,
    PRODUCE_REQUEST,
    PRODUCE_RESPONSE,
    TOPIC_PRODUCE_DATA,
    TOPIC_PRODUCE_RESPONSE,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from rig.protocol.schema import carries, fixed_size
from rig.protocol.sizes import topic_id
from rig.protocol.tagged import field_tag, node_endpoints_size, tagged_struct_size

_NODE_ENDPOINTS_TAG = field_tag(PRODUCE_RESPONSE, "node_endpoints")


@dataclass(frozen=True, slots=True)
class ProduceRequestShape:
    version: int
    topics: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (topic, records bytes per partition)


@dataclass(frozen=True, slots=True)
class ProduceResponseShape:
    version: int
    topics: tuple[tuple[str, int], ...] = ()  # (topic, partitions answered)
    current_leaders: int = 0  # partitions answered with a current leader (v10+, KIP-951)
    node_endpoints: tuple[NodeEndpoint, ...] = ()  # (v10+, KIP-951)


@dataclass(frozen=True, slots=True)
class _Constants:
    flexible: bool
    top: int  # fixed part of the body, a null transactional_id (v3+) included
    topic: int  # fixed part of one topic (its v13+ id included)
    names: bool  # topics go by name (≤ v12), not by id
    partition: int  # fixed part of one partition: all but its records (request), all (response)


@cache
def _request_constants(version: int) -> _Constants:
    PRODUCE.check_version(version)
    flexible = PRODUCE.is_flexible(version)
    top = fixed_size(PRODUCE_REQUEST, version)
    if carries(PRODUCE_REQUEST, "transactional_id", version):
        top += string_size(None, flexible)
    return _Constants(flexible, top, fixed_size(TOPIC_PRODUCE_DATA, version),
                      carries(TOPIC_PRODUCE_DATA, "name", version),
                      fixed_size(PARTITION_PRODUCE_DATA, version))


@cache
def _response_constants(version: int) -> _Constants:
    PRODUCE.check_version(version)
    flexible = PRODUCE.is_flexible(version)
    partition = fixed_size(PARTITION_PRODUCE_RESPONSE, version)
    if carries(PARTITION_PRODUCE_RESPONSE, "record_errors", version):  # v8+: [] and null
        partition += array_prefix_size(0, flexible) + string_size(None, flexible)
    return _Constants(flexible, fixed_size(PRODUCE_RESPONSE, version),
                      fixed_size(TOPIC_PRODUCE_RESPONSE, version),
                      carries(TOPIC_PRODUCE_RESPONSE, "name", version), partition)


@cache
def _leader_constants(version: int) -> tuple[int, int, bool]:
    """A partition's current_leader when sent, a node endpoint's fixed part, and whether the
    version carries node_endpoints (v10+, both tagged: KIP-951)."""
    return (tagged_struct_size(PARTITION_PRODUCE_RESPONSE, "current_leader",
                               PRODUCE_LEADER_ID_AND_EPOCH, version),
            fixed_size(PRODUCE_NODE_ENDPOINT, version),
            carries(PRODUCE_RESPONSE, "node_endpoints", version))


def produce_request_body_size(version: int,
                              topics: Iterable[tuple[str, Iterable[int]]]) -> int:
    """len(encode_produce_request(...)) of a request carrying, per topic, one batch per
    partition of the given records bytes. O(partitions)."""
    c = _request_constants(version)
    flex = c.flexible
    topics = tuple(topics)
    size = c.top + array_prefix_size(len(topics), flex)
    for name, records in topics:
        n = 0
        for length in records:
            size += bytes_size(length, flex)
            n += 1
        size += c.topic + array_prefix_size(n, flex) + n * c.partition
        if c.names:
            size += string_size(name, flex)
    return size


def produce_response_body_size(version: int, topics: Iterable[tuple[str, int]],
                               current_leaders: int = 0,
                               node_endpoints: Iterable[NodeEndpoint] = ()) -> int:
    """len(encode_produce_response(...)) answering `topics` (name, partitions), of which
    `current_leaders` name the partition's current leader, with `node_endpoints` (KIP-951: a
    broker sends them with NOT_LEADER_OR_FOLLOWER from v10; an older version carries neither).
    O(topics + endpoints)."""
    c = _response_constants(version)
    size = c.top + topic_array_size(topics, c.flexible, c.topic, c.partition, c.names)
    if current_leaders or node_endpoints:
        leader, endpoint, endpoints = _leader_constants(version)
        size += current_leaders * leader
        node_endpoints = tuple(node_endpoints)
        if endpoints and node_endpoints:
            size += node_endpoints_size(_NODE_ENDPOINTS_TAG, endpoint, node_endpoints)
    return size


def request_shape_size(shape: ProduceRequestShape) -> int:
    return produce_request_body_size(shape.version, shape.topics)


def response_shape_size(shape: ProduceResponseShape) -> int:
    return produce_response_body_size(shape.version, shape.topics, shape.current_leaders,
                                      shape.node_endpoints)


# -- materializing -------------------------------------------------------------------------------
# Placeholder values are fixed and arbitrary; only their sizes matter.


def materialize_produce_request(shape: ProduceRequestShape, acks: int = -1,
                                timeout_ms: int = 30_000) -> ProduceRequest:
    PRODUCE.check_version(shape.version)
    if any(n < 0 for _, records in shape.topics for n in records):
        raise ProtocolError(f"ProduceRequestShape: records bytes must be ≥ 0: {shape}")
    return ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=tuple(
        TopicProduceData(name=name, topic_id=topic_id(name), partition_data=tuple(
            PartitionProduceData(index=i, records=RecordsLength(n))
            for i, n in enumerate(records)))
        for name, records in shape.topics))


def materialize_produce_response(shape: ProduceResponseShape) -> ProduceResponse:
    PRODUCE.check_version(shape.version)
    if any(n < 0 for _, n in shape.topics):
        raise ProtocolError(f"ProduceResponseShape: partition counts must be ≥ 0: {shape}")
    leaders = iter(range(shape.current_leaders))  # the first partitions carry one
    return ProduceResponse(responses=tuple(
        TopicProduceResponse(name=name, topic_id=topic_id(name), partition_responses=tuple(
            PartitionProduceResponse(index=i, base_offset=1000 * i, log_start_offset=0)
            if next(leaders, None) is None else PartitionProduceResponse(
                index=i, error_code=NOT_LEADER_OR_FOLLOWER, base_offset=-1,
                current_leader=LeaderIdAndEpoch(3, 17))
            for i in range(n)))
        for name, n in shape.topics), node_endpoints=shape.node_endpoints)
