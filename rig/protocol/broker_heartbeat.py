"""BrokerHeartbeat (api_key 63) as Kafka's BrokerHeartbeatRequest.json /
BrokerHeartbeatResponse.json define it (v0–v1), with its fast sizes.

A KRaft broker's heartbeat to the controller (BrokerLifecycleManager.sendBrokerHeartbeat): its
id and broker epoch, the metadata offset it has reached, whether it wants to be fenced or to
shut down. Flexible from v0. v1 (3.7, KIP-858) adds the ids of its offline log directories, a
tagged field (tag 0): sent only when there are some. The answer (the same in both versions)
says whether the broker has caught up, is fenced, and may go on with its shutdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from rig.protocol.apis import BROKER_HEARTBEAT
from rig.protocol.boolean import BOOLEAN
from rig.protocol.broker_registration import UUID_BYTES
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import (
    INT16,
    INT32,
    INT64,
    UUID,
    array_prefix_size,
    tagged_field_size,
)
from rig.protocol.schema import ArrayOf, Field, Schema, carries, fixed_size
from rig.protocol.tagged import field_tag


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest:
    broker_id: int = 0
    broker_epoch: int = -1
    current_metadata_offset: int = 0
    want_fence: bool = False
    want_shut_down: bool = False
    offline_log_dirs: tuple[bytes, ...] = ()  # v1+, tagged (KIP-858)


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


BROKER_HEARTBEAT_REQUEST = Schema("BrokerHeartbeatRequest", BrokerHeartbeatRequest, (
    Field("broker_id", INT32, "0+"),
    Field("broker_epoch", INT64, "0+"),
    Field("current_metadata_offset", INT64, "0+"),
    Field("want_fence", BOOLEAN, "0+"),
    Field("want_shut_down", BOOLEAN, "0+"),
    Field("offline_log_dirs", ArrayOf(UUID), "1+", tag=0),
), BROKER_HEARTBEAT)
BROKER_HEARTBEAT_RESPONSE = Schema("BrokerHeartbeatResponse", BrokerHeartbeatResponse, (
    Field("throttle_time_ms", INT32, "0+"),
    Field("error_code", INT16, "0+"),
    Field("is_caught_up", BOOLEAN, "0+"),
    Field("is_fenced", BOOLEAN, "0+"),
    Field("should_shut_down", BOOLEAN, "0+"),
), BROKER_HEARTBEAT)
_OFFLINE_TAG = field_tag(BROKER_HEARTBEAT_REQUEST, "offline_log_dirs")


def encode_broker_heartbeat_request(req: BrokerHeartbeatRequest, version: int) -> bytes:
    return encode_struct(BROKER_HEARTBEAT_REQUEST, req, version)


def decode_broker_heartbeat_request(data: bytes, version: int) -> BrokerHeartbeatRequest:
    result: BrokerHeartbeatRequest = decode_struct(BROKER_HEARTBEAT_REQUEST, data, version)
    return result


def encode_broker_heartbeat_response(resp: BrokerHeartbeatResponse, version: int) -> bytes:
    return encode_struct(BROKER_HEARTBEAT_RESPONSE, resp, version)


def decode_broker_heartbeat_response(data: bytes, version: int) -> BrokerHeartbeatResponse:
    result: BrokerHeartbeatResponse = decode_struct(BROKER_HEARTBEAT_RESPONSE, data, version)
    return result


# -- fast sizes ----------------------------------------------------------------------------------


def broker_heartbeat_request_body_size(version: int, offline_log_dirs: int = 0) -> int:
    """len(encode_broker_heartbeat_request(...)) reporting that many offline log directories
    (a v0 request carries none)."""
    size = _fixed_request(version)
    if offline_log_dirs and carries(BROKER_HEARTBEAT_REQUEST, "offline_log_dirs", version):
        size += tagged_field_size(_OFFLINE_TAG, array_prefix_size(offline_log_dirs, True)
                                  + UUID_BYTES * offline_log_dirs)
    return size


@cache
def _fixed_request(version: int) -> int:
    BROKER_HEARTBEAT.check_version(version)
    return fixed_size(BROKER_HEARTBEAT_REQUEST, version)


@cache
def broker_heartbeat_response_body_size(version: int) -> int:
    BROKER_HEARTBEAT.check_version(version)
    return fixed_size(BROKER_HEARTBEAT_RESPONSE, version)
