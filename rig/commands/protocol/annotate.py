"""The annotated walk of `rig protocol fetch --hex`: which field each byte of a Fetch message
holds, read with the codec's own message description (header, body, tag sections, prefixes)."""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass

import orjson

from rig.errors import ProtocolError
from rig.protocol import FETCH_API_KEY, is_flexible
from rig.protocol.primitives import (
    ARRAY_PREFIX,
    NULLABLE_STRING,
    RECORDS,
    UUID,
    CodecFailure,
    Reader,
    Scalar,
)
from rig.protocol.schema import ArrayOf, Schema

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class Span:
    """`length` bytes at `offset` of the dumped buffer hold `field`, whose value reads `value`."""

    offset: int
    length: int
    field: str
    value: str


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


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
                self.value(f.type, _join(path, f.name))
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
            name = tagged.name if tagged is not None else f"unknown_tag_{tag}"
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


def walk(schema: Schema, data: bytes, base: int, version: int, prefix: str = "") -> list[Span]:
    walker = _Walker(data, base, version, prefix)
    try:
        walker.struct(schema, "")
    except CodecFailure as exc:  # the decoder accepted these bytes first, so this is a bug
        raise ProtocolError(f"{schema.name} v{version}: annotating failed: {exc.reason}") from None
    return walker.spans


def request_header_spans(data: bytes, base: int) -> list[Span]:
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


def response_header_spans(data: bytes, base: int, version: int) -> list[Span]:
    r = Reader(data)
    spans = [Span(base, 4, "header.correlation_id", str(r.fixed(_I32)))]
    if is_flexible(version):
        spans.append(Span(base + 4, 1, "header._tagged_fields", f"{r.uvarint()} tagged field(s)"))
    return spans

