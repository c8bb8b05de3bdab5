"""Fetch v0–v3 (Kafka 0.8.2–0.10.1) and the message sets they carry, byte for byte.

The expected bytes are written out by hand from Kafka's own definitions:
clients/src/main/resources/common/message/FetchRequest.json and FetchResponse.json (before 4.0,
"validVersions": "0-…"; v1 adds the response's ThrottleTimeMs, v2 is v1 with message format 1
inside, v3 adds the request's MaxBytes) and clients/src/main/java/org/apache/kafka/common/record/
LegacyRecord.java (crc, magic, attributes, [timestamp], key, value; LOG_OVERHEAD 12,
RECORD_OVERHEAD_V0 14, RECORD_OVERHEAD_V1 22). The CRC is CRC-32 (Kafka's Crc32) of the message
after its crc field.
"""

from __future__ import annotations

import pytest

from rig.errors import ProtocolError
from rig.protocol import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchTopic,
    decode_fetch_request,
    decode_fetch_response,
    encode_fetch_request,
    encode_fetch_response,
)
from rig.protocol.legacy_records import (
    decode_message_set,
    encode_message,
    message_set_size,
    message_size,
)
from rig.protocol.sizes import (
    RequestShape,
    ResponsePartitionShape,
    ResponseShape,
    ResponseTopicShape,
    request_body_size,
    response_body_size,
)

REQUEST = FetchRequest(replica_id=1, max_wait_ms=500, min_bytes=1, max_bytes=10 << 20,
                       topics=(FetchTopic("t", partitions=(
                           FetchPartition(partition=0, fetch_offset=5,
                                          partition_max_bytes=1 << 20),)),))
# replica_id, max_wait_ms, min_bytes, [max_bytes v3+], topics[1]{"t", partitions[1]{0, 5, 1 MiB}}
V0_REQUEST = bytes.fromhex("00000001" "000001f4" "00000001"
                           "00000001" "0001" "74" "00000001" "00000000" "0000000000000005"
                           "00100000")
V3_REQUEST = bytes.fromhex("00000001" "000001f4" "00000001" "00a00000"
                           "00000001" "0001" "74" "00000001" "00000000" "0000000000000005"
                           "00100000")

# Magic 0, offset 0, null key, value "hi": offset 8, size 4 (16), crc, magic 0, attributes 0,
# key −1, value length 2 + "hi".
MAGIC0_MESSAGE = bytes.fromhex("0000000000000000" "00000010" "fd6ebddb" "00" "00"
                               "ffffffff" "00000002" "6869")
# Magic 1 (0.10, KIP-32) adds the timestamp after the attributes: size 24.
MAGIC1_MESSAGE = bytes.fromhex("0000000000000000" "00000018" "0b3f9980" "01" "00"
                               "000001581faa3c00" "ffffffff" "00000002" "6869")


@pytest.mark.parametrize(("version", "expected"), [
    (0, V0_REQUEST), (1, V0_REQUEST), (2, V0_REQUEST), (3, V3_REQUEST)])
def test_old_fetch_requests_are_kafkas_bytes(version: int, expected: bytes) -> None:
    assert encode_fetch_request(REQUEST, version) == expected
    assert request_body_size(RequestShape(version, (("t", 1),))) == len(expected)
    decoded = decode_fetch_request(expected, version)
    assert decoded.topics[0].partitions[0].fetch_offset == 5
    assert decoded.max_bytes == (10 << 20 if version == 3 else FetchRequest().max_bytes)


@pytest.mark.parametrize(("version", "message"), [(0, MAGIC0_MESSAGE), (1, MAGIC0_MESSAGE),
                                                  (2, MAGIC1_MESSAGE), (3, MAGIC1_MESSAGE)])
def test_old_fetch_responses_are_kafkas_bytes(version: int, message: bytes) -> None:
    response = FetchResponse(responses=(FetchResponseTopic("t", partitions=(
        FetchResponsePartition(partition_index=0, high_watermark=5, records=message),)),))
    # [throttle_time_ms v1+], responses[1]{"t", partitions[1]{0, error 0, hw 5, records}}
    throttle = "" if version == 0 else "00000000"
    expected = bytes.fromhex(throttle + "00000001" "0001" "74" "00000001" "00000000" "0000"
                             "0000000000000005" + f"{len(message):08x}") + message
    assert encode_fetch_response(response, version) == expected
    assert decode_fetch_response(expected, version).responses[0].partitions[0].records == message
    shape = ResponseShape(version, (ResponseTopicShape("t", 0, (
        ResponsePartitionShape(len(message)),)),))
    assert response_body_size(shape) == len(expected)


def test_messages_are_legacy_records() -> None:
    assert encode_message(0, 0, None, b"hi") == MAGIC0_MESSAGE
    assert encode_message(0, 1, None, b"hi", timestamp_ms=1_478_000_000_000) == MAGIC1_MESSAGE
    assert message_size(0, None, 2) == len(MAGIC0_MESSAGE) == 12 + 14 + 2
    assert message_size(1, None, 2) == len(MAGIC1_MESSAGE) == 12 + 22 + 2
    assert message_size(1, 3, 100) == 12 + 22 + 3 + 100
    assert message_set_size(0, [(None, 2)] * 3) == 3 * len(MAGIC0_MESSAGE)


def test_message_sets_decode_and_check_their_crc() -> None:
    both = MAGIC0_MESSAGE + MAGIC1_MESSAGE
    assert decode_message_set(both) == [(0, 0, None, b"hi"), (0, 1, None, b"hi")]
    corrupt = bytearray(MAGIC0_MESSAGE)
    corrupt[-1] ^= 1
    with pytest.raises(ProtocolError, match="CRC"):
        decode_message_set(bytes(corrupt))
    with pytest.raises(ProtocolError, match="does not fit"):
        decode_message_set(MAGIC0_MESSAGE[:-1])
    with pytest.raises(ProtocolError, match="magic 0 or 1"):
        message_size(2, None, 1)
