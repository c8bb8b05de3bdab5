"""Every API rig speaks: its key, versions and first flexible version (Kafka's message JSON), and
request / response headers that follow the flexibility of each version."""

from __future__ import annotations

import pytest

from rig.errors import ProtocolError
from rig.protocol import (
    APIS,
    FETCH,
    LIST_OFFSETS,
    OFFSETS_FOR_LEADER_EPOCH,
    PRODUCE,
    RequestHeader,
    ResponseHeader,
    api_of,
    api_request_header_size,
    api_response_header_size,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    request_header_size,
    request_header_version,
    response_header_size,
    response_header_version,
)

# ControlledShutdown v0's header has no client_id (test_controller_codec checks it).
ALL = [(api, v) for api in APIS.values() for v in api.versions
       if (api.name, v) != ("ControlledShutdown", 0)]


def test_keys_versions_and_first_flexible_versions_are_kafkas() -> None:
    # apiKey, the union of validVersions over 0.8.2–4.2, and "flexibleVersions" of
    # ProduceRequest.json, FetchRequest.json, ListOffsetsRequest.json, MetadataRequest.json,
    # OffsetCommitRequest.json, OffsetFetchRequest.json, FindCoordinatorRequest.json and
    # OffsetForLeaderEpochRequest.json; LeaderAndIsrRequest.json, StopReplicaRequest.json,
    # UpdateMetadataRequest.json, ControlledShutdownRequest.json (3.9) and
    # AlterPartitionRequest.json (3.5–3.9; AlterIsrRequest.json before 3.2);
    # BrokerRegistrationRequest.json (3.9) and BrokerHeartbeatRequest.json (3.7–3.9).
    assert [(a.name, a.key, a.versions, a.first_flexible) for a in APIS.values()] == [
        ("Produce", 0, range(0, 14), 9),
        ("Fetch", 1, range(0, 19), 12),
        ("ListOffsets", 2, range(0, 12), 6),
        ("Metadata", 3, range(0, 14), 9),
        ("OffsetCommit", 8, range(0, 10), 8),
        ("OffsetFetch", 9, range(0, 10), 6),
        ("FindCoordinator", 10, range(0, 7), 3),
        ("OffsetsForLeaderEpoch", 23, range(0, 5), 4),
        ("LeaderAndIsr", 4, range(0, 8), 4),
        ("StopReplica", 5, range(0, 5), 2),
        ("UpdateMetadata", 6, range(0, 9), 6),
        ("ControlledShutdown", 7, range(0, 4), 3),
        ("AlterPartition", 56, range(0, 4), 0),
        ("BrokerRegistration", 62, range(0, 5), 0),
        ("BrokerHeartbeat", 63, range(0, 2), 0),
    ]
    assert api_of(0) is PRODUCE and api_of(2) is LIST_OFFSETS
    assert api_of(23) is OFFSETS_FOR_LEADER_EPOCH and api_of(1) is FETCH
    with pytest.raises(ProtocolError, match="api_key 11 is not one rig speaks"):
        api_of(11)  # JoinGroup: not modelled


@pytest.mark.parametrize(("api", "version"), ALL, ids=[f"{a.name}-v{v}" for a, v in ALL])
def test_headers_follow_each_versions_flexibility(api, version) -> None:
    flexible = version >= api.first_flexible
    assert request_header_version(version, api) == (2 if flexible else 1)
    assert response_header_version(version, api) == (1 if flexible else 0)
    header = RequestHeader(version, 7, "producer-p", api.key)
    data = encode_request_header(header)
    # api_key, api_version, correlation_id, int16-length client_id, then a tag section if flexible
    assert data == (api.key.to_bytes(2, "big") + version.to_bytes(2, "big") + b"\0\0\0\x07"
                    + b"\0\x0aproducer-p" + (b"\0" if flexible else b""))
    assert len(data) == api_request_header_size(api, version, "producer-p")
    assert decode_request_header(data + b"body") == (header, len(data))
    response = encode_response_header(ResponseHeader(7), version, api)
    assert response == b"\0\0\0\x07" + (b"\0" if flexible else b"")
    assert len(response) == api_response_header_size(api, version)
    assert decode_response_header(response, version, api) == (ResponseHeader(7), len(response))


def test_the_fetch_header_sizes_are_the_general_ones() -> None:
    for version in FETCH.versions:
        assert request_header_size(version, "c") == api_request_header_size(FETCH, version, "c")
        assert response_header_size(version) == api_response_header_size(FETCH, version)


def test_a_version_outside_an_apis_range_is_refused() -> None:
    with pytest.raises(ProtocolError, match="ListOffsets version 12 is not supported"):
        api_request_header_size(LIST_OFFSETS, 12, None)
    with pytest.raises(ProtocolError, match="OffsetsForLeaderEpoch version 5 is not supported"):
        encode_request_header(RequestHeader(5, api_key=23))
    with pytest.raises(ProtocolError, match="Produce version -1 is not supported"):
        encode_response_header(ResponseHeader(), -1, PRODUCE)
