"""OffsetFetch (api_key 9) bodies as Kafka's OffsetFetchRequest.json / OffsetFetchResponse.json
define them: dataclasses with Kafka's defaults, their descriptions, encode / decode through the
interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java: Protocol.java's OFFSET_FETCH_REQUEST arrays (0.8.2:
v1 reads __consumer_offsets; 0.10.2: v2 adds the answer's top-level error_code; 0.11: v3
throttle_time_ms), then OffsetFetchRequest.java's schemaVersions() (2.0: v4; 2.1: v5
committed_leader_epoch, KIP-320). 2.4 brings the flexible v6, 2.5 require_stable (v7, KIP-447),
3.0 a batch of groups (v8, KIP-709), 3.7 each group's member id and epoch (v9, KIP-848).
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import OFFSET_FETCH
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT16, INT32, INT64, NULLABLE_STRING, STRING
from rig.protocol.schema import ArrayOf, Field, Schema


@dataclass(frozen=True, slots=True)
class OffsetFetchRequestTopic:  # (v8+'s OffsetFetchRequestTopics has the same fields)
    name: str = ""
    partition_indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetFetchRequestGroup:  # v8+
    group_id: str = ""
    member_id: str | None = None  # v9+ (a classic consumer's: null)
    member_epoch: int = -1  # v9+
    topics: tuple[OffsetFetchRequestTopic, ...] | None = ()


@dataclass(frozen=True, slots=True)
class OffsetFetchRequest:
    group_id: str = ""  # v0–v7
    topics: tuple[OffsetFetchRequestTopic, ...] | None = ()  # v0–v7 (null, v2+: all)
    groups: tuple[OffsetFetchRequestGroup, ...] = ()  # v8+
    require_stable: bool = False  # v7+


@dataclass(frozen=True, slots=True)
class OffsetFetchResponsePartition:
    partition_index: int = 0
    committed_offset: int = -1
    committed_leader_epoch: int = -1  # v5+
    metadata: str | None = ""
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class OffsetFetchResponseTopic:
    name: str = ""
    partitions: tuple[OffsetFetchResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetFetchResponseGroup:  # v8+
    group_id: str = ""
    topics: tuple[OffsetFetchResponseTopic, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class OffsetFetchResponse:
    throttle_time_ms: int = 0  # v3+
    topics: tuple[OffsetFetchResponseTopic, ...] = ()  # v0–v7
    error_code: int = 0  # v2–v7
    groups: tuple[OffsetFetchResponseGroup, ...] = ()  # v8+


OFFSET_FETCH_REQUEST_TOPIC = Schema("OffsetFetchRequestTopic", OffsetFetchRequestTopic, (
    Field("name", STRING, "0+"),
    Field("partition_indexes", ArrayOf(INT32), "0+"),
), OFFSET_FETCH)
OFFSET_FETCH_REQUEST_GROUP = Schema("OffsetFetchRequestGroup", OffsetFetchRequestGroup, (
    Field("group_id", STRING, "8+"),
    Field("member_id", NULLABLE_STRING, "9+"),
    Field("member_epoch", INT32, "9+"),
    Field("topics", ArrayOf(OFFSET_FETCH_REQUEST_TOPIC, nullable=True), "8+"),
), OFFSET_FETCH)
OFFSET_FETCH_REQUEST = Schema("OffsetFetchRequest", OffsetFetchRequest, (
    Field("group_id", STRING, "0-7"),
    Field("topics", ArrayOf(OFFSET_FETCH_REQUEST_TOPIC, nullable=True), "0-7"),
    Field("groups", ArrayOf(OFFSET_FETCH_REQUEST_GROUP), "8+"),
    Field("require_stable", BOOLEAN, "7+"),
), OFFSET_FETCH)
OFFSET_FETCH_RESPONSE_PARTITION = Schema(
    "OffsetFetchResponsePartition", OffsetFetchResponsePartition, (
        Field("partition_index", INT32, "0+"),
        Field("committed_offset", INT64, "0+"),
        Field("committed_leader_epoch", INT32, "5+"),
        Field("metadata", NULLABLE_STRING, "0+"),
        Field("error_code", INT16, "0+"),
    ), OFFSET_FETCH)
OFFSET_FETCH_RESPONSE_TOPIC = Schema("OffsetFetchResponseTopic", OffsetFetchResponseTopic, (
    Field("name", STRING, "0+"),
    Field("partitions", ArrayOf(OFFSET_FETCH_RESPONSE_PARTITION), "0+"),
), OFFSET_FETCH)
OFFSET_FETCH_RESPONSE_GROUP = Schema("OffsetFetchResponseGroup", OffsetFetchResponseGroup, (
    Field("group_id", STRING, "8+"),
    Field("topics", ArrayOf(OFFSET_FETCH_RESPONSE_TOPIC), "8+"),
    Field("error_code", INT16, "8+"),
), OFFSET_FETCH)
OFFSET_FETCH_RESPONSE = Schema("OffsetFetchResponse", OffsetFetchResponse, (
    Field("throttle_time_ms", INT32, "3+"),
    Field("topics", ArrayOf(OFFSET_FETCH_RESPONSE_TOPIC), "0-7"),
    Field("error_code", INT16, "2-7"),
    Field("groups", ArrayOf(OFFSET_FETCH_RESPONSE_GROUP), "8+"),
), OFFSET_FETCH)


def encode_offset_fetch_request(req: OffsetFetchRequest, version: int) -> bytes:
    return encode_struct(OFFSET_FETCH_REQUEST, req, version)


def decode_offset_fetch_request(data: bytes, version: int) -> OffsetFetchRequest:
    result: OffsetFetchRequest = decode_struct(OFFSET_FETCH_REQUEST, data, version)
    return result


def encode_offset_fetch_response(resp: OffsetFetchResponse, version: int) -> bytes:
    return encode_struct(OFFSET_FETCH_RESPONSE, resp, version)


def decode_offset_fetch_response(data: bytes, version: int) -> OffsetFetchResponse:
    result: OffsetFetchResponse = decode_struct(OFFSET_FETCH_RESPONSE, data, version)
    return result
