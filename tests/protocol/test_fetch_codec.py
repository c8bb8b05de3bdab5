"""The Fetch body codec: exact bytes for v6/v7 and flexible versions, round-trips, bad input.

Expected bytes are assembled by hand with `struct`, field by field, from Kafka's JSON
definitions, so they do not depend on the codec's own description of the messages.
"""

from __future__ import annotations

import contextlib
import dataclasses
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.errors import ProtocolError, UserError
from rig.protocol import (
    FETCH_VERSIONS,
    ZERO_UUID,
    AbortedTransaction,
    EpochEndOffset,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchTopic,
    ForgottenTopic,
    LeaderIdAndEpoch,
    NodeEndpoint,
    RecordsLength,
    SnapshotId,
    decode_fetch_request,
    decode_fetch_response,
    encode_fetch_request,
    encode_fetch_response,
    normalize_fetch_request,
    normalize_fetch_response,
)
from rig.protocol.fetch import iter_schemas
from rig.protocol.schema import Schema
from tests.examples import examples

VERSIONS = list(FETCH_VERSIONS)
MiB = 1 << 20
TOPIC_ID = bytes(range(1, 17))


def p(fmt: str, *values: object) -> bytes:
    return struct.pack(">" + fmt, *values)


def s16(text: str) -> bytes:
    """A classic string: int16 length + UTF-8."""
    data = text.encode()
    return p("h", len(data)) + data


def compact(text: str) -> bytes:
    """A compact string of fewer than 127 bytes: one varint byte of length + 1."""
    data = text.encode()
    return bytes([len(data) + 1]) + data


# -- exact bytes ---------------------------------------------------------------------------------

REQUEST = FetchRequest(
    replica_id=1,
    max_wait_ms=500,
    min_bytes=1,
    max_bytes=10 * MiB,
    session_id=0,
    session_epoch=0,
    topics=(
        FetchTopic(
            "test",
            TOPIC_ID,
            (FetchPartition(3, fetch_offset=42, log_start_offset=7, partition_max_bytes=MiB),),
        ),
    ),
    forgotten_topics=(ForgottenTopic("old", TOPIC_ID, (1, 2)),),
)


def test_v6_request_bytes() -> None:
    expected = (
        p("iiiib", 1, 500, 1, 10 * MiB, 0)  # replica_id, max_wait, min_bytes, max_bytes, isolation
        + p("i", 1)  # topics count
        + s16("test")
        + p("i", 1)  # partitions count
        + p("iqqi", 3, 42, 7, MiB)  # partition, fetch_offset, log_start_offset, max_bytes
    )
    assert encode_fetch_request(REQUEST, 6) == expected
    assert decode_fetch_request(expected, 6) == normalize_fetch_request(REQUEST, 6)


def test_v7_request_bytes() -> None:
    expected = (
        p("iiiib", 1, 500, 1, 10 * MiB, 0)
        + p("ii", 0, 0)  # session_id, session_epoch
        + p("i", 1)
        + s16("test")
        + p("i", 1)
        + p("iqqi", 3, 42, 7, MiB)
        + p("i", 1)  # forgotten_topics count
        + s16("old")
        + p("iii", 2, 1, 2)  # forgotten partitions: count, then each index
    )
    assert encode_fetch_request(REQUEST, 7) == expected
    assert decode_fetch_request(expected, 7) == normalize_fetch_request(REQUEST, 7)


def test_v7_request_is_v8_and_v9_adds_current_leader_epoch() -> None:
    assert encode_fetch_request(REQUEST, 8) == encode_fetch_request(REQUEST, 7)
    # One partition: v9 adds its int32 current_leader_epoch.
    assert len(encode_fetch_request(REQUEST, 9)) == len(encode_fetch_request(REQUEST, 7)) + 4


RESPONSE = FetchResponse(
    throttle_time_ms=0,
    error_code=0,
    session_id=99,
    responses=(
        FetchResponseTopic(
            "test",
            TOPIC_ID,
            (
                FetchResponsePartition(
                    partition_index=3,
                    high_watermark=100,
                    last_stable_offset=100,
                    log_start_offset=0,
                    records=b"abc",
                ),
            ),
        ),
    ),
)


def test_v6_response_bytes() -> None:
    expected = (
        p("i", 0)  # throttle_time_ms
        + p("i", 1)
        + s16("test")
        + p("i", 1)
        + p("ihqqq", 3, 0, 100, 100, 0)  # index, error, high watermark, LSO, log start
        + p("i", -1)  # aborted_transactions: null, as a broker sends for READ_UNCOMMITTED
        + p("i", 3)
        + b"abc"
    )
    assert encode_fetch_response(RESPONSE, 6) == expected
    assert decode_fetch_response(expected, 6) == normalize_fetch_response(RESPONSE, 6)


def test_v7_response_bytes_with_aborted_transactions() -> None:
    partition = dataclasses.replace(
        RESPONSE.responses[0].partitions[0],
        aborted_transactions=(AbortedTransaction(producer_id=5, first_offset=90),),
    )
    response = dataclasses.replace(
        RESPONSE, responses=(FetchResponseTopic("test", TOPIC_ID, (partition,)),)
    )
    expected = (
        p("ihi", 0, 0, 99)  # throttle_time_ms, error_code, session_id
        + p("i", 1)
        + s16("test")
        + p("i", 1)
        + p("ihqqq", 3, 0, 100, 100, 0)
        + p("iqq", 1, 5, 90)  # one aborted transaction: producer_id, first_offset
        + p("i", 3)
        + b"abc"
    )
    assert encode_fetch_response(response, 7) == expected
    assert decode_fetch_response(expected, 7) == normalize_fetch_response(response, 7)


def test_v15_request_bytes_flexible_with_topic_id_and_tagged_fields() -> None:
    request = dataclasses.replace(REQUEST, replica_epoch=5, rack_id="", cluster_id="c1")
    expected = (
        p("iiib", 500, 1, 10 * MiB, 0)  # no untagged replica_id from v15
        + p("ii", 0, 0)
        + b"\x02"  # topics: compact count 1 + 1
        + TOPIC_ID  # v13+: the topic's uuid instead of its name
        + b"\x02"
        + p("iiqiqi", 3, -1, 42, -1, 7, MiB)  # + current_leader_epoch, last_fetched_epoch
        + b"\x00"  # partition's empty tag section
        + b"\x00"  # topic's empty tag section
        + b"\x02"  # forgotten_topics: 1
        + TOPIC_ID
        + b"\x03"
        + p("ii", 1, 2)
        + b"\x00"
        + b"\x01"  # rack_id: compact empty string
        + b"\x02"  # two tagged fields, ascending tags
        + b"\x00\x03"
        + compact("c1")  # tag 0 ClusterId, 3 bytes
        + b"\x01\x0d"
        + p("iq", 1, 5)
        + b"\x00"  # tag 1 ReplicaState {replica_id, replica_epoch}, 13 bytes
    )
    assert encode_fetch_request(request, 15) == expected
    assert decode_fetch_request(expected, 15) == normalize_fetch_request(request, 15)


def test_v17_partition_replica_directory_id_is_tag_0() -> None:
    directory = bytes([9]) * 16
    partition = FetchPartition(0, fetch_offset=1, partition_max_bytes=2)
    request = FetchRequest(topics=(FetchTopic(topic_id=TOPIC_ID, partitions=(partition,)),))
    with_dir = dataclasses.replace(
        request,
        topics=(
            FetchTopic(
                topic_id=TOPIC_ID,
                partitions=(dataclasses.replace(partition, replica_directory_id=directory),),
            ),
        ),
    )
    plain, tagged = encode_fetch_request(request, 17), encode_fetch_request(with_dir, 17)
    assert len(tagged) == len(plain) + 18  # tag 1 + size 1 + uuid 16
    assert b"\x01\x00\x10" + directory in tagged  # one field, tag 0, 16 bytes
    assert decode_fetch_request(tagged, 17) == with_dir
    assert encode_fetch_request(with_dir, 16) == encode_fetch_request(request, 16)


def test_v12_response_bytes_with_tagged_partition_fields() -> None:
    partition = FetchResponsePartition(
        partition_index=0,
        high_watermark=10,
        diverging_epoch=EpochEndOffset(epoch=2, end_offset=8),
        current_leader=LeaderIdAndEpoch(leader_id=1, leader_epoch=3),
        aborted_transactions=(),
        records=None,
    )
    response = FetchResponse(responses=(FetchResponseTopic("t", partitions=(partition,)),))
    expected = (
        p("ihi", 0, 0, 0)
        + b"\x02"
        + compact("t")
        + b"\x02"
        + p("ihqqq", 0, 0, 10, -1, -1)
        + b"\x01"  # aborted_transactions: empty, not null
        + p("i", -1)  # preferred_read_replica (v11+)
        + b"\x00"  # records: null
        + b"\x02"  # tagged fields, written after every untagged one
        + b"\x00\x0d"
        + p("iq", 2, 8)
        + b"\x00"  # tag 0 DivergingEpoch
        + b"\x01\x09"
        + p("ii", 1, 3)
        + b"\x00"  # tag 1 CurrentLeader
        + b"\x00"  # topic tag section
        + b"\x00"  # response tag section
    )
    assert encode_fetch_response(response, 12) == expected
    assert decode_fetch_response(expected, 12) == response


def test_v16_response_node_endpoints_are_top_level_tag_0() -> None:
    response = FetchResponse(node_endpoints=(NodeEndpoint(1, "b1", 9092, None),))
    expected = p("ihi", 0, 0, 0) + b"\x01" + b"\x01\x00\x0e\x02" + p("i", 1)
    expected += compact("b1") + p("i", 9092) + b"\x00\x00"  # rack null, endpoint tags
    assert encode_fetch_response(response, 16) == expected
    assert decode_fetch_response(expected, 16) == response
    assert encode_fetch_response(response, 15) == p("ihi", 0, 0, 0) + b"\x01\x00"


def test_default_tagged_values_cost_nothing() -> None:
    consumer = FetchRequest()  # replica_id -1, replica_epoch -1, cluster_id None
    assert encode_fetch_request(consumer, 15)[-1:] == b"\x00"  # empty top-level tag section
    assert len(encode_fetch_request(consumer, 15)) == len(encode_fetch_request(consumer, 14)) - 4


def test_unknown_tagged_fields_are_skipped() -> None:
    body = encode_fetch_request(FetchRequest(), 12)
    assert body[-1:] == b"\x00"
    with_unknown = body[:-1] + b"\x01\x09\x02ab"  # one field: tag 9, 2 bytes
    assert decode_fetch_request(with_unknown, 12) == FetchRequest()


# -- the description itself ----------------------------------------------------------------------


def _described_attrs(schema: Schema) -> set[str]:
    attrs = set()
    for f in schema.fields:
        if f.attr is None:
            assert isinstance(f.type, Schema)
            attrs |= _described_attrs(f.type)
        else:
            attrs.add(f.attr)
    return attrs


@pytest.mark.parametrize("schema", [s for s in iter_schemas() if s.cls], ids=lambda s: s.name)
def test_every_dataclass_field_is_described(schema: Schema) -> None:
    assert schema.cls is not None
    assert _described_attrs(schema) == {f.name for f in dataclasses.fields(schema.cls)}


# -- round trips ---------------------------------------------------------------------------------

int8 = st.integers(-(2**7), 2**7 - 1)
int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
uuids = st.binary(min_size=16, max_size=16)
# Short names, plus ones whose compact length prefix needs two varint bytes.
names = st.one_of(st.text(max_size=8), st.text(min_size=126, max_size=130))
small = {"max_size": 3}

partitions = st.builds(
    FetchPartition, int32, int32, int64, int32, int64, int32, st.one_of(st.just(ZERO_UUID), uuids)
)
requests = st.builds(
    FetchRequest,
    replica_id=int32,
    replica_epoch=int64,
    max_wait_ms=int32,
    min_bytes=int32,
    max_bytes=int32,
    isolation_level=int8,
    session_id=int32,
    session_epoch=int32,
    topics=st.lists(
        st.builds(FetchTopic, names, uuids, st.lists(partitions, **small).map(tuple)), **small
    ).map(tuple),
    forgotten_topics=st.lists(
        st.builds(ForgottenTopic, names, uuids, st.lists(int32, max_size=5).map(tuple)), **small
    ).map(tuple),
    rack_id=names,
    cluster_id=st.one_of(st.none(), names),
)


def _or_default(strategy: st.SearchStrategy[object], default: object) -> st.SearchStrategy[object]:
    return st.one_of(st.just(default), strategy)


response_partitions = st.builds(
    FetchResponsePartition,
    partition_index=int32,
    error_code=int16,
    high_watermark=int64,
    last_stable_offset=int64,
    log_start_offset=int64,
    diverging_epoch=_or_default(st.builds(EpochEndOffset, int32, int64), EpochEndOffset()),
    current_leader=_or_default(st.builds(LeaderIdAndEpoch, int32, int32), LeaderIdAndEpoch()),
    snapshot_id=_or_default(st.builds(SnapshotId, int64, int32), SnapshotId()),
    aborted_transactions=st.one_of(
        st.none(), st.lists(st.builds(AbortedTransaction, int64, int64), **small).map(tuple)
    ),
    preferred_read_replica=int32,
    records=st.one_of(
        st.none(), st.binary(max_size=200), st.builds(RecordsLength, st.integers(0, 200))
    ),
)
responses = st.builds(
    FetchResponse,
    throttle_time_ms=int32,
    error_code=int16,
    session_id=int32,
    responses=st.lists(
        st.builds(
            FetchResponseTopic, names, uuids, st.lists(response_partitions, **small).map(tuple)
        ),
        **small,
    ).map(tuple),
    node_endpoints=st.lists(
        st.builds(NodeEndpoint, int32, names, int32, st.one_of(st.none(), names)), **small
    ).map(tuple),
)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(60), deadline=None)
@given(req=requests)
def test_request_round_trips(version: int, req: FetchRequest) -> None:
    body = encode_fetch_request(req, version)
    normal = normalize_fetch_request(req, version)
    assert decode_fetch_request(body, version) == normal
    assert encode_fetch_request(normal, version) == body  # dropping nothing that was sent


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(60), deadline=None)
@given(resp=responses)
def test_response_round_trips(version: int, resp: FetchResponse) -> None:
    body = encode_fetch_response(resp, version)
    normal = normalize_fetch_response(resp, version)
    assert decode_fetch_response(body, version) == normal
    assert encode_fetch_response(normal, version) == body


def test_normalize_drops_what_a_version_cannot_carry() -> None:
    full = dataclasses.replace(REQUEST, replica_epoch=4, rack_id="r", cluster_id="c")
    v6 = normalize_fetch_request(full, 6)
    assert (v6.session_id, v6.session_epoch, v6.forgotten_topics) == (0, -1, ())
    assert (v6.rack_id, v6.cluster_id, v6.replica_epoch) == ("", None, -1)
    assert v6.topics[0].topic_id == ZERO_UUID and v6.topics[0].topic == "test"
    v13 = normalize_fetch_request(full, 13)
    assert v13.topics[0].topic == "" and v13.topics[0].topic_id == TOPIC_ID
    assert v13.replica_epoch == -1 and v13.cluster_id == "c"
    assert normalize_fetch_request(full, 15).replica_epoch == 4


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [20, 19, -1, "7", True, 7.0])
def test_unsupported_versions_are_user_errors(version: object) -> None:
    for call in (
        lambda: encode_fetch_request(FetchRequest(), version),  # type: ignore[arg-type]
        lambda: decode_fetch_request(b"", version),  # type: ignore[arg-type]
        lambda: encode_fetch_response(FetchResponse(), version),  # type: ignore[arg-type]
        lambda: decode_fetch_response(b"", version),  # type: ignore[arg-type]
    ):
        with pytest.raises(ProtocolError, match="not supported") as info:
            call()
        assert isinstance(info.value, UserError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("version", [6, 7, 12, 15, 17])
def test_every_truncation_is_a_protocol_error(version: int) -> None:
    request, response = (
        encode_fetch_request(REQUEST, version),
        encode_fetch_response(RESPONSE, version),
    )
    for cut in range(len(request)):
        with pytest.raises(ProtocolError):
            decode_fetch_request(request[:cut], version)
    for cut in range(len(response)):
        with pytest.raises(ProtocolError):
            decode_fetch_response(response[:cut], version)


def test_truncation_names_the_field_and_offset() -> None:
    body = encode_fetch_request(REQUEST, 7)
    # Cut inside the first partition's fetch_offset: 17 fixed + 8 session + 4 + 6 + 4 + 4.
    with pytest.raises(ProtocolError) as info:
        decode_fetch_request(body[:47], 7)
    message = str(info.value)
    assert message.startswith("FetchRequest v7: $.topics[0].partitions[0].fetch_offset: ")
    assert "needs 8 bytes at offset 43, 4 left" in message


def test_trailing_bytes_are_refused() -> None:
    with pytest.raises(ProtocolError, match="1 unexpected bytes after the body"):
        decode_fetch_request(encode_fetch_request(REQUEST, 7) + b"\x00", 7)


def test_lying_tagged_field_size_is_refused() -> None:
    body = encode_fetch_response(FetchResponse(node_endpoints=(NodeEndpoint(),)), 16)
    # 10 fixed bytes, empty responses, one tagged field, tag 0, then its size: 12 bytes.
    assert body[10:14] == b"\x01\x01\x00\x0c"
    with pytest.raises(ProtocolError, match=r"\$\.node_endpoints\[0\]"):
        decode_fetch_response(body[:13] + b"\x0b" + body[14:], 16)


@pytest.mark.parametrize(
    ("request_", "path"),
    [
        (FetchRequest(topics=(FetchTopic(topic_id=b"short"),)), r"\$\.topics\[0\]\.topic_id"),
        (FetchRequest(max_wait_ms=2**31), r"\$\.max_wait_ms: int32 out of range"),
        (FetchRequest(topics=(FetchTopic(None),)), r"\$\.topics\[0\]\.topic"),  # type: ignore[arg-type]
        (FetchRequest(replica_id=True), r"\$\.replica_id: int32 must be an int"),
    ],
)
def test_unencodable_values_name_their_field(request_: FetchRequest, path: str) -> None:
    with pytest.raises(ProtocolError, match=path):
        encode_fetch_request(request_, 13 if "topic_id" in path else 7)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(80), deadline=None)
@given(data=st.binary(max_size=120))
def test_garbage_decodes_or_raises_protocol_error(version: int, data: bytes) -> None:
    for decode in (decode_fetch_request, decode_fetch_response):
        with contextlib.suppress(ProtocolError):
            decode(data, version)


def test_v18_partition_high_watermark_is_tag_1_and_only_sent_when_set() -> None:
    """FetchRequest.json v18 (KIP-1166): HighWatermark int64, tag 1, default Long.MAX_VALUE.
    A broker's follower fetch leaves it unset, so v18 carries v17's body bytes."""
    partition = FetchPartition(0, fetch_offset=1, partition_max_bytes=2)
    request = FetchRequest(topics=(FetchTopic(topic_id=TOPIC_ID, partitions=(partition,)),))
    assert encode_fetch_request(request, 18) == encode_fetch_request(request, 17)
    with_hw = dataclasses.replace(request, topics=(FetchTopic(
        topic_id=TOPIC_ID, partitions=(dataclasses.replace(partition, high_watermark=7),)),))
    plain, tagged = encode_fetch_request(request, 18), encode_fetch_request(with_hw, 18)
    assert len(tagged) == len(plain) + 10  # tag 1 + size 1 + int64 8
    assert b"\x01\x01\x08" + (7).to_bytes(8, "big") in tagged  # one field, tag 1, 8 bytes
    assert decode_fetch_request(tagged, 18) == with_hw
    assert encode_fetch_request(with_hw, 17) == encode_fetch_request(request, 17)
