"""OffsetCommit (api_key 8) bodies as Kafka's OffsetCommitRequest.json / OffsetCommitResponse.json
define them: dataclasses with Kafka's defaults, their descriptions, encode / decode through the
interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java: Protocol.java's OFFSET_COMMIT_REQUEST arrays (0.8.2: v1
adds the generation, the member id and each partition's commit timestamp; 0.9: v2 replaces the
timestamp with retention_time_ms; 0.11: v3 throttle_time_ms), then OffsetCommitRequest.java's
schemaVersions() (2.0: v4; 2.1: v5 drops retention_time_ms, v6 committed_leader_epoch,
KIP-320). 2.3 adds group_instance_id (v7, KIP-345), 2.4 the flexible v8, 3.6 v9 (KIP-848: the
same bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import OFFSET_COMMIT
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT16, INT32, INT64, NULLABLE_STRING, STRING
from rig.protocol.schema import ArrayOf, Field, Schema


@dataclass(frozen=True, slots=True)
class OffsetCommitRequestPartition:
    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1  # v6+
    commit_timestamp: int = -1  # v1 only
    committed_metadata: str | None = ""


@dataclass(frozen=True, slots=True)
class OffsetCommitRequestTopic:
    name: str = ""
    partitions: tuple[OffsetCommitRequestPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetCommitRequest:
    group_id: str = ""
    generation_id_or_member_epoch: int = -1  # v1+
    member_id: str = ""  # v1+
    group_instance_id: str | None = None  # v7+ (static membership, KIP-345)
    retention_time_ms: int = -1  # v2–v4
    topics: tuple[OffsetCommitRequestTopic, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetCommitResponsePartition:
    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class OffsetCommitResponseTopic:
    name: str = ""
    partitions: tuple[OffsetCommitResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetCommitResponse:
    throttle_time_ms: int = 0  # v3+
    topics: tuple[OffsetCommitResponseTopic, ...] = ()


OFFSET_COMMIT_REQUEST_PARTITION = Schema(
    "OffsetCommitRequestPartition", OffsetCommitRequestPartition, (
        Field("partition_index", INT32, "0+"),
        Field("committed_offset", INT64, "0+"),
        Field("committed_leader_epoch", INT32, "6+"),
        Field("commit_timestamp", INT64, "1"),
        Field("committed_metadata", NULLABLE_STRING, "0+"),
    ), OFFSET_COMMIT)
OFFSET_COMMIT_REQUEST_TOPIC = Schema("OffsetCommitRequestTopic", OffsetCommitRequestTopic, (
    Field("name", STRING, "0+"),
    Field("partitions", ArrayOf(OFFSET_COMMIT_REQUEST_PARTITION), "0+"),
), OFFSET_COMMIT)
OFFSET_COMMIT_REQUEST = Schema("OffsetCommitRequest", OffsetCommitRequest, (
    Field("group_id", STRING, "0+"),
    Field("generation_id_or_member_epoch", INT32, "1+"),
    Field("member_id", STRING, "1+"),
    Field("group_instance_id", NULLABLE_STRING, "7+"),
    Field("retention_time_ms", INT64, "2-4"),
    Field("topics", ArrayOf(OFFSET_COMMIT_REQUEST_TOPIC), "0+"),
), OFFSET_COMMIT)
OFFSET_COMMIT_RESPONSE_PARTITION = Schema(
    "OffsetCommitResponsePartition", OffsetCommitResponsePartition, (
        Field("partition_index", INT32, "0+"),
        Field("error_code", INT16, "0+"),
    ), OFFSET_COMMIT)
OFFSET_COMMIT_RESPONSE_TOPIC = Schema("OffsetCommitResponseTopic", OffsetCommitResponseTopic, (
    Field("name", STRING, "0+"),
    Field("partitions", ArrayOf(OFFSET_COMMIT_RESPONSE_PARTITION), "0+"),
), OFFSET_COMMIT)
OFFSET_COMMIT_RESPONSE = Schema("OffsetCommitResponse", OffsetCommitResponse, (
    Field("throttle_time_ms", INT32, "3+"),
    Field("topics", ArrayOf(OFFSET_COMMIT_RESPONSE_TOPIC), "0+"),
), OFFSET_COMMIT)


def encode_offset_commit_request(req: OffsetCommitRequest, version: int) -> bytes:
    return encode_struct(OFFSET_COMMIT_REQUEST, req, version)


def decode_offset_commit_request(data: bytes, version: int) -> OffsetCommitRequest:
    result: OffsetCommitRequest = decode_struct(OFFSET_COMMIT_REQUEST, data, version)
    return result


def encode_offset_commit_response(resp: OffsetCommitResponse, version: int) -> bytes:
    return encode_struct(OFFSET_COMMIT_RESPONSE, resp, version)


def decode_offset_commit_response(data: bytes, version: int) -> OffsetCommitResponse:
    result: OffsetCommitResponse = decode_struct(OFFSET_COMMIT_RESPONSE, data, version)
    return result
