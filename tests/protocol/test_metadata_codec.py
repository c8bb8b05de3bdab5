"""Metadata (v0–v13) on the wire: the fast sizes agree with the encoder over every version and
many shapes, every version round-trips, and golden bytes written out by hand from Kafka's
MetadataRequest.json / MetadataResponse.json show the descriptions are Kafka's."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.errors import ProtocolError
from rig.protocol.apis import METADATA
from rig.protocol.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    decode_metadata_request,
    decode_metadata_response,
    encode_metadata_request,
    encode_metadata_response,
)
from rig.protocol.metadata_sizes import (
    materialize_metadata,
    metadata_request_body_size,
    metadata_response_body_size,
    schemas,
)

# Names short and long enough for a two-byte compact length; lists long enough for the same.
NAMES = st.one_of(st.text(st.characters(codec="utf-8"), max_size=8),
                  st.text(min_size=126, max_size=130))
BROKERS = st.lists(st.tuples(NAMES, st.one_of(st.none(), NAMES)), max_size=4)
PARTITIONS = st.lists(st.tuples(st.integers(0, 130), st.integers(0, 5), st.integers(0, 3)),
                      max_size=12)
TOPICS = st.lists(st.tuples(NAMES, PARTITIONS), max_size=3)


@given(version=st.sampled_from(list(METADATA.versions)), brokers=BROKERS, topics=TOPICS,
       cluster_id=st.one_of(st.none(), NAMES))
def test_metadata_sizes_match_the_encoder(version: int, brokers: list, topics: list,
                                          cluster_id: str | None) -> None:
    request, response = materialize_metadata(brokers, cluster_id, topics)
    assert metadata_request_body_size(version, [name for name, _ in topics]) == len(
        encode_metadata_request(request, version))
    assert metadata_response_body_size(version, brokers, cluster_id, topics) == len(
        encode_metadata_response(response, version))


def test_a_thousand_partitions_answer_in_tens_of_kilobytes() -> None:
    # Three replicas, all in sync, across three racked brokers: the point of sizing it.
    brokers = [(f"broker-{i}", f"az-{i}") for i in range(3)]
    size = metadata_response_body_size(12, brokers, "cmlnLWNsdXN0ZXItaWQtMA",
                                       [("t", [(3, 3, 0)] * 1000)])
    assert size == 42_131
    assert metadata_response_body_size(0, brokers, None, [("t", [(3, 3, 0)] * 1000)]) == 42_071


@pytest.mark.parametrize("schema", schemas(), ids=lambda s: s.name)
def test_every_dataclass_field_is_described(schema) -> None:
    assert {f.attr for f in schema.fields} == {f.name for f in dataclasses.fields(schema.cls)}


def _request(version: int) -> MetadataRequest:
    return MetadataRequest((MetadataRequestTopic(bytes(16), "t"),), True,
                           8 <= version <= 10, version >= 8)


def _response(version: int) -> MetadataResponse:
    return MetadataResponse(
        5 if version >= 3 else 0,
        (MetadataResponseBroker(1, "broker-1", 9092, "az-a" if version >= 1 else None),),
        "cmlnLWNsdXN0ZXItaWQtMA" if version >= 2 else None, 1 if version >= 1 else -1,
        (MetadataResponseTopic(0, "t", bytes(range(16)) if version >= 10 else bytes(16),
                               False, (MetadataResponsePartition(
                                   0, 0, 1, 4 if version >= 7 else -1, (1, 2), (1,),
                                   (2,) if version >= 5 else ()),),
                               7 if version >= 8 else -(2**31)),),
        9 if 8 <= version <= 10 else -(2**31), 0)


@pytest.mark.parametrize("version", list(METADATA.versions))
def test_metadata_round_trips(version: int) -> None:
    request = _request(version)
    assert decode_metadata_request(encode_metadata_request(request, version), version) == request
    response = _response(version)
    data = encode_metadata_response(response, version)
    assert decode_metadata_response(data, version) == response


def test_a_bool_is_one_byte_and_refuses_an_int() -> None:
    with pytest.raises(ProtocolError, match=r"allow_auto_topic_creation: bool must be a bool"):
        encode_metadata_request(MetadataRequest(allow_auto_topic_creation=1), 4)  # type: ignore
    assert decode_metadata_request(bytes.fromhex("00000000 02"), 4).allow_auto_topic_creation


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# A producer asks about topic "t"; broker 1 (rack az-a) answers: partition 0, leader 1 at epoch 4,
# replicas [1, 2], ISR [1], broker 2 offline.

UUID = "000102030405060708090a0b0c0d0e0f"


def test_golden_metadata_requests() -> None:
    request = MetadataRequest((MetadataRequestTopic(bytes(16), "t"),))
    # v0–v3: [topics] int32 count, each its name; v4 adds allow_auto_topic_creation
    assert encode_metadata_request(request, 0) == bytes.fromhex("00000001 0001 74")
    assert encode_metadata_request(request, 3) == bytes.fromhex("00000001 0001 74")
    assert encode_metadata_request(request, 4) == bytes.fromhex("00000001 0001 74 01")
    # v8: include_cluster_authorized_operations, include_topic_authorized_operations
    assert encode_metadata_request(request, 8) == bytes.fromhex("00000001 0001 74 01 00 00")
    # v9: compact array and string, a tag section after the topic and the message
    assert encode_metadata_request(request, 9) == bytes.fromhex("02 0274 00 01 00 00 00")
    # v10: the topic's id before its name; v11 drops include_cluster_authorized_operations
    zero = "00" * 16
    assert encode_metadata_request(request, 10) == bytes.fromhex(
        f"02 {zero} 0274 00 01 00 00 00")
    assert encode_metadata_request(request, 12) == bytes.fromhex(f"02 {zero} 0274 00 01 00 00")


def test_golden_metadata_responses() -> None:
    # v0: [brokers] node_id, host, port; [topics] error, name, [partitions] error, index,
    # leader, [replicas], [isr]
    assert encode_metadata_response(_response(0), 0) == bytes.fromhex(
        "00000001 00000001 0008 62726f6b65722d31 00002384"
        "00000001 0000 0001 74 00000001 0000 00000000 00000001"
        "00000002 00000001 00000002 00000001 00000001")
    # v1: the broker's rack, controller_id after the brokers, is_internal after the name
    partition_v1 = "0000 00000000 00000001 00000002 00000001 00000002 00000001 00000001"
    assert encode_metadata_response(_response(1), 1) == bytes.fromhex(
        "00000001 00000001 0008 62726f6b65722d31 00002384 0004 617a2d61"
        "00000001 00000001 0000 0001 74 00 00000001" + partition_v1)
    # v2: cluster_id before controller_id; v3: throttle_time_ms first
    cluster_id = "0016" + b"cmlnLWNsdXN0ZXItaWQtMA".hex()
    assert encode_metadata_response(_response(3), 3) == bytes.fromhex(
        "00000005 00000001 00000001 0008 62726f6b65722d31 00002384 0004 617a2d61"
        + cluster_id + "00000001 00000001 0000 0001 74 00 00000001" + partition_v1)
    # v8: leader_epoch (v7) after the leader, offline_replicas (v5) last, then the topic's and
    # the cluster's authorized operations
    assert encode_metadata_response(_response(8), 8) == bytes.fromhex(
        "00000005 00000001 00000001 0008 62726f6b65722d31 00002384 0004 617a2d61"
        + cluster_id + "00000001 00000001 0000 0001 74 00 00000001"
        "0000 00000000 00000001 00000004 00000002 00000001 00000002 00000001 00000001"
        "00000001 00000002 00000007 00000009")
    # v12: flexible (compact arrays and strings, tag sections), the topic id after the name,
    # no cluster authorized operations; v13 appends the top-level error_code
    v12 = ("00000005 02 00000001 09 62726f6b65722d31 00002384 05 617a2d61 00"
           "17" + b"cmlnLWNsdXN0ZXItaWQtMA".hex() + "00000001"
           "02 0000 0274" + UUID + "00 02 0000 00000000 00000001 00000004"
           "03 00000001 00000002 02 00000001 02 00000002 00 00000007 00")
    assert encode_metadata_response(_response(12), 12) == bytes.fromhex(v12 + "00")
    assert encode_metadata_response(_response(13), 13) == bytes.fromhex(v12 + "0000 00")
