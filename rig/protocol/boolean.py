"""Kafka's bool on the wire: one byte, 1 for true and 0 for false (the generated writers'
writeByte(x ? 1 : 0)); any byte but 0 reads as true (readByte() != 0)."""

from __future__ import annotations

from rig.protocol.primitives import CodecFailure, Reader, Scalar


def _write_bool(buf: bytearray, value: object, flexible: bool) -> None:
    if type(value) is not bool:  # an int is refused, as the int writers refuse a bool
        raise CodecFailure(f"bool must be a bool (got {type(value).__name__})")
    buf.append(1 if value else 0)


def _read_bool(r: Reader, flexible: bool) -> object:
    return r.raw(1) != b"\x00"


BOOLEAN = Scalar("bool", 1, _write_bool, _read_bool)
