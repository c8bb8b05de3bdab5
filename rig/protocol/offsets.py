"""ListOffsets (api_key 2) and OffsetsForLeaderEpoch (api_key 23) bodies as Kafka's
ListOffsetsRequest.json / ListOffsetsResponse.json and OffsetForLeaderEpochRequest.json /
OffsetForLeaderEpochResponse.json define them: dataclasses with Kafka's defaults, their
descriptions, encode / decode through the interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java (Protocol.java; ListOffsetRequest.java and
OffsetsForLeaderEpochRequest.java from 0.11). ListOffsets v10 (4.0, KIP-1075) adds timeout_ms;
v11 (4.2, KIP-1023) only a new timestamp: its bytes are v10's.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import LIST_OFFSETS, OFFSETS_FOR_LEADER_EPOCH
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT8, INT16, INT32, INT64, STRING
from rig.protocol.schema import ArrayOf, Field, Schema

LATEST_TIMESTAMP, EARLIEST_TIMESTAMP = -1, -2  # ListOffsetsRequest's special timestamps

# -- ListOffsets ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListOffsetsPartition:
    partition_index: int = 0
    current_leader_epoch: int = -1  # v4+ (KIP-320)
    timestamp: int = 0
    max_num_offsets: int = 1  # v0 only


@dataclass(frozen=True, slots=True)
class ListOffsetsTopic:
    name: str = ""
    partitions: tuple[ListOffsetsPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class ListOffsetsRequest:
    replica_id: int = 0
    isolation_level: int = 0  # v2+
    topics: tuple[ListOffsetsTopic, ...] = ()
    timeout_ms: int = 0  # v10+ (KIP-1075)


@dataclass(frozen=True, slots=True)
class ListOffsetsPartitionResponse:
    partition_index: int = 0
    error_code: int = 0
    old_style_offsets: tuple[int, ...] = ()  # v0 only
    timestamp: int = -1  # v1+
    offset: int = -1  # v1+
    leader_epoch: int = -1  # v4+


@dataclass(frozen=True, slots=True)
class ListOffsetsTopicResponse:
    name: str = ""
    partitions: tuple[ListOffsetsPartitionResponse, ...] = ()


@dataclass(frozen=True, slots=True)
class ListOffsetsResponse:
    throttle_time_ms: int = 0  # v2+
    topics: tuple[ListOffsetsTopicResponse, ...] = ()


LIST_OFFSETS_PARTITION = Schema("ListOffsetsPartition", ListOffsetsPartition, (
    Field("partition_index", INT32, "0+"),
    Field("current_leader_epoch", INT32, "4+"),
    Field("timestamp", INT64, "0+"),
    Field("max_num_offsets", INT32, "0"),
), LIST_OFFSETS)
LIST_OFFSETS_TOPIC = Schema("ListOffsetsTopic", ListOffsetsTopic, (
    Field("name", STRING, "0+"),
    Field("partitions", ArrayOf(LIST_OFFSETS_PARTITION), "0+"),
), LIST_OFFSETS)
LIST_OFFSETS_REQUEST = Schema("ListOffsetsRequest", ListOffsetsRequest, (
    Field("replica_id", INT32, "0+"),
    Field("isolation_level", INT8, "2+"),
    Field("topics", ArrayOf(LIST_OFFSETS_TOPIC), "0+"),
    Field("timeout_ms", INT32, "10+"),
), LIST_OFFSETS)
LIST_OFFSETS_PARTITION_RESPONSE = Schema(
    "ListOffsetsPartitionResponse", ListOffsetsPartitionResponse, (
        Field("partition_index", INT32, "0+"),
        Field("error_code", INT16, "0+"),
        Field("old_style_offsets", ArrayOf(INT64), "0"),
        Field("timestamp", INT64, "1+"),
        Field("offset", INT64, "1+"),
        Field("leader_epoch", INT32, "4+"),
    ), LIST_OFFSETS)
LIST_OFFSETS_TOPIC_RESPONSE = Schema("ListOffsetsTopicResponse", ListOffsetsTopicResponse, (
    Field("name", STRING, "0+"),
    Field("partitions", ArrayOf(LIST_OFFSETS_PARTITION_RESPONSE), "0+"),
), LIST_OFFSETS)
LIST_OFFSETS_RESPONSE = Schema("ListOffsetsResponse", ListOffsetsResponse, (
    Field("throttle_time_ms", INT32, "2+"),
    Field("topics", ArrayOf(LIST_OFFSETS_TOPIC_RESPONSE), "0+"),
), LIST_OFFSETS)

# -- OffsetsForLeaderEpoch -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetForLeaderPartition:
    partition: int = 0
    current_leader_epoch: int = -1  # v2+ (KIP-320)
    leader_epoch: int = 0


@dataclass(frozen=True, slots=True)
class OffsetForLeaderTopic:
    topic: str = ""
    partitions: tuple[OffsetForLeaderPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochRequest:
    replica_id: int = -2  # v3+: a follower's broker id
    topics: tuple[OffsetForLeaderTopic, ...] = ()


@dataclass(frozen=True, slots=True)
class EpochEndOffsetResponse:
    error_code: int = 0
    partition: int = 0
    leader_epoch: int = -1  # v1+ (KIP-279)
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class OffsetForLeaderTopicResult:
    topic: str = ""
    partitions: tuple[EpochEndOffsetResponse, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochResponse:
    throttle_time_ms: int = 0  # v2+
    topics: tuple[OffsetForLeaderTopicResult, ...] = ()


OFFSET_FOR_LEADER_PARTITION = Schema("OffsetForLeaderPartition", OffsetForLeaderPartition, (
    Field("partition", INT32, "0+"),
    Field("current_leader_epoch", INT32, "2+"),
    Field("leader_epoch", INT32, "0+"),
), OFFSETS_FOR_LEADER_EPOCH)
OFFSET_FOR_LEADER_TOPIC = Schema("OffsetForLeaderTopic", OffsetForLeaderTopic, (
    Field("topic", STRING, "0+"),
    Field("partitions", ArrayOf(OFFSET_FOR_LEADER_PARTITION), "0+"),
), OFFSETS_FOR_LEADER_EPOCH)
OFFSET_FOR_LEADER_EPOCH_REQUEST = Schema(
    "OffsetForLeaderEpochRequest", OffsetForLeaderEpochRequest, (
        Field("replica_id", INT32, "3+"),
        Field("topics", ArrayOf(OFFSET_FOR_LEADER_TOPIC), "0+"),
    ), OFFSETS_FOR_LEADER_EPOCH)
EPOCH_END_OFFSET_RESPONSE = Schema("EpochEndOffset", EpochEndOffsetResponse, (
    Field("error_code", INT16, "0+"),
    Field("partition", INT32, "0+"),
    Field("leader_epoch", INT32, "1+"),
    Field("end_offset", INT64, "0+"),
), OFFSETS_FOR_LEADER_EPOCH)
OFFSET_FOR_LEADER_TOPIC_RESULT = Schema("OffsetForLeaderTopicResult", OffsetForLeaderTopicResult, (
    Field("topic", STRING, "0+"),
    Field("partitions", ArrayOf(EPOCH_END_OFFSET_RESPONSE), "0+"),
), OFFSETS_FOR_LEADER_EPOCH)
OFFSET_FOR_LEADER_EPOCH_RESPONSE = Schema(
    "OffsetForLeaderEpochResponse", OffsetForLeaderEpochResponse, (
        Field("throttle_time_ms", INT32, "2+"),
        Field("topics", ArrayOf(OFFSET_FOR_LEADER_TOPIC_RESULT), "0+"),
    ), OFFSETS_FOR_LEADER_EPOCH)


# -- encode / decode -----------------------------------------------------------------------------


def encode_list_offsets_request(req: ListOffsetsRequest, version: int) -> bytes:
    return encode_struct(LIST_OFFSETS_REQUEST, req, version)


def decode_list_offsets_request(data: bytes, version: int) -> ListOffsetsRequest:
    result: ListOffsetsRequest = decode_struct(LIST_OFFSETS_REQUEST, data, version)
    return result


def encode_list_offsets_response(resp: ListOffsetsResponse, version: int) -> bytes:
    return encode_struct(LIST_OFFSETS_RESPONSE, resp, version)


def decode_list_offsets_response(data: bytes, version: int) -> ListOffsetsResponse:
    result: ListOffsetsResponse = decode_struct(LIST_OFFSETS_RESPONSE, data, version)
    return result


def encode_offset_for_leader_epoch_request(req: OffsetForLeaderEpochRequest,
                                           version: int) -> bytes:
    return encode_struct(OFFSET_FOR_LEADER_EPOCH_REQUEST, req, version)


def decode_offset_for_leader_epoch_request(data: bytes,
                                           version: int) -> OffsetForLeaderEpochRequest:
    result: OffsetForLeaderEpochRequest = decode_struct(OFFSET_FOR_LEADER_EPOCH_REQUEST, data,
                                                        version)
    return result


def encode_offset_for_leader_epoch_response(resp: OffsetForLeaderEpochResponse,
                                            version: int) -> bytes:
    return encode_struct(OFFSET_FOR_LEADER_EPOCH_RESPONSE, resp, version)


def decode_offset_for_leader_epoch_response(data: bytes,
                                            version: int) -> OffsetForLeaderEpochResponse:
    result: OffsetForLeaderEpochResponse = decode_struct(OFFSET_FOR_LEADER_EPOCH_RESPONSE, data,
                                                         version)
    return result
