"""ControlledShutdown (api_key 7) as Kafka's ControlledShutdownRequest.json /
ControlledShutdownResponse.json define it (v0–v3), with its fast sizes.

Before 2.4 the same fields live in Java (Protocol.java's CONTROLLED_SHUTDOWN_REQUEST_V0–V1, then
ControlledShutdownRequest.java; 0.8.2: Scala's kafka.api.ControlledShutdownRequest). v0 has a
request header without client_id (rig.protocol.header); v1 is v0's body; v2 (KIP-380) adds the
broker epoch; v3 is flexible. The answer lists the partitions the broker still leads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from rig.protocol.apis import CONTROLLED_SHUTDOWN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import INT16, INT32, INT64, STRING, array_prefix_size, string_size
from rig.protocol.schema import ArrayOf, Field, Schema, fixed_size


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int = 0
    broker_epoch: int = -1  # v2+


@dataclass(frozen=True, slots=True)
class RemainingPartition:
    topic_name: str = ""
    partition_index: int = 0


@dataclass(frozen=True, slots=True)
class ControlledShutdownResponse:
    error_code: int = 0
    remaining_partitions: tuple[RemainingPartition, ...] = ()


CONTROLLED_SHUTDOWN_REQUEST = Schema("ControlledShutdownRequest", ControlledShutdownRequest, (
    Field("broker_id", INT32, "0+"),
    Field("broker_epoch", INT64, "2+"),
), CONTROLLED_SHUTDOWN)
REMAINING_PARTITION = Schema("RemainingPartition", RemainingPartition, (
    Field("topic_name", STRING, "0+"),
    Field("partition_index", INT32, "0+"),
), CONTROLLED_SHUTDOWN)
CONTROLLED_SHUTDOWN_RESPONSE = Schema("ControlledShutdownResponse", ControlledShutdownResponse, (
    Field("error_code", INT16, "0+"),
    Field("remaining_partitions", ArrayOf(REMAINING_PARTITION), "0+"),
), CONTROLLED_SHUTDOWN)


def encode_controlled_shutdown_request(req: ControlledShutdownRequest, version: int) -> bytes:
    return encode_struct(CONTROLLED_SHUTDOWN_REQUEST, req, version)


def decode_controlled_shutdown_request(data: bytes, version: int) -> ControlledShutdownRequest:
    result: ControlledShutdownRequest = decode_struct(CONTROLLED_SHUTDOWN_REQUEST, data, version)
    return result


def encode_controlled_shutdown_response(resp: ControlledShutdownResponse, version: int) -> bytes:
    return encode_struct(CONTROLLED_SHUTDOWN_RESPONSE, resp, version)


def decode_controlled_shutdown_response(data: bytes, version: int) -> ControlledShutdownResponse:
    result: ControlledShutdownResponse = decode_struct(CONTROLLED_SHUTDOWN_RESPONSE, data,
                                                       version)
    return result


# -- fast sizes ----------------------------------------------------------------------------------


@cache
def controlled_shutdown_request_body_size(version: int) -> int:
    CONTROLLED_SHUTDOWN.check_version(version)
    return fixed_size(CONTROLLED_SHUTDOWN_REQUEST, version)


def controlled_shutdown_response_body_size(version: int, remaining: Iterable[str]) -> int:
    """len(encode_controlled_shutdown_response(...)) listing partitions of topics `remaining`
    (one name per partition)."""
    CONTROLLED_SHUTDOWN.check_version(version)
    flex = CONTROLLED_SHUTDOWN.is_flexible(version)
    names = tuple(remaining)
    part = fixed_size(REMAINING_PARTITION, version)
    return fixed_size(CONTROLLED_SHUTDOWN_RESPONSE, version) + array_prefix_size(
        len(names), flex) + sum(part + string_size(name, flex) for name in names)
