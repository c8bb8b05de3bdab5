"""The fast size path: exact Fetch body and header sizes from a *shape*, without encoding.

A shape holds only what decides the size; partitions that differ in nothing size-relevant are a
count, so a 500-partition idle response costs one multiplication. `materialize_*` builds a
message of a shape, so tests prove size(shape) == len(encode(materialize(shape))).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache, lru_cache

from rig.errors import ProtocolError
from rig.protocol.apis import FETCH
from rig.protocol.fetch_request import (
    FETCH_PARTITION,
    FETCH_REQUEST,
    FETCH_TOPIC,
    FORGOTTEN_TOPIC,
    REPLICA_STATE,
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ForgottenTopic,
)
from rig.protocol.fetch_response import (
    ABORTED_TRANSACTION,
    EPOCH_END_OFFSET,
    FETCH_RESPONSE,
    LEADER_ID_AND_EPOCH,
    NODE_ENDPOINT,
    RESPONSE_PARTITION,
    RESPONSE_TOPIC,
    SNAPSHOT_ID,
    AbortedTransaction,
    EpochEndOffset,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    LeaderIdAndEpoch,
    NodeEndpoint,
    SnapshotId,
)
from rig.protocol.fetch_versions import check_version, is_flexible
from rig.protocol.header import api_request_header_size, api_response_header_size
from rig.protocol.primitives import (
    INT32,
    RecordsLength,
    array_prefix_size,
    bytes_size,
    string_size,
    tagged_field_size,
)
from rig.protocol.schema import carries, fixed_size
from rig.protocol.tagged import field_tag, node_endpoints_size, tagged_struct_size

# -- shapes --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestShape:
    """What decides a request body's size. Partitions never carry replica_directory_id or
    the v18 high_watermark (only KRaft's own quorum fetches set them); every other partition
    field is fixed-width."""

    version: int
    topics: tuple[tuple[str, int], ...] = ()  # (topic name, partitions listed)
    forgotten: tuple[tuple[str, int], ...] = ()  # (topic name, partitions forgotten); v7+
    rack_id: str = ""  # v11+
    cluster_id: str | None = None  # v12+, tag 0
    follower: bool = True  # replica_id ≥ 0: from v15 that is the tagged ReplicaState


@dataclass(frozen=True, slots=True)
class ResponsePartitionShape:
    """A response partition that is not idle. error_code, high watermark, offsets and
    preferred_read_replica are fixed-width, so they are not part of a shape."""

    records: int = 0  # bytes of records returned
    aborted: int = 0  # aborted transactions listed; 0 is sent as a null array
    diverging_epoch: bool = False  # the v12+ tagged fields that are set
    current_leader: bool = False
    snapshot_id: bool = False


@dataclass(frozen=True, slots=True)
class ResponseTopicShape:
    topic: str
    idle: int = 0  # partitions with no records, no aborted list and no tagged field
    partitions: tuple[ResponsePartitionShape, ...] = ()  # the others, after the idle ones


@dataclass(frozen=True, slots=True)
class ResponseShape:
    version: int
    topics: tuple[ResponseTopicShape, ...] = ()
    node_endpoints: tuple[NodeEndpoint, ...] = ()  # v16+, tag 0; rare, so kept whole


# -- per-version constants, all derived from the message description -----------------------------


@dataclass(frozen=True, slots=True)
class _RequestConstants:
    flexible: bool
    top: int  # fixed part of the body
    topic: int  # fixed part of one topic
    names: bool  # topics go by name (≤ v12), not by id
    partition: int  # one listed partition
    forgotten: bool  # forgotten_topics exists (v7+)
    forgotten_topic: int  # fixed part of one forgotten topic
    forgotten_names: bool
    rack: bool
    cluster_id: bool
    replica_state: int  # bytes of the ReplicaState tagged field, 0 before v15


@cache
def _request_constants(version: int) -> _RequestConstants:
    check_version(version)
    return _RequestConstants(
        flexible=is_flexible(version),
        top=fixed_size(FETCH_REQUEST, version),
        topic=fixed_size(FETCH_TOPIC, version),
        names=carries(FETCH_TOPIC, "topic", version),
        partition=fixed_size(FETCH_PARTITION, version),
        forgotten=carries(FETCH_REQUEST, "forgotten_topics", version),
        forgotten_topic=fixed_size(FORGOTTEN_TOPIC, version),
        forgotten_names=carries(FORGOTTEN_TOPIC, "topic", version),
        rack=carries(FETCH_REQUEST, "rack_id", version),
        cluster_id=carries(FETCH_REQUEST, "cluster_id", version),
        replica_state=tagged_struct_size(FETCH_REQUEST, None, REPLICA_STATE, version),
    )


@dataclass(frozen=True, slots=True)
class _ResponseConstants:
    flexible: bool
    top: int
    topic: int
    names: bool
    partition: int  # fixed part of a partition: all but aborted_transactions and records
    aborted_list: bool  # aborted_transactions exists (v4+)
    idle_partition: int  # a whole idle partition: null aborted list, empty records
    aborted: int  # one aborted transaction
    diverging_epoch: int  # bytes of each tagged struct when sent, 0 before v12
    current_leader: int
    snapshot_id: int
    node_endpoints: bool
    node_endpoint: int  # fixed part of one node endpoint


@cache
def _response_constants(version: int) -> _ResponseConstants:
    check_version(version)
    flexible = is_flexible(version)
    partition = fixed_size(RESPONSE_PARTITION, version)
    aborted_list = carries(RESPONSE_PARTITION, "aborted_transactions", version)  # v4+
    return _ResponseConstants(
        flexible=flexible,
        top=fixed_size(FETCH_RESPONSE, version),
        topic=fixed_size(RESPONSE_TOPIC, version),
        names=carries(RESPONSE_TOPIC, "topic", version),
        partition=partition,
        aborted_list=aborted_list,
        idle_partition=(partition + (array_prefix_size(None, flexible) if aborted_list else 0)
                        + bytes_size(0, flexible)),
        aborted=fixed_size(ABORTED_TRANSACTION, version),
        diverging_epoch=tagged_struct_size(
            RESPONSE_PARTITION, "diverging_epoch", EPOCH_END_OFFSET, version
        ),
        current_leader=tagged_struct_size(
            RESPONSE_PARTITION, "current_leader", LEADER_ID_AND_EPOCH, version
        ),
        snapshot_id=tagged_struct_size(RESPONSE_PARTITION, "snapshot_id", SNAPSHOT_ID, version),
        node_endpoints=carries(FETCH_RESPONSE, "node_endpoints", version),
        node_endpoint=fixed_size(NODE_ENDPOINT, version),
    )


_FORGOTTEN_PARTITION = INT32.width or 0
_CLUSTER_ID_TAG = field_tag(FETCH_REQUEST, "cluster_id")
_NODE_ENDPOINTS_TAG = field_tag(FETCH_RESPONSE, "node_endpoints")

# A struct's tag count is one byte while fewer than 128 tagged fields are sent; Fetch structs
# have at most three, so `fixed_size`'s one byte for the empty section stays exact.

# -- sizes ---------------------------------------------------------------------------------------


def request_body_size(shape: RequestShape) -> int:
    """len(encode_fetch_request(...)) for any request of this shape. O(topics)."""
    c = _request_constants(shape.version)
    flex = c.flexible
    size = c.top + array_prefix_size(len(shape.topics), flex)
    for name, n in shape.topics:
        size += c.topic + array_prefix_size(n, flex) + n * c.partition
        if c.names:
            size += string_size(name, flex)
    if c.forgotten:
        size += array_prefix_size(len(shape.forgotten), flex)
        for name, n in shape.forgotten:
            size += c.forgotten_topic + array_prefix_size(n, flex) + n * _FORGOTTEN_PARTITION
            if c.forgotten_names:
                size += string_size(name, flex)
    if c.rack:
        size += string_size(shape.rack_id, flex)
    if c.cluster_id and shape.cluster_id is not None:
        size += tagged_field_size(_CLUSTER_ID_TAG, string_size(shape.cluster_id, True))
    if shape.follower:
        size += c.replica_state
    return size


def response_body_size(shape: ResponseShape) -> int:
    """len(encode_fetch_response(...)) for any response of this shape.
    O(topics + non-idle partitions)."""
    c = _response_constants(shape.version)
    flex = c.flexible
    size = c.top + array_prefix_size(len(shape.topics), flex)
    for t in shape.topics:
        n = t.idle + len(t.partitions)
        size += c.topic + array_prefix_size(n, flex) + t.idle * c.idle_partition
        if c.names:
            size += string_size(t.topic, flex)
        for p in t.partitions:
            size += c.partition + bytes_size(p.records, flex)
            if c.aborted_list:  # v0–v3 carry none: the encoder leaves them out too
                size += array_prefix_size(p.aborted or None, flex) + p.aborted * c.aborted
            if p.diverging_epoch:
                size += c.diverging_epoch
            if p.current_leader:
                size += c.current_leader
            if p.snapshot_id:
                size += c.snapshot_id
    if c.node_endpoints and shape.node_endpoints:
        size += node_endpoints_size(_NODE_ENDPOINTS_TAG, c.node_endpoint, shape.node_endpoints)
    return size



@lru_cache(maxsize=1024)
def request_header_size(version: int, client_id: str | None) -> int:
    """Bytes of the request header for Fetch `version`: api_key, api_version, correlation_id,
    client_id (always an int16-length string), and the tag section from v12."""
    return api_request_header_size(FETCH, version, client_id)


@cache
def response_header_size(version: int) -> int:
    """Bytes of the response header: correlation_id, plus the tag section from v12."""
    return api_response_header_size(FETCH, version)


# -- materializing -------------------------------------------------------------------------------
# Placeholder values are fixed and arbitrary; only their sizes matter.

_MiB = 1 << 20
_ID_NAMESPACE = uuid.UUID("00000000-0000-0000-0000-000000000000")


def topic_id(name: str) -> bytes:  # a made-up v13+ id, stable: the same name gets the same id
    return uuid.uuid5(_ID_NAMESPACE, name).bytes


def materialize_request(shape: RequestShape) -> FetchRequest:
    """A request of this shape (a follower's if `follower`, else a consumer's)."""
    check_version(shape.version)
    if any(n < 0 for _, n in shape.topics + shape.forgotten):
        raise ProtocolError(f"RequestShape: partition counts must be ≥ 0: {shape}")
    return FetchRequest(
        replica_id=1 if shape.follower else -1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=10 * _MiB,
        topics=tuple(
            FetchTopic(
                topic=name,
                topic_id=topic_id(name),
                partitions=tuple(
                    FetchPartition(
                        partition=p,
                        current_leader_epoch=0,
                        fetch_offset=0,
                        last_fetched_epoch=0,
                        log_start_offset=0,
                        partition_max_bytes=_MiB,
                    )
                    for p in range(n)
                ),
            )
            for name, n in shape.topics
        ),
        forgotten_topics=tuple(
            ForgottenTopic(topic=name, topic_id=topic_id(name), partitions=tuple(range(n)))
            for name, n in shape.forgotten
        ),
        rack_id=shape.rack_id,
        cluster_id=shape.cluster_id,
    )


def _idle_partition(index: int) -> FetchResponsePartition:
    # What a broker sends for a partition with nothing new: empty records, null aborted list.
    return FetchResponsePartition(
        partition_index=index,
        high_watermark=0,
        last_stable_offset=0,
        log_start_offset=0,
        records=b"",
    )


def _partition(index: int, p: ResponsePartitionShape) -> FetchResponsePartition:
    if p.records < 0 or p.aborted < 0:
        raise ProtocolError(f"ResponsePartitionShape: sizes must be ≥ 0: {p}")
    return FetchResponsePartition(
        partition_index=index,
        high_watermark=0,
        last_stable_offset=0,
        log_start_offset=0,
        diverging_epoch=EpochEndOffset(0, 0) if p.diverging_epoch else EpochEndOffset(),
        current_leader=LeaderIdAndEpoch(0, 0) if p.current_leader else LeaderIdAndEpoch(),
        snapshot_id=SnapshotId(0, 0) if p.snapshot_id else SnapshotId(),
        aborted_transactions=tuple(AbortedTransaction(k, k) for k in range(p.aborted)) or None,
        records=RecordsLength(p.records),
    )


def materialize_response(shape: ResponseShape) -> FetchResponse:
    """A response of this shape: in each topic the idle partitions first, then the others."""
    check_version(shape.version)
    topics = []
    for t in shape.topics:
        if t.idle < 0:
            raise ProtocolError(f"ResponseTopicShape: idle must be ≥ 0: {t}")
        partitions = [_idle_partition(i) for i in range(t.idle)]
        partitions += [_partition(t.idle + j, p) for j, p in enumerate(t.partitions)]
        topics.append(
            FetchResponseTopic(
                topic=t.topic, topic_id=topic_id(t.topic), partitions=tuple(partitions)
            )
        )
    return FetchResponse(responses=tuple(topics), node_endpoints=shape.node_endpoints)
