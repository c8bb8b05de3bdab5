"""The interpreter of message descriptions (rig.protocol.schema): encode, decode and normalize a
struct at one version, field by field, so no per-version code exists anywhere. Like Kafka's
generated readers and writers, it sends a tagged field only when it differs from its default
and skips tags it does not know."""

from __future__ import annotations

from typing import Any

from rig.errors import ProtocolError
from rig.protocol.primitives import (
    ARRAY_PREFIX,
    CodecFailure,
    Reader,
    RecordsLength,
    Scalar,
    write_length,
    write_uvarint,
)
from rig.protocol.schema import ArrayOf, Field, Schema, carried_fields, field_defaults, plan_for


def _value(obj: object, f: Field) -> object:
    return obj if f.attr is None else getattr(obj, f.attr)


def _is_default(schema: Schema, obj: object, f: Field) -> bool:
    # Like Kafka, a tagged field is sent only when it differs from its default, so a default
    # value costs nothing on the wire and decodes back to itself.
    if f.attr is None:  # an inlined struct is default when all its attributes are
        assert isinstance(f.type, Schema)
        parent = schema.cls
        assert parent is not None
        return all(
            getattr(obj, sub.attr) == field_defaults(parent)[sub.attr]
            for sub in f.type.fields
            if sub.attr is not None
        )
    assert schema.cls is not None
    return bool(getattr(obj, f.attr) == field_defaults(schema.cls)[f.attr])


def _write_struct(buf: bytearray, schema: Schema, obj: object, version: int, flex: bool) -> None:
    plan = plan_for(schema, version)
    for f in plan.regular:
        try:
            _write_value(buf, f.type, _value(obj, f), version, flex)
        except CodecFailure as exc:
            exc.path.insert(0, f.name)
            raise
    if not flex:
        return
    sent = [f for f in plan.tagged if not _is_default(schema, obj, f)]
    write_uvarint(buf, len(sent))
    for f in sent:
        payload = bytearray()
        try:
            _write_value(payload, f.type, _value(obj, f), version, flex)
        except CodecFailure as exc:
            exc.path.insert(0, f.name)
            raise
        write_uvarint(buf, f.tag or 0)
        write_uvarint(buf, len(payload))
        buf += payload


def _write_value(
    buf: bytearray, typ: Scalar | ArrayOf | Schema, value: Any, version: int, flex: bool
) -> None:
    if isinstance(typ, Scalar):
        typ.write(buf, value, flex)
    elif isinstance(typ, Schema):
        if typ.cls is not None and not isinstance(value, typ.cls):
            raise CodecFailure(f"expected {typ.cls.__name__} (got {type(value).__name__})")
        _write_struct(buf, typ, value, version, flex)
    elif value is None:
        if not typ.nullable:
            raise CodecFailure("array is not nullable (got None)")
        write_length(buf, None, flex, ARRAY_PREFIX)
    else:
        write_length(buf, len(value), flex, ARRAY_PREFIX)
        for i, item in enumerate(value):
            try:
                _write_value(buf, typ.element, item, version, flex)
            except CodecFailure as exc:
                exc.path.insert(0, f"[{i}]")
                raise


# -- decoding ------------------------------------------------------------------------------------


def _read_struct(
    r: Reader, schema: Schema, version: int, flex: bool, into: dict[str, Any] | None = None
) -> Any:
    kwargs: dict[str, Any] = {} if into is None else into
    plan = plan_for(schema, version)
    for f in plan.regular:
        try:
            _read_field(r, f, kwargs, version, flex)
        except CodecFailure as exc:
            exc.path.insert(0, f.name)
            raise
    if flex:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            payload = r.raw(r.uvarint())
            tagged = plan.by_tag.get(tag)
            if tagged is None:  # unknown tags are skipped, as Kafka's readers do
                continue
            # A tagged field is read within its declared size, never past it.
            sub = Reader(payload)
            try:
                _read_field(sub, tagged, kwargs, version, flex)
                if sub.remaining:
                    raise CodecFailure(f"{sub.remaining} bytes left over in tagged field {tag}")
            except CodecFailure as exc:
                exc.path.insert(0, tagged.name)
                raise
    return kwargs if schema.cls is None else schema.cls(**kwargs)


def _read_field(r: Reader, f: Field, kwargs: dict[str, Any], version: int, flex: bool) -> None:
    if f.attr is None:
        assert isinstance(f.type, Schema)
        _read_struct(r, f.type, version, flex, into=kwargs)
    else:
        kwargs[f.attr] = _read_value(r, f.type, version, flex)


def _read_value(r: Reader, typ: Scalar | ArrayOf | Schema, version: int, flex: bool) -> Any:
    if isinstance(typ, Scalar):
        return typ.read(r, flex)
    if isinstance(typ, Schema):
        return _read_struct(r, typ, version, flex)
    count = r.length(flex, ARRAY_PREFIX)
    if count is None:
        if not typ.nullable:
            raise CodecFailure("null where a non-nullable array is required")
        return None
    if count > r.remaining:  # every element takes at least one byte: fail before looping
        raise CodecFailure(f"array of {count} elements cannot fit in {r.remaining} bytes")
    items = []
    for i in range(count):
        try:
            items.append(_read_value(r, typ.element, version, flex))
        except CodecFailure as exc:
            exc.path.insert(0, f"[{i}]")
            raise
    return tuple(items)


# -- normalizing ---------------------------------------------------------------------------------


def normalize_struct(schema: Schema, obj: Any, version: int) -> Any:
    assert schema.cls is not None
    carried = carried_fields(schema, version)
    kwargs = {}
    for name, default in field_defaults(schema.cls).items():
        f = carried.get(name)
        kwargs[name] = (
            default if f is None else _normalize_value(f.type, getattr(obj, name), version)
        )
    return schema.cls(**kwargs)


def _normalize_value(typ: Scalar | ArrayOf | Schema, value: Any, version: int) -> Any:
    if isinstance(typ, Schema):
        return normalize_struct(typ, value, version)
    if isinstance(typ, ArrayOf):
        if value is None:
            return None
        return tuple(_normalize_value(typ.element, v, version) for v in value)
    if isinstance(value, RecordsLength):
        return bytes(value.length)  # what the placeholder encodes as
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


# -- a whole message -----------------------------------------------------------------------------


def _path(parts: list[str]) -> str:
    return "$" + "".join(p if p.startswith("[") else "." + p for p in parts)


def encode_struct(schema: Schema, obj: object, version: int) -> bytes:
    """`obj` as the body of `schema`'s message at `version` (of `schema.api`)."""
    api = schema.api
    api.check_version(version)
    if not isinstance(obj, schema.cls or object):
        raise ProtocolError(f"expected a {schema.name}, got {type(obj).__name__}")
    buf = bytearray()
    try:
        _write_struct(buf, schema, obj, version, api.is_flexible(version))
    except CodecFailure as exc:
        raise ProtocolError(f"{schema.name} v{version}: {_path(exc.path)}: {exc.reason}") from None
    return bytes(buf)


def decode_struct(schema: Schema, data: bytes | bytearray | memoryview, version: int) -> Any:
    api = schema.api
    api.check_version(version)
    r = Reader(bytes(data))
    try:
        obj = _read_struct(r, schema, version, api.is_flexible(version))
    except CodecFailure as exc:
        raise ProtocolError(f"{schema.name} v{version}: {_path(exc.path)}: {exc.reason}") from None
    if r.remaining:
        raise ProtocolError(
            f"{schema.name} v{version}: {r.remaining} unexpected bytes after the body "
            f"(offset {r.pos} of {r.pos + r.remaining})"
        )
    return obj

