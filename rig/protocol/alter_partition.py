"""AlterPartition (api_key 56; AlterIsr before 3.2) as Kafka's AlterPartitionRequest.json /
AlterPartitionResponse.json define it (v0–v3), with its fast sizes.

AlterIsrRequest.json / AlterIsrResponse.json (2.7–3.1, KIP-497) are v0: the same bytes under
other names (Name for TopicName, CurrentIsrVersion for PartitionEpoch). Flexible from v0. v1
(3.2, KIP-704) adds the leader recovery state; v2 (3.3, KIP-841) names topics by id; v3 (3.5,
KIP-903) sends each new ISR member with its broker epoch (NewIsrWithEpochs for NewIsr).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from rig.protocol.apis import ALTER_PARTITION
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT8, INT16, INT32, INT64, STRING, UUID, ZERO_UUID, string_size
from rig.protocol.primitives import array_prefix_size as _prefix
from rig.protocol.schema import ArrayOf, Field, Schema, carries, fixed_size


@dataclass(frozen=True, slots=True)
class BrokerState:
    broker_id: int = 0
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class AlterPartitionPartitionData:
    partition_index: int = 0
    leader_epoch: int = 0
    new_isr: tuple[int, ...] = ()  # v0–v2
    new_isr_with_epochs: tuple[BrokerState, ...] = ()  # v3+ (KIP-903)
    leader_recovery_state: int = 0  # v1+ (KIP-704)
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionTopicData:
    topic_name: str = ""  # v0–v1
    topic_id: bytes = ZERO_UUID  # v2+
    partitions: tuple[AlterPartitionPartitionData, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    broker_id: int = 0
    broker_epoch: int = -1
    topics: tuple[AlterPartitionTopicData, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterPartitionPartitionResult:
    partition_index: int = 0
    error_code: int = 0
    leader_id: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    leader_recovery_state: int = 0  # v1+
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionTopicResult:
    topic_name: str = ""  # v0–v1
    topic_id: bytes = ZERO_UUID  # v2+
    partitions: tuple[AlterPartitionPartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterPartitionResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    topics: tuple[AlterPartitionTopicResult, ...] = ()


BROKER_STATE = Schema("BrokerState", BrokerState, (
    Field("broker_id", INT32, "3+"),
    Field("broker_epoch", INT64, "3+"),
), ALTER_PARTITION)
PARTITION_DATA = Schema("PartitionData", AlterPartitionPartitionData, (
    Field("partition_index", INT32, "0+"),
    Field("leader_epoch", INT32, "0+"),
    Field("new_isr", ArrayOf(INT32), "0-2"),
    Field("new_isr_with_epochs", ArrayOf(BROKER_STATE), "3+"),
    Field("leader_recovery_state", INT8, "1+"),
    Field("partition_epoch", INT32, "0+"),
), ALTER_PARTITION)
TOPIC_DATA = Schema("TopicData", AlterPartitionTopicData, (
    Field("topic_name", STRING, "0-1"),
    Field("topic_id", UUID, "2+"),
    Field("partitions", ArrayOf(PARTITION_DATA), "0+"),
), ALTER_PARTITION)
ALTER_PARTITION_REQUEST = Schema("AlterPartitionRequest", AlterPartitionRequest, (
    Field("broker_id", INT32, "0+"),
    Field("broker_epoch", INT64, "0+"),
    Field("topics", ArrayOf(TOPIC_DATA), "0+"),
), ALTER_PARTITION)
PARTITION_RESULT = Schema("PartitionData", AlterPartitionPartitionResult, (
    Field("partition_index", INT32, "0+"),
    Field("error_code", INT16, "0+"),
    Field("leader_id", INT32, "0+"),
    Field("leader_epoch", INT32, "0+"),
    Field("isr", ArrayOf(INT32), "0+"),
    Field("leader_recovery_state", INT8, "1+"),
    Field("partition_epoch", INT32, "0+"),
), ALTER_PARTITION)
TOPIC_RESULT = Schema("TopicData", AlterPartitionTopicResult, (
    Field("topic_name", STRING, "0-1"),
    Field("topic_id", UUID, "2+"),
    Field("partitions", ArrayOf(PARTITION_RESULT), "0+"),
), ALTER_PARTITION)
ALTER_PARTITION_RESPONSE = Schema("AlterPartitionResponse", AlterPartitionResponse, (
    Field("throttle_time_ms", INT32, "0+"),
    Field("error_code", INT16, "0+"),
    Field("topics", ArrayOf(TOPIC_RESULT), "0+"),
), ALTER_PARTITION)


def encode_alter_partition_request(req: AlterPartitionRequest, version: int) -> bytes:
    return encode_struct(ALTER_PARTITION_REQUEST, req, version)


def decode_alter_partition_request(data: bytes, version: int) -> AlterPartitionRequest:
    result: AlterPartitionRequest = decode_struct(ALTER_PARTITION_REQUEST, data, version)
    return result


def encode_alter_partition_response(resp: AlterPartitionResponse, version: int) -> bytes:
    return encode_struct(ALTER_PARTITION_RESPONSE, resp, version)


def decode_alter_partition_response(data: bytes, version: int) -> AlterPartitionResponse:
    result: AlterPartitionResponse = decode_struct(ALTER_PARTITION_RESPONSE, data, version)
    return result


# -- fast sizes ----------------------------------------------------------------------------------
# Partitions as (topic, ISR length), grouped by topic in the order given (AlterPartitionManager
# groups its items by topic). Answers carry only the partitions answered without a top-level
# error: the caller passes none for a top-level error.


@cache
def _constants(version: int) -> tuple[bool, bool, int, int, int, int, int, int]:
    ALTER_PARTITION.check_version(version)
    return (ALTER_PARTITION.is_flexible(version), carries(TOPIC_DATA, "topic_name", version),
            fixed_size(ALTER_PARTITION_REQUEST, version), fixed_size(TOPIC_DATA, version),
            fixed_size(PARTITION_DATA, version),
            fixed_size(BROKER_STATE, version) if carries(
                PARTITION_DATA, "new_isr_with_epochs", version) else 4,
            fixed_size(ALTER_PARTITION_RESPONSE, version), fixed_size(PARTITION_RESULT, version))


def _size(version: int, partitions: Iterable[tuple[str, int]], request: bool) -> int:
    flex, names, top_q, topic, part_q, member, top_a, part_a = _constants(version)
    counts: dict[str, list[int]] = {}
    for name, isr in partitions:
        counts.setdefault(name, []).append(isr)
    size = (top_q if request else top_a) + _prefix(len(counts), flex)
    part = part_q if request else part_a
    each = member if request else 4  # an ISR member: int32, or (v3 request) a BrokerState
    for name, isrs in counts.items():
        size += topic + _prefix(len(isrs), flex) + (string_size(name, flex) if names else 0)
        size += sum(part + _prefix(n, flex) + each * n for n in isrs)
    return size


def alter_partition_request_body_size(version: int, partitions: Iterable[tuple[str, int]]) -> int:
    """len(encode_alter_partition_request(...)) proposing ISRs of these lengths."""
    return _size(version, partitions, True)


def alter_partition_response_body_size(version: int,
                                       partitions: Iterable[tuple[str, int]]) -> int:
    """len(encode_alter_partition_response(...)) answering with ISRs of these lengths."""
    return _size(version, partitions, False)
