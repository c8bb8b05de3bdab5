"""What `rig protocol fetch` prints, whichever way it got the message: the annotated hex dump,
its JSON spans, and a message's fields as JSON."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from rig.commands.protocol.annotate import Span
from rig.protocol.primitives import RECORDS, UUID, Scalar
from rig.protocol.schema import ArrayOf, Schema

_ELIDE_OVER = 256  # bytes: longer fields (records) show their first and last lines only


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


def spans_json(data: bytes, spans: list[Span]) -> list[dict[str, Any]]:
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

