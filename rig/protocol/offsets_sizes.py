"""The fast size path for ListOffsets and OffsetsForLeaderEpoch as a follower sends them: exact
body sizes from per-version constants (memoized) plus the topic names, without encoding.
`materialize_*` builds a message of the same shape, so tests prove
size == len(encode(materialize(...))).

Every field of a partition is fixed-width in both messages (ListOffsets v0's answer aside: its
old_style_offsets array holds one offset, or none with an error), so a message is
top + per topic (its fixed part, name, partition count) + partitions × a constant.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from rig.protocol.apis import Api
from rig.protocol.offsets import (
    EARLIEST_TIMESTAMP,
    EPOCH_END_OFFSET_RESPONSE,
    LIST_OFFSETS_PARTITION,
    LIST_OFFSETS_PARTITION_RESPONSE,
    LIST_OFFSETS_REQUEST,
    LIST_OFFSETS_RESPONSE,
    LIST_OFFSETS_TOPIC,
    LIST_OFFSETS_TOPIC_RESPONSE,
    OFFSET_FOR_LEADER_EPOCH_REQUEST,
    OFFSET_FOR_LEADER_EPOCH_RESPONSE,
    OFFSET_FOR_LEADER_PARTITION,
    OFFSET_FOR_LEADER_TOPIC,
    OFFSET_FOR_LEADER_TOPIC_RESULT,
    EpochEndOffsetResponse,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
)
from rig.protocol.primitives import INT64, array_prefix_size, topic_array_size
from rig.protocol.schema import Schema, carries, fixed_size

_MESSAGES = {
    "list_offsets_request": (LIST_OFFSETS_REQUEST, LIST_OFFSETS_TOPIC, LIST_OFFSETS_PARTITION),
    "list_offsets_response": (LIST_OFFSETS_RESPONSE, LIST_OFFSETS_TOPIC_RESPONSE,
                              LIST_OFFSETS_PARTITION_RESPONSE),
    "epoch_request": (OFFSET_FOR_LEADER_EPOCH_REQUEST, OFFSET_FOR_LEADER_TOPIC,
                      OFFSET_FOR_LEADER_PARTITION),
    "epoch_response": (OFFSET_FOR_LEADER_EPOCH_RESPONSE, OFFSET_FOR_LEADER_TOPIC_RESULT,
                       EPOCH_END_OFFSET_RESPONSE),
}


@cache
def _constants(message: str, version: int) -> tuple[bool, int, int, int]:
    """(flexible, top, topic, partition) of `message` at `version`."""
    top, topic, partition = _MESSAGES[message]
    api: Api = top.api
    api.check_version(version)
    return (api.is_flexible(version), fixed_size(top, version), fixed_size(topic, version),
            fixed_size(partition, version))


def _size(message: str, version: int, topics: Iterable[tuple[str, int]],
          per_partition: int = 0) -> int:
    flex, top, topic, partition = _constants(message, version)
    return top + topic_array_size(topics, flex, topic, partition + per_partition)


def list_offsets_request_body_size(version: int, topics: Iterable[tuple[str, int]]) -> int:
    """len(encode_list_offsets_request(...)) asking about `topics` (name, partitions)."""
    return _size("list_offsets_request", version, topics)


def list_offsets_response_body_size(version: int, topics: Iterable[tuple[str, int]],
                                    answered: bool = True) -> int:
    """len(encode_list_offsets_response(...)) answering `topics`; in v0 a partition's offsets
    are an array: one offset, or none when the partition is answered with an error."""
    extra = 0
    if carries(LIST_OFFSETS_PARTITION_RESPONSE, "old_style_offsets", version):
        flex = _constants("list_offsets_response", version)[0]
        n = 1 if answered else 0
        extra = array_prefix_size(n, flex) + n * (INT64.width or 0)
    return _size("list_offsets_response", version, topics, extra)


def offsets_for_leader_epoch_request_body_size(version: int,
                                               topics: Iterable[tuple[str, int]]) -> int:
    return _size("epoch_request", version, topics)


def offsets_for_leader_epoch_response_body_size(version: int,
                                                topics: Iterable[tuple[str, int]]) -> int:
    return _size("epoch_response", version, topics)


# -- materializing -------------------------------------------------------------------------------
# Placeholder values are fixed and arbitrary; only their sizes matter.


def materialize_list_offsets(topics: Iterable[tuple[str, int]], answered: bool = True,
                             ) -> tuple[ListOffsetsRequest, ListOffsetsResponse]:
    topics = tuple(topics)
    request = ListOffsetsRequest(replica_id=1, topics=tuple(
        ListOffsetsTopic(name, tuple(ListOffsetsPartition(i, 3, EARLIEST_TIMESTAMP)
                                     for i in range(n)))
        for name, n in topics))
    response = ListOffsetsResponse(topics=tuple(
        ListOffsetsTopicResponse(name, tuple(
            ListOffsetsPartitionResponse(i, 0 if answered else 6, (42,) if answered else (),
                                         -1, 42, 3)
            for i in range(n)))
        for name, n in topics))
    return request, response


def materialize_offsets_for_leader_epoch(topics: Iterable[tuple[str, int]],
                                         ) -> tuple[OffsetForLeaderEpochRequest,
                                                    OffsetForLeaderEpochResponse]:
    topics = tuple(topics)
    request = OffsetForLeaderEpochRequest(replica_id=1, topics=tuple(
        OffsetForLeaderTopic(name, tuple(OffsetForLeaderPartition(i, 5, 4) for i in range(n)))
        for name, n in topics))
    response = OffsetForLeaderEpochResponse(topics=tuple(
        OffsetForLeaderTopicResult(name, tuple(EpochEndOffsetResponse(0, i, 4, 100)
                                               for i in range(n)))
        for name, n in topics))
    return request, response


def schemas() -> tuple[Schema, ...]:
    """Every struct description here, for tests that check the descriptions themselves."""
    return tuple(s for group in _MESSAGES.values() for s in group)
