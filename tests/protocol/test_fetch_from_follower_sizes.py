"""KIP-392 on the wire: a consumer's rack_id (v11+) and a response's preferred_read_replica are
sized exactly as the encoder writes them."""

from __future__ import annotations

import dataclasses

import pytest

from rig.protocol import (
    RequestShape,
    ResponseShape,
    encode_fetch_request,
    encode_fetch_response,
    materialize_request,
    materialize_response,
    request_body_size,
    response_body_size,
)
from rig.protocol.sizes import ResponseTopicShape


@pytest.mark.parametrize("version", [4, 10, 11, 12, 13, 15, 17])
def test_rack_id_is_sized(version: int) -> None:
    shape = RequestShape(version, (("events", 3),), rack_id="eu-west-1b", follower=False)
    encoded = encode_fetch_request(materialize_request(shape), version)
    assert request_body_size(shape) == len(encoded)
    bare = request_body_size(dataclasses.replace(shape, rack_id=""))
    assert request_body_size(shape) - bare == (len("eu-west-1b") if version >= 11 else 0)


@pytest.mark.parametrize("version", [11, 12, 13, 16, 17])
def test_preferred_read_replica_is_fixed_width(version: int) -> None:
    shape = ResponseShape(version, (ResponseTopicShape("events", idle=3),))
    response = materialize_response(shape)
    topic = response.responses[0]
    redirected = dataclasses.replace(response, responses=(dataclasses.replace(
        topic, partitions=tuple(dataclasses.replace(p, preferred_read_replica=2)
                                for p in topic.partitions)),))
    size = len(encode_fetch_response(response, version))
    assert len(encode_fetch_response(redirected, version)) == size == response_body_size(shape)
