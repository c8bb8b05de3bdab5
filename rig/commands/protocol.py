"""`rig protocol fetch`: build a Fetch request or response with Kafka's defaults, encode it, and
print its sizes and field-annotated bytes; or decode bytes back to JSON. Every figure printed
comes from the encoder, never from a formula."""

from __future__ import annotations

import re
import struct
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from rig import written
from rig.commands._common import fail
from rig.errors import ProtocolError, UserError
from rig.protocol import (
    FETCH_API_KEY,
    FETCH_VERSIONS,
    SIZE_PREFIX_BYTES,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchTopic,
    ForgottenTopic,
    RequestHeader,
    ResponseHeader,
    decode_fetch_request,
    decode_fetch_response,
    decode_request_header,
    decode_response_header,
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
from rig.protocol.fetch import FETCH_REQUEST, FETCH_RESPONSE, ArrayOf, Field, Schema
from rig.protocol.primitives import (
    ARRAY_PREFIX,
    NULLABLE_STRING,
    RECORDS,
    UUID,
    CodecFailure,
    Reader,
    Scalar,
)
from rig.scenario.source import read_limited

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

MiB = 1 << 20
# Kafka's defaults: replica.fetch.wait.max.ms / fetch.max.wait.ms, *.min.bytes, the per-partition
# limit (replica.fetch.max.bytes / max.partition.fetch.bytes) and the response limit
# (replica.fetch.response.max.bytes for followers, fetch.max.bytes for consumers).
MAX_WAIT_MS = 500
MIN_BYTES = 1
PARTITION_MAX_BYTES = 1 * MiB
FOLLOWER_MAX_BYTES = 10 * MiB
CONSUMER_MAX_BYTES = 50 * MiB
DEFAULT_SESSION_ID = 1  # what an example session is called when --session-id is not given
# Bounds of what the command builds in memory: more partitions than one fetcher lists in any
# real cluster, records well above Kafka's fetch.max.bytes (50 MiB), and the input of --decode.
MAX_PARTITIONS = 200_000
MAX_RECORDS_BYTES = 256 << 20
MAX_INPUT_BYTES = 256 << 20
_SPOKEN = f"{FETCH_VERSIONS[0]}–{FETCH_VERSIONS[-1]}"  # the Fetch versions rig speaks
_SPOKEN_V = f"v{FETCH_VERSIONS[0]}–v{FETCH_VERSIONS[-1]}"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_HEX_TEXT = re.compile(rb"^[0-9a-fA-F\s]+$")
_ELIDE_OVER = 256  # bytes: longer fields (records) show their first and last lines only
_ZERO_NAMESPACE = uuid.UUID(int=0)


@app.callback()
def protocol() -> None:
    """Kafka wire-protocol tools: build, size, dump and decode Fetch messages (v0–v18)."""


# -- building messages ---------------------------------------------------------------------------


def topic_id(name: str) -> bytes:
    """A stable made-up topic id for v13+ (the same one rig's size path uses for `name`)."""
    return uuid.uuid5(_ZERO_NAMESPACE, name).bytes


@dataclass(frozen=True, slots=True)
class Example:
    """What the user asked for, checked: the inputs of one request and its response."""

    version: int
    topic: str
    partitions: int
    incremental: bool
    changed: int
    forgotten: int
    replica_id: int
    session_id: int
    session_epoch: int
    rack_id: str
    records_bytes: int

    @property
    def listed(self) -> range:
        """Partition numbers the request lists: all for a full fetch, the changed ones else."""
        return range(self.changed if self.incremental else self.partitions)

    @property
    def follower(self) -> bool:
        return self.replica_id >= 0

    def session_kind(self) -> str:
        sid, epoch = self.session_id, self.session_epoch
        if self.version < 7:
            return f"sessionless full fetch (Fetch v{self.version} predates KIP-227 sessions)"
        if epoch > 0:
            return f"incremental fetch in session {sid}, epoch {epoch}"
        if sid == 0:
            return ("full fetch asking for a new session (session 0, epoch 0)" if epoch == 0
                    else "sessionless full fetch (session 0, epoch -1)")
        return (f"full fetch closing session {sid} and asking for a new one (epoch 0)"
                if epoch == 0 else f"full fetch closing session {sid}, no new session (epoch -1)")

    def response_session_id(self) -> int:
        if self.version < 7 or self.session_epoch < 0:
            return 0
        return self.session_id or DEFAULT_SESSION_ID  # a full fetch's answer names the new one


def build_request(ex: Example) -> FetchRequest:
    """The request a Kafka replica fetcher (or, with replica_id < 0, a consumer) sends."""
    tid = topic_id(ex.topic)
    parts = tuple(FetchPartition(
        partition=p,
        current_leader_epoch=0,
        fetch_offset=0,
        last_fetched_epoch=-1,  # an empty log has no epoch yet
        log_start_offset=0 if ex.follower else -1,  # consumers send -1
        partition_max_bytes=PARTITION_MAX_BYTES) for p in ex.listed)
    forgotten = tuple(range(ex.partitions, ex.partitions + ex.forgotten))
    return FetchRequest(
        replica_id=ex.replica_id,
        max_wait_ms=MAX_WAIT_MS,
        min_bytes=MIN_BYTES,
        max_bytes=FOLLOWER_MAX_BYTES if ex.follower else CONSUMER_MAX_BYTES,
        isolation_level=0,
        session_id=ex.session_id,
        session_epoch=ex.session_epoch,
        topics=(FetchTopic(ex.topic, tid, parts),) if parts else (),
        forgotten_topics=(ForgottenTopic(ex.topic, tid, forgotten),) if forgotten else (),
        rack_id=ex.rack_id,
    )


def build_response(ex: Example) -> FetchResponse:
    """The leader's answer: every requested partition for a full fetch, the changed ones for an
    incremental one; each idle (empty records) or carrying `records_bytes` placeholder bytes."""
    parts = tuple(FetchResponsePartition(
        partition_index=p,
        high_watermark=0,
        last_stable_offset=0,
        log_start_offset=0,
        records=bytes(ex.records_bytes)) for p in ex.listed)
    topics = (FetchResponseTopic(ex.topic, topic_id(ex.topic), parts),) if parts else ()
    return FetchResponse(session_id=ex.response_session_id(), responses=topics)


def _example(version: int | None, topic: str, partitions: int | None, incremental: bool,
             changed: int | None, forgotten: int | None, response: bool,
             records_bytes: int | None, replica_id: int, session_id: int | None,
             session_epoch: int | None, rack_id: str) -> Example:
    if version is None:
        raise UserError(f"--version is required (a Fetch version, {_SPOKEN})")
    if version not in FETCH_VERSIONS:
        raise UserError(f"--version {version}: rig speaks Fetch {_SPOKEN_V}")
    if partitions is None:
        raise UserError("--partitions is required (how many partitions the fetcher fetches)")
    if not 0 <= partitions <= MAX_PARTITIONS:
        raise UserError(f"--partitions must be between 0 and {MAX_PARTITIONS:,} (got "
                        f"{partitions:,})")
    if (changed is not None or forgotten is not None) and not incremental:
        raise UserError("--changed and --forgotten describe an incremental fetch: add "
                        "--incremental")
    changed, forgotten = changed or 0, forgotten or 0
    if not 0 <= changed <= partitions:
        raise UserError(f"--changed must be between 0 and --partitions {partitions} "
                        f"(got {changed})")
    if not 0 <= forgotten <= MAX_PARTITIONS:
        raise UserError(f"--forgotten must be between 0 and {MAX_PARTITIONS:,} (got "
                        f"{forgotten:,})")
    if records_bytes is not None and not response:
        raise UserError("--records-bytes sizes a response: add --response")
    records_bytes = records_bytes or 0
    if records_bytes < 0:
        raise UserError(f"--records-bytes must be ≥ 0 (got {records_bytes})")
    listed = changed if incremental else partitions
    if records_bytes * listed > MAX_RECORDS_BYTES:
        raise UserError(f"--records-bytes {records_bytes:,} × {listed:,} partitions is "
                        f"{records_bytes * listed:,} bytes of records; rig builds responses of "
                        f"at most {MAX_RECORDS_BYTES:,} (Kafka's fetch.max.bytes is 50 MiB)")
    if version < 7:
        if incremental:
            raise UserError(f"Fetch v{version} has no sessions (KIP-227 starts at v7): "
                            "--incremental needs --version 7 or later")
        if session_id is not None or session_epoch is not None:
            raise UserError(f"Fetch v{version} has no session fields: --session-id and "
                            "--session-epoch need --version 7 or later")
        sid, epoch = 0, -1
    elif incremental:
        sid = DEFAULT_SESSION_ID if session_id is None else session_id
        epoch = 1 if session_epoch is None else session_epoch
        if sid == 0 or epoch < 1:
            raise UserError(f"an incremental fetch names its session (id ≠ 0) and an epoch ≥ 1 "
                            f"(got session {sid}, epoch {epoch})")
    else:
        sid = 0 if session_id is None else session_id
        epoch = 0 if session_epoch is None else session_epoch
        if epoch > 0:
            raise UserError(f"--session-epoch {epoch} > 0 makes an incremental fetch: add "
                            "--incremental (a full fetch has epoch 0 or -1)")
        if epoch < -1:
            raise UserError(f"--session-epoch must be ≥ -1 (got {epoch})")
    return Example(version, topic, partitions, incremental, changed, forgotten, replica_id,
                   sid, epoch, rack_id, records_bytes)


# -- the annotated walk --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """`length` bytes at `offset` of the dumped buffer hold `field`, whose value reads `value`."""

    offset: int
    length: int
    field: str
    value: str


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _field_name(f: Field) -> str:
    if f.attr is not None:
        return f.attr
    assert isinstance(f.type, Schema)
    return f.type.name  # an inlined struct (ReplicaState) is named by its type


def _render(typ: Scalar, value: object) -> str:
    if value is None:
        return "null"
    if typ is UUID and isinstance(value, bytes):
        return str(uuid.UUID(bytes=value))
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    return str(value)


class _Walker:
    """Walks bytes with the codec's own message description and records a Span per field.

    It reads exactly as the decoder does (same Reader, same per-version field list), so a dump
    labels every byte the decoder consumed, tag sections and length prefixes included."""

    def __init__(self, data: bytes, base: int, version: int, prefix: str = ""):
        self.r = Reader(data)
        self.base = base
        self.version = version
        self.flex = is_flexible(version)
        self.prefix = prefix
        self.spans: list[Span] = []

    def _span(self, start: int, field: str, value: str) -> None:
        self.spans.append(Span(self.base + start, self.r.pos - start, _join(self.prefix, field),
                               value))

    def struct(self, schema: Schema, path: str) -> None:
        fields = [f for f in schema.fields if f.carried_by(self.version)]
        for f in fields:
            if f.tag is None:
                self.value(f.type, _join(path, _field_name(f)))
        if not self.flex:
            return
        start = self.r.pos
        count = self.r.uvarint()
        self._span(start, _join(path, "_tagged_fields"), f"{count} tagged field(s)")
        by_tag = {f.tag: f for f in fields if f.tag is not None}
        for _ in range(count):
            start = self.r.pos
            tag, size = self.r.uvarint(), self.r.uvarint()
            tagged = by_tag.get(tag)
            name = _field_name(tagged) if tagged is not None else f"unknown_tag_{tag}"
            self._span(start, _join(path, f"{name}<tag {tag}>"), f"tag {tag}, {size} bytes")
            end = self.r.pos + size
            if tagged is None:
                start = self.r.pos
                self.r.raw(size)
                self._span(start, _join(path, name), "skipped (unknown tag)")
                continue
            self.value(tagged.type, _join(path, name))
            if self.r.pos != end:
                raise CodecFailure(f"tagged field {tag} declares {size} bytes, holds "
                                   f"{size - end + self.r.pos}")

    def value(self, typ: Scalar | ArrayOf | Schema, path: str) -> None:
        start = self.r.pos
        if isinstance(typ, Schema):
            self.struct(typ, path)
        elif isinstance(typ, ArrayOf):
            count = self.r.length(self.flex, ARRAY_PREFIX)
            self._span(start, path, "null" if count is None else f"array of {count}")
            for i in range(count or 0):
                self.value(typ.element, f"{path}[{i}]")
        elif typ is RECORDS:  # the length prefix and the payload on separate lines
            size = self.r.length(self.flex, _I32)
            self._span(start, f"{path}.length", "null" if size is None else str(size))
            if size:
                start = self.r.pos
                self.r.raw(size)
                self._span(start, path, f"{size} bytes")
        else:
            self._span(start, path, _render(typ, typ.read(self.r, self.flex)))


def _walk(schema: Schema, data: bytes, base: int, version: int, prefix: str = "") -> list[Span]:
    walker = _Walker(data, base, version, prefix)
    try:
        walker.struct(schema, "")
    except CodecFailure as exc:  # the decoder accepted these bytes first, so this is a bug
        raise ProtocolError(f"{schema.name} v{version}: annotating failed: {exc.reason}") from None
    return walker.spans


def _request_header_spans(data: bytes, base: int) -> list[Span]:
    r = Reader(data)
    spans: list[Span] = []

    def add(start: int, field: str, value: str) -> None:
        spans.append(Span(base + start, r.pos - start, f"header.{field}", value))

    api_key = r.fixed(_I16)
    add(0, "api_key", f"{api_key} (Fetch)" if api_key == FETCH_API_KEY else str(api_key))
    start = r.pos
    version = r.fixed(_I16)
    add(start, "api_version", str(version))
    start = r.pos
    add(start, "correlation_id", str(r.fixed(_I32)))
    start = r.pos
    add(start, "client_id", _render(NULLABLE_STRING, NULLABLE_STRING.read(r, False)))
    if is_flexible(version):
        start = r.pos
        add(start, "_tagged_fields", f"{r.uvarint()} tagged field(s)")
    return spans


def _response_header_spans(data: bytes, base: int, version: int) -> list[Span]:
    r = Reader(data)
    spans = [Span(base, 4, "header.correlation_id", str(r.fixed(_I32)))]
    if is_flexible(version):
        spans.append(Span(base + 4, 1, "header._tagged_fields", f"{r.uvarint()} tagged field(s)"))
    return spans


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)


def dump_lines(data: bytes, spans: list[Span]) -> Iterator[str]:
    """The annotated hex dump: `offset  bytes (16 a line)  field = value`, one span after the
    other; spans over 256 bytes (records) show their first and last line only."""
    yield f"{'offset':6}  {'bytes':47}  field = value"
    for s in spans:
        chunk = data[s.offset:s.offset + s.length]
        rows = [(s.offset + i, chunk[i:i + 16]) for i in range(0, len(chunk), 16)] or [
            (s.offset, b"")]
        label = f"{s.field} = {s.value}"
        if s.length > _ELIDE_OVER:
            skipped = s.length - 16 - len(rows[-1][1])
            yield f"{rows[0][0]:06x}  {_hex(rows[0][1]):47}  {label}"
            yield f"{'':6}  … {skipped:,} bytes not shown (--out FILE writes every byte)"
            yield f"{rows[-1][0]:06x}  {_hex(rows[-1][1])}"
            continue
        for i, (offset, row) in enumerate(rows):
            yield f"{offset:06x}  {_hex(row):47}  {label}" if i == 0 else (
                f"{offset:06x}  {_hex(row)}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _spans_json(data: bytes, spans: list[Span]) -> list[dict[str, Any]]:
    out = []
    for s in spans:
        chunk = data[s.offset:s.offset + s.length]
        shown = chunk.hex() if s.length <= _ELIDE_OVER else chunk[:32].hex() + "…"
        out.append({"offset": s.offset, "length": s.length, "field": s.field, "value": s.value,
                    "hex": shown})
    return out


# -- messages as JSON ----------------------------------------------------------------------------


def message_json(schema: Schema, obj: Any, version: int) -> dict[str, Any]:
    """The fields `version` carries, in wire order (tagged ones where Kafka declares them), with
    uuids as strings and records as {size, hex}; an inlined struct appears under its name."""
    out: dict[str, Any] = {}
    for f in schema.fields:
        if not f.carried_by(version):
            continue
        if f.attr is None:
            assert isinstance(f.type, Schema)
            out[f.type.name] = message_json(f.type, obj, version)
        else:
            out[f.attr] = _value_json(f.type, getattr(obj, f.attr), version)
    return out


def _value_json(typ: Scalar | ArrayOf | Schema, value: Any, version: int) -> Any:
    if isinstance(typ, Schema):
        return message_json(typ, value, version)
    if isinstance(typ, ArrayOf):
        return None if value is None else [_value_json(typ.element, v, version) for v in value]
    if typ is UUID:
        return str(uuid.UUID(bytes=bytes(value)))
    if typ is RECORDS:
        if value is None:
            return None
        data = bytes(value)
        return {"size": len(data), "hex": data.hex() if len(data) <= 64 else data[:32].hex() + "…"}
    return value


# -- encoding ------------------------------------------------------------------------------------


def _encode(ex: Example, response: bool, client_id: str, correlation_id: int, show_hex: bool,
            as_json: bool, out: Path | None) -> None:
    if response:
        resp = build_response(ex)
        body = encode_fetch_response(resp, ex.version)
        header = encode_response_header(ResponseHeader(correlation_id), ex.version)
        message_obj: Any = normalize_fetch_response(resp, ex.version)
        schema, header_version = FETCH_RESPONSE, response_header_version(ex.version)
        header_spans = _response_header_spans(header, SIZE_PREFIX_BYTES, ex.version)
    else:
        req = build_request(ex)
        body = encode_fetch_request(req, ex.version)
        header = encode_request_header(RequestHeader(ex.version, correlation_id, client_id))
        message_obj = normalize_fetch_request(req, ex.version)
        schema, header_version = FETCH_REQUEST, request_header_version(ex.version)
        header_spans = _request_header_spans(header, SIZE_PREFIX_BYTES)
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
                 *header_spans, *_walk(schema, body, body_base, ex.version)]
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
            doc["hex"] = _spans_json(wire, spans)
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


# -- decoding ------------------------------------------------------------------------------------


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
class _Decoded:
    version: int
    framed: bool
    header: dict[str, Any] | None
    header_bytes: int
    body: bytes
    message: Any
    spans_base: int


def _decode_framed(data: bytes, response: bool, version: int | None) -> _Decoded:
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
    return _Decoded(version, True, header, used, rest[used:], message,
                    SIZE_PREFIX_BYTES + used)


def _decode_body(data: bytes, response: bool, version: int | None) -> _Decoded:
    if version is None:
        raise UserError("--version is required to decode a body (only a framed request says "
                        "its version, in its header)")
    message = (decode_fetch_response(data, version) if response
               else decode_fetch_request(data, version))
    return _Decoded(version, False, None, 0, data, message, 0)


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
                 framed: bool | None) -> _Decoded:
    """Decode one message: a framed one (size prefix + header + body) or a bare body.

    `framed` None detects: a size prefix equal to the bytes that follow means a frame, unless
    the bytes then fail to decode as one and do decode as a body."""
    if version is not None and version not in FETCH_VERSIONS:
        raise UserError(f"--version {version}: rig speaks Fetch {_SPOKEN_V}")
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


def _decode(path: Path, response: bool, version: int | None, framed: bool | None,
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
                     *(_response_header_spans(header, SIZE_PREFIX_BYTES, d.version) if response
                       else _request_header_spans(header, SIZE_PREFIX_BYTES))]
        spans += _walk(schema, d.body, d.spans_base, d.version)
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
        doc["hex"] = _spans_json(data, spans)
    typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())


# -- the command ---------------------------------------------------------------------------------


@app.command("fetch")
def fetch(
    version: Annotated[int | None, typer.Option(
        help=f"Fetch version, {_SPOKEN} (for --decode: optional for a framed request).")] = None,
    topic: Annotated[str, typer.Option(help="Topic name (v13+ sends a made-up topic id).")]
    = "test",
    partitions: Annotated[int | None, typer.Option(
        help="Partitions the fetcher fetches: a full fetch lists them all.")] = None,
    incremental: Annotated[bool, typer.Option(
        "--incremental", help="An incremental fetch (v7+) in an existing session.")] = False,
    changed: Annotated[int | None, typer.Option(
        help="With --incremental: partitions listed because new or changed (the first K).")]
    = None,
    forgotten: Annotated[int | None, typer.Option(
        help="With --incremental: partitions dropped from the session (numbered after "
             "--partitions).")] = None,
    response: Annotated[bool, typer.Option(
        "--response", help="The leader's response instead of the request.")] = False,
    records_bytes: Annotated[int | None, typer.Option(
        help="With --response: bytes of records in each listed partition (zero filler).")]
    = None,
    replica_id: Annotated[int, typer.Option(
        help="The fetching broker (a follower); negative for a consumer.")] = 1,
    client_id: Annotated[str | None, typer.Option(
        help="Header client id (default broker-<id>-fetcher-0, or consumer-1).")] = None,
    session_id: Annotated[int | None, typer.Option(
        help="v7+ session id (default 0 for a full fetch, 1 for --incremental).")] = None,
    session_epoch: Annotated[int | None, typer.Option(
        help="v7+ session epoch (default 0 for a full fetch, 1 for --incremental).")] = None,
    correlation_id: Annotated[int, typer.Option(help="Header correlation id.")] = 0,
    rack_id: Annotated[str, typer.Option(help="v11+ rack of the fetcher.")] = "",
    hex_: Annotated[bool, typer.Option(
        "--hex", help="Print the bytes as a field-annotated hex dump.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    out: Annotated[Path | None, typer.Option(
        help="Write the encoded message (size prefix + header + body) to this file.")] = None,
    decode: Annotated[Path | None, typer.Option(
        help="Decode this file (raw or hex text; '-' for stdin) to JSON instead of encoding; "
             "with --hex, print the annotated dump.")] = None,
    framed: Annotated[bool, typer.Option(
        "--framed", help="With --decode: the bytes are size prefix + header + body.")] = False,
    body: Annotated[bool, typer.Option(
        "--body", help="With --decode: the bytes are a bare body (default: detect).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --out replace a file rig did not write.")] = False,
) -> None:
    """Encode a Fetch request or response; print its sizes and bytes, or --decode bytes.

    Body, header and wire bytes are what the encoder writes. Defaults follow Kafka's replica
    fetcher: replica_id = the broker, max_wait 500 ms, min_bytes 1, max_bytes 10 MiB, 1 MiB
    per partition, client id broker-<id>-fetcher-0.
    """
    try:
        if decode is not None:
            if framed and body:
                raise UserError("--framed and --body contradict each other: give one or neither")
            if out is not None:
                raise UserError("--out writes an encoded message; it does not go with --decode")
            _decode(decode, response, version, True if framed else (False if body else None),
                    hex_, json_)
            return
        if framed or body:
            raise UserError("--framed and --body describe the input of --decode")
        ex = _example(version, topic, partitions, incremental, changed, forgotten, response,
                      records_bytes, replica_id, session_id, session_epoch, rack_id)
        if client_id is None:
            client_id = f"broker-{replica_id}-fetcher-0" if replica_id >= 0 else "consumer-1"
        with written.replacing_anything(force):
            _encode(ex, response, client_id, correlation_id, hex_, json_, out)
    except UserError as error:
        fail(error)
