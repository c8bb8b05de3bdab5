"""The Produce request and response bodies (api_key 0, v0–v13) as Kafka's ProduceRequest.json /
ProduceResponse.json define them: dataclasses with Kafka's defaults, their descriptions, and
encode / decode through the interpreter (rig.protocol.codec).

Before 2.4 the schemas live in Java (Protocol.java to 0.10.2, ProduceRequest.java /
ProduceResponse.java to 2.3); their fields are the JSON's, version for version.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import PRODUCE
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.fetch_response import LeaderIdAndEpoch, NodeEndpoint
from rig.protocol.primitives import (
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    UUID,
    ZERO_UUID,
    Records,
)
from rig.protocol.schema import ArrayOf, Field, Schema

# Field order is wire order; defaults are Kafka's (its JSON `default`, else 0 / "" / empty).

NO_LEADER = LeaderIdAndEpoch()  # the tagged CurrentLeader's default (-1, -1): not sent


@dataclass(frozen=True, slots=True)
class PartitionProduceData:
    index: int = 0
    records: Records = None  # nullable in every version; a producer always sends a batch


@dataclass(frozen=True, slots=True)
class TopicProduceData:
    name: str = ""  # v0–12
    topic_id: bytes = ZERO_UUID  # v13+ (KIP-516)
    partition_data: tuple[PartitionProduceData, ...] = ()


@dataclass(frozen=True, slots=True)
class ProduceRequest:
    transactional_id: str | None = None  # v3+ (KIP-98); null: not transactional
    acks: int = 0
    timeout_ms: int = 0
    topic_data: tuple[TopicProduceData, ...] = ()


@dataclass(frozen=True, slots=True)
class BatchIndexAndErrorMessage:
    batch_index: int = 0
    batch_index_error_message: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionProduceResponse:
    index: int = 0
    error_code: int = 0
    base_offset: int = 0
    log_append_time_ms: int = -1  # v2+: -1 unless the topic uses LogAppendTime
    log_start_offset: int = -1  # v5+
    record_errors: tuple[BatchIndexAndErrorMessage, ...] = ()  # v8+ (KIP-467)
    error_message: str | None = None  # v8+
    current_leader: LeaderIdAndEpoch = NO_LEADER  # v10+, tag 0 (KIP-951)


@dataclass(frozen=True, slots=True)
class TopicProduceResponse:
    name: str = ""  # v0–12
    topic_id: bytes = ZERO_UUID  # v13+
    partition_responses: tuple[PartitionProduceResponse, ...] = ()


@dataclass(frozen=True, slots=True)
class ProduceResponse:
    responses: tuple[TopicProduceResponse, ...] = ()
    throttle_time_ms: int = 0  # v1+
    node_endpoints: tuple[NodeEndpoint, ...] = ()  # v10+, tag 0 (KIP-951)


PARTITION_PRODUCE_DATA = Schema(
    "PartitionProduceData",
    PartitionProduceData,
    (Field("index", INT32, "0+"), Field("records", RECORDS, "0+")),
    PRODUCE,
)
TOPIC_PRODUCE_DATA = Schema(
    "TopicProduceData",
    TopicProduceData,
    (
        Field("name", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partition_data", ArrayOf(PARTITION_PRODUCE_DATA), "0+"),
    ),
    PRODUCE,
)
PRODUCE_REQUEST = Schema(
    "ProduceRequest",
    ProduceRequest,
    (
        Field("transactional_id", NULLABLE_STRING, "3+"),
        Field("acks", INT16, "0+"),
        Field("timeout_ms", INT32, "0+"),
        Field("topic_data", ArrayOf(TOPIC_PRODUCE_DATA), "0+"),
    ),
    PRODUCE,
)

BATCH_INDEX_AND_ERROR_MESSAGE = Schema(
    "BatchIndexAndErrorMessage",
    BatchIndexAndErrorMessage,
    (Field("batch_index", INT32, "8+"), Field("batch_index_error_message", NULLABLE_STRING, "8+")),
    PRODUCE,
)
PRODUCE_LEADER_ID_AND_EPOCH = Schema(
    "LeaderIdAndEpoch",
    LeaderIdAndEpoch,
    (Field("leader_id", INT32, "10+"), Field("leader_epoch", INT32, "10+")),
    PRODUCE,
)
PRODUCE_NODE_ENDPOINT = Schema(
    "NodeEndpoint",
    NodeEndpoint,
    (
        Field("node_id", INT32, "10+"),
        Field("host", STRING, "10+"),
        Field("port", INT32, "10+"),
        Field("rack", NULLABLE_STRING, "10+"),
    ),
    PRODUCE,
)
PARTITION_PRODUCE_RESPONSE = Schema(
    "PartitionProduceResponse",
    PartitionProduceResponse,
    (
        Field("index", INT32, "0+"),
        Field("error_code", INT16, "0+"),
        Field("base_offset", INT64, "0+"),
        Field("log_append_time_ms", INT64, "2+"),
        Field("log_start_offset", INT64, "5+"),
        Field("record_errors", ArrayOf(BATCH_INDEX_AND_ERROR_MESSAGE), "8+"),
        Field("error_message", NULLABLE_STRING, "8+"),
        Field("current_leader", PRODUCE_LEADER_ID_AND_EPOCH, "10+", tag=0),
    ),
    PRODUCE,
)
# Version 13 names topics by id in the response as in the request (KIP-516, Kafka 4.1).
TOPIC_PRODUCE_RESPONSE = Schema(
    "TopicProduceResponse",
    TopicProduceResponse,
    (
        Field("name", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partition_responses", ArrayOf(PARTITION_PRODUCE_RESPONSE), "0+"),
    ),
    PRODUCE,
)
PRODUCE_RESPONSE = Schema(
    "ProduceResponse",
    ProduceResponse,
    (
        Field("responses", ArrayOf(TOPIC_PRODUCE_RESPONSE), "0+"),
        Field("throttle_time_ms", INT32, "1+"),
        Field("node_endpoints", ArrayOf(PRODUCE_NODE_ENDPOINT), "10+", tag=0),
    ),
    PRODUCE,
)


def encode_produce_request(req: ProduceRequest, version: int) -> bytes:
    """The request body at `version`; fields the version cannot carry are left out."""
    return encode_struct(PRODUCE_REQUEST, req, version)


def decode_produce_request(data: bytes | bytearray | memoryview, version: int) -> ProduceRequest:
    result: ProduceRequest = decode_struct(PRODUCE_REQUEST, data, version)
    return result


def encode_produce_response(resp: ProduceResponse, version: int) -> bytes:
    return encode_struct(PRODUCE_RESPONSE, resp, version)


def decode_produce_response(
    data: bytes | bytearray | memoryview, version: int
) -> ProduceResponse:
    result: ProduceResponse = decode_struct(PRODUCE_RESPONSE, data, version)
    return result
