"""`rig protocol fetch` without --decode: encode the example's request or response, write it
with --out, and print its body, header and wire bytes (as text or JSON, with --hex a dump)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import typer

from rig import written
from rig.commands.protocol.annotate import (
    Span,
    request_header_spans,
    response_header_spans,
    walk,
)
from rig.commands.protocol.example import Example, build_request, build_response
from rig.commands.protocol.output import dump_lines, message_json, spans_json
from rig.errors import UserError
from rig.protocol import (
    FETCH_API_KEY,
    SIZE_PREFIX_BYTES,
    RequestHeader,
    ResponseHeader,
    encode_fetch_request,
    encode_fetch_response,
    encode_request_header,
    encode_response_header,
    frame,
    is_flexible,
    normalize_fetch_request,
    normalize_fetch_response,
    request_header_version,
    response_header_version,
)
from rig.protocol.fetch_request import FETCH_REQUEST
from rig.protocol.fetch_response import FETCH_RESPONSE


def encode_example(ex: Example, response: bool, client_id: str, correlation_id: int, show_hex: bool,
            as_json: bool, out: Path | None) -> None:
    if response:
        resp = build_response(ex)
        body = encode_fetch_response(resp, ex.version)
        header = encode_response_header(ResponseHeader(correlation_id), ex.version)
        message_obj: Any = normalize_fetch_response(resp, ex.version)
        schema, header_version = FETCH_RESPONSE, response_header_version(ex.version)
        header_spans = response_header_spans(header, SIZE_PREFIX_BYTES, ex.version)
    else:
        req = build_request(ex)
        body = encode_fetch_request(req, ex.version)
        header = encode_request_header(RequestHeader(ex.version, correlation_id, client_id))
        message_obj = normalize_fetch_request(req, ex.version)
        schema, header_version = FETCH_REQUEST, request_header_version(ex.version)
        header_spans = request_header_spans(header, SIZE_PREFIX_BYTES)
    wire = frame(header, body)
    if out is not None:
        written.check_replace([out])
        try:
            out.write_bytes(wire)
            written.record([out])
        except OSError as exc:
            raise UserError(f"--out {out}: cannot write: {exc.strerror}") from None
    spans: list[Span] = []
    if show_hex:
        body_base = SIZE_PREFIX_BYTES + len(header)
        spans = [Span(0, SIZE_PREFIX_BYTES, "size", str(len(wire) - SIZE_PREFIX_BYTES)),
                 *header_spans, *walk(schema, body, body_base, ex.version)]
    kind = "response" if response else "request"
    who = (f"follower (replica {ex.replica_id})" if ex.follower
           else f"consumer (replica_id {ex.replica_id})")
    listed = len(ex.listed)
    if as_json:
        doc: dict[str, Any] = {
            "api": "Fetch", "message": kind, "version": ex.version,
            "flexible": is_flexible(ex.version), "fetcher": "follower" if ex.follower else
            "consumer", "session": ex.session_kind(),
            "body_bytes": len(body), "header_bytes": len(header), "wire_bytes": len(wire),
            "header_version": header_version,
            "header": ({"correlation_id": correlation_id} if response else
                       {"api_key": FETCH_API_KEY, "api_version": ex.version,
                        "correlation_id": correlation_id, "client_id": client_id}),
            "body": message_json(schema, message_obj, ex.version)}
        if show_hex:
            doc["hex"] = spans_json(wire, spans)
        if out is not None:
            doc["out"] = str(out)
        typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
        return
    if response:
        typer.echo(f"Fetch v{ex.version} response to the request of a {who}: "
                   f"{ex.session_kind()}")
        typer.echo(f"  topic {ex.topic}: {_count(listed, 'partition')} listed, "
                   f"{ex.records_bytes} bytes of records each; session id "
                   f"{ex.response_session_id()}")
        header_note = f"response header v{header_version}: correlation_id" + (
            " + empty tag section" if is_flexible(ex.version) else "")
    else:
        typer.echo(f"Fetch v{ex.version} request from a {who}: {ex.session_kind()}")
        typer.echo(f"  topic {ex.topic}: {_count(listed, 'partition')} listed, "
                   f"{ex.forgotten} forgotten")
        header_note = (f"request header v{header_version}: api_key, api_version, "
                       f"correlation_id, client_id {client_id!r}"
                       + (" + empty tag section" if is_flexible(ex.version) else ""))
    width = len(str(len(wire)))
    typer.echo(f"  body bytes    {len(body):>{width}}")
    typer.echo(f"  header bytes  {len(header):>{width}}   {header_note}")
    typer.echo(f"  wire bytes    {len(wire):>{width}}   int32 size prefix (4) + header + body")
    if out is not None:
        typer.echo(f"  wrote the {len(wire)} wire bytes to {out}")
    if show_hex:
        typer.echo(f"\nthe message as sent (offsets from the size prefix; the body starts at "
                   f"{SIZE_PREFIX_BYTES + len(header):06x}):")
        for line in dump_lines(wire, spans):
            typer.echo(line)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
