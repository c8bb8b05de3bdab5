"""Produce on the wire (api_key 0, v0–v13): the fast size path agrees with the encoder over every
version and many shapes, messages round-trip, and golden bytes written out by hand from
ProduceRequest.json / ProduceResponse.json show the description is Kafka's, not only consistent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.protocol import PRODUCE, RequestHeader, encode_request_header, frame
from rig.protocol.fetch_response import LeaderIdAndEpoch, NodeEndpoint
from rig.protocol.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
    decode_produce_request,
    decode_produce_response,
    encode_produce_request,
    encode_produce_response,
)
from rig.protocol.produce_sizes import (
    ProduceRequestShape,
    ProduceResponseShape,
    materialize_produce_request,
    materialize_produce_response,
    produce_request_body_size,
    produce_response_body_size,
    request_shape_size,
    response_shape_size,
)

VERSIONS = list(PRODUCE.versions)
NAMES = st.text(st.characters(codec="utf-8"), max_size=30)
# records lengths either side of the compact length's 1- / 2- / 3-byte boundaries
LENGTHS = st.one_of(st.integers(0, 300), st.sampled_from([126, 127, 128, 16382, 16383, 16384]))


@given(version=st.sampled_from(VERSIONS),
       topics=st.lists(st.tuples(NAMES, st.lists(LENGTHS, max_size=140)), max_size=4))
def test_request_size_matches_the_encoder(version: int, topics: list) -> None:
    shape = ProduceRequestShape(version, tuple((n, tuple(r)) for n, r in topics))
    encoded = encode_produce_request(materialize_produce_request(shape), version)
    assert request_shape_size(shape) == len(encoded)


@given(version=st.sampled_from(VERSIONS),
       topics=st.lists(st.tuples(NAMES, st.integers(0, 200)), max_size=4))
def test_response_size_matches_the_encoder(version: int, topics: list) -> None:
    shape = ProduceResponseShape(version, tuple(topics))
    encoded = encode_produce_response(materialize_produce_response(shape), version)
    assert response_shape_size(shape) == len(encoded)


@pytest.mark.parametrize("version", VERSIONS)
def test_messages_round_trip(version: int) -> None:
    req = materialize_produce_request(ProduceRequestShape(version, (("t", (3, 0, 200)),)))
    req = ProduceRequest(transactional_id="tx" if version >= 3 else None, acks=1,
                         timeout_ms=1500, topic_data=tuple(
                             TopicProduceData(t.name if version <= 12 else "", t.topic_id
                                              if version >= 13 else bytes(16), tuple(
                                                  PartitionProduceData(p.index, bytes(3))
                                                  for p in t.partition_data))
                             for t in req.topic_data))
    assert decode_produce_request(encode_produce_request(req, version), version) == req
    resp = materialize_produce_response(ProduceResponseShape(version, (("t", 2),)))
    assert len(resp.responses[0].partition_responses) == 2
    if version >= 8:
        part = PartitionProduceResponse(1, 87, 5, -1, 0,
                                        (BatchIndexAndErrorMessage(0, "bad"),), "oops")
        resp = ProduceResponse(responses=(TopicProduceResponse(
            resp.responses[0].name, resp.responses[0].topic_id, (part,)),), throttle_time_ms=9)
    data = encode_produce_response(resp, version)
    back = decode_produce_response(data, version)
    assert encode_produce_response(back, version) == data


def test_the_fast_path_takes_any_iterables() -> None:
    assert produce_request_body_size(9, [("t", iter([3, 4]))]) == request_shape_size(
        ProduceRequestShape(9, (("t", (3, 4)),)))
    assert produce_response_body_size(9, {"t": 2}.items()) == response_shape_size(
        ProduceResponseShape(9, (("t", 2),)))


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# A request: acks -1, timeout_ms 30000, topic "t", partition 0 carrying 3 bytes of records "abc".

def _request(topic_id: bytes = bytes(16)) -> ProduceRequest:
    return ProduceRequest(acks=-1, timeout_ms=30_000, topic_data=(
        TopicProduceData("t", topic_id, (PartitionProduceData(0, b"abc"),)),))


def test_golden_request_v0_to_v2() -> None:
    # acks int16, timeout_ms int32, [topic_data] int32 count: name int16 length + bytes,
    # [partition_data] int32 count: index int32, records int32 length + bytes
    golden = bytes.fromhex("ffff 00007530 00000001 0001 74 00000001 00000000 00000003 616263")
    for version in (0, 1, 2):
        assert encode_produce_request(_request(), version) == golden


def test_golden_request_v3_adds_a_null_transactional_id() -> None:
    golden = bytes.fromhex("ffff" "ffff 00007530 00000001 0001 74 00000001 00000000 00000003"
                           "616263")
    assert encode_produce_request(_request(), 3) == golden
    assert encode_produce_request(_request(), 8) == golden


def test_golden_request_v9_is_flexible() -> None:
    # compact nullable string: 0 = null; compact array / string / records: length + 1 as a
    # uvarint; an empty tag section (0) closes each partition, topic and the body
    golden = bytes.fromhex("00 ffff 00007530 02 0274 02 00000000 04616263 00 00 00")
    assert encode_produce_request(_request(), 9) == golden
    assert encode_produce_request(_request(), 12) == golden


def test_golden_request_v13_names_the_topic_by_id() -> None:
    topic_id = bytes(range(16))
    golden = bytes.fromhex("00 ffff 00007530 02") + topic_id + bytes.fromhex(
        "02 00000000 04616263 00 00 00")
    assert encode_produce_request(_request(topic_id), 13) == golden


def test_golden_framed_request_v9() -> None:
    # size int32, then request header v2: api_key 0, api_version 9, correlation_id 7, client_id
    # "producer-p" (int16 length, even when flexible), an empty tag section; then the body
    header = encode_request_header(RequestHeader(9, 7, "producer-p", PRODUCE.key))
    body = encode_produce_request(_request(), 9)
    # 21 bytes of header and 22 of body: 43 (0x2b)
    golden = bytes.fromhex("0000002b 0000 0009 00000007 000a") + b"producer-p" + bytes.fromhex(
        "00" "00 ffff 00007530 02 0274 02 00000000 04616263 00 00 00")
    assert frame(header, body) == golden


def _response() -> ProduceResponse:
    return ProduceResponse(responses=(TopicProduceResponse("t", bytes(16), (
        PartitionProduceResponse(index=0, base_offset=5, log_start_offset=0),)),))


def test_golden_responses() -> None:
    head = "00000001 0001 74 00000001 00000000 0000 0000000000000005"
    assert encode_produce_response(_response(), 0) == bytes.fromhex(head)
    # v1: throttle_time_ms after the responses
    assert encode_produce_response(_response(), 1) == bytes.fromhex(head + "00000000")
    # v2: log_append_time_ms -1
    v2 = head + "ffffffffffffffff"
    assert encode_produce_response(_response(), 2) == bytes.fromhex(v2 + "00000000")
    # v5: log_start_offset
    v5 = v2 + "0000000000000000"
    assert encode_produce_response(_response(), 5) == bytes.fromhex(v5 + "00000000")
    # v8: record_errors [] (int32 0) and error_message null (int16 -1)
    assert encode_produce_response(_response(), 8) == bytes.fromhex(v5 + "00000000 ffff 00000000")
    # v9: compact encodings, a tag section after the partition, the topic and the body
    flex = ("02 0274 02 00000000 0000 0000000000000005 ffffffffffffffff 0000000000000000"
            "01 00 00 00 00000000 00")
    assert encode_produce_response(_response(), 9) == bytes.fromhex(flex)
    assert encode_produce_response(_response(), 12) == bytes.fromhex(flex)


ENDPOINTS = st.lists(st.builds(NodeEndpoint, st.integers(0, 2**31 - 1), NAMES,
                               st.integers(0, 65535), st.none() | NAMES), max_size=3)


@given(version=st.sampled_from([v for v in VERSIONS if v >= 10]),
       topics=st.lists(st.tuples(NAMES, st.integers(1, 50)), min_size=1, max_size=3),
       leaders=st.integers(0, 150), endpoints=ENDPOINTS)
def test_a_not_leader_answer_with_its_current_leader_and_endpoints_is_sized_exactly(
        version: int, topics: list, leaders: int, endpoints: list) -> None:
    leaders = min(leaders, sum(n for _, n in topics))
    shape = ProduceResponseShape(version, tuple(topics), leaders, tuple(endpoints))
    encoded = encode_produce_response(materialize_produce_response(shape), version)
    assert response_shape_size(shape) == len(encoded)
    assert produce_response_body_size(version, topics, leaders, iter(endpoints)) == len(encoded)


def test_golden_v10_response_names_the_current_leader_and_its_endpoint() -> None:
    # KIP-951: PartitionProduceResponse's tag 0 CurrentLeader (leader_id, leader_epoch, its own
    # empty tag section) and the body's tag 0 NodeEndpoints (compact array of node_id, host,
    # port, compact nullable rack, a tag section each)
    resp = ProduceResponse(responses=(TopicProduceResponse("t", bytes(16), (
        PartitionProduceResponse(index=0, error_code=6, base_offset=-1,
                                 current_leader=LeaderIdAndEpoch(2, 9)),)),),
        node_endpoints=(NodeEndpoint(2, "broker-2", 9092, "az-b"),))
    partition = ("00000000 0006 ffffffffffffffff ffffffffffffffff ffffffffffffffff 01 00"
                 "01 00 09 00000002 00000009 00")
    endpoints = "02 00000002 0962726f6b65722d32 00002384 05617a2d62 00"
    golden = bytes.fromhex("02 0274 02" + partition + "00 00000000 01 00 18" + endpoints)
    assert len(bytes.fromhex(endpoints)) == 0x18
    assert encode_produce_response(resp, 10) == golden
    # before v10 neither is carried: the same answer is v9's bytes
    assert produce_response_body_size(9, [("t", 1)], 1, resp.node_endpoints) == len(
        encode_produce_response(resp, 9))
