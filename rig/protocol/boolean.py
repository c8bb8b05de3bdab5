"""Kafka's `bool` wire type: one byte, 0 false and anything else true on reading (Kafka's
ByteBufferAccessor.readByte() != 0), 1 for true on writing. The controller's messages carry
it (LeaderAndIsr's IsNew, StopReplica's DeletePartitions, isKRaftController)."""

from __future__ import annotations

from rig.protocol.primitives import CodecFailure, Reader, Scalar


def _write_bool(buf: bytearray, value: object, flexible: bool) -> None:
    if type(value) is not bool:
        raise CodecFailure(f"bool must be True or False (got {value!r})")
    buf.append(1 if value else 0)


def _read_bool(r: Reader, flexible: bool) -> object:
    return r.raw(1)[0] != 0


BOOLEAN = Scalar("bool", 1, _write_bool, _read_bool)
