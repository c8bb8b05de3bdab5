"""How rig describes a Kafka message, as Kafka's message JSON does (clients/src/main/resources/
common/message/*.json): a struct's fields in wire order, the versions each is carried in, its tag
when tagged; and what one version of a struct carries, worked out once (memoized)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from typing import Any

from rig.protocol.apis import Api
from rig.protocol.primitives import Scalar


@dataclass(frozen=True, slots=True, eq=False)
class Schema:
    """A struct: its Kafka name, the dataclass it decodes to, its fields in wire order, and the
    API whose message it belongs to (which decides the versions and which are flexible).

    `cls` None marks a struct inlined into its parent: its fields are attributes of the parent
    object (Kafka's ReplicaState, which we flatten into FetchRequest)."""

    name: str
    cls: type | None
    fields: tuple[Field, ...]
    api: Api


@dataclass(frozen=True, slots=True, eq=False)
class ArrayOf:
    element: Scalar | Schema
    nullable: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Field:
    """`versions` as in Kafka's JSON: "5+" or "7-12"; `tag` set for a tagged field."""

    attr: str | None  # None only for an inlined struct
    type: Scalar | ArrayOf | Schema
    versions: str
    tag: int | None = None

    @property
    def name(self) -> str:
        """The attribute, or for an inlined struct (ReplicaState) the name of its type."""
        if self.attr is not None:
            return self.attr
        assert isinstance(self.type, Schema)
        return self.type.name

    def carried_by(self, version: int) -> bool:
        low, _, high = self.versions.partition("-")
        if low.endswith("+"):
            return version >= int(low[:-1])
        return int(low) <= version <= int(high or low)


# -- per-version plans (memoized) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    regular: tuple[Field, ...]  # untagged fields of this version, wire order
    tagged: tuple[Field, ...]  # tagged fields of this version, ascending tag
    by_tag: dict[int, Field]


@cache
def plan_for(schema: Schema, version: int) -> Plan:
    present = [f for f in schema.fields if f.carried_by(version)]
    tagged = tuple(sorted((f for f in present if f.tag is not None), key=lambda f: f.tag or 0))
    return Plan(
        regular=tuple(f for f in present if f.tag is None),
        tagged=tagged,
        by_tag={f.tag: f for f in tagged if f.tag is not None},
    )


@cache
def field_defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls)}


@cache
def fixed_size(schema: Schema, version: int) -> int:
    """Bytes of `schema`'s fixed-width untagged fields at `version`, plus its empty tag section
    when flexible. Variable-width fields (strings, arrays, records) and tagged fields are the
    caller's to add: the fast size path builds on this."""
    widths = [f.type.width for f in plan_for(schema, version).regular if isinstance(f.type, Scalar)]
    tags = 1 if schema.api.is_flexible(version) else 0
    return sum(w for w in widths if w is not None) + tags


def carries(schema: Schema, attr: str, version: int) -> bool:
    """Whether `version` of `schema` has a field for attribute `attr` (inlined structs included)."""
    return attr in carried_fields(schema, version)


@cache
def carried_fields(schema: Schema, version: int) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for f in schema.fields:
        if not f.carried_by(version):
            continue
        if f.attr is None:
            assert isinstance(f.type, Schema)
            out.update(carried_fields(f.type, version))
        else:
            out[f.attr] = f
    return out

