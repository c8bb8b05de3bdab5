"""StopReplica (api_key 5) as Kafka's StopReplicaRequest.json / StopReplicaResponse.json define it
(v0–v4): dataclasses with Kafka's defaults, their descriptions, encode / decode through the
interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java (Protocol.java's STOP_REPLICA_REQUEST_V0, then
StopReplicaRequest.java; 0.8.2: Scala's kafka.api.StopReplicaRequest, v0's bytes). v0 lists
(topic, partition) pairs under one delete_partitions flag; v1 (KIP-380) adds the broker epoch and
groups partition indexes by topic; v2 is flexible; v3 (KIP-570) gives each partition its leader
epoch and its own delete flag; v4 (KIP-866) isKRaftController.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import STOP_REPLICA
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT16, INT32, INT64, STRING
from rig.protocol.schema import ArrayOf, Field, Schema


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionV0:
    topic_name: str = ""
    partition_index: int = 0


@dataclass(frozen=True, slots=True)
class StopReplicaTopicV1:
    name: str = ""
    partition_indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionState:
    partition_index: int = 0
    leader_epoch: int = -1
    delete_partition: bool = False


@dataclass(frozen=True, slots=True)
class StopReplicaTopicState:
    topic_name: str = ""
    partition_states: tuple[StopReplicaPartitionState, ...] = ()


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    controller_id: int = 0
    is_kraft_controller: bool = False  # v4+
    controller_epoch: int = 0
    broker_epoch: int = -1  # v1+
    delete_partitions: bool = False  # v0–v2
    ungrouped_partitions: tuple[StopReplicaPartitionV0, ...] = ()  # v0
    topics: tuple[StopReplicaTopicV1, ...] = ()  # v1–v2
    topic_states: tuple[StopReplicaTopicState, ...] = ()  # v3+


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionError:
    topic_name: str = ""
    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class StopReplicaResponse:
    error_code: int = 0
    partition_errors: tuple[StopReplicaPartitionError, ...] = ()


STOP_REPLICA_PARTITION_V0 = Schema("StopReplicaPartitionV0", StopReplicaPartitionV0, (
    Field("topic_name", STRING, "0"),
    Field("partition_index", INT32, "0"),
), STOP_REPLICA)
STOP_REPLICA_TOPIC_V1 = Schema("StopReplicaTopicV1", StopReplicaTopicV1, (
    Field("name", STRING, "1-2"),
    Field("partition_indexes", ArrayOf(INT32), "1-2"),
), STOP_REPLICA)
STOP_REPLICA_PARTITION_STATE = Schema("StopReplicaPartitionState", StopReplicaPartitionState, (
    Field("partition_index", INT32, "3+"),
    Field("leader_epoch", INT32, "3+"),
    Field("delete_partition", BOOLEAN, "3+"),
), STOP_REPLICA)
STOP_REPLICA_TOPIC_STATE = Schema("StopReplicaTopicState", StopReplicaTopicState, (
    Field("topic_name", STRING, "3+"),
    Field("partition_states", ArrayOf(STOP_REPLICA_PARTITION_STATE), "3+"),
), STOP_REPLICA)
STOP_REPLICA_REQUEST = Schema("StopReplicaRequest", StopReplicaRequest, (
    Field("controller_id", INT32, "0+"),
    Field("is_kraft_controller", BOOLEAN, "4+"),
    Field("controller_epoch", INT32, "0+"),
    Field("broker_epoch", INT64, "1+"),
    Field("delete_partitions", BOOLEAN, "0-2"),
    Field("ungrouped_partitions", ArrayOf(STOP_REPLICA_PARTITION_V0), "0"),
    Field("topics", ArrayOf(STOP_REPLICA_TOPIC_V1), "1-2"),
    Field("topic_states", ArrayOf(STOP_REPLICA_TOPIC_STATE), "3+"),
), STOP_REPLICA)
STOP_REPLICA_PARTITION_ERROR = Schema("StopReplicaPartitionError", StopReplicaPartitionError, (
    Field("topic_name", STRING, "0+"),
    Field("partition_index", INT32, "0+"),
    Field("error_code", INT16, "0+"),
), STOP_REPLICA)
STOP_REPLICA_RESPONSE = Schema("StopReplicaResponse", StopReplicaResponse, (
    Field("error_code", INT16, "0+"),
    Field("partition_errors", ArrayOf(STOP_REPLICA_PARTITION_ERROR), "0+"),
), STOP_REPLICA)


def encode_stop_replica_request(req: StopReplicaRequest, version: int) -> bytes:
    return encode_struct(STOP_REPLICA_REQUEST, req, version)


def decode_stop_replica_request(data: bytes, version: int) -> StopReplicaRequest:
    result: StopReplicaRequest = decode_struct(STOP_REPLICA_REQUEST, data, version)
    return result


def encode_stop_replica_response(resp: StopReplicaResponse, version: int) -> bytes:
    return encode_struct(STOP_REPLICA_RESPONSE, resp, version)


def decode_stop_replica_response(data: bytes, version: int) -> StopReplicaResponse:
    result: StopReplicaResponse = decode_struct(STOP_REPLICA_RESPONSE, data, version)
    return result
