"""Fetch request and response bodies (api_key 1, versions 0–18): encode, decode and normalize.

The messages and their descriptions, which mirror Kafka's FetchRequest.json / FetchResponse.json
(which field exists in which versions, which is tagged), live in rig.protocol.fetch_request and
rig.protocol.fetch_response; rig.protocol.codec interprets them.
"""

from __future__ import annotations

from collections.abc import Iterator

from rig.protocol.codec import decode_struct, encode_struct, normalize_struct
from rig.protocol.fetch_request import (
    FETCH_PARTITION,
    FETCH_REQUEST,
    FETCH_TOPIC,
    FORGOTTEN_TOPIC,
    REPLICA_STATE,
    FetchRequest,
)
from rig.protocol.fetch_response import (
    ABORTED_TRANSACTION,
    EPOCH_END_OFFSET,
    FETCH_RESPONSE,
    LEADER_ID_AND_EPOCH,
    NODE_ENDPOINT,
    RESPONSE_PARTITION,
    RESPONSE_TOPIC,
    SNAPSHOT_ID,
    FetchResponse,
)
from rig.protocol.fetch_versions import check_version
from rig.protocol.schema import Schema


def encode_fetch_request(req: FetchRequest, version: int) -> bytes:
    """The request body at `version`; fields the version cannot carry are left out."""
    return encode_struct(FETCH_REQUEST, req, version)


def decode_fetch_request(data: bytes | bytearray | memoryview, version: int) -> FetchRequest:
    """Parse a whole request body; raises ProtocolError naming the field that failed."""
    result: FetchRequest = decode_struct(FETCH_REQUEST, data, version)
    return result


def normalize_fetch_request(req: FetchRequest, version: int) -> FetchRequest:
    """`req` as `version` can carry it: what decode(encode(req)) returns."""
    check_version(version)
    result: FetchRequest = normalize_struct(FETCH_REQUEST, req, version)
    return result


def encode_fetch_response(resp: FetchResponse, version: int) -> bytes:
    """The response body at `version`; RecordsLength records become zero filler bytes."""
    return encode_struct(FETCH_RESPONSE, resp, version)


def decode_fetch_response(data: bytes | bytearray | memoryview, version: int) -> FetchResponse:
    """Parse a whole response body; raises ProtocolError naming the field that failed."""
    result: FetchResponse = decode_struct(FETCH_RESPONSE, data, version)
    return result


def normalize_fetch_response(resp: FetchResponse, version: int) -> FetchResponse:
    """`resp` as `version` can carry it: what decode(encode(resp)) returns."""
    check_version(version)
    result: FetchResponse = normalize_struct(FETCH_RESPONSE, resp, version)
    return result


def iter_schemas() -> Iterator[Schema]:
    """Every struct description, for tests that check the description itself."""
    yield from (FETCH_REQUEST, REPLICA_STATE, FETCH_TOPIC, FETCH_PARTITION, FORGOTTEN_TOPIC)
    yield from (FETCH_RESPONSE, RESPONSE_TOPIC, RESPONSE_PARTITION, ABORTED_TRANSACTION)
    yield from (NODE_ENDPOINT, EPOCH_END_OFFSET, LEADER_ID_AND_EPOCH, SNAPSHOT_ID)
