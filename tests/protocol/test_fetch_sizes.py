"""The fast size path agrees with the encoder for every shape and version, without iterating
over partitions."""

from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.errors import ProtocolError
from rig.protocol import (
    FETCH_VERSIONS,
    NodeEndpoint,
    RequestShape,
    ResponsePartitionShape,
    ResponseShape,
    ResponseTopicShape,
    decode_fetch_request,
    decode_fetch_response,
    encode_fetch_request,
    encode_fetch_response,
    materialize_request,
    materialize_response,
    normalize_fetch_request,
    normalize_fetch_response,
    request_body_size,
    response_body_size,
)
from tests.examples import examples

VERSIONS = list(FETCH_VERSIONS)

# Names whose compact prefix takes one or two varint bytes (length + 1 crossing 128), some
# with multi-byte UTF-8 so characters and bytes differ.
names = st.one_of(st.text(max_size=10), st.text(min_size=120, max_size=140))
# Counts crossing the one-byte compact prefix (count + 1 = 128).
counts = st.one_of(st.integers(0, 4), st.sampled_from([126, 127, 128, 255]))
# Record lengths crossing the varint boundaries of length + 1: 128, 16384 and 2097152.
record_lengths = st.one_of(
    st.integers(0, 300),
    st.sampled_from([126, 127, 128, 16382, 16383, 16384, 2_097_150, 2_097_151]),
    st.integers(0, 100_000),
)

request_shapes = st.builds(
    RequestShape,
    version=st.just(0),  # replaced by each test's version
    topics=st.lists(st.tuples(names, counts), max_size=3).map(tuple),
    forgotten=st.lists(st.tuples(names, counts), max_size=3).map(tuple),
    rack_id=names,
    cluster_id=st.one_of(st.none(), names),
    follower=st.booleans(),
)

partition_shapes = st.builds(
    ResponsePartitionShape,
    records=record_lengths,
    aborted=st.one_of(st.integers(0, 3), st.sampled_from([126, 127, 128])),
    diverging_epoch=st.booleans(),
    current_leader=st.booleans(),
    snapshot_id=st.booleans(),
)
response_shapes = st.builds(
    ResponseShape,
    version=st.just(0),  # replaced by each test's version
    topics=st.lists(
        st.builds(
            ResponseTopicShape,
            names,
            counts,
            st.lists(partition_shapes, max_size=3).map(tuple),
        ),
        max_size=3,
    ).map(tuple),
    node_endpoints=st.lists(
        st.builds(
            NodeEndpoint,
            st.integers(0, 9),
            names,
            st.just(9092),
            st.one_of(st.none(), names),
        ),
        max_size=2,
    ).map(tuple),
)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(50), deadline=None)
@given(shape=request_shapes)
def test_request_size_matches_the_encoder(version: int, shape: RequestShape) -> None:
    shape = dataclasses.replace(shape, version=version)
    request = materialize_request(shape)
    body = encode_fetch_request(request, version)
    assert request_body_size(shape) == len(body)
    assert decode_fetch_request(body, version) == normalize_fetch_request(request, version)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=examples(50), deadline=None)
@given(shape=response_shapes)
def test_response_size_matches_the_encoder(version: int, shape: ResponseShape) -> None:
    shape = dataclasses.replace(shape, version=version)
    response = materialize_response(shape)
    body = encode_fetch_response(response, version)
    assert response_body_size(shape) == len(body)
    assert decode_fetch_response(body, version) == normalize_fetch_response(response, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_with_everything_set(version: int) -> None:
    # Hypothesis picks versions at random; this makes sure each one is hit with every feature.
    request = RequestShape(
        version, (("test", 130), ("ü" * 70, 1)), (("gone", 2),), "rack-a", "cluster", True
    )
    assert request_body_size(request) == len(
        encode_fetch_request(materialize_request(request), version)
    )
    partition = ResponsePartitionShape(16384, 2, True, True, True)
    response = ResponseShape(
        version,
        (ResponseTopicShape("test", 127, (partition, ResponsePartitionShape())),),
        (NodeEndpoint(1, "broker-1", 9092, "rack-a"),),
    )
    assert response_body_size(response) == len(
        encode_fetch_response(materialize_response(response), version)
    )


@pytest.mark.parametrize("version", [11, 12, 17])
@pytest.mark.parametrize("partitions", [16383, 16384])
def test_partition_counts_crossing_the_two_byte_varint(version: int, partitions: int) -> None:
    # count + 1 = 16384 is the first compact count needing three varint bytes.
    request = RequestShape(version, (("test", partitions),))
    assert request_body_size(request) == len(
        encode_fetch_request(materialize_request(request), version)
    )
    response = ResponseShape(version, (ResponseTopicShape("test", idle=partitions),))
    assert response_body_size(response) == len(
        encode_fetch_response(materialize_response(response), version)
    )


def test_idle_partitions_are_not_iterated() -> None:
    # A trillion partitions: only a multiplication can answer this at once.
    start = time.perf_counter()
    request = request_body_size(RequestShape(6, (("test", 10**12),)))
    response = response_body_size(ResponseShape(7, (ResponseTopicShape("test", 10**12),)))
    assert time.perf_counter() - start < 0.1
    assert request == 17 + 4 + 6 + 4 + 24 * 10**12
    assert response == 4 + 2 + 4 + 4 + 6 + 4 + 38 * 10**12


def test_tagged_response_fields_only_count_from_v12() -> None:
    flagged = ResponsePartitionShape(diverging_epoch=True, current_leader=True, snapshot_id=True)
    for version, extra in ((11, 0), (12, 15 + 11 + 15)):
        plain = response_body_size(
            ResponseShape(version, (ResponseTopicShape("t", 0, (ResponsePartitionShape(),)),))
        )
        tagged = response_body_size(
            ResponseShape(version, (ResponseTopicShape("t", 0, (flagged,)),))
        )
        assert tagged - plain == extra  # each: tag 1 + size 1 + struct (+ its tag section 1)


def test_bad_shapes_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError, match="not supported"):
        request_body_size(RequestShape(20))
    with pytest.raises(ProtocolError, match="not supported"):
        response_body_size(ResponseShape(19))
    with pytest.raises(ProtocolError, match="≥ 0"):
        materialize_request(RequestShape(7, (("t", -1),)))
    with pytest.raises(ProtocolError, match="≥ 0"):
        materialize_response(ResponseShape(7, (ResponseTopicShape("t", -1),)))
