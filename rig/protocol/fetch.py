"""Fetch request and response bodies (api_key 1, versions 0–18): dataclasses and their codec.

One declarative description per struct mirrors Kafka's FetchRequest.json / FetchResponse.json
(which field exists in which versions, which is tagged); a small interpreter encodes, decodes
and normalizes from it, so no per-version code exists anywhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from rig.errors import ProtocolError
from rig.protocol.primitives import (
    ARRAY_PREFIX,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    UUID,
    ZERO_UUID,
    CodecFailure,
    Reader,
    Records,
    RecordsLength,
    Scalar,
    write_length,
    write_uvarint,
)

FETCH_API_KEY = 1
# v0 (0.8), v1 (0.9: throttle_time_ms), v2 (0.10: message format v1 inside), v3 (0.10.1:
# max_bytes): FetchRequest.json / FetchResponse.json "validVersions": "4-18" in Kafka 4.x, which
# dropped v0–v3 (KIP-896), "0-11" and up before; the fields below carry their versions as the JSON
# does. v18 (4.1, KIP-1166) the newest.
FETCH_VERSIONS = range(0, 19)
NO_HIGH_WATERMARK = 0x7FFFFFFFFFFFFFFF  # v18 HighWatermark default: the replica does not send one
FIRST_FLEXIBLE_VERSION = 12


def is_flexible(version: int) -> bool:
    """Whether Fetch `version` uses compact encodings, tagged fields and header v2 / v1."""
    return version >= FIRST_FLEXIBLE_VERSION


def check_version(version: int) -> None:
    """Raise ProtocolError unless `version` is a Fetch version this codec speaks."""
    if type(version) is not int or version not in FETCH_VERSIONS:
        raise ProtocolError(
            f"Fetch version {version!r} is not supported "
            f"(rig speaks v{FETCH_VERSIONS[0]}–v{FETCH_VERSIONS[-1]})"
        )


# -- messages ------------------------------------------------------------------------------------
# Field order is wire order; defaults are Kafka's (its JSON `default`, else 0 / "" / empty).


@dataclass(frozen=True, slots=True)
class FetchPartition:
    partition: int = 0
    current_leader_epoch: int = -1  # v9+
    fetch_offset: int = 0
    last_fetched_epoch: int = -1  # v12+
    log_start_offset: int = -1  # v5+
    partition_max_bytes: int = 0
    replica_directory_id: bytes = ZERO_UUID  # v17+, tag 0 (KIP-853)
    # v18+, tag 1 (KIP-1166): the fetching replica's HW, sent only when set. Only the KRaft
    # metadata quorum sets it (KafkaRaftClient); a broker's ReplicaFetcherThread leaves the
    # default, so its v18 partitions have v17's bytes.
    high_watermark: int = NO_HIGH_WATERMARK


@dataclass(frozen=True, slots=True)
class FetchTopic:
    topic: str = ""  # v4–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[FetchPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class ForgottenTopic:
    topic: str = ""  # v7–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """A Fetch request body. replica_id is an int32 up to v14 and, with replica_epoch, the
    tagged ReplicaState (tag 1) from v15; cluster_id is tag 0 from v12."""

    replica_id: int = -1
    replica_epoch: int = -1  # v15+
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 0x7FFFFFFF
    isolation_level: int = 0
    session_id: int = 0  # v7+
    session_epoch: int = -1  # v7+
    topics: tuple[FetchTopic, ...] = ()
    forgotten_topics: tuple[ForgottenTopic, ...] = ()  # v7+
    rack_id: str = ""  # v11+
    cluster_id: str | None = None  # v12+, tag 0


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class LeaderIdAndEpoch:
    leader_id: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class SnapshotId:
    end_offset: int = -1
    epoch: int = -1


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    producer_id: int = 0
    first_offset: int = 0


@dataclass(frozen=True, slots=True)
class NodeEndpoint:
    node_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class FetchResponsePartition:
    """One partition of a response. The three tagged structs (v12+) are sent only when they
    differ from their all -1 defaults; aborted_transactions None is what a broker sends for
    READ_UNCOMMITTED."""

    partition_index: int = 0
    error_code: int = 0
    high_watermark: int = 0
    last_stable_offset: int = -1
    log_start_offset: int = -1  # v5+
    diverging_epoch: EpochEndOffset = EpochEndOffset()  # v12+, tag 0
    current_leader: LeaderIdAndEpoch = LeaderIdAndEpoch()  # v12+, tag 1
    snapshot_id: SnapshotId = SnapshotId()  # v12+, tag 2
    aborted_transactions: tuple[AbortedTransaction, ...] | None = None
    preferred_read_replica: int = -1  # v11+
    records: Records = None


@dataclass(frozen=True, slots=True)
class FetchResponseTopic:
    topic: str = ""  # v4–12
    topic_id: bytes = ZERO_UUID  # v13+
    partitions: tuple[FetchResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchResponse:
    throttle_time_ms: int = 0
    error_code: int = 0  # v7+
    session_id: int = 0  # v7+
    responses: tuple[FetchResponseTopic, ...] = ()
    node_endpoints: tuple[NodeEndpoint, ...] = ()  # v16+, tag 0


# -- the declarative description -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Schema:
    """A struct: its Kafka name, the dataclass it decodes to, its fields in wire order.

    `cls` None marks a struct inlined into its parent: its fields are attributes of the parent
    object (Kafka's ReplicaState, which we flatten into FetchRequest)."""

    name: str
    cls: type | None
    fields: tuple[Field, ...]


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

    def carried_by(self, version: int) -> bool:
        low, _, high = self.versions.partition("-")
        if low.endswith("+"):
            return version >= int(low[:-1])
        return int(low) <= version <= int(high or low)


EPOCH_END_OFFSET = Schema(
    "EpochEndOffset",
    EpochEndOffset,
    (Field("epoch", INT32, "12+"), Field("end_offset", INT64, "12+")),
)
LEADER_ID_AND_EPOCH = Schema(
    "LeaderIdAndEpoch",
    LeaderIdAndEpoch,
    (Field("leader_id", INT32, "12+"), Field("leader_epoch", INT32, "12+")),
)
SNAPSHOT_ID = Schema(
    "SnapshotId", SnapshotId, (Field("end_offset", INT64, "0+"), Field("epoch", INT32, "0+"))
)
ABORTED_TRANSACTION = Schema(
    "AbortedTransaction",
    AbortedTransaction,
    (Field("producer_id", INT64, "4+"), Field("first_offset", INT64, "4+")),
)
NODE_ENDPOINT = Schema(
    "NodeEndpoint",
    NodeEndpoint,
    (
        Field("node_id", INT32, "16+"),
        Field("host", STRING, "16+"),
        Field("port", INT32, "16+"),
        Field("rack", NULLABLE_STRING, "16+"),
    ),
)
REPLICA_STATE = Schema(
    "ReplicaState", None, (Field("replica_id", INT32, "15+"), Field("replica_epoch", INT64, "15+"))
)

FETCH_PARTITION = Schema(
    "FetchPartition",
    FetchPartition,
    (
        Field("partition", INT32, "0+"),
        Field("current_leader_epoch", INT32, "9+"),
        Field("fetch_offset", INT64, "0+"),
        Field("last_fetched_epoch", INT32, "12+"),
        Field("log_start_offset", INT64, "5+"),
        Field("partition_max_bytes", INT32, "0+"),
        Field("replica_directory_id", UUID, "17+", tag=0),
        Field("high_watermark", INT64, "18+", tag=1),
    ),
)
FETCH_TOPIC = Schema(
    "FetchTopic",
    FetchTopic,
    (
        Field("topic", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(FETCH_PARTITION), "0+"),
    ),
)
FORGOTTEN_TOPIC = Schema(
    "ForgottenTopic",
    ForgottenTopic,
    (
        Field("topic", STRING, "7-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(INT32), "7+"),
    ),
)
FETCH_REQUEST = Schema(
    "FetchRequest",
    FetchRequest,
    (
        Field("cluster_id", NULLABLE_STRING, "12+", tag=0),
        Field("replica_id", INT32, "0-14"),
        Field(None, REPLICA_STATE, "15+", tag=1),
        Field("max_wait_ms", INT32, "0+"),
        Field("min_bytes", INT32, "0+"),
        Field("max_bytes", INT32, "3+"),
        Field("isolation_level", INT8, "4+"),
        Field("session_id", INT32, "7+"),
        Field("session_epoch", INT32, "7+"),
        Field("topics", ArrayOf(FETCH_TOPIC), "0+"),
        Field("forgotten_topics", ArrayOf(FORGOTTEN_TOPIC), "7+"),
        Field("rack_id", STRING, "11+"),
    ),
)

RESPONSE_PARTITION = Schema(
    "PartitionData",
    FetchResponsePartition,
    (
        Field("partition_index", INT32, "0+"),
        Field("error_code", INT16, "0+"),
        Field("high_watermark", INT64, "0+"),
        Field("last_stable_offset", INT64, "4+"),
        Field("log_start_offset", INT64, "5+"),
        Field("diverging_epoch", EPOCH_END_OFFSET, "12+", tag=0),
        Field("current_leader", LEADER_ID_AND_EPOCH, "12+", tag=1),
        Field("snapshot_id", SNAPSHOT_ID, "12+", tag=2),
        Field("aborted_transactions", ArrayOf(ABORTED_TRANSACTION, nullable=True), "4+"),
        Field("preferred_read_replica", INT32, "11+"),
        Field("records", RECORDS, "0+"),
    ),
)
RESPONSE_TOPIC = Schema(
    "FetchableTopicResponse",
    FetchResponseTopic,
    (
        Field("topic", STRING, "0-12"),
        Field("topic_id", UUID, "13+"),
        Field("partitions", ArrayOf(RESPONSE_PARTITION), "0+"),
    ),
)
FETCH_RESPONSE = Schema(
    "FetchResponse",
    FetchResponse,
    (
        Field("throttle_time_ms", INT32, "1+"),
        Field("error_code", INT16, "7+"),
        Field("session_id", INT32, "7+"),
        Field("responses", ArrayOf(RESPONSE_TOPIC), "0+"),
        Field("node_endpoints", ArrayOf(NODE_ENDPOINT), "16+", tag=0),
    ),
)

# -- per-version plans (memoized) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    regular: tuple[Field, ...]  # untagged fields of this version, wire order
    tagged: tuple[Field, ...]  # tagged fields of this version, ascending tag
    by_tag: dict[int, Field]


@cache
def _plan(schema: Schema, version: int) -> _Plan:
    present = [f for f in schema.fields if f.carried_by(version)]
    tagged = tuple(sorted((f for f in present if f.tag is not None), key=lambda f: f.tag or 0))
    return _Plan(
        regular=tuple(f for f in present if f.tag is None),
        tagged=tagged,
        by_tag={f.tag: f for f in tagged if f.tag is not None},
    )


@cache
def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls)}


@cache
def fixed_size(schema: Schema, version: int) -> int:
    """Bytes of `schema`'s fixed-width untagged fields at `version`, plus its empty tag section
    when flexible. Variable-width fields (strings, arrays, records) and tagged fields are the
    caller's to add: the fast size path builds on this."""
    widths = [f.type.width for f in _plan(schema, version).regular if isinstance(f.type, Scalar)]
    return sum(w for w in widths if w is not None) + (1 if is_flexible(version) else 0)


def carries(schema: Schema, attr: str, version: int) -> bool:
    """Whether `version` of `schema` has a field for attribute `attr` (inlined structs included)."""
    return attr in _carried(schema, version)


@cache
def _carried(schema: Schema, version: int) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for f in schema.fields:
        if not f.carried_by(version):
            continue
        if f.attr is None:
            assert isinstance(f.type, Schema)
            out.update(_carried(f.type, version))
        else:
            out[f.attr] = f
    return out


# -- encoding ------------------------------------------------------------------------------------


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
            getattr(obj, sub.attr) == _defaults(parent)[sub.attr]
            for sub in f.type.fields
            if sub.attr is not None
        )
    assert schema.cls is not None
    return bool(getattr(obj, f.attr) == _defaults(schema.cls)[f.attr])


def _name(f: Field) -> str:
    if f.attr is not None:
        return f.attr
    assert isinstance(f.type, Schema)
    return f.type.name


def _write_struct(buf: bytearray, schema: Schema, obj: object, version: int, flex: bool) -> None:
    plan = _plan(schema, version)
    for f in plan.regular:
        try:
            _write_value(buf, f.type, _value(obj, f), version, flex)
        except CodecFailure as exc:
            exc.path.insert(0, _name(f))
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
            exc.path.insert(0, _name(f))
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
    plan = _plan(schema, version)
    for f in plan.regular:
        try:
            _read_field(r, f, kwargs, version, flex)
        except CodecFailure as exc:
            exc.path.insert(0, _name(f))
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
                exc.path.insert(0, _name(tagged))
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


def _normalize_struct(schema: Schema, obj: Any, version: int) -> Any:
    assert schema.cls is not None
    carried = _carried(schema, version)
    kwargs = {}
    for name, default in _defaults(schema.cls).items():
        f = carried.get(name)
        kwargs[name] = (
            default if f is None else _normalize_value(f.type, getattr(obj, name), version)
        )
    return schema.cls(**kwargs)


def _normalize_value(typ: Scalar | ArrayOf | Schema, value: Any, version: int) -> Any:
    if isinstance(typ, Schema):
        return _normalize_struct(typ, value, version)
    if isinstance(typ, ArrayOf):
        if value is None:
            return None
        return tuple(_normalize_value(typ.element, v, version) for v in value)
    if isinstance(value, RecordsLength):
        return bytes(value.length)  # what the placeholder encodes as
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


# -- public entry points -------------------------------------------------------------------------


def _path(parts: list[str]) -> str:
    return "$" + "".join(p if p.startswith("[") else "." + p for p in parts)


def _encode(schema: Schema, obj: object, version: int) -> bytes:
    check_version(version)
    if not isinstance(obj, schema.cls or object):
        raise ProtocolError(f"expected a {schema.name}, got {type(obj).__name__}")
    buf = bytearray()
    try:
        _write_struct(buf, schema, obj, version, is_flexible(version))
    except CodecFailure as exc:
        raise ProtocolError(f"{schema.name} v{version}: {_path(exc.path)}: {exc.reason}") from None
    return bytes(buf)


def _decode(schema: Schema, data: bytes | bytearray | memoryview, version: int) -> Any:
    check_version(version)
    r = Reader(bytes(data))
    try:
        obj = _read_struct(r, schema, version, is_flexible(version))
    except CodecFailure as exc:
        raise ProtocolError(f"{schema.name} v{version}: {_path(exc.path)}: {exc.reason}") from None
    if r.remaining:
        raise ProtocolError(
            f"{schema.name} v{version}: {r.remaining} unexpected bytes after the body "
            f"(offset {r.pos} of {r.pos + r.remaining})"
        )
    return obj


def encode_fetch_request(req: FetchRequest, version: int) -> bytes:
    """The request body at `version`; fields the version cannot carry are left out."""
    return _encode(FETCH_REQUEST, req, version)


def decode_fetch_request(data: bytes | bytearray | memoryview, version: int) -> FetchRequest:
    """Parse a whole request body; raises ProtocolError naming the field that failed."""
    result: FetchRequest = _decode(FETCH_REQUEST, data, version)
    return result


def normalize_fetch_request(req: FetchRequest, version: int) -> FetchRequest:
    """`req` as `version` can carry it: what decode(encode(req)) returns."""
    check_version(version)
    result: FetchRequest = _normalize_struct(FETCH_REQUEST, req, version)
    return result


def encode_fetch_response(resp: FetchResponse, version: int) -> bytes:
    """The response body at `version`; RecordsLength records become zero filler bytes."""
    return _encode(FETCH_RESPONSE, resp, version)


def decode_fetch_response(data: bytes | bytearray | memoryview, version: int) -> FetchResponse:
    """Parse a whole response body; raises ProtocolError naming the field that failed."""
    result: FetchResponse = _decode(FETCH_RESPONSE, data, version)
    return result


def normalize_fetch_response(resp: FetchResponse, version: int) -> FetchResponse:
    """`resp` as `version` can carry it: what decode(encode(resp)) returns."""
    check_version(version)
    result: FetchResponse = _normalize_struct(FETCH_RESPONSE, resp, version)
    return result


def iter_schemas() -> Iterator[Schema]:
    """Every struct description, for tests that check the description itself."""
    yield from (FETCH_REQUEST, REPLICA_STATE, FETCH_TOPIC, FETCH_PARTITION, FORGOTTEN_TOPIC)
    yield from (FETCH_RESPONSE, RESPONSE_TOPIC, RESPONSE_PARTITION, ABORTED_TRANSACTION)
    yield from (NODE_ENDPOINT, EPOCH_END_OFFSET, LEADER_ID_AND_EPOCH, SNAPSHOT_ID)
