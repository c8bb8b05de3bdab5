"""The seed measurements (Kafka 1.0.2 vs 1.1.0, topic `test`, 500 partitions per follower),
reproduced by the encoder and by the fast size path. Bodies only: no header, no size prefix."""

from __future__ import annotations

import pytest

from rig.protocol import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchTopic,
    RequestHeader,
    RequestShape,
    ResponseShape,
    ResponseTopicShape,
    encode_fetch_request,
    encode_fetch_response,
    encode_request_header,
    frame,
    request_body_size,
    request_header_size,
    response_body_size,
    wire_size,
)

MiB = 1 << 20
PARTITIONS = 500


def follower_fetch(
    session_id: int = 0, session_epoch: int = -1, partitions: int = 500
) -> FetchRequest:
    """A follower (broker 1) fetching `partitions` partitions of `test`, with the defaults of
    replica.fetch.wait.max.ms / min.bytes / response.max.bytes / max.bytes."""
    return FetchRequest(
        replica_id=1,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=10 * MiB,
        session_id=session_id,
        session_epoch=session_epoch,
        topics=(
            FetchTopic(
                "test",
                partitions=tuple(
                    FetchPartition(
                        p, fetch_offset=1000 + p, log_start_offset=0, partition_max_bytes=MiB
                    )
                    for p in range(partitions)
                ),
            ),
        )
        if partitions
        else (),
    )


def test_v6_follower_fetch_is_12031_bytes() -> None:
    # replica_id 4 + max_wait_ms 4 + min_bytes 4 + max_bytes 4 + isolation_level 1   =    17
    # topics count 4 + topic "test" (int16 length 2 + 4)                              =    10
    # partitions count 4                                                              =     4
    # 500 × (partition 4 + fetch_offset 8 + log_start_offset 8 + partition_max_bytes 4) = 12000
    #                                                                                   12031
    assert len(encode_fetch_request(follower_fetch(), 6)) == 12031
    assert request_body_size(RequestShape(6, (("test", PARTITIONS),))) == 12031


def test_v7_full_fetch_that_opens_a_session_is_12043_bytes() -> None:
    # v6's 12031 + session_id 4 + session_epoch 4 + empty forgotten_topics count 4 = 12043
    assert len(encode_fetch_request(follower_fetch(session_id=0, session_epoch=0), 7)) == 12043
    assert request_body_size(RequestShape(7, (("test", PARTITIONS),))) == 12043


def test_v7_incremental_fetch_with_nothing_changed_is_33_bytes() -> None:
    # replica_id 4 + max_wait 4 + min_bytes 4 + max_bytes 4 + isolation 1 + session_id 4
    # + session_epoch 4 + empty topics count 4 + empty forgotten_topics count 4 = 33
    incremental = follower_fetch(session_id=123_456, session_epoch=7, partitions=0)
    assert len(encode_fetch_request(incremental, 7)) == 33
    assert request_body_size(RequestShape(7)) == 33


def idle_response(version: int, partitions: int) -> FetchResponse:
    # What a broker sends for a partition with nothing new: empty records, null aborted list.
    return FetchResponse(
        session_id=0,
        responses=(
            FetchResponseTopic(
                "test",
                partitions=tuple(
                    FetchResponsePartition(
                        p,
                        high_watermark=1000,
                        last_stable_offset=1000,
                        log_start_offset=0,
                        records=b"",
                    )
                    for p in range(partitions)
                ),
            ),
        ),
    )


@pytest.mark.parametrize(
    ("version", "per_partition"),
    # partition_index 4 + error_code 2 + high_watermark 8 + last_stable_offset 8
    # + log_start_offset 8 (v5+) + aborted_transactions null count 4 + records length 4 = 38;
    # v4 lacks log_start_offset (30), v11 adds preferred_read_replica 4 (42).
    [(4, 30)] + [(v, 38) for v in range(5, 11)] + [(11, 42)],
)
def test_a_partition_with_no_data_costs_38_bytes_in_v5_to_v10(
    version: int, per_partition: int
) -> None:
    empty = len(encode_fetch_response(idle_response(version, 0), version))
    full = len(encode_fetch_response(idle_response(version, PARTITIONS), version))
    assert full - empty == PARTITIONS * per_partition
    shape = ResponseShape(version, (ResponseTopicShape("test", idle=PARTITIONS),))
    assert response_body_size(shape) == full


def test_wire_bytes_add_the_size_prefix_and_header() -> None:
    body = encode_fetch_request(follower_fetch(), 6)
    header = encode_request_header(
        RequestHeader(6, correlation_id=1, client_id="broker-1-fetcher-0")
    )
    # size prefix 4 + header (api_key 2 + api_version 2 + correlation_id 4 + client_id 2 + 18)
    assert wire_size(header, body) == len(frame(header, body)) == 4 + 28 + 12031
    assert wire_size(request_header_size(6, "broker-1-fetcher-0"), 12031) == 4 + 28 + 12031
