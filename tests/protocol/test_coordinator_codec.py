"""FindCoordinator (v0–v6), OffsetCommit (v0–v9) and OffsetFetch (v0–v9) on the wire: the fast
sizes agree with the encoder over every version and many shapes, every version round-trips, and
golden bytes written out by hand from Kafka's JSON show the descriptions are Kafka's."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.protocol.apis import FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH
from rig.protocol.codec import normalize_struct
from rig.protocol.coordinator_sizes import (
    find_coordinator_request_body_size,
    find_coordinator_response_body_size,
    materialize_find_coordinator,
    materialize_offset_commit,
    materialize_offset_fetch,
    offset_commit_request_body_size,
    offset_commit_response_body_size,
    offset_fetch_request_body_size,
    offset_fetch_response_body_size,
    schemas,
)
from rig.protocol.find_coordinator import (
    decode_find_coordinator_request,
    decode_find_coordinator_response,
    encode_find_coordinator_request,
    encode_find_coordinator_response,
)
from rig.protocol.offset_commit import (
    decode_offset_commit_request,
    decode_offset_commit_response,
    encode_offset_commit_request,
    encode_offset_commit_response,
)
from rig.protocol.offset_fetch import (
    decode_offset_fetch_request,
    decode_offset_fetch_response,
    encode_offset_fetch_request,
    encode_offset_fetch_response,
)

NAMES = st.one_of(st.text(st.characters(codec="utf-8"), max_size=8),
                  st.text(min_size=126, max_size=130))
TOPICS = st.lists(st.tuples(NAMES, st.integers(0, 140)), max_size=3)


@given(version=st.sampled_from(list(FIND_COORDINATOR.versions)), key=NAMES,
       host=st.one_of(st.just(""), NAMES), message=st.one_of(st.none(), NAMES))
def test_find_coordinator_sizes_match_the_encoder(version: int, key: str, host: str,
                                                  message: str | None) -> None:
    request, response = materialize_find_coordinator(key, host, message)
    assert find_coordinator_request_body_size(version, key) == len(
        encode_find_coordinator_request(request, version))
    assert find_coordinator_response_body_size(version, key, host, message) == len(
        encode_find_coordinator_response(response, version))


@given(version=st.sampled_from(list(OFFSET_COMMIT.versions)), group=NAMES, member=NAMES,
       topics=TOPICS)
def test_offset_commit_sizes_match_the_encoder(version: int, group: str, member: str,
                                               topics: list) -> None:
    request, response = materialize_offset_commit(group, member, topics)
    assert offset_commit_request_body_size(version, group, member, topics) == len(
        encode_offset_commit_request(request, version))
    assert offset_commit_response_body_size(version, topics) == len(
        encode_offset_commit_response(response, version))


@given(version=st.sampled_from(list(OFFSET_FETCH.versions)), group=NAMES, topics=TOPICS,
       answered=st.booleans())
def test_offset_fetch_sizes_match_the_encoder(version: int, group: str, topics: list,
                                              answered: bool) -> None:
    request, response = materialize_offset_fetch(group, topics, answered, version)
    assert offset_fetch_request_body_size(version, group, topics) == len(
        encode_offset_fetch_request(request, version))
    assert offset_fetch_response_body_size(version, group, topics, answered) == len(
        encode_offset_fetch_response(response, version))


@pytest.mark.parametrize("schema", schemas(), ids=lambda s: s.name)
def test_every_dataclass_field_is_described(schema) -> None:
    assert {f.attr for f in schema.fields} == {f.name for f in dataclasses.fields(schema.cls)}


def _carried(obj, version: int):
    """`obj` as a decoder returns it at `version`: fields the version lacks at their defaults."""
    return normalize_struct(next(s for s in schemas() if s.cls is type(obj)), obj, version)


@pytest.mark.parametrize("version", list(FIND_COORDINATOR.versions))
def test_find_coordinator_round_trips(version: int) -> None:
    request, response = materialize_find_coordinator("g", "broker-2", "NONE")
    data = encode_find_coordinator_request(request, version)
    assert decode_find_coordinator_request(data, version) == _carried(request, version)
    data = encode_find_coordinator_response(response, version)
    assert decode_find_coordinator_response(data, version) == _carried(response, version)


@pytest.mark.parametrize("version", list(OFFSET_COMMIT.versions))
def test_offset_commit_round_trips(version: int) -> None:
    request, response = materialize_offset_commit("g", "m", [("t", 2)])
    data = encode_offset_commit_request(request, version)
    assert decode_offset_commit_request(data, version) == _carried(request, version)
    data = encode_offset_commit_response(response, version)
    assert decode_offset_commit_response(data, version) == _carried(response, version)


@pytest.mark.parametrize("version", list(OFFSET_FETCH.versions))
def test_offset_fetch_round_trips(version: int) -> None:
    request, response = materialize_offset_fetch("g", [("t", 2)], True, version)
    data = encode_offset_fetch_request(request, version)
    assert decode_offset_fetch_request(data, version) == _carried(request, version)
    data = encode_offset_fetch_response(response, version)
    assert decode_offset_fetch_response(data, version) == _carried(response, version)


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# Group "g" (member "m", generation 3) commits offset 42 (epoch 5) of partition 0 of topic "t";
# its coordinator is broker 2 at "b":9092.

def test_golden_find_coordinator() -> None:
    request, _ = materialize_find_coordinator("g", "b", None)
    # v0: key; v1: key_type after it; v3: flexible; v4: key_type, then a batch of keys
    assert encode_find_coordinator_request(request, 0) == bytes.fromhex("0001 67")
    assert encode_find_coordinator_request(request, 1) == bytes.fromhex("0001 67 00")
    assert encode_find_coordinator_request(request, 3) == bytes.fromhex("0267 00 00")
    assert encode_find_coordinator_request(request, 4) == bytes.fromhex("00 02 0267 00")
    # v0: error_code, node_id, host, port (0.8.2's ConsumerMetadata answer: the same bytes)
    _, response = materialize_find_coordinator("g", "b", None)
    assert encode_find_coordinator_response(response, 0) == bytes.fromhex(
        "0000 00000002 0001 62 00002384")
    # v1: throttle_time_ms first, a null error_message after the error code
    assert encode_find_coordinator_response(response, 1) == bytes.fromhex(
        "00000000 0000 ffff 00000002 0001 62 00002384")
    _, response = materialize_find_coordinator("g", "b", "NONE")
    assert encode_find_coordinator_response(response, 3) == bytes.fromhex(
        "00000000 0000 05 4e4f4e45 00000002 0262 00002384 00")
    # v4: one coordinator per key: key, node_id, host, port, error_code, error_message
    assert encode_find_coordinator_response(response, 4) == bytes.fromhex(
        "00000000 02 0267 00000002 0262 00002384 0000 05 4e4f4e45 00 00")


def test_golden_offset_commit() -> None:
    request, response = materialize_offset_commit("g", "m", [("t", 1)])
    tail = "00000001 0001 74 00000001 00000000 000000000000002a"
    # v0: group_id, [topics] name, [partitions] index, offset, metadata
    assert encode_offset_commit_request(request, 0) == bytes.fromhex(
        "0001 67" + tail + "0000")
    # v1: generation and member id; each partition a commit timestamp
    assert encode_offset_commit_request(request, 1) == bytes.fromhex(
        "0001 67 00000003 0001 6d" + tail + "ffffffffffffffff 0000")
    # v2: retention_time_ms instead of the timestamp; v6: no retention, the leader epoch
    assert encode_offset_commit_request(request, 2) == bytes.fromhex(
        "0001 67 00000003 0001 6d ffffffffffffffff" + tail + "0000")
    assert encode_offset_commit_request(request, 6) == bytes.fromhex(
        "0001 67 00000003 0001 6d" + tail + "00000005 0000")
    # v7: a null group_instance_id after the member id; v8: flexible
    assert encode_offset_commit_request(request, 7) == bytes.fromhex(
        "0001 67 00000003 0001 6d ffff" + tail + "00000005 0000")
    assert encode_offset_commit_request(request, 8) == bytes.fromhex(
        "0267 00000003 026d 00 02 0274 02 00000000 000000000000002a 00000005 01 00 00 00")
    # the answer: [topics] name, [partitions] index, error_code; v3 throttle_time_ms first
    assert encode_offset_commit_response(response, 0) == bytes.fromhex(
        "00000001 0001 74 00000001 00000000 0000")
    assert encode_offset_commit_response(response, 3) == bytes.fromhex(
        "00000000 00000001 0001 74 00000001 00000000 0000")
    assert encode_offset_commit_response(response, 8) == bytes.fromhex(
        "00000000 02 0274 02 00000000 0000 00 00 00")


def test_golden_offset_fetch() -> None:
    request, response = materialize_offset_fetch("g", [("t", 1)])
    # v0: group_id, [topics] name, [partition_indexes]
    assert encode_offset_fetch_request(request, 1) == bytes.fromhex(
        "0001 67 00000001 0001 74 00000001 00000000")
    # v7: flexible (v6) and require_stable; v8: a batch of groups; v9: member id and epoch
    assert encode_offset_fetch_request(request, 7) == bytes.fromhex(
        "0267 02 0274 02 00000000 00 01 00")
    assert encode_offset_fetch_request(request, 8) == bytes.fromhex(
        "02 0267 02 0274 02 00000000 00 00 01 00")
    assert encode_offset_fetch_request(request, 9) == bytes.fromhex(
        "02 0267 00 ffffffff 02 0274 02 00000000 00 00 01 00")
    # the answer: [topics] name, [partitions] index, offset, metadata, error_code
    partition = "00000000 000000000000002a"
    assert encode_offset_fetch_response(response, 1) == bytes.fromhex(
        "00000001 0001 74 00000001" + partition + "0000 0000")
    # v2: the top-level error_code; v3: throttle_time_ms; v5: the leader epoch
    assert encode_offset_fetch_response(response, 2) == bytes.fromhex(
        "00000001 0001 74 00000001" + partition + "0000 0000 0000")
    assert encode_offset_fetch_response(response, 5) == bytes.fromhex(
        "00000000 00000001 0001 74 00000001" + partition + "00000005 0000 0000 0000")
    # v8: one group: its id, its topics, its error code
    assert encode_offset_fetch_response(response, 8) == bytes.fromhex(
        "00000000 02 0267 02 0274 02" + partition + "00000005 01 0000 00 00 0000 00 00")
    # NOT_COORDINATOR: v0–v1 each partition with it, from v2 a top-level error, no topics
    _, refused = materialize_offset_fetch("g", [("t", 1)], False, 1)
    assert encode_offset_fetch_response(refused, 1) == bytes.fromhex(
        "00000001 0001 74 00000001 00000000 ffffffffffffffff 0000 0010")
    _, refused = materialize_offset_fetch("g", [("t", 1)], False, 3)
    assert encode_offset_fetch_response(refused, 3) == bytes.fromhex("00000000 00000000 0010")
