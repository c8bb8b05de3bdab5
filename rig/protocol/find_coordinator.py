"""FindCoordinator (api_key 10) bodies as Kafka's FindCoordinatorRequest.json /
FindCoordinatorResponse.json define them: dataclasses with Kafka's defaults, their descriptions,
encode / decode through the interpreter (rig.protocol.codec).

Before 2.4 the same fields live in Java: Protocol.java's CONSUMER_METADATA_REQUEST (0.8.2) and
GROUP_COORDINATOR_REQUEST (0.9, 0.10) arrays, v0 (the response's coordinator a struct of
node_id, host, port: the same bytes), FIND_COORDINATOR_REQUEST at 0.11 (v1: key_type, KIP-98),
FindCoordinatorRequest.java at 2.0 (v2). From v4 (3.0, KIP-699) a request asks for a batch of
keys and the answer has one coordinator per key.
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.protocol.apis import FIND_COORDINATOR
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT8, INT16, INT32, NULLABLE_STRING, STRING
from rig.protocol.schema import ArrayOf, Field, Schema

GROUP_KEY_TYPE = 0  # CoordinatorType.GROUP


@dataclass(frozen=True, slots=True)
class FindCoordinatorRequest:
    key: str = ""  # v0–v3
    key_type: int = GROUP_KEY_TYPE  # v1+
    coordinator_keys: tuple[str, ...] = ()  # v4+


@dataclass(frozen=True, slots=True)
class Coordinator:
    key: str = ""
    node_id: int = 0
    host: str = ""
    port: int = 0
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class FindCoordinatorResponse:
    throttle_time_ms: int = 0  # v1+
    error_code: int = 0  # v0–v3
    error_message: str | None = None  # v1–v3
    node_id: int = 0  # v0–v3
    host: str = ""  # v0–v3
    port: int = 0  # v0–v3
    coordinators: tuple[Coordinator, ...] = ()  # v4+


FIND_COORDINATOR_REQUEST = Schema("FindCoordinatorRequest", FindCoordinatorRequest, (
    Field("key", STRING, "0-3"),
    Field("key_type", INT8, "1+"),
    Field("coordinator_keys", ArrayOf(STRING), "4+"),
), FIND_COORDINATOR)
COORDINATOR = Schema("Coordinator", Coordinator, (
    Field("key", STRING, "4+"),
    Field("node_id", INT32, "4+"),
    Field("host", STRING, "4+"),
    Field("port", INT32, "4+"),
    Field("error_code", INT16, "4+"),
    Field("error_message", NULLABLE_STRING, "4+"),
), FIND_COORDINATOR)
FIND_COORDINATOR_RESPONSE = Schema("FindCoordinatorResponse", FindCoordinatorResponse, (
    Field("throttle_time_ms", INT32, "1+"),
    Field("error_code", INT16, "0-3"),
    Field("error_message", NULLABLE_STRING, "1-3"),
    Field("node_id", INT32, "0-3"),
    Field("host", STRING, "0-3"),
    Field("port", INT32, "0-3"),
    Field("coordinators", ArrayOf(COORDINATOR), "4+"),
), FIND_COORDINATOR)


def encode_find_coordinator_request(req: FindCoordinatorRequest, version: int) -> bytes:
    return encode_struct(FIND_COORDINATOR_REQUEST, req, version)


def decode_find_coordinator_request(data: bytes, version: int) -> FindCoordinatorRequest:
    result: FindCoordinatorRequest = decode_struct(FIND_COORDINATOR_REQUEST, data, version)
    return result


def encode_find_coordinator_response(resp: FindCoordinatorResponse, version: int) -> bytes:
    return encode_struct(FIND_COORDINATOR_RESPONSE, resp, version)


def decode_find_coordinator_response(data: bytes, version: int) -> FindCoordinatorResponse:
    result: FindCoordinatorResponse = decode_struct(FIND_COORDINATOR_RESPONSE, data, version)
    return result
