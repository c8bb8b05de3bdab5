"""UpdateMetadata (api_key 6) as Kafka's UpdateMetadataRequest.json / UpdateMetadataResponse.json
define it (v0–v8): dataclasses with Kafka's defaults, their descriptions, encode / decode through
the interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java (Protocol.java's UPDATE_METADATA_REQUEST_V0–V3, then
UpdateMetadataRequest.java; 0.8.2: Scala's kafka.api.UpdateMetadataRequest, v0's bytes). v1 gives
each broker a list of endpoints; v2 (KIP-36) its rack; v3 each endpoint's listener name; v4
(KIP-112) each partition's offline replicas; v5 (KIP-380) the broker epoch and partitions grouped
by topic; v6 is flexible; v7 (KIP-516) topic ids; v8 (KIP-866) isKRaftController and a tagged
request type (left at its default 0 by a ZooKeeper-mode controller, so never sent).
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import UPDATE_METADATA
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import (
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    UUID,
    ZERO_UUID,
)
from rig.protocol.schema import ArrayOf, Field, Schema


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    topic_name: str = ""  # v0–v4 only
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    zk_version: int = 0
    replicas: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()  # v4+ (KIP-112)


@dataclass(frozen=True, slots=True)
class UpdateMetadataTopicState:
    topic_name: str = ""
    topic_id: bytes = ZERO_UUID  # v7+
    partition_states: tuple[UpdateMetadataPartitionState, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateMetadataEndpoint:
    port: int = 0
    host: str = ""
    listener: str = ""  # v3+
    security_protocol: int = 0


@dataclass(frozen=True, slots=True)
class UpdateMetadataBroker:
    id: int = 0
    v0_host: str = ""  # v0 only
    v0_port: int = 0  # v0 only
    endpoints: tuple[UpdateMetadataEndpoint, ...] = ()  # v1+
    rack: str | None = None  # v2+ (KIP-36)


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    controller_id: int = 0
    is_kraft_controller: bool = False  # v8+
    type: int = 0  # v8+, tagged (0)
    controller_epoch: int = 0
    broker_epoch: int = -1  # v5+
    ungrouped_partition_states: tuple[UpdateMetadataPartitionState, ...] = ()  # v0–v4
    topic_states: tuple[UpdateMetadataTopicState, ...] = ()  # v5+
    live_brokers: tuple[UpdateMetadataBroker, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateMetadataResponse:
    error_code: int = 0


UPDATE_METADATA_PARTITION_STATE = Schema(
    "UpdateMetadataPartitionState", UpdateMetadataPartitionState, (
        Field("topic_name", STRING, "0-4"),
        Field("partition_index", INT32, "0+"),
        Field("controller_epoch", INT32, "0+"),
        Field("leader", INT32, "0+"),
        Field("leader_epoch", INT32, "0+"),
        Field("isr", ArrayOf(INT32), "0+"),
        Field("zk_version", INT32, "0+"),
        Field("replicas", ArrayOf(INT32), "0+"),
        Field("offline_replicas", ArrayOf(INT32), "4+"),
    ), UPDATE_METADATA)
UPDATE_METADATA_TOPIC_STATE = Schema("UpdateMetadataTopicState", UpdateMetadataTopicState, (
    Field("topic_name", STRING, "5+"),
    Field("topic_id", UUID, "7+"),
    Field("partition_states", ArrayOf(UPDATE_METADATA_PARTITION_STATE), "5+"),
), UPDATE_METADATA)
UPDATE_METADATA_ENDPOINT = Schema("UpdateMetadataEndpoint", UpdateMetadataEndpoint, (
    Field("port", INT32, "1+"),
    Field("host", STRING, "1+"),
    Field("listener", STRING, "3+"),
    Field("security_protocol", INT16, "1+"),
), UPDATE_METADATA)
UPDATE_METADATA_BROKER = Schema("UpdateMetadataBroker", UpdateMetadataBroker, (
    Field("id", INT32, "0+"),
    Field("v0_host", STRING, "0"),
    Field("v0_port", INT32, "0"),
    Field("endpoints", ArrayOf(UPDATE_METADATA_ENDPOINT), "1+"),
    Field("rack", NULLABLE_STRING, "2+"),
), UPDATE_METADATA)
UPDATE_METADATA_REQUEST = Schema("UpdateMetadataRequest", UpdateMetadataRequest, (
    Field("controller_id", INT32, "0+"),
    Field("is_kraft_controller", BOOLEAN, "8+"),
    Field("type", INT8, "8+", tag=0),
    Field("controller_epoch", INT32, "0+"),
    Field("broker_epoch", INT64, "5+"),
    Field("ungrouped_partition_states", ArrayOf(UPDATE_METADATA_PARTITION_STATE), "0-4"),
    Field("topic_states", ArrayOf(UPDATE_METADATA_TOPIC_STATE), "5+"),
    Field("live_brokers", ArrayOf(UPDATE_METADATA_BROKER), "0+"),
), UPDATE_METADATA)
UPDATE_METADATA_RESPONSE = Schema("UpdateMetadataResponse", UpdateMetadataResponse, (
    Field("error_code", INT16, "0+"),
), UPDATE_METADATA)


def encode_update_metadata_request(req: UpdateMetadataRequest, version: int) -> bytes:
    return encode_struct(UPDATE_METADATA_REQUEST, req, version)


def decode_update_metadata_request(data: bytes, version: int) -> UpdateMetadataRequest:
    result: UpdateMetadataRequest = decode_struct(UPDATE_METADATA_REQUEST, data, version)
    return result


def encode_update_metadata_response(resp: UpdateMetadataResponse, version: int) -> bytes:
    return encode_struct(UPDATE_METADATA_RESPONSE, resp, version)


def decode_update_metadata_response(data: bytes, version: int) -> UpdateMetadataResponse:
    result: UpdateMetadataResponse = decode_struct(UPDATE_METADATA_RESPONSE, data, version)
    return result
