"""Request/response headers for Fetch and the int32 size prefix."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.errors import ProtocolError
from rig.protocol import (
    FETCH_API_KEY,
    FETCH_VERSIONS,
    RequestHeader,
    ResponseHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    frame,
    request_header_size,
    request_header_version,
    response_header_size,
    response_header_version,
    unframe,
    wire_size,
)


def test_fetch_api_key_is_1() -> None:
    assert FETCH_API_KEY == 1
    assert RequestHeader(7).api_key == 1


def test_header_versions_switch_at_v12() -> None:
    assert [request_header_version(v) for v in (4, 11, 12, 17)] == [1, 1, 2, 2]
    assert [response_header_version(v) for v in (4, 11, 12, 17)] == [0, 0, 1, 1]


def test_request_header_v1_bytes() -> None:
    header = RequestHeader(7, correlation_id=42, client_id="broker-1-fetcher-0")
    expected = struct.pack(">hhih", 1, 7, 42, 18) + b"broker-1-fetcher-0"
    assert encode_request_header(header) == expected
    assert decode_request_header(expected + b"body") == (header, len(expected))


def test_request_header_v2_keeps_int16_client_id_and_adds_tags() -> None:
    header = RequestHeader(12, correlation_id=42, client_id="c")
    expected = struct.pack(">hhih", 1, 12, 42, 1) + b"c" + b"\x00"
    assert encode_request_header(header) == expected
    assert decode_request_header(expected) == (header, len(expected))


def test_null_client_id() -> None:
    assert encode_request_header(RequestHeader(6, 1, None))[-2:] == b"\xff\xff"


def test_response_header_bytes() -> None:
    assert encode_response_header(ResponseHeader(42), 11) == struct.pack(">i", 42)
    assert encode_response_header(ResponseHeader(42), 12) == struct.pack(">i", 42) + b"\x00"
    assert decode_response_header(struct.pack(">i", 42) + b"\x00rest", 12) == (
        ResponseHeader(42),
        5,
    )


@given(
    version=st.sampled_from(list(FETCH_VERSIONS)),
    correlation_id=st.integers(-(2**31), 2**31 - 1),
    client_id=st.one_of(st.none(), st.text(max_size=300)),
)
def test_headers_round_trip_and_match_the_size_path(
    version: int, correlation_id: int, client_id: str | None
) -> None:
    header = RequestHeader(version, correlation_id, client_id)
    encoded = encode_request_header(header)
    assert len(encoded) == request_header_size(version, client_id)
    assert decode_request_header(encoded) == (header, len(encoded))
    response = encode_response_header(ResponseHeader(correlation_id), version)
    assert len(response) == response_header_size(version)
    assert decode_response_header(response, version) == (
        ResponseHeader(correlation_id),
        len(response),
    )


def test_bad_headers_are_protocol_errors() -> None:
    # api_key 11 (JoinGroup) is not one rig speaks; 0 (Produce), 3 (Metadata) and the others
    # of rig.protocol.apis are.
    with pytest.raises(ProtocolError, match="api_key 11 is not one rig speaks"):
        decode_request_header(struct.pack(">hhih", 11, 7, 1, -1))
    with pytest.raises(ProtocolError, match="api_key 11 is not one rig speaks"):
        encode_request_header(RequestHeader(7, api_key=11))
    with pytest.raises(ProtocolError, match="Produce version 14 is not supported"):
        decode_request_header(struct.pack(">hhih", 0, 14, 1, -1))
    with pytest.raises(ProtocolError, match="not supported"):
        decode_request_header(struct.pack(">hhih", 1, 19, 1, -1))
    with pytest.raises(ProtocolError, match="truncated"):
        decode_request_header(struct.pack(">hhi", 1, 7, 1))
    with pytest.raises(ProtocolError, match="truncated"):
        decode_response_header(b"\x00\x00\x00\x01", 12)
    with pytest.raises(ProtocolError, match="not supported"):
        request_header_size(19, None)


def test_frame_prefixes_the_size_of_header_and_body() -> None:
    framed = frame(b"head", b"body!")
    assert framed == struct.pack(">i", 9) + b"headbody!"
    assert wire_size(b"head", b"body!") == wire_size(4, 5) == len(framed) == 13
    assert unframe(framed) == b"headbody!"
    with pytest.raises(ProtocolError, match="size prefix says 9 bytes, 8 follow"):
        unframe(framed[:-1])
