"""The fast size path for a consumer's group coordinator messages: FindCoordinator, OffsetCommit
and OffsetFetch as rig's consumer sends them and a broker answers them, exact body sizes from
per-version constants (memoized) plus the strings and arrays, without encoding. `materialize_*`
builds messages of the same shape, so tests prove size == len(encode(materialize(...))).

Topics are given as (name, partitions). A commit's metadata, and an answered fetch's, is the
empty string (OffsetAndMetadata's default; OffsetFetchResponse.NO_METADATA).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from rig.protocol.apis import Api
from rig.protocol.find_coordinator import (
    COORDINATOR,
    FIND_COORDINATOR_REQUEST,
    FIND_COORDINATOR_RESPONSE,
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from rig.protocol.offset_commit import (
    OFFSET_COMMIT_REQUEST,
    OFFSET_COMMIT_REQUEST_PARTITION,
    OFFSET_COMMIT_REQUEST_TOPIC,
    OFFSET_COMMIT_RESPONSE,
    OFFSET_COMMIT_RESPONSE_PARTITION,
    OFFSET_COMMIT_RESPONSE_TOPIC,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from rig.protocol.offset_fetch import (
    OFFSET_FETCH_REQUEST,
    OFFSET_FETCH_REQUEST_GROUP,
    OFFSET_FETCH_REQUEST_TOPIC,
    OFFSET_FETCH_RESPONSE,
    OFFSET_FETCH_RESPONSE_GROUP,
    OFFSET_FETCH_RESPONSE_PARTITION,
    OFFSET_FETCH_RESPONSE_TOPIC,
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
)
from rig.protocol.primitives import array_prefix_size, string_size, topic_array_size
from rig.protocol.schema import Schema, carries, fixed_size

Topics = Iterable[tuple[str, int]]
_INT32 = 4
_MESSAGES = {
    "find_request": (FIND_COORDINATOR_REQUEST,),
    "find_response": (FIND_COORDINATOR_RESPONSE, COORDINATOR),
    "commit_request": (OFFSET_COMMIT_REQUEST, OFFSET_COMMIT_REQUEST_TOPIC,
                       OFFSET_COMMIT_REQUEST_PARTITION),
    "commit_response": (OFFSET_COMMIT_RESPONSE, OFFSET_COMMIT_RESPONSE_TOPIC,
                        OFFSET_COMMIT_RESPONSE_PARTITION),
    "fetch_request": (OFFSET_FETCH_REQUEST, OFFSET_FETCH_REQUEST_GROUP,
                      OFFSET_FETCH_REQUEST_TOPIC),
    "fetch_response": (OFFSET_FETCH_RESPONSE, OFFSET_FETCH_RESPONSE_GROUP,
                       OFFSET_FETCH_RESPONSE_TOPIC, OFFSET_FETCH_RESPONSE_PARTITION),
}


@cache
def _constants(message: str, version: int) -> tuple[bool, tuple[int, ...]]:
    """(flexible, the fixed bytes of each struct of `message` at `version`, in _MESSAGES order)."""
    structs = _MESSAGES[message]
    api: Api = structs[0].api
    api.check_version(version)
    return api.is_flexible(version), tuple(fixed_size(s, version) for s in structs)


# -- FindCoordinator -----------------------------------------------------------------------------


def find_coordinator_request_body_size(version: int, key: str) -> int:
    """len(encode_find_coordinator_request(...)) asking for the coordinator of group `key`
    (v4+: a batch of that one key)."""
    flex, (top,) = _constants("find_request", version)
    if carries(FIND_COORDINATOR_REQUEST, "key", version):
        return top + string_size(key, flex)
    return top + array_prefix_size(1, flex) + string_size(key, flex)


def find_coordinator_response_body_size(version: int, key: str, host: str,
                                        error_message: str | None) -> int:
    """len(encode_find_coordinator_response(...)) naming a coordinator at `host` (or none:
    host ""), with `error_message` where the version carries one."""
    flex, (top, coordinator) = _constants("find_response", version)
    if carries(FIND_COORDINATOR_RESPONSE, "host", version):
        message = (string_size(error_message, flex)
                   if carries(FIND_COORDINATOR_RESPONSE, "error_message", version) else 0)
        return top + string_size(host, flex) + message
    return (top + array_prefix_size(1, flex) + coordinator + string_size(key, flex)
            + string_size(host, flex) + string_size(error_message, flex))


# -- OffsetCommit --------------------------------------------------------------------------------


def offset_commit_request_body_size(version: int, group_id: str, member_id: str,
                                    topics: Topics) -> int:
    """len(encode_offset_commit_request(...)) committing every partition of `topics` for
    `member_id` of `group_id` (no group.instance.id: null)."""
    flex, (top, topic, partition) = _constants("commit_request", version)
    size = top + string_size(group_id, flex)
    if carries(OFFSET_COMMIT_REQUEST, "member_id", version):
        size += string_size(member_id, flex)
    if carries(OFFSET_COMMIT_REQUEST, "group_instance_id", version):
        size += string_size(None, flex)
    return size + topic_array_size(topics, flex, topic, partition + string_size("", flex))


def offset_commit_response_body_size(version: int, topics: Topics) -> int:
    flex, (top, topic, partition) = _constants("commit_response", version)
    return top + topic_array_size(topics, flex, topic, partition)


# -- OffsetFetch ---------------------------------------------------------------------------------


def offset_fetch_request_body_size(version: int, group_id: str, topics: Topics) -> int:
    """len(encode_offset_fetch_request(...)) asking `group_id`'s committed offsets of the
    partitions of `topics` (v8+: a batch of that one group; v9+: no member id, a classic
    consumer's null)."""
    flex, (top, group, topic) = _constants("fetch_request", version)
    size = top + string_size(group_id, flex) + topic_array_size(topics, flex, topic, _INT32)
    if carries(OFFSET_FETCH_REQUEST, "groups", version):
        size += array_prefix_size(1, flex) + group
        if carries(OFFSET_FETCH_REQUEST_GROUP, "member_id", version):
            size += string_size(None, flex)
    return size


def offset_fetch_response_body_size(version: int, group_id: str, topics: Topics,
                                    answered: bool = True) -> int:
    """len(encode_offset_fetch_response(...)) answering every partition of `topics`, or, not
    `answered` (NOT_COORDINATOR and the like), the error: from v2 a top-level (v8+: the group's)
    error without topics, before that each partition with the error."""
    flex, (top, group, topic, partition) = _constants("fetch_response", version)
    if not answered and version >= 2:
        topics = ()
    size = top + topic_array_size(topics, flex, topic, partition + string_size("", flex))
    if carries(OFFSET_FETCH_RESPONSE, "groups", version):
        size += array_prefix_size(1, flex) + group + string_size(group_id, flex)
    return size


# -- materializing -------------------------------------------------------------------------------
# Placeholder values are fixed and arbitrary; only their sizes matter.


def materialize_find_coordinator(key: str, host: str, error_message: str | None,
                                 ) -> tuple[FindCoordinatorRequest, FindCoordinatorResponse]:
    request = FindCoordinatorRequest(key, 0, (key,))
    response = FindCoordinatorResponse(0, 0, error_message, 2, host, 9092, (
        Coordinator(key, 2, host, 9092, 0, error_message),))
    return request, response


def materialize_offset_commit(group_id: str, member_id: str, topics: Topics,
                              ) -> tuple[OffsetCommitRequest, OffsetCommitResponse]:
    topics = tuple(topics)
    request = OffsetCommitRequest(group_id, 3, member_id, None, -1, tuple(
        OffsetCommitRequestTopic(name, tuple(OffsetCommitRequestPartition(i, 42, 5, -1, "")
                                             for i in range(n)))
        for name, n in topics))
    response = OffsetCommitResponse(0, tuple(
        OffsetCommitResponseTopic(name, tuple(OffsetCommitResponsePartition(i, 0)
                                              for i in range(n)))
        for name, n in topics))
    return request, response


def materialize_offset_fetch(group_id: str, topics: Topics, answered: bool = True,
                             version: int = 0) -> tuple[OffsetFetchRequest, OffsetFetchResponse]:
    """The request and its answer (not `answered`: NOT_COORDINATOR, as `version` carries it)."""
    topics = tuple(topics)
    asked = tuple(OffsetFetchRequestTopic(name, tuple(range(n))) for name, n in topics)
    request = OffsetFetchRequest(group_id, asked, (OffsetFetchRequestGroup(group_id, None, -1,
                                                                           asked),), True)
    error = 0 if answered else 16
    answer = tuple(OffsetFetchResponseTopic(name, tuple(
        OffsetFetchResponsePartition(i, 42 if answered else -1, 5 if answered else -1, "", error)
        for i in range(n))) for name, n in topics)
    if not answered and version >= 2:
        answer = ()
    response = OffsetFetchResponse(0, answer, error, (OffsetFetchResponseGroup(group_id, answer,
                                                                               error),))
    return request, response


def schemas() -> tuple[Schema, ...]:
    """Every struct description here, for tests that check the descriptions themselves."""
    return tuple(s for group in _MESSAGES.values() for s in group)
