"""A consumer member's messages to and from its group coordinator on the wire, at their exact
bytes: FindCoordinator, OffsetCommit and OffsetFetch at the release's newest versions
(rig.scenario.api_versions), each with its size prefix and header (the member's client.id).

What rig's member sends: its group id; from OffsetCommit v1 a generation and a member id as
Kafka's group coordinator forms one, client.id + "-" + a random UUID (GroupMetadata
.generateMemberId: rig has no JoinGroup, so the UUID is a fixed one of the same 36 characters);
no group.instance.id; each position committed with empty metadata; the committed offsets of
every assigned partition asked for. A classic consumer's OffsetFetch v9 names no member (null,
epoch -1).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from rig.cluster.endpoints import broker_host
from rig.cluster.partition import partitions_by_topic
from rig.protocol import request_wire_size, response_wire_size
from rig.protocol.apis import FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH
from rig.protocol.coordinator_sizes import (
    find_coordinator_request_body_size,
    find_coordinator_response_body_size,
    offset_commit_request_body_size,
    offset_commit_response_body_size,
    offset_fetch_request_body_size,
    offset_fetch_response_body_size,
)
from rig.scenario.api_versions import (
    find_coordinator_version,
    offset_commit_version,
    offset_fetch_version,
)

# The error message a v3 FindCoordinator answer carries (2.4–2.8's KafkaApis:
# setErrorMessage(error.message), Errors.NONE's "NONE"; v1–v2 brokers and v4+ answers carry
# null): found, or COORDINATOR_NOT_AVAILABLE's.
FOUND_MESSAGE = "NONE"
NOT_AVAILABLE_MESSAGE = "The coordinator is not available."


class CoordinatorWire:
    """The sizes of one member's coordinator messages: FindCoordinator's each way, and
    (request, response) of a commit or an offset fetch."""

    def __init__(self, release: str, client_id: str, group: str):
        self.client_id = client_id
        self.group = group
        self.member_id = f"{client_id}-{uuid.UUID(int=0)}"
        self.find_version = find_coordinator_version(release)
        self.commit_version = offset_commit_version(release)
        self.fetch_version = offset_fetch_version(release)

    def find_request(self) -> int:
        """FindCoordinator for the group."""
        version = self.find_version
        return request_wire_size(FIND_COORDINATOR, version, self.client_id,
                                 find_coordinator_request_body_size(version, self.group))

    def find_response(self, coordinator: int) -> int:
        """Its answer, naming `coordinator` (−1: none available, Node.noNode's empty host)."""
        version = self.find_version
        found = coordinator >= 0
        message = (FOUND_MESSAGE if found else NOT_AVAILABLE_MESSAGE) if version == 3 else None
        return response_wire_size(FIND_COORDINATOR, version, find_coordinator_response_body_size(
            version, self.group, broker_host(coordinator) if found else "", message))

    def commit(self, keys: Iterable[tuple[str, int]]) -> tuple[int, int]:
        """OffsetCommit of the partitions `keys`, and its answer (one error code each)."""
        version = self.commit_version
        topics = list(partitions_by_topic(keys).items())
        request = offset_commit_request_body_size(version, self.group, self.member_id, topics)
        response = offset_commit_response_body_size(version, topics)
        return (request_wire_size(OFFSET_COMMIT, version, self.client_id, request),
                response_wire_size(OFFSET_COMMIT, version, response))

    def fetch(self, keys: Iterable[tuple[str, int]], answered: bool = True) -> tuple[int, int]:
        """OffsetFetch of the partitions `keys`, and its answer (not `answered`: an error)."""
        version = self.fetch_version
        topics = list(partitions_by_topic(keys).items())
        request = offset_fetch_request_body_size(version, self.group, topics)
        response = offset_fetch_response_body_size(version, self.group, topics, answered)
        return (request_wire_size(OFFSET_FETCH, version, self.client_id, request),
                response_wire_size(OFFSET_FETCH, version, response))
