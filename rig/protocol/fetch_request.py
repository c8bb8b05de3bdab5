"""The Fetch request body as Kafka's FetchRequest.json defines it (v0–v18): its dataclasses, with
Kafka's defaults, and their description; ReplicaState (v15+, KIP-903) is tagged and inlined."""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import FETCH
from rig.protocol.primitives import INT8, INT32, INT64, NULLABLE_STRING, STRING, UUID, ZERO_UUID
from rig.protocol.schema import ArrayOf, Field, Schema

NO_HIGH_WATERMARK = 0x7FFFFFFFFFFFFFFF  # v18 HighWatermark default: the replica does not send one

# Field order is wire order; defaults are Kafka's (its JSON `default`, else 0 / "" / empty).


@dataclass(frozen=True, slots=True)
class FetchPartition:
    partition: int = 0
    current_leader_epoch: int = -1  # v9+
    fetch_offset: int = 0
    last_fetched_epoch: int = -1  # v12+
    log_start_offset: int = -1  # v5+
    partition_max_bytes: int = 0
    replica_directory_id: bytes = ZERO_UUID  # v17+, tag 0 (KIP-853)
    # v18+, tag 1 (KIP-1166): the fetching replica's HW, sent only when set. Only the KRaft
    # metadata quorum sets it (KafkaRaftClient); a broker's ReplicaFetcherThread leaves the
    # default, so its v18 partitions have v17's bytes.
    high_watermark: int = NO_HIGH_WATERMARK


@dataclass(frozen=True, slots=True)
class FetchTopic:
    topic: str = ""  # v4–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[FetchPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class ForgottenTopic:
    topic: str = ""  # v7–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """A Fetch request body. replica_id is an int32 up to v14 and, with replica_epoch, the
    tagged ReplicaState (tag 1) from v15; cluster_id is tag 0 from v12."""

    replica_id: int = -1
    replica_epoch: int = -1  # v15+
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 0x7FFFFFFF
    isolation_level: int = 0
    session_id: int = 0  # v7+
    session_epoch: int = -1  # v7+
    topics: tuple[FetchTopic, ...] = ()
    forgotten_topics: tuple[ForgottenTopic, ...] = ()  # v7+
    rack_id: str = ""  # v11+
    cluster_id: str | None = None  # v12+, tag 0



REPLICA_STATE = Schema(
    "ReplicaState",
    None,
    (Field("replica_id", INT32, "15+"), Field("replica_epoch", INT64, "15+")),
    FETCH,
)

FETCH_PARTITION = Schema(
    "FetchPartition",
    FetchPartition,
    (
        Field("partition", INT32, "0+"),
        Field("current_leader_epoch", INT32, "9+"),
        Field("fetch_offset", INT64, "0+"),
        Field("last_fetched_epoch", INT32, "12+"),
        Field("log_start_offset", INT64, "5+"),
        Field("partition_max_bytes", INT32, "0+"),
        Field("replica_directory_id", UUID, "17+", tag=0),
        Field("high_watermark", INT64, "18+", tag=1),
    ),
    FETCH,
)
FETCH_TOPIC = Schema(
    "FetchTopic",
    FetchTopic,
    (
        Field("topic", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(FETCH_PARTITION), "0+"),
    ),
    FETCH,
)
FORGOTTEN_TOPIC = Schema(
    "ForgottenTopic",
    ForgottenTopic,
    (
        Field("topic", STRING, "7-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(INT32), "7+"),
    ),
    FETCH,
)
FETCH_REQUEST = Schema(
    "FetchRequest",
    FetchRequest,
    (
        Field("cluster_id", NULLABLE_STRING, "12+", tag=0),
        Field("replica_id", INT32, "0-14"),
        Field(None, REPLICA_STATE, "15+", tag=1),
        Field("max_wait_ms", INT32, "0+"),
        Field("min_bytes", INT32, "0+"),
        Field("max_bytes", INT32, "3+"),
        Field("isolation_level", INT8, "4+"),
        Field("session_id", INT32, "7+"),
        Field("session_epoch", INT32, "7+"),
        Field("topics", ArrayOf(FETCH_TOPIC), "0+"),
        Field("forgotten_topics", ArrayOf(FORGOTTEN_TOPIC), "7+"),
        Field("rack_id", STRING, "11+"),
    ),
    FETCH,
)
