"""Request and response headers for Fetch, and the int32 size prefix of every message.

Fetch ≤ v11 uses request header v1 / response header v0; v12+ adds an (empty) tag section to
each: request header v2 / response header v1. client_id keeps its int16 length even in v2.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rig.errors import ProtocolError
from rig.protocol.fetch_versions import FETCH_API_KEY, check_version, is_flexible
from rig.protocol.primitives import NULLABLE_STRING, CodecFailure, Reader, write_uvarint

SIZE_PREFIX_BYTES = 4
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I16_PAIR_I32 = struct.Struct(">hhi")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_version: int
    correlation_id: int = 0
    client_id: str | None = None
    api_key: int = FETCH_API_KEY


@dataclass(frozen=True, slots=True)
class ResponseHeader:
    correlation_id: int = 0


def request_header_version(api_version: int) -> int:
    """RequestHeader version Fetch `api_version` uses: 2 when flexible, else 1."""
    check_version(api_version)
    return 2 if is_flexible(api_version) else 1


def response_header_version(api_version: int) -> int:
    """ResponseHeader version Fetch `api_version` uses: 1 when flexible, else 0."""
    check_version(api_version)
    return 1 if is_flexible(api_version) else 0


def encode_request_header(header: RequestHeader) -> bytes:
    check_version(header.api_version)
    if header.api_key != FETCH_API_KEY:
        raise _not_fetch(header.api_key)
    buf = bytearray()
    try:
        buf += _I16_PAIR_I32.pack(header.api_key, header.api_version, header.correlation_id)
        NULLABLE_STRING.write(buf, header.client_id, False)  # never compact: see module doc
    except (struct.error, CodecFailure) as exc:
        raise ProtocolError(f"RequestHeader: {exc}") from None
    if is_flexible(header.api_version):
        write_uvarint(buf, 0)
    return bytes(buf)


def decode_request_header(data: bytes | bytearray | memoryview) -> tuple[RequestHeader, int]:
    """Parse the header at the start of `data` (a request without its size prefix).

    Returns the header and its length in bytes: the body starts there."""
    r = Reader(bytes(data))
    try:
        api_key = r.fixed(_I16)
        api_version = r.fixed(_I16)
        if api_key != FETCH_API_KEY:
            raise _not_fetch(api_key)
        check_version(api_version)
        correlation_id = r.fixed(_I32)
        client_id = NULLABLE_STRING.read(r, False)
        if is_flexible(api_version):
            _skip_tags(r)
    except CodecFailure as exc:
        raise ProtocolError(f"RequestHeader: {exc}") from None
    assert client_id is None or isinstance(client_id, str)
    return RequestHeader(api_version, correlation_id, client_id, api_key), r.pos


def encode_response_header(header: ResponseHeader, api_version: int) -> bytes:
    check_version(api_version)
    try:
        out = _I32.pack(header.correlation_id)
    except struct.error:
        raise ProtocolError(
            f"ResponseHeader: correlation_id out of range: {header.correlation_id}"
        ) from None
    return out + b"\x00" if is_flexible(api_version) else out


def decode_response_header(
    data: bytes | bytearray | memoryview, api_version: int
) -> tuple[ResponseHeader, int]:
    """Parse the header of a response to a Fetch of `api_version` (the response does not say
    its version: the client knows what it asked). Returns the header and its length."""
    check_version(api_version)
    r = Reader(bytes(data))
    try:
        correlation_id = r.fixed(_I32)
        if is_flexible(api_version):
            _skip_tags(r)
    except CodecFailure as exc:
        raise ProtocolError(f"ResponseHeader: {exc}") from None
    return ResponseHeader(correlation_id), r.pos


def _not_fetch(api_key: int) -> ProtocolError:
    return ProtocolError(f"RequestHeader: only Fetch (api_key 1) is supported, got {api_key}")


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
