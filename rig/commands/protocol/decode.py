"""`rig protocol fetch --decode`: read a Fetch message (raw bytes or hex text; a bare body or
a frame, detected), decode it and print it as JSON or, with --hex, as an annotated dump."""

from __future__ import annotations

import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import typer

from rig.commands.protocol.annotate import (
    Span,
    request_header_spans,
    response_header_spans,
    walk,
)
from rig.commands.protocol.example import SPOKEN_V
from rig.commands.protocol.output import dump_lines, message_json, spans_json
from rig.errors import ProtocolError, UserError
from rig.protocol import (
    FETCH_API_KEY,
    FETCH_VERSIONS,
    SIZE_PREFIX_BYTES,
    decode_fetch_request,
    decode_fetch_response,
    decode_request_header,
    decode_response_header,
)
from rig.protocol.fetch_request import FETCH_REQUEST
from rig.protocol.fetch_response import FETCH_RESPONSE
from rig.scenario.source import read_limited

MAX_INPUT_BYTES = 256 << 20  # the most --decode reads
_I32 = struct.Struct(">i")
_HEX_TEXT = re.compile(rb"^[0-9a-fA-F\s]+$")


def _read_input(path: Path) -> bytes:
    try:
        data = (sys.stdin.buffer.read(MAX_INPUT_BYTES + 1) if str(path) == "-"
                else read_limited(path, MAX_INPUT_BYTES, "messages"))
    except (OSError, ValueError) as exc:
        raise UserError(f"--decode {path}: {exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise UserError(f"--decode -: more than {MAX_INPUT_BYTES:,} bytes on stdin")
    if data.strip() and _HEX_TEXT.match(data):  # a hex dump such as `xxd -p` writes
        digits = re.sub(rb"\s", b"", data)
        if len(digits) % 2:
            raise UserError(f"--decode {path}: looks like hex text but has an odd number of "
                            f"digits ({len(digits)})")
        return bytes.fromhex(digits.decode())
    return data


@dataclass(slots=True)
class Decoded:
    version: int
    framed: bool
    header: dict[str, Any] | None
    header_bytes: int
    body: bytes
    message: Any
    spans_base: int


def _decode_framed(data: bytes, response: bool, version: int | None) -> Decoded:
    if len(data) < SIZE_PREFIX_BYTES:
        raise ProtocolError(f"{len(data)} bytes cannot hold the int32 size prefix of a frame")
    (size,) = _I32.unpack_from(data)
    if size != len(data) - SIZE_PREFIX_BYTES:
        raise ProtocolError(f"frame: the size prefix says {size} bytes, "
                            f"{len(data) - SIZE_PREFIX_BYTES} follow")
    rest = data[SIZE_PREFIX_BYTES:]
    if response:
        if version is None:
            raise UserError("--version is required to decode a response (a response does not "
                            "say its version: the client knows what it asked)")
        rh, used = decode_response_header(rest, version)
        header: dict[str, Any] = {"correlation_id": rh.correlation_id}
        message: Any = decode_fetch_response(rest[used:], version)
    else:
        qh, used = decode_request_header(rest)
        if version is not None and version != qh.api_version:
            raise ProtocolError(f"the request header says Fetch v{qh.api_version}, but "
                                f"--version is {version}")
        version = qh.api_version
        header = {"api_key": qh.api_key, "api_version": qh.api_version,
                  "correlation_id": qh.correlation_id, "client_id": qh.client_id}
        message = decode_fetch_request(rest[used:], version)
    return Decoded(version, True, header, used, rest[used:], message,
                    SIZE_PREFIX_BYTES + used)


def _decode_body(data: bytes, response: bool, version: int | None) -> Decoded:
    if version is None:
        raise UserError("--version is required to decode a body (only a framed request says "
                        "its version, in its header)")
    message = (decode_fetch_response(data, version) if response
               else decode_fetch_request(data, version))
    return Decoded(version, False, None, 0, data, message, 0)


def _looks_framed(data: bytes) -> bool:
    return (len(data) >= SIZE_PREFIX_BYTES
            and _I32.unpack_from(data)[0] == len(data) - SIZE_PREFIX_BYTES)


def _looks_cut_short(data: bytes, response: bool) -> bool:
    """A request frame missing its end: a size prefix promising more than follows, then the
    api_key of Fetch and a version rig speaks (no follower's body starts like that)."""
    if response or len(data) < 8:
        return False
    size, api_key, api_version = struct.unpack_from(">ihh", data)
    return (size > len(data) - SIZE_PREFIX_BYTES and api_key == FETCH_API_KEY
            and api_version in FETCH_VERSIONS)


def decode_bytes(data: bytes, response: bool, version: int | None,
                 framed: bool | None) -> Decoded:
    """Decode one message: a framed one (size prefix + header + body) or a bare body.

    `framed` None detects: a size prefix equal to the bytes that follow means a frame, unless
    the bytes then fail to decode as one and do decode as a body."""
    if version is not None and version not in FETCH_VERSIONS:
        raise UserError(f"--version {version}: rig speaks Fetch {SPOKEN_V}")
    if framed is True or (framed is None and _looks_cut_short(data, response)):
        return _decode_framed(data, response, version)
    if framed is False or not _looks_framed(data):
        return _decode_body(data, response, version)
    try:
        return _decode_framed(data, response, version)
    except ProtocolError as framed_error:
        if version is None:
            raise
        try:
            return _decode_body(data, response, version)
        except ProtocolError:
            raise framed_error from None


def decode_file(path: Path, response: bool, version: int | None, framed: bool | None,
            show_hex: bool, as_json: bool) -> None:
    data = _read_input(path)
    try:
        d = decode_bytes(data, response, version, framed)
    except ProtocolError as exc:
        raise ProtocolError(f"{path}: {exc}") from None
    schema = FETCH_RESPONSE if response else FETCH_REQUEST
    spans: list[Span] = []
    if show_hex:
        if d.framed:
            header = data[SIZE_PREFIX_BYTES:SIZE_PREFIX_BYTES + d.header_bytes]
            spans = [Span(0, SIZE_PREFIX_BYTES, "size", str(len(data) - SIZE_PREFIX_BYTES)),
                     *(response_header_spans(header, SIZE_PREFIX_BYTES, d.version) if response
                       else request_header_spans(header, SIZE_PREFIX_BYTES))]
        spans += walk(schema, d.body, d.spans_base, d.version)
    kind = "response" if response else "request"
    if show_hex and not as_json:
        what = "size prefix + header + body" if d.framed else "body only"
        typer.echo(f"Fetch v{d.version} {kind}, {len(data)} bytes ({what}) from {path}")
        for line in dump_lines(data, spans):
            typer.echo(line)
        return
    doc: dict[str, Any] = {
        "api": "Fetch", "message": kind, "version": d.version,
        "format": "framed" if d.framed else "body", "body_bytes": len(d.body),
        "header_bytes": d.header_bytes if d.framed else None,
        "wire_bytes": len(data) if d.framed else None,
        "header": d.header, "body": message_json(schema, d.message, d.version)}
    if show_hex:
        doc["hex"] = spans_json(data, spans)
    typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())

