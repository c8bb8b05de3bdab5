"""Kafka's APIs on the wire: Fetch (v0–v18), Produce (v0–v13), ListOffsets (v0–v11) and
OffsetsForLeaderEpoch (v0–v4): messages, codec, headers and fast sizes (rig.protocol.apis).

Encode and decode real bytes with `encode_fetch_request` & co.; in the simulation's hot loop
size messages from a shape with `request_body_size` / `response_body_size` instead.
"""

from rig.errors import ProtocolError
from rig.protocol.apis import (
    APIS,
    FETCH,
    LIST_OFFSETS,
    OFFSETS_FOR_LEADER_EPOCH,
    PRODUCE,
    Api,
    api_of,
)
from rig.protocol.fetch import (
    decode_fetch_request,
    decode_fetch_response,
    encode_fetch_request,
    encode_fetch_response,
    normalize_fetch_request,
    normalize_fetch_response,
)
from rig.protocol.fetch_request import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic
from rig.protocol.fetch_response import (
    AbortedTransaction,
    EpochEndOffset,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    LeaderIdAndEpoch,
    NodeEndpoint,
    SnapshotId,
)
from rig.protocol.fetch_versions import (
    FETCH_API_KEY,
    FETCH_VERSIONS,
    FIRST_FLEXIBLE_VERSION,
    is_flexible,
)
from rig.protocol.header import (
    SIZE_PREFIX_BYTES,
    RequestHeader,
    ResponseHeader,
    api_request_header_size,
    api_response_header_size,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    frame,
    request_header_version,
    response_header_version,
    unframe,
    wire_size,
)
from rig.protocol.offsets_sizes import (
    list_offsets_request_body_size,
    list_offsets_response_body_size,
    offsets_for_leader_epoch_request_body_size,
    offsets_for_leader_epoch_response_body_size,
)
from rig.protocol.primitives import ZERO_UUID, RecordsLength
from rig.protocol.produce_sizes import produce_request_body_size, produce_response_body_size
from rig.protocol.sizes import (
    RequestShape,
    ResponsePartitionShape,
    ResponseShape,
    ResponseTopicShape,
    materialize_request,
    materialize_response,
    request_body_size,
    request_header_size,
    response_body_size,
    response_header_size,
)

__all__ = [
    "APIS",
    "FETCH",
    "FETCH_API_KEY",
    "FETCH_VERSIONS",
    "FIRST_FLEXIBLE_VERSION",
    "LIST_OFFSETS",
    "OFFSETS_FOR_LEADER_EPOCH",
    "PRODUCE",
    "SIZE_PREFIX_BYTES",
    "ZERO_UUID",
    "AbortedTransaction",
    "Api",
    "EpochEndOffset",
    "FetchPartition",
    "FetchRequest",
    "FetchResponse",
    "FetchResponsePartition",
    "FetchResponseTopic",
    "FetchTopic",
    "ForgottenTopic",
    "LeaderIdAndEpoch",
    "NodeEndpoint",
    "ProtocolError",
    "RecordsLength",
    "RequestHeader",
    "RequestShape",
    "ResponseHeader",
    "ResponsePartitionShape",
    "ResponseShape",
    "ResponseTopicShape",
    "SnapshotId",
    "api_of",
    "api_request_header_size",
    "api_response_header_size",
    "decode_fetch_request",
    "decode_fetch_response",
    "decode_request_header",
    "decode_response_header",
    "encode_fetch_request",
    "encode_fetch_response",
    "encode_request_header",
    "encode_response_header",
    "frame",
    "is_flexible",
    "list_offsets_request_body_size",
    "list_offsets_response_body_size",
    "materialize_request",
    "materialize_response",
    "normalize_fetch_request",
    "normalize_fetch_response",
    "offsets_for_leader_epoch_request_body_size",
    "offsets_for_leader_epoch_response_body_size",
    "produce_request_body_size",
    "produce_response_body_size",
    "request_body_size",
    "request_header_size",
    "request_header_version",
    "response_body_size",
    "response_header_size",
    "response_header_version",
    "unframe",
    "wire_size",
]
