"""ListOffsets (v0–v11) and OffsetsForLeaderEpoch (v0–v4) on the wire: the fast sizes agree with
the encoder over every version and many shapes, and golden bytes written out by hand from
Kafka's JSON show the descriptions are Kafka's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.protocol import LIST_OFFSETS, OFFSETS_FOR_LEADER_EPOCH
from rig.protocol.offsets import (
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
    decode_list_offsets_request,
    decode_list_offsets_response,
    decode_offset_for_leader_epoch_request,
    decode_offset_for_leader_epoch_response,
    encode_list_offsets_request,
    encode_list_offsets_response,
    encode_offset_for_leader_epoch_request,
    encode_offset_for_leader_epoch_response,
)
from rig.protocol.offsets_sizes import (
    list_offsets_request_body_size,
    list_offsets_response_body_size,
    materialize_list_offsets,
    materialize_offsets_for_leader_epoch,
    offsets_for_leader_epoch_request_body_size,
    offsets_for_leader_epoch_response_body_size,
)

TOPICS = st.lists(st.tuples(st.text(st.characters(codec="utf-8"), max_size=40),
                            st.integers(0, 150)), max_size=4)


@given(version=st.sampled_from(list(LIST_OFFSETS.versions)), topics=TOPICS,
       answered=st.booleans())
def test_list_offsets_sizes_match_the_encoder(version: int, topics: list, answered: bool) -> None:
    request, response = materialize_list_offsets(topics, answered)
    assert list_offsets_request_body_size(version, topics) == len(
        encode_list_offsets_request(request, version))
    assert list_offsets_response_body_size(version, topics, answered) == len(
        encode_list_offsets_response(response, version))


@given(version=st.sampled_from(list(OFFSETS_FOR_LEADER_EPOCH.versions)), topics=TOPICS)
def test_offsets_for_leader_epoch_sizes_match_the_encoder(version: int, topics: list) -> None:
    request, response = materialize_offsets_for_leader_epoch(topics)
    assert offsets_for_leader_epoch_request_body_size(version, topics) == len(
        encode_offset_for_leader_epoch_request(request, version))
    assert offsets_for_leader_epoch_response_body_size(version, topics) == len(
        encode_offset_for_leader_epoch_response(response, version))


@pytest.mark.parametrize("version", list(LIST_OFFSETS.versions))
def test_list_offsets_round_trips(version: int) -> None:
    request = ListOffsetsRequest(1, 1 if version >= 2 else 0, (ListOffsetsTopic("t", (
        ListOffsetsPartition(0, 7 if version >= 4 else -1, -2, 1),)),),
        500 if version >= 10 else 0)
    data = encode_list_offsets_request(request, version)
    assert decode_list_offsets_request(data, version) == request
    response = ListOffsetsResponse(5 if version >= 2 else 0, (ListOffsetsTopicResponse("t", (
        ListOffsetsPartitionResponse(0, 0, (9,) if version == 0 else (),
                                     3 if version >= 1 else -1, 9 if version >= 1 else -1,
                                     7 if version >= 4 else -1),)),))
    data = encode_list_offsets_response(response, version)
    assert decode_list_offsets_response(data, version) == response


@pytest.mark.parametrize("version", list(OFFSETS_FOR_LEADER_EPOCH.versions))
def test_offsets_for_leader_epoch_round_trips(version: int) -> None:
    request = OffsetForLeaderEpochRequest(1 if version >= 3 else -2, (OffsetForLeaderTopic("t", (
        OffsetForLeaderPartition(0, 7 if version >= 2 else -1, 6),)),))
    data = encode_offset_for_leader_epoch_request(request, version)
    assert decode_offset_for_leader_epoch_request(data, version) == request
    response = OffsetForLeaderEpochResponse(5 if version >= 2 else 0, (OffsetForLeaderTopicResult(
        "t", (EpochEndOffsetResponse(0, 0, 6 if version >= 1 else -1, 100),)),))
    data = encode_offset_for_leader_epoch_response(response, version)
    assert decode_offset_for_leader_epoch_response(data, version) == response


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# A follower (broker 1) asks about partition 0 of topic "t".

def _list_offsets_request() -> ListOffsetsRequest:
    return ListOffsetsRequest(1, 0, (ListOffsetsTopic("t", (
        ListOffsetsPartition(0, 5, -1, 1),)),))


def test_golden_list_offsets_requests() -> None:
    # v0: replica_id, [topics] int32 count, name, [partitions]: index, timestamp, max_num_offsets
    assert encode_list_offsets_request(_list_offsets_request(), 0) == bytes.fromhex(
        "00000001 00000001 0001 74 00000001 00000000 ffffffffffffffff 00000001")
    # v1: no max_num_offsets; v2: isolation_level int8 after replica_id
    assert encode_list_offsets_request(_list_offsets_request(), 1) == bytes.fromhex(
        "00000001 00000001 0001 74 00000001 00000000 ffffffffffffffff")
    assert encode_list_offsets_request(_list_offsets_request(), 2) == bytes.fromhex(
        "00000001 00 00000001 0001 74 00000001 00000000 ffffffffffffffff")
    # v4: current_leader_epoch between index and timestamp
    assert encode_list_offsets_request(_list_offsets_request(), 4) == bytes.fromhex(
        "00000001 00 00000001 0001 74 00000001 00000000 00000005 ffffffffffffffff")
    # v6: compact arrays and strings, a tag section after each struct
    assert encode_list_offsets_request(_list_offsets_request(), 6) == bytes.fromhex(
        "00000001 00 02 0274 02 00000000 00000005 ffffffffffffffff 00 00 00")


def test_golden_list_offsets_responses() -> None:
    def response(offsets: tuple[int, ...]) -> ListOffsetsResponse:
        return ListOffsetsResponse(0, (ListOffsetsTopicResponse("t", (
            ListOffsetsPartitionResponse(0, 0, offsets, -1, 42, 5),)),))
    # v0: [topics], name, [partitions]: index, error_code, [old_style_offsets] of int64
    assert encode_list_offsets_response(response((42,)), 0) == bytes.fromhex(
        "00000001 0001 74 00000001 00000000 0000 00000001 000000000000002a")
    # v1: timestamp and offset instead of the array; v2: throttle_time_ms first
    v1 = "0001 74 00000001 00000000 0000 ffffffffffffffff 000000000000002a"
    assert encode_list_offsets_response(response(()), 1) == bytes.fromhex("00000001" + v1)
    assert encode_list_offsets_response(response(()), 2) == bytes.fromhex(
        "00000000 00000001" + v1)
    # v6: flexible, with v4's leader_epoch
    assert encode_list_offsets_response(response(()), 6) == bytes.fromhex(
        "00000000 02 0274 02 00000000 0000 ffffffffffffffff 000000000000002a 00000005 00 00 00")


def test_golden_offsets_for_leader_epoch() -> None:
    request = OffsetForLeaderEpochRequest(1, (OffsetForLeaderTopic("t", (
        OffsetForLeaderPartition(0, 5, 4),)),))
    # v0: [topics], topic, [partitions]: partition, leader_epoch
    assert encode_offset_for_leader_epoch_request(request, 0) == bytes.fromhex(
        "00000001 0001 74 00000001 00000000 00000004")
    # v2: current_leader_epoch before leader_epoch; v3: replica_id first
    assert encode_offset_for_leader_epoch_request(request, 3) == bytes.fromhex(
        "00000001 00000001 0001 74 00000001 00000000 00000005 00000004")
    assert encode_offset_for_leader_epoch_request(request, 4) == bytes.fromhex(
        "00000001 02 0274 02 00000000 00000005 00000004 00 00 00")
    response = OffsetForLeaderEpochResponse(0, (OffsetForLeaderTopicResult("t", (
        EpochEndOffsetResponse(0, 0, 4, 100),)),))
    # v0: error_code, partition, end_offset; v1 adds leader_epoch; v2 throttle_time_ms first
    assert encode_offset_for_leader_epoch_response(response, 0) == bytes.fromhex(
        "00000001 0001 74 00000001 0000 00000000 0000000000000064")
    assert encode_offset_for_leader_epoch_response(response, 2) == bytes.fromhex(
        "00000000 00000001 0001 74 00000001 0000 00000000 00000004 0000000000000064")
    assert encode_offset_for_leader_epoch_response(response, 4) == bytes.fromhex(
        "00000000 02 0274 02 0000 00000000 00000004 0000000000000064 00 00 00")
