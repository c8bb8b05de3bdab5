"""A consumer member's FindCoordinator, OffsetCommit and OffsetFetch, and their answers, are
counted at their exact bytes on the wire: size prefix, header (the member's client.id) and the
body at the release's newest version, checked message by message against the encoder."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.transport import Transport
from rig.events import names
from rig.protocol import (
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.apis import FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, Api
from rig.protocol.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    encode_find_coordinator_request,
    encode_find_coordinator_response,
)
from rig.protocol.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    encode_offset_commit_request,
    encode_offset_commit_response,
)
from rig.protocol.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    encode_offset_fetch_request,
    encode_offset_fetch_response,
)
from rig.scenario.api_versions import (
    FIND_COORDINATOR_VERSION_BY_RELEASE,
    OFFSET_COMMIT_VERSION_BY_RELEASE,
    OFFSET_FETCH_VERSION_BY_RELEASE,
    find_coordinator_version,
    offset_commit_version,
    offset_fetch_version,
)
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS
from tests.cluster.simulated import checked_run, named

CLIENT = "consumer-g-0"
PARTITIONS = 4
# Group g's offsets partition is led by broker 2 (the kafka placement, seed 1): it is down from
# 3 s to 9 s, so the member finds another coordinator and fetches its committed offsets there.
SCENARIO = """
name: coordinator-wire
duration: 15s
kafka: "KAFKA"
cluster: {brokers: 3CONFIG}
topics: [{name: t, partitions: 4, replication_factor: 3}]
workload:
  producers: [{name: p, topic: t, rate: 100, acks: all}]
  consumers: [{group: g, topic: t, members: 1, commit: auto, auto_commit_interval: 500ms}]
faults:
  - {kind: crash, broker: 2, at: 3s, restart_after: 6s}
"""


def test_every_release_sends_its_newest_coordinator_versions() -> None:
    # (FindCoordinator, OffsetCommit, OffsetFetch)
    newest = {"0.8.2": (0, 1, 1), "0.9": (0, 2, 1), "0.10": (0, 2, 1), "0.11": (1, 3, 3),
              "1.0": (1, 3, 3), "1.1": (1, 3, 3), "2.0": (2, 4, 4), "2.1": (2, 6, 5),
              "2.3": (2, 7, 5), "2.4": (3, 8, 6), "2.5": (3, 8, 7), "2.7": (3, 8, 7),
              "2.8": (3, 8, 7), "3.0": (4, 8, 8), "3.1": (4, 8, 8), "3.3": (4, 8, 8),
              "3.4": (4, 8, 8), "3.5": (4, 8, 8), "3.6": (4, 8, 8), "3.7": (4, 9, 9),
              "3.8": (5, 9, 9), "3.9": (6, 9, 9), "4.0": (6, 9, 9), "4.1": (6, 9, 9),
              "4.2": (6, 9, 9)}
    assert {v: (find_coordinator_version(v), offset_commit_version(v), offset_fetch_version(v))
            for v in VERSIONS} == newest
    for api, table in ((FIND_COORDINATOR, FIND_COORDINATOR_VERSION_BY_RELEASE),
                       (OFFSET_COMMIT, OFFSET_COMMIT_VERSION_BY_RELEASE),
                       (OFFSET_FETCH, OFFSET_FETCH_VERSION_BY_RELEASE)):
        assert all(v in api.versions for _, v in table)


def _request(api: Api, version: int, body: bytes) -> int:
    return len(frame(encode_request_header(RequestHeader(version, 0, CLIENT, api.key)), body))


def _response(api: Api, version: int, body: bytes) -> int:
    return len(frame(encode_response_header(ResponseHeader(0), version, api), body))


def _expected(kafka: str, coordinator: int) -> dict[str, set[int]]:
    """Each message's framed bytes, encoded here from what the member sends and is answered
    (an answer: found / answered, or with an error)."""
    find, commit, fetch = (find_coordinator_version(kafka), offset_commit_version(kafka),
                           offset_fetch_version(kafka))
    message = "NONE" if find == 3 else None
    answer = FindCoordinatorResponse(0, 0, message, coordinator, f"broker-{coordinator}", 9092, (
        Coordinator("g", coordinator, f"broker-{coordinator}", 9092, 0, None),))
    # COORDINATOR_NOT_AVAILABLE: Node.noNode (-1, "", -1) and, in v3, the error's message
    message = "The coordinator is not available." if find == 3 else None
    none = FindCoordinatorResponse(0, 15, message, -1, "", -1, (
        Coordinator("g", -1, "", -1, 15, None),))
    member = f"{CLIENT}-{uuid.UUID(int=0)}"
    committed = OffsetCommitRequest("g", 1, member, None, -1, (OffsetCommitRequestTopic("t", tuple(
        OffsetCommitRequestPartition(p, 100, 0, -1, "") for p in range(PARTITIONS))),))
    acked = OffsetCommitResponse(0, (OffsetCommitResponseTopic("t", tuple(
        OffsetCommitResponsePartition(p, 0) for p in range(PARTITIONS))),))
    asked = (OffsetFetchRequestTopic("t", tuple(range(PARTITIONS))),)
    offsets = (OffsetFetchResponseTopic("t", tuple(
        OffsetFetchResponsePartition(p, 100, 0, "", 0) for p in range(PARTITIONS))),)
    # NOT_COORDINATOR: from v2 a top-level error (v8+: the group's) without topics
    refused = OffsetFetchResponse(0, (), 16, (OffsetFetchResponseGroup("g", (), 16),))
    return {
        "find": {_request(FIND_COORDINATOR, find, encode_find_coordinator_request(
            FindCoordinatorRequest("g", 0, ("g",)), find))},
        "found": {_response(FIND_COORDINATOR, find, encode_find_coordinator_response(r, find))
                  for r in (answer, none)},
        "commit": {_request(OFFSET_COMMIT, commit,
                            encode_offset_commit_request(committed, commit))},
        "committed": {_response(OFFSET_COMMIT, commit,
                                encode_offset_commit_response(acked, commit))},
        "fetch": {_request(OFFSET_FETCH, fetch, encode_offset_fetch_request(OffsetFetchRequest(
            "g", asked, (OffsetFetchRequestGroup("g", None, -1, asked),), True), fetch))},
        "fetched": {_response(OFFSET_FETCH, fetch, encode_offset_fetch_response(r, fetch))
                    for r in (OffsetFetchResponse(0, offsets, 0, (
                        OffsetFetchResponseGroup("g", offsets, 0),)), refused)},
    }


# Which message a send carries, by the function its delivery runs (rig.workload.offsets).
_KINDS = {"Committer.find.<locals>.at_broker": "find",
          "Committer.find.<locals>.at_broker.<locals>.<lambda>": "found",
          "Committer.commit.<locals>.at_coordinator": "commit",
          "Committer.commit.<locals>.at_coordinator.<locals>.<lambda>.<locals>.<lambda>":
              "committed",
          "Committer._resume.<locals>.at_coordinator": "fetch",
          "Committer._resume.<locals>.at_coordinator.<locals>.<lambda>": "fetched"}


@pytest.mark.parametrize("kafka", ["0.8.2", "0.10", "0.11", "2.1", "2.4", "3.0", "3.9", "4.1"])
def test_coordinator_messages_are_counted_at_their_wire_bytes(
        kafka: str, write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, Any, Any, int]] = []
    original = Transport.send

    def spy(self: Transport, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None],
            **kwargs: Any) -> None:
        kind = _KINDS.get(getattr(deliver, "__qualname__", ""))
        if kind is not None and not kwargs.get("sequenced"):
            sent.append((kind, src, dst, nbytes))
        original(self, src, dst, nbytes, deliver, **kwargs)

    monkeypatch.setattr(Transport, "send", spy)
    config = "" if kafka.startswith("4") else ", config: {zookeeper.session.timeout.ms: 2s}"
    text = SCENARIO.replace("KAFKA", kafka).replace("CONFIG", config)
    [variant] = load_scenario(write_scenario(text, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "coordinator-wire")
    found = [e["coordinator"] for e in named(events, names.COORDINATOR_FOUND)]
    assert found[0] == 2 and len(found) >= 2, found
    assert named(events, names.CONSUMER_RESUME), "no OffsetFetch: no coordinator change"
    assert {kind for kind, *_ in sent} == set(_KINDS.values())
    for kind, src, dst, nbytes in sent:
        # (a FindCoordinator answer names whichever broker leads the group's partition then)
        allowed = set().union(*(_expected(kafka, c)[kind] for c in {*found, src, dst}
                                if isinstance(c, int)))
        assert nbytes in allowed, (kind, src, dst, nbytes, allowed)
