"""Sizes of tagged fields (KIP-482) that the fast size paths share: a tagged struct, a field's
tag, and the NodeEndpoints array responses carry since KIP-951 (Fetch v16+, Produce v10+)."""

from __future__ import annotations

from collections.abc import Iterable

from rig.protocol.fetch_response import NodeEndpoint
from rig.protocol.primitives import array_prefix_size, string_size, tagged_field_size
from rig.protocol.schema import Schema, fixed_size


def tagged_struct_size(schema: Schema, attr: str | None, struct: Schema, version: int) -> int:
    """Bytes of a tagged struct field when sent, or 0 if `version` does not carry it."""
    for f in schema.fields:
        if f.attr == attr and f.type is struct and f.carried_by(version):
            assert f.tag is not None
            return tagged_field_size(f.tag, fixed_size(struct, version))
    return 0


def field_tag(schema: Schema, attr: str) -> int:
    (tag,) = (f.tag for f in schema.fields if f.attr == attr)
    assert tag is not None
    return tag


def node_endpoints_size(tag: int, fixed: int, endpoints: Iterable[NodeEndpoint]) -> int:
    """Bytes of a response's tagged NodeEndpoints array (KIP-951: Fetch v16+, Produce v10+),
    `fixed` the bytes of an endpoint's fixed-width fields."""
    endpoints = tuple(endpoints)
    payload = array_prefix_size(len(endpoints), True)
    for e in endpoints:
        payload += fixed + string_size(e.host, True) + string_size(e.rack, True)
    return tagged_field_size(tag, payload)
