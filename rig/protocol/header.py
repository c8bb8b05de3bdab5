"""Request and response headers of the APIs rig speaks, and the int32 size prefix of every message.

A version before its API's first flexible one uses request header v1 / response header v0; a
flexible one adds an (empty) tag section to each: request header v2 / response header v1
(Fetch from v12, Produce from v9, ListOffsets from v6, OffsetsForLeaderEpoch from v4; KIP-482).
client_id keeps its int16 length even in v2. ControlledShutdown v0 alone uses request header v0,
without client_id (ControlledShutdownRequest.json; ApiMessageType.requestHeaderVersion).
(ApiVersions' own exceptions are not spoken here.)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache, lru_cache

from rig.errors import ProtocolError
from rig.protocol.apis import CONTROLLED_SHUTDOWN, FETCH, Api, api_of
from rig.protocol.primitives import (
    NULLABLE_STRING,
    CodecFailure,
    Reader,
    string_size,
    write_uvarint,
)

SIZE_PREFIX_BYTES = 4
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I16_PAIR_I32 = struct.Struct(">hhi")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_version: int
    correlation_id: int = 0
    client_id: str | None = None
    api_key: int = FETCH.key


@dataclass(frozen=True, slots=True)
class ResponseHeader:
    correlation_id: int = 0


def request_header_version(api_version: int, api: Api = FETCH) -> int:
    """RequestHeader version `api`'s `api_version` uses: 2 when flexible, else 1 (0 for
    ControlledShutdown v0)."""
    api.check_version(api_version)
    if api is CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    return 2 if api.is_flexible(api_version) else 1


def response_header_version(api_version: int, api: Api = FETCH) -> int:
    """ResponseHeader version `api`'s `api_version` uses: 1 when flexible, else 0."""
    api.check_version(api_version)
    return 1 if api.is_flexible(api_version) else 0


@lru_cache(maxsize=1024)
def api_request_header_size(api: Api, api_version: int, client_id: str | None) -> int:
    """Bytes of the request header of `api`'s `api_version`: api_key, api_version,
    correlation_id, client_id (always an int16-length string; none in header v0), and the tag
    section if flexible."""
    if request_header_version(api_version, api) == 0:
        return 2 + 2 + 4
    return 2 + 2 + 4 + string_size(client_id, False) + (1 if api.is_flexible(api_version) else 0)


def request_wire_size(api: Api, api_version: int, client_id: str | None, body_bytes: int) -> int:
    """A request on the wire: the size prefix, its header and a body of `body_bytes`."""
    return SIZE_PREFIX_BYTES + api_request_header_size(api, api_version, client_id) + body_bytes


def response_wire_size(api: Api, api_version: int, body_bytes: int) -> int:
    """A response on the wire: the size prefix, its header and a body of `body_bytes`."""
    return SIZE_PREFIX_BYTES + api_response_header_size(api, api_version) + body_bytes


@cache
def api_response_header_size(api: Api, api_version: int) -> int:
    """Bytes of the response header: correlation_id, and the tag section if flexible."""
    api.check_version(api_version)
    return 4 + (1 if api.is_flexible(api_version) else 0)


def encode_request_header(header: RequestHeader) -> bytes:
    api = _api(header.api_key)
    api.check_version(header.api_version)
    buf = bytearray()
    try:
        buf += _I16_PAIR_I32.pack(header.api_key, header.api_version, header.correlation_id)
        if request_header_version(header.api_version, api):
            NULLABLE_STRING.write(buf, header.client_id, False)  # never compact: module doc
    except (struct.error, CodecFailure) as exc:
        raise ProtocolError(f"RequestHeader: {exc}") from None
    if api.is_flexible(header.api_version):
        write_uvarint(buf, 0)
    return bytes(buf)


def decode_request_header(data: bytes | bytearray | memoryview) -> tuple[RequestHeader, int]:
    """Parse the header at the start of `data` (a request without its size prefix).

    Returns the header and its length in bytes: the body starts there."""
    r = Reader(bytes(data))
    try:
        api_key = r.fixed(_I16)
        api_version = r.fixed(_I16)
        api = _api(api_key)
        api.check_version(api_version)
        correlation_id = r.fixed(_I32)
        client_id = (NULLABLE_STRING.read(r, False) if request_header_version(api_version, api)
                     else None)
        if api.is_flexible(api_version):
            _skip_tags(r)
    except CodecFailure as exc:
        raise ProtocolError(f"RequestHeader: {exc}") from None
    assert client_id is None or isinstance(client_id, str)
    return RequestHeader(api_version, correlation_id, client_id, api_key), r.pos


def encode_response_header(header: ResponseHeader, api_version: int, api: Api = FETCH) -> bytes:
    api.check_version(api_version)
    try:
        out = _I32.pack(header.correlation_id)
    except struct.error:
        raise ProtocolError(
            f"ResponseHeader: correlation_id out of range: {header.correlation_id}"
        ) from None
    return out + b"\x00" if api.is_flexible(api_version) else out


def decode_response_header(
    data: bytes | bytearray | memoryview, api_version: int, api: Api = FETCH
) -> tuple[ResponseHeader, int]:
    """Parse the header of a response to `api`'s `api_version` (the response does not say
    its API or version: the client knows what it asked). Returns the header and its length."""
    api.check_version(api_version)
    r = Reader(bytes(data))
    try:
        correlation_id = r.fixed(_I32)
        if api.is_flexible(api_version):
            _skip_tags(r)
    except CodecFailure as exc:
        raise ProtocolError(f"ResponseHeader: {exc}") from None
    return ResponseHeader(correlation_id), r.pos


def _api(api_key: int) -> Api:
    try:
        return api_of(api_key)
    except ProtocolError as exc:
        raise ProtocolError(f"RequestHeader: {exc}") from None


def _skip_tags(r: Reader) -> None:
    # Headers define no tagged fields yet; unknown ones are skipped, as Kafka does.
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())


def wire_size(header: bytes | int, body: bytes | int) -> int:
    """Bytes on the socket for one message: the int32 size prefix, header and body.

    Each argument is the encoded bytes or just their length (from the fast size path)."""
    h = header if isinstance(header, int) else len(header)
    b = body if isinstance(body, int) else len(body)
    return SIZE_PREFIX_BYTES + h + b


def frame(header: bytes, body: bytes) -> bytes:
    """One message as sent: int32 size (of header + body), header, body."""
    return _I32.pack(len(header) + len(body)) + header + body


def unframe(data: bytes | bytearray | memoryview) -> bytes:
    """The header + body of exactly one framed message; checks the size prefix."""
    data = bytes(data)
    if len(data) < SIZE_PREFIX_BYTES:
        raise ProtocolError(f"frame: {len(data)} bytes cannot hold the int32 size prefix")
    (size,) = _I32.unpack_from(data)
    if size != len(data) - SIZE_PREFIX_BYTES:
        raise ProtocolError(
            f"frame: size prefix says {size} bytes, {len(data) - SIZE_PREFIX_BYTES} follow"
        )
    return data[SIZE_PREFIX_BYTES:]
