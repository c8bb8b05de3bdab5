"""Kafka's primitive wire types: big-endian integers, unsigned varints, strings, bytes, uuids.

Each scalar type is one `Scalar` row (fixed width or None, writer, reader); helpers size the
variable-width ones without encoding them. Classic versions use int16/int32 length prefixes,
flexible versions unsigned varints of length + 1 (0 meaning null).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

ZERO_UUID = bytes(16)

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")

# Kafka's readUnsignedVarint refuses more than 5 bytes: every length and tag fits in 32 bits.
_MAX_UVARINT_BYTES = 5
_MAX_STRING_BYTES = 0x7FFF  # a classic string has an int16 length


class CodecFailure(Exception):
    """Why a value could not be encoded or decoded; the message codec prepends the field path."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []  # outermost first, filled in while the failure bubbles up


@dataclass(frozen=True, slots=True)
class RecordsLength:
    """Records known only by their size, for the simulation: no payload is kept.

    The encoder writes `length` zero bytes in their place (the size is exact, the content a
    placeholder); the decoder always returns real bytes.
    """

    length: int


Records = bytes | RecordsLength | None


# -- sizes ---------------------------------------------------------------------------------------


def uvarint_size(n: int) -> int:
    """Bytes of `n` (≥ 0) as an unsigned varint: 7 bits per byte."""
    return 1 if n < 0x80 else (n.bit_length() + 6) // 7


@lru_cache(maxsize=4096)
def utf8_len(s: str) -> int:
    """UTF-8 length of `s`; cached because the simulation sizes the same few topic names."""
    return len(s.encode("utf-8"))


def string_size(s: str | None, flexible: bool) -> int:
    """Wire bytes of a (nullable) string."""
    if s is None:
        return 1 if flexible else 2
    n = utf8_len(s)
    return (uvarint_size(n + 1) if flexible else 2) + n


def array_prefix_size(count: int | None, flexible: bool) -> int:
    """Wire bytes of an array's count prefix (None for a null array)."""
    if not flexible:
        return 4
    return 1 if count is None else uvarint_size(count + 1)


def topic_array_size(topics: Iterable[tuple[str, int]], flexible: bool, topic_bytes: int,
                     partition_bytes: int, names: bool = True) -> int:
    """Wire bytes of an array of topics given as (name, partitions): each its fixed part
    `topic_bytes`, its name (when the version names topics, not ids) and an array of that many
    partitions of `partition_bytes` each (the layout of Produce, ListOffsets and
    OffsetsForLeaderEpoch messages and their answers)."""
    topics = tuple(topics)
    size = array_prefix_size(len(topics), flexible)
    for name, n in topics:
        size += topic_bytes + array_prefix_size(n, flexible) + n * partition_bytes
        if names:
            size += string_size(name, flexible)
    return size


def bytes_size(length: int | None, flexible: bool) -> int:
    """Wire bytes of a (nullable) byte string of `length` bytes, prefix included."""
    if length is None:
        return 1 if flexible else 4
    return (uvarint_size(length + 1) if flexible else 4) + length


def tagged_field_size(tag: int, payload: int) -> int:
    """Wire bytes of one tagged field: tag varint, size varint, payload."""
    return uvarint_size(tag) + uvarint_size(payload) + payload


# -- writing -------------------------------------------------------------------------------------


def write_uvarint(buf: bytearray, n: int) -> None:
    if n < 0 or n >= 1 << 32:
        raise CodecFailure(f"unsigned varint out of range: {n}")
    while n >= 0x80:
        buf.append((n & 0x7F) | 0x80)
        n >>= 7
    buf.append(n)


def _fixed_writer(s: struct.Struct, kind: str) -> Callable[[bytearray, object, bool], None]:
    def write(buf: bytearray, value: object, flexible: bool) -> None:
        # bool is an int subclass; refuse it so True never silently becomes 1 on the wire.
        if type(value) is not int:
            raise CodecFailure(f"{kind} must be an int (got {type(value).__name__})")
        try:
            buf += s.pack(value)
        except struct.error:
            raise CodecFailure(f"{kind} out of range: {value}") from None

    return write


def write_length(buf: bytearray, n: int | None, flexible: bool, classic: struct.Struct) -> None:
    """A length or count prefix; None is null (-1 classic, 0 compact)."""
    if flexible:
        write_uvarint(buf, 0 if n is None else n + 1)
    else:
        try:
            buf += classic.pack(-1 if n is None else n)
        except struct.error:
            raise CodecFailure(f"length {n} does not fit its prefix") from None


def _write_uuid(buf: bytearray, value: object, flexible: bool) -> None:
    if not isinstance(value, bytes | bytearray) or len(value) != 16:
        raise CodecFailure(f"uuid must be 16 bytes (got {value!r})")
    buf += value


def _string_writer(nullable: bool) -> Callable[[bytearray, object, bool], None]:
    def write(buf: bytearray, value: object, flexible: bool) -> None:
        if value is None:
            if not nullable:
                raise CodecFailure("string is not nullable here (got None)")
            write_length(buf, None, flexible, _I16)
            return
        if not isinstance(value, str):
            raise CodecFailure(f"expected a string (got {type(value).__name__})")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CodecFailure(f"string is not encodable as UTF-8: {exc.reason}") from None
        if len(data) > _MAX_STRING_BYTES:
            raise CodecFailure(f"string of {len(data)} bytes exceeds {_MAX_STRING_BYTES}")
        write_length(buf, len(data), flexible, _I16)
        buf += data

    return write


def _write_records(buf: bytearray, value: object, flexible: bool) -> None:
    if value is None:
        write_length(buf, None, flexible, _I32)
    elif isinstance(value, RecordsLength):
        if value.length < 0:
            raise CodecFailure(f"records length must be ≥ 0 (got {value.length})")
        write_length(buf, value.length, flexible, _I32)
        buf += bytes(value.length)
    elif isinstance(value, bytes | bytearray | memoryview):
        write_length(buf, len(value), flexible, _I32)
        buf += value
    else:
        raise CodecFailure(f"records must be bytes, RecordsLength or None (got {value!r})")


# -- reading -------------------------------------------------------------------------------------


class Reader:
    """A cursor over received bytes; every read checks that the bytes are there."""

    __slots__ = ("_data", "_end", "pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._end = len(data)
        self.pos = 0

    @property
    def remaining(self) -> int:
        return self._end - self.pos

    def _need(self, n: int) -> None:
        if n > self._end - self.pos:
            raise CodecFailure(
                f"truncated: needs {n} bytes at offset {self.pos}, {self._end - self.pos} left"
            )

    def fixed(self, s: struct.Struct) -> int:
        self._need(s.size)
        value: int = s.unpack_from(self._data, self.pos)[0]
        self.pos += s.size
        return value

    def raw(self, n: int) -> bytes:
        self._need(n)
        start = self.pos
        self.pos += n
        return self._data[start : self.pos]

    def uvarint(self) -> int:
        value = shift = 0
        for _ in range(_MAX_UVARINT_BYTES):
            self._need(1)
            b = self._data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
        raise CodecFailure(f"unsigned varint longer than {_MAX_UVARINT_BYTES} bytes")

    def length(self, flexible: bool, classic: struct.Struct) -> int | None:
        """A length or count prefix; None for null."""
        n = self.uvarint() - 1 if flexible else self.fixed(classic)
        if n < -1:
            raise CodecFailure(f"negative length {n}")
        return None if n == -1 else n


def _fixed_reader(s: struct.Struct) -> Callable[[Reader, bool], object]:
    def read(r: Reader, flexible: bool) -> object:
        return r.fixed(s)

    return read


def _read_uuid(r: Reader, flexible: bool) -> object:
    return r.raw(16)


def _string_reader(nullable: bool) -> Callable[[Reader, bool], object]:
    def read(r: Reader, flexible: bool) -> object:
        n = r.length(flexible, _I16)
        if n is None:
            if not nullable:
                raise CodecFailure("null where a non-nullable string is required")
            return None
        try:
            return r.raw(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CodecFailure(f"string is not valid UTF-8: {exc.reason}") from None

    return read


def _read_records(r: Reader, flexible: bool) -> object:
    n = r.length(flexible, _I32)
    return None if n is None else r.raw(n)


# -- the scalar table ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Scalar:
    """One primitive type: its fixed width in bytes (None if variable), writer and reader."""

    name: str
    width: int | None
    write: Callable[[bytearray, object, bool], None]
    read: Callable[[Reader, bool], object]

    def __repr__(self) -> str:
        return self.name


INT8 = Scalar("int8", 1, _fixed_writer(_I8, "int8"), _fixed_reader(_I8))
INT16 = Scalar("int16", 2, _fixed_writer(_I16, "int16"), _fixed_reader(_I16))
UINT16 = Scalar("uint16", 2, _fixed_writer(_U16, "uint16"), _fixed_reader(_U16))  # a port
INT32 = Scalar("int32", 4, _fixed_writer(_I32, "int32"), _fixed_reader(_I32))
INT64 = Scalar("int64", 8, _fixed_writer(_I64, "int64"), _fixed_reader(_I64))
UUID = Scalar("uuid", 16, _write_uuid, _read_uuid)
STRING = Scalar("string", None, _string_writer(False), _string_reader(False))
NULLABLE_STRING = Scalar("nullable string", None, _string_writer(True), _string_reader(True))
RECORDS = Scalar("records", None, _write_records, _read_records)

# Length prefixes of arrays (int32) are shared with the message codec.
ARRAY_PREFIX = _I32
