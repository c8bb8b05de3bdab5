"""LeaderAndIsr (api_key 4) as Kafka's LeaderAndIsrRequest.json / LeaderAndIsrResponse.json
define it (v0–v7): dataclasses with Kafka's defaults, their descriptions, encode / decode through
the interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java (Protocol.java's LEADER_AND_ISR_REQUEST_V0–V1, then
LeaderAndIsrRequest.java; 0.8.2: Scala's kafka.api.LeaderAndIsrRequest, v0's bytes). v0–v1
name the topic in each partition state; v2 (KIP-380) groups them by topic and adds the broker
epoch; v3 (KIP-455) the adding / removing replicas; v4 is flexible; v5 (KIP-516) adds topic ids
and the request type; v6 (KIP-704) the leader recovery state; v7 (KIP-866) isKRaftController.
The response names each partition (v0–v4), then (v5+) groups them under topic ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import LEADER_AND_ISR
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT8, INT16, INT32, INT64, STRING, UUID, ZERO_UUID
from rig.protocol.schema import ArrayOf, Field, Schema


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionState:
    topic_name: str = ""  # v0–v1 only
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    partition_epoch: int = 0  # the /state znode's version (zkVersion)
    replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()  # v3+ (KIP-455)
    removing_replicas: tuple[int, ...] = ()  # v3+
    is_new: bool = False  # v1+
    leader_recovery_state: int = 0  # v6+ (KIP-704)


@dataclass(frozen=True, slots=True)
class LeaderAndIsrTopicState:
    topic_name: str = ""
    topic_id: bytes = ZERO_UUID  # v5+
    partition_states: tuple[LeaderAndIsrPartitionState, ...] = ()


@dataclass(frozen=True, slots=True)
class LeaderAndIsrLiveLeader:
    broker_id: int = 0
    host_name: str = ""
    port: int = 0


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    controller_id: int = 0
    is_kraft_controller: bool = False  # v7+
    controller_epoch: int = 0
    broker_epoch: int = -1  # v2+
    type: int = 0  # v5+: 0 unknown, 1 incremental, 2 full (KIP-866's migration)
    ungrouped_partition_states: tuple[LeaderAndIsrPartitionState, ...] = ()  # v0–v1
    topic_states: tuple[LeaderAndIsrTopicState, ...] = ()  # v2+
    live_leaders: tuple[LeaderAndIsrLiveLeader, ...] = ()


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionError:
    topic_name: str = ""  # v0–v4
    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class LeaderAndIsrTopicError:
    topic_id: bytes = ZERO_UUID
    partition_errors: tuple[LeaderAndIsrPartitionError, ...] = ()


@dataclass(frozen=True, slots=True)
class LeaderAndIsrResponse:
    error_code: int = 0
    partition_errors: tuple[LeaderAndIsrPartitionError, ...] = ()  # v0–v4
    topics: tuple[LeaderAndIsrTopicError, ...] = ()  # v5+


LEADER_AND_ISR_PARTITION_STATE = Schema("LeaderAndIsrPartitionState", LeaderAndIsrPartitionState, (
    Field("topic_name", STRING, "0-1"),
    Field("partition_index", INT32, "0+"),
    Field("controller_epoch", INT32, "0+"),
    Field("leader", INT32, "0+"),
    Field("leader_epoch", INT32, "0+"),
    Field("isr", ArrayOf(INT32), "0+"),
    Field("partition_epoch", INT32, "0+"),
    Field("replicas", ArrayOf(INT32), "0+"),
    Field("adding_replicas", ArrayOf(INT32), "3+"),
    Field("removing_replicas", ArrayOf(INT32), "3+"),
    Field("is_new", BOOLEAN, "1+"),
    Field("leader_recovery_state", INT8, "6+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_TOPIC_STATE = Schema("LeaderAndIsrTopicState", LeaderAndIsrTopicState, (
    Field("topic_name", STRING, "2+"),
    Field("topic_id", UUID, "5+"),
    Field("partition_states", ArrayOf(LEADER_AND_ISR_PARTITION_STATE), "2+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_LIVE_LEADER = Schema("LeaderAndIsrLiveLeader", LeaderAndIsrLiveLeader, (
    Field("broker_id", INT32, "0+"),
    Field("host_name", STRING, "0+"),
    Field("port", INT32, "0+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_REQUEST = Schema("LeaderAndIsrRequest", LeaderAndIsrRequest, (
    Field("controller_id", INT32, "0+"),
    Field("is_kraft_controller", BOOLEAN, "7+"),
    Field("controller_epoch", INT32, "0+"),
    Field("broker_epoch", INT64, "2+"),
    Field("type", INT8, "5+"),
    Field("ungrouped_partition_states", ArrayOf(LEADER_AND_ISR_PARTITION_STATE), "0-1"),
    Field("topic_states", ArrayOf(LEADER_AND_ISR_TOPIC_STATE), "2+"),
    Field("live_leaders", ArrayOf(LEADER_AND_ISR_LIVE_LEADER), "0+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_PARTITION_ERROR = Schema("LeaderAndIsrPartitionError", LeaderAndIsrPartitionError, (
    Field("topic_name", STRING, "0-4"),
    Field("partition_index", INT32, "0+"),
    Field("error_code", INT16, "0+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_TOPIC_ERROR = Schema("LeaderAndIsrTopicError", LeaderAndIsrTopicError, (
    Field("topic_id", UUID, "5+"),
    Field("partition_errors", ArrayOf(LEADER_AND_ISR_PARTITION_ERROR), "5+"),
), LEADER_AND_ISR)
LEADER_AND_ISR_RESPONSE = Schema("LeaderAndIsrResponse", LeaderAndIsrResponse, (
    Field("error_code", INT16, "0+"),
    Field("partition_errors", ArrayOf(LEADER_AND_ISR_PARTITION_ERROR), "0-4"),
    Field("topics", ArrayOf(LEADER_AND_ISR_TOPIC_ERROR), "5+"),
), LEADER_AND_ISR)


def encode_leader_and_isr_request(req: LeaderAndIsrRequest, version: int) -> bytes:
    return encode_struct(LEADER_AND_ISR_REQUEST, req, version)


def decode_leader_and_isr_request(data: bytes, version: int) -> LeaderAndIsrRequest:
    result: LeaderAndIsrRequest = decode_struct(LEADER_AND_ISR_REQUEST, data, version)
    return result


def encode_leader_and_isr_response(resp: LeaderAndIsrResponse, version: int) -> bytes:
    return encode_struct(LEADER_AND_ISR_RESPONSE, resp, version)


def decode_leader_and_isr_response(data: bytes, version: int) -> LeaderAndIsrResponse:
    result: LeaderAndIsrResponse = decode_struct(LEADER_AND_ISR_RESPONSE, data, version)
    return result
