"""The Fetch response body as Kafka's FetchResponse.json defines it (v0–v18): its dataclasses,
with Kafka's defaults, and their description, the tagged structs of v12+ and v16+ included."""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import FETCH
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


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class SnapshotId:
    end_offset: int = -1
    epoch: int = -1


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    producer_id: int = 0
    first_offset: int = 0


@dataclass(frozen=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class FetchResponsePartition:
    """One partition of a response. The three tagged structs (v12+) are sent only when they
    differ from their all -1 defaults; aborted_transactions None is what a broker sends for
    READ_UNCOMMITTED."""

    partition_index: int = 0
    error_code: int = 0
    high_watermark: int = 0
    last_stable_offset: int = -1
    log_start_offset: int = -1  # v5+
    diverging_epoch: EpochEndOffset = EpochEndOffset()  # v12+, tag 0
    current_leader: LeaderIdAndEpoch = LeaderIdAndEpoch()  # v12+, tag 1
    snapshot_id: SnapshotId = SnapshotId()  # v12+, tag 2
    aborted_transactions: tuple[AbortedTransaction, ...] | None = None
    preferred_read_replica: int = -1  # v11+
    records: Records = None


@dataclass(frozen=True, slots=True)
class FetchResponseTopic:
    topic: str = ""  # v4–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[FetchResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchResponse:
    throttle_time_ms: int = 0
    error_code: int = 0  # v7+
    session_id: int = 0  # v7+
    responses: tuple[FetchResponseTopic, ...] = ()
    node_endpoints: tuple[NodeEndpoint, ...] = ()  # v16+, tag 0


EPOCH_END_OFFSET = Schema(
    "EpochEndOffset",
    EpochEndOffset,
    (Field("epoch", INT32, "12+"), Field("end_offset", INT64, "12+")),
    FETCH,
)
LEADER_ID_AND_EPOCH = Schema(
    "LeaderIdAndEpoch",
    LeaderIdAndEpoch,
    (Field("leader_id", INT32, "12+"), Field("leader_epoch", INT32, "12+")),
    FETCH,
)
SNAPSHOT_ID = Schema(
    "SnapshotId",
    SnapshotId,
    (Field("end_offset", INT64, "0+"), Field("epoch", INT32, "0+")),
    FETCH,
)
ABORTED_TRANSACTION = Schema(
    "AbortedTransaction",
    AbortedTransaction,
    (Field("producer_id", INT64, "4+"), Field("first_offset", INT64, "4+")),
    FETCH,
)
NODE_ENDPOINT = Schema(
    "NodeEndpoint",
    NodeEndpoint,
    (
        Field("node_id", INT32, "16+"),
        Field("host", STRING, "16+"),
        Field("port", INT32, "16+"),
        Field("rack", NULLABLE_STRING, "16+"),
    ),
    FETCH,
)
RESPONSE_PARTITION = Schema(
    "PartitionData",
    FetchResponsePartition,
    (
        Field("partition_index", INT32, "0+"),
        Field("error_code", INT16, "0+"),
        Field("high_watermark", INT64, "0+"),
        Field("last_stable_offset", INT64, "4+"),
        Field("log_start_offset", INT64, "5+"),
        Field("diverging_epoch", EPOCH_END_OFFSET, "12+", tag=0),
        Field("current_leader", LEADER_ID_AND_EPOCH, "12+", tag=1),
        Field("snapshot_id", SNAPSHOT_ID, "12+", tag=2),
        Field("aborted_transactions", ArrayOf(ABORTED_TRANSACTION, nullable=True), "4+"),
        Field("preferred_read_replica", INT32, "11+"),
        Field("records", RECORDS, "0+"),
    ),
    FETCH,
)
RESPONSE_TOPIC = Schema(
    "FetchableTopicResponse",
    FetchResponseTopic,
    (
        Field("topic", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(RESPONSE_PARTITION), "0+"),
    ),
    FETCH,
)
FETCH_RESPONSE = Schema(
    "FetchResponse",
    FetchResponse,
    (
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16, "7+"),
        Field("session_id", INT32, "7+"),
        Field("responses", ArrayOf(RESPONSE_TOPIC), "0+"),
        Field("node_endpoints", ArrayOf(NODE_ENDPOINT), "16+", tag=0),
    ),
    FETCH,
)
