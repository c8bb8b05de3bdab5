"""Metadata (api_key 3) bodies as Kafka's MetadataRequest.json / MetadataResponse.json define
them: dataclasses with Kafka's defaults, their descriptions, encode / decode through the
interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java: Protocol.java's METADATA_REQUEST / METADATA_RESPONSE
arrays (0.8.2–0.10: v0, v1 rack / controller_id / is_internal, v2 cluster_id; 0.11: v3
throttle_time_ms, v4 allow_auto_topic_creation), then MetadataRequest.java's schemaVersions()
(1.0: v5 offline_replicas, KIP-112; 2.0: v6; 2.1: v7 leader_epoch, KIP-320; 2.3: v8 authorized
operations, KIP-430). v0's request is an array of plain strings, the bytes of v0's one-field
MetadataRequestTopic. v13 (4.0, KIP-1102) adds the response's top-level error_code at its end;
4.x is not in rig's Kafka mirror.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import METADATA
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT16, INT32, NULLABLE_STRING, STRING, UUID, ZERO_UUID
from rig.protocol.schema import ArrayOf, Field, Schema

NO_AUTHORIZED_OPERATIONS = -(2**31)  # the JSON's default: not asked for (KIP-430)

# -- request -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataRequestTopic:
    topic_id: bytes = ZERO_UUID  # v10+ (KIP-516); clients name topics, so zero
    name: str | None = ""  # null (v10+) only when asked by id


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    # Null (v1+) asks for every topic; rig's clients name theirs. (v0: empty meant all.)
    topics: tuple[MetadataRequestTopic, ...] | None = ()
    allow_auto_topic_creation: bool = True  # v4+
    include_cluster_authorized_operations: bool = False  # v8–v10
    include_topic_authorized_operations: bool = False  # v8+


# -- response ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataResponseBroker:
    node_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None  # v1+


@dataclass(frozen=True, slots=True)
class MetadataResponsePartition:
    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1  # v7+
    replica_nodes: tuple[int, ...] = ()
    isr_nodes: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()  # v5+


@dataclass(frozen=True, slots=True)
class MetadataResponseTopic:
    error_code: int = 0
    name: str | None = ""  # nullable v12+ (a topic asked by id that does not exist)
    topic_id: bytes = ZERO_UUID  # v10+
    is_internal: bool = False  # v1+
    partitions: tuple[MetadataResponsePartition, ...] = ()
    topic_authorized_operations: int = NO_AUTHORIZED_OPERATIONS  # v8+


@dataclass(frozen=True, slots=True)
class MetadataResponse:
    throttle_time_ms: int = 0  # v3+
    brokers: tuple[MetadataResponseBroker, ...] = ()
    cluster_id: str | None = None  # v2+
    controller_id: int = -1  # v1+
    topics: tuple[MetadataResponseTopic, ...] = ()
    cluster_authorized_operations: int = NO_AUTHORIZED_OPERATIONS  # v8–v10
    error_code: int = 0  # v13+ (KIP-1102)


METADATA_REQUEST_TOPIC = Schema("MetadataRequestTopic", MetadataRequestTopic, (
    Field("topic_id", UUID, "10+"),
    Field("name", NULLABLE_STRING, "0+"),
), METADATA)
METADATA_REQUEST = Schema("MetadataRequest", MetadataRequest, (
    Field("topics", ArrayOf(METADATA_REQUEST_TOPIC, nullable=True), "0+"),
    Field("allow_auto_topic_creation", BOOLEAN, "4+"),
    Field("include_cluster_authorized_operations", BOOLEAN, "8-10"),
    Field("include_topic_authorized_operations", BOOLEAN, "8+"),
), METADATA)
METADATA_RESPONSE_BROKER = Schema("MetadataResponseBroker", MetadataResponseBroker, (
    Field("node_id", INT32, "0+"),
    Field("host", STRING, "0+"),
    Field("port", INT32, "0+"),
    Field("rack", NULLABLE_STRING, "1+"),
), METADATA)
METADATA_RESPONSE_PARTITION = Schema("MetadataResponsePartition", MetadataResponsePartition, (
    Field("error_code", INT16, "0+"),
    Field("partition_index", INT32, "0+"),
    Field("leader_id", INT32, "0+"),
    Field("leader_epoch", INT32, "7+"),
    Field("replica_nodes", ArrayOf(INT32), "0+"),
    Field("isr_nodes", ArrayOf(INT32), "0+"),
    Field("offline_replicas", ArrayOf(INT32), "5+"),
), METADATA)
METADATA_RESPONSE_TOPIC = Schema("MetadataResponseTopic", MetadataResponseTopic, (
    Field("error_code", INT16, "0+"),
    Field("name", NULLABLE_STRING, "0+"),
    Field("topic_id", UUID, "10+"),
    Field("is_internal", BOOLEAN, "1+"),
    Field("partitions", ArrayOf(METADATA_RESPONSE_PARTITION), "0+"),
    Field("topic_authorized_operations", INT32, "8+"),
), METADATA)
METADATA_RESPONSE = Schema("MetadataResponse", MetadataResponse, (
    Field("throttle_time_ms", INT32, "3+"),
    Field("brokers", ArrayOf(METADATA_RESPONSE_BROKER), "0+"),
    Field("cluster_id", NULLABLE_STRING, "2+"),
    Field("controller_id", INT32, "1+"),
    Field("topics", ArrayOf(METADATA_RESPONSE_TOPIC), "0+"),
    Field("cluster_authorized_operations", INT32, "8-10"),
    Field("error_code", INT16, "13+"),
), METADATA)


def encode_metadata_request(req: MetadataRequest, version: int) -> bytes:
    return encode_struct(METADATA_REQUEST, req, version)


def decode_metadata_request(data: bytes, version: int) -> MetadataRequest:
    result: MetadataRequest = decode_struct(METADATA_REQUEST, data, version)
    return result


def encode_metadata_response(resp: MetadataResponse, version: int) -> bytes:
    return encode_struct(METADATA_RESPONSE, resp, version)


def decode_metadata_response(data: bytes, version: int) -> MetadataResponse:
    result: MetadataResponse = decode_struct(METADATA_RESPONSE, data, version)
    return result
