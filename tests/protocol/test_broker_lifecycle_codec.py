"""A KRaft broker's BrokerRegistration (v0–v4) and BrokerHeartbeat (v0–v1) and their answers on
the wire: the fast sizes agree with the encoder over every version and many shapes, the
messages round trip, and golden bytes written out by hand from Kafka's JSON show the
descriptions are Kafka's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.errors import ProtocolError
from rig.protocol import (
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    RequestHeader,
    decode_request_header,
    encode_request_header,
)
from rig.protocol.broker_heartbeat import (
    BROKER_HEARTBEAT_REQUEST,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    broker_heartbeat_request_body_size,
    broker_heartbeat_response_body_size,
    decode_broker_heartbeat_request,
    decode_broker_heartbeat_response,
    encode_broker_heartbeat_request,
    encode_broker_heartbeat_response,
)
from rig.protocol.broker_registration import (
    BROKER_REGISTRATION_REQUEST,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    Feature,
    Listener,
    broker_registration_request_body_size,
    broker_registration_response_body_size,
    decode_broker_registration_request,
    decode_broker_registration_response,
    encode_broker_registration_request,
    encode_broker_registration_response,
)
from rig.protocol.codec import normalize_struct

TEXT = st.text(st.characters(codec="utf-8"), max_size=30)
NAMES = st.sampled_from(["metadata.version", "kraft.version", "eligible.leader.replicas.version",
                         "é", ""])
UUIDS = st.binary(min_size=16, max_size=16)


@given(version=st.sampled_from(list(BROKER_REGISTRATION.versions)),
       broker=st.integers(0, 2**31 - 1), cluster=TEXT,
       listeners=st.lists(st.tuples(TEXT, TEXT, st.integers(0, 65535)), max_size=3),
       features=st.lists(NAMES, max_size=7), rack=st.none() | TEXT,
       dirs=st.lists(UUIDS, max_size=3), previous=st.integers(-1, 2**40))
def test_broker_registration_sizes_match_the_encoder(
        version: int, broker: int, cluster: str, listeners: list, features: list,
        rack: str | None, dirs: list, previous: int) -> None:
    request = BrokerRegistrationRequest(
        broker, cluster, bytes(range(16)), tuple(Listener(n, h, p, 0) for n, h, p in listeners),
        tuple(Feature(name, 1, 20) for name in features), rack, False, tuple(dirs), previous)
    data = encode_broker_registration_request(request, version)
    size = broker_registration_request_body_size(
        version, cluster, [(n, h) for n, h, _ in listeners], features, rack, len(dirs))
    assert size == len(data)
    assert decode_broker_registration_request(data, version) == normalize_struct(
        BROKER_REGISTRATION_REQUEST, request, version)
    response = BrokerRegistrationResponse(0, 0, previous)
    data = encode_broker_registration_response(response, version)
    assert broker_registration_response_body_size(version) == len(data)
    assert decode_broker_registration_response(data, version) == response


@given(version=st.sampled_from(list(BROKER_HEARTBEAT.versions)), epoch=st.integers(-1, 2**40),
       offset=st.integers(-1, 2**40), flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
       offline=st.lists(UUIDS, max_size=3))
def test_broker_heartbeat_sizes_match_the_encoder(version: int, epoch: int, offset: int,
                                                  flags: tuple[bool, bool, bool],
                                                  offline: list) -> None:
    if version == 0:
        offline = []  # v0 has no OfflineLogDirs
    request = BrokerHeartbeatRequest(3, epoch, offset, flags[0], flags[1], tuple(offline))
    data = encode_broker_heartbeat_request(request, version)
    assert broker_heartbeat_request_body_size(version, len(offline)) == len(data)
    assert decode_broker_heartbeat_request(data, version) == normalize_struct(
        BROKER_HEARTBEAT_REQUEST, request, version)
    response = BrokerHeartbeatResponse(0, 0, *flags)
    data = encode_broker_heartbeat_response(response, version)
    assert broker_heartbeat_response_body_size(version) == len(data)
    assert decode_broker_heartbeat_response(data, version) == response


def test_unknown_versions_are_refused() -> None:
    with pytest.raises(ProtocolError, match="BrokerRegistration version 5"):
        broker_registration_request_body_size(5, "c", [], [], None, 0)
    with pytest.raises(ProtocolError, match="BrokerHeartbeat version 2"):
        broker_heartbeat_request_body_size(2)


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# Broker 1 of cluster "c", incarnation 00 01 … 0f, listener PLAINTEXT on host "h", port 9092
# (0x2384), security protocol 0; feature metadata.version 1–21 (0x15).
INCARNATION = bytes(range(16))
LOG_DIR = bytes([0xAB] * 16)


def _registration(version: int, rack: str | None = None) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(
        1, "c", INCARNATION, (Listener("PLAINTEXT", "h", 9092, 0),),
        (Feature("metadata.version", 1, 21),), rack, False,
        (LOG_DIR,) if version >= 2 else (), 40 if version >= 3 else -1)


def test_golden_broker_registration_requests() -> None:
    head = ("00000001 0263 000102030405060708090a0b0c0d0e0f"
            " 02 0a504c41494e54455854 0268 2384 0000 00"
            " 02 116d657461646174612e76657273696f6e 0001 0015 00")
    # v0: broker id, compact cluster id, incarnation, [listeners] (name, host, uint16 port,
    # security protocol, tags), [features] (name, min, max, tags), rack (null: 00), tags
    assert encode_broker_registration_request(_registration(0), 0) == bytes.fromhex(
        head + " 00 00")
    # v1: IsMigratingZkBroker (false)
    assert encode_broker_registration_request(_registration(1), 1) == bytes.fromhex(
        head + " 00 00 00")
    # v3 (and v4, the same bytes): rack "r", IsMigratingZkBroker, [log dirs] (v2),
    # PreviousBrokerEpoch 40 (v3)
    for version in (3, 4):
        assert encode_broker_registration_request(_registration(version, "r"), version) == (
            bytes.fromhex(head + " 0272 00 02" + "ab" * 16 + " 0000000000000028 00"))
    # The port is a uint16: 40000 is 0x9c40, not an int16 out of range.
    request = BrokerRegistrationRequest(listeners=(Listener("L", "h", 40000, 1),))
    assert encode_broker_registration_request(request, 0)[21:31] == bytes.fromhex(
        "02 024c 0268 9c40 0001 00")


def test_golden_broker_registration_response() -> None:
    # throttle, error, broker epoch 40, tags
    assert encode_broker_registration_response(BrokerRegistrationResponse(0, 0, 40), 4) == (
        bytes.fromhex("00000000 0000 0000000000000028 00"))
    assert encode_broker_registration_response(BrokerRegistrationResponse(0, 36), 0) == (
        bytes.fromhex("00000000 0024 ffffffffffffffff 00"))


def test_golden_broker_heartbeats() -> None:
    # broker id, epoch 40, metadata offset 100 (0x64), WantFence, WantShutDown, tags
    request = BrokerHeartbeatRequest(1, 40, 100, True, False)
    body = "00000001 0000000000000028 0000000000000064 01 00"
    assert encode_broker_heartbeat_request(request, 0) == bytes.fromhex(body + " 00")
    # v1 with no offline log dirs: the tagged field is not sent, v0's bytes
    assert encode_broker_heartbeat_request(request, 1) == bytes.fromhex(body + " 00")
    # one offline dir: one tagged field, tag 0, 17 bytes (compact array of one uuid)
    offline = BrokerHeartbeatRequest(1, 40, 100, True, False, (LOG_DIR,))
    assert encode_broker_heartbeat_request(offline, 1) == bytes.fromhex(
        body + " 01 00 11 02" + "ab" * 16)
    # the answer: throttle, error, IsCaughtUp, IsFenced, ShouldShutDown, tags
    assert encode_broker_heartbeat_response(BrokerHeartbeatResponse(0, 0, True, False), 1) == (
        bytes.fromhex("00000000 0000 01 00 00 00"))


def test_golden_headers_are_flexible() -> None:
    # request header v2: api key 63 (0x3f), version 1, correlation id, int16 client id "1", tags
    header = RequestHeader(1, 5, "1", BROKER_HEARTBEAT.key)
    data = bytes.fromhex("003f 0001 00000005 0001 31 00")
    assert encode_request_header(header) == data
    assert decode_request_header(data) == (header, 12)
    assert encode_request_header(RequestHeader(4, 5, "1", BROKER_REGISTRATION.key)) == (
        bytes.fromhex("003e 0004 00000005 0001 31 00"))
