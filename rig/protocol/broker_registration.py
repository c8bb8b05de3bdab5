"""BrokerRegistration (api_key 62) as Kafka's BrokerRegistrationRequest.json /
BrokerRegistrationResponse.json define it (v0–v4), with its fast sizes.

A KRaft broker registers each new process with the controller (BrokerLifecycleManager
.sendBrokerRegistration): its id, the cluster id, the process's incarnation id, its listeners,
the features it supports and its rack. Flexible from v0. v1 (3.4) adds IsMigratingZkBroker; v2
(3.7, KIP-858) the ids of its log directories; v3 (3.7, KIP-966) the broker epoch a clean
shutdown left; v4 (3.9) the same bytes, but a v0–v3 request drops the features whose
MinSupportedVersion is 0 (BrokerRegistrationRequest.Builder.build: KAFKA-17011 / KAFKA-17492).
The answer is the broker epoch (or an error and -1), the same in every version.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from rig.protocol.apis import BROKER_REGISTRATION
from rig.protocol.boolean import BOOLEAN
from rig.protocol.codec import decode_struct, encode_struct
from rig.protocol.primitives import (
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    STRING,
    UINT16,
    UUID,
    ZERO_UUID,
    array_prefix_size,
    string_size,
)
from rig.protocol.schema import ArrayOf, Field, Schema, carries, fixed_size

UUID_BYTES = len(ZERO_UUID)


@dataclass(frozen=True, slots=True)
class Listener:
    name: str = ""
    host: str = ""
    port: int = 0  # uint16
    security_protocol: int = 0


@dataclass(frozen=True, slots=True)
class Feature:
    name: str = ""
    min_supported_version: int = 0
    max_supported_version: int = 0


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    broker_id: int = 0
    cluster_id: str = ""
    incarnation_id: bytes = ZERO_UUID
    listeners: tuple[Listener, ...] = ()
    features: tuple[Feature, ...] = ()
    rack: str | None = None
    is_migrating_zk_broker: bool = False  # v1+
    log_dirs: tuple[bytes, ...] = ()  # v2+ (KIP-858)
    previous_broker_epoch: int = -1  # v3+ (KIP-966)


@dataclass(frozen=True, slots=True)
class BrokerRegistrationResponse:
    throttle_time_ms: int = 0
    error_code: int = 0
    broker_epoch: int = -1


LISTENER = Schema("Listener", Listener, (
    Field("name", STRING, "0+"),
    Field("host", STRING, "0+"),
    Field("port", UINT16, "0+"),
    Field("security_protocol", INT16, "0+"),
), BROKER_REGISTRATION)
FEATURE = Schema("Feature", Feature, (
    Field("name", STRING, "0+"),
    Field("min_supported_version", INT16, "0+"),
    Field("max_supported_version", INT16, "0+"),
), BROKER_REGISTRATION)
BROKER_REGISTRATION_REQUEST = Schema("BrokerRegistrationRequest", BrokerRegistrationRequest, (
    Field("broker_id", INT32, "0+"),
    Field("cluster_id", STRING, "0+"),
    Field("incarnation_id", UUID, "0+"),
    Field("listeners", ArrayOf(LISTENER), "0+"),
    Field("features", ArrayOf(FEATURE), "0+"),
    Field("rack", NULLABLE_STRING, "0+"),
    Field("is_migrating_zk_broker", BOOLEAN, "1+"),
    Field("log_dirs", ArrayOf(UUID), "2+"),
    Field("previous_broker_epoch", INT64, "3+"),
), BROKER_REGISTRATION)
BROKER_REGISTRATION_RESPONSE = Schema("BrokerRegistrationResponse", BrokerRegistrationResponse, (
    Field("throttle_time_ms", INT32, "0+"),
    Field("error_code", INT16, "0+"),
    Field("broker_epoch", INT64, "0+"),
), BROKER_REGISTRATION)


def encode_broker_registration_request(req: BrokerRegistrationRequest, version: int) -> bytes:
    return encode_struct(BROKER_REGISTRATION_REQUEST, req, version)


def decode_broker_registration_request(data: bytes, version: int) -> BrokerRegistrationRequest:
    result: BrokerRegistrationRequest = decode_struct(BROKER_REGISTRATION_REQUEST, data, version)
    return result


def encode_broker_registration_response(resp: BrokerRegistrationResponse, version: int) -> bytes:
    return encode_struct(BROKER_REGISTRATION_RESPONSE, resp, version)


def decode_broker_registration_response(data: bytes,
                                        version: int) -> BrokerRegistrationResponse:
    result: BrokerRegistrationResponse = decode_struct(BROKER_REGISTRATION_RESPONSE, data,
                                                       version)
    return result


# -- fast sizes ----------------------------------------------------------------------------------


@cache
def _constants(version: int) -> tuple[int, int, int, bool]:
    BROKER_REGISTRATION.check_version(version)
    return (fixed_size(BROKER_REGISTRATION_REQUEST, version), fixed_size(LISTENER, version),
            fixed_size(FEATURE, version), carries(BROKER_REGISTRATION_REQUEST, "log_dirs", version))


def broker_registration_request_body_size(version: int, cluster_id: str,
                                          listeners: Iterable[tuple[str, str]],
                                          features: Iterable[str], rack: str | None,
                                          log_dirs: int) -> int:
    """len(encode_broker_registration_request(...)) with `listeners` as (name, host), the
    features named (as sent: the caller leaves out what a v0–v3 request drops), the rack (None:
    null) and that many log directory ids (carried from v2)."""
    top, listener, feature, dirs = _constants(version)
    ends = tuple(listeners)
    names = tuple(features)
    size = top + string_size(cluster_id, True) + string_size(rack, True)
    size += array_prefix_size(len(ends), True) + sum(
        listener + string_size(name, True) + string_size(host, True) for name, host in ends)
    size += array_prefix_size(len(names), True) + sum(
        feature + string_size(name, True) for name in names)
    return size + (array_prefix_size(log_dirs, True) + UUID_BYTES * log_dirs if dirs else 0)


@cache
def broker_registration_response_body_size(version: int) -> int:
    BROKER_REGISTRATION.check_version(version)
    return fixed_size(BROKER_REGISTRATION_RESPONSE, version)
