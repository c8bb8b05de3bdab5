"""Kafka's message sets before 0.11: messages of magic 0 (0.8–0.9) and magic 1 (0.10, KIP-32).

Each message is a log entry: offset int64, message size int32, then the message: crc int32
(CRC-32 of everything after it), magic int8, attributes int8, timestamp int64 (magic 1 only),
key bytes (int32 length, −1 null), value bytes (int32 length, −1 null). A message set is the
messages one after another, with no header of its own. Kafka keeps these in
clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java (LOG_OVERHEAD 12,
RECORD_OVERHEAD_V0 14, RECORD_OVERHEAD_V1 22) and Records.LOG_OVERHEAD; uncompressed only here.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

from rig.errors import ProtocolError

LOG_OVERHEAD = 12  # offset int64 + message size int32 (Records.LOG_OVERHEAD)
RECORD_OVERHEAD = {0: 14, 1: 22}  # crc 4 + magic 1 + attributes 1 (+ timestamp 8) + 2 × length 4
MAGICS = (0, 1)


def _check_magic(magic: int) -> None:
    if magic not in MAGICS:
        raise ProtocolError(f"legacy message format has magic 0 or 1 (got {magic!r})")


def message_size(magic: int, key_size: int | None, value_size: int | None) -> int:
    """Bytes of one message in a message set, its offset and size fields included
    (LegacyRecord.recordSize + LOG_OVERHEAD)."""
    _check_magic(magic)
    return (LOG_OVERHEAD + RECORD_OVERHEAD[magic] + (key_size or 0) + (value_size or 0))


def message_set_size(magic: int, records: Iterable[tuple[int | None, int | None]]) -> int:
    """Bytes of a message set holding `records` as (key size, value size) pairs."""
    return sum(message_size(magic, key, value) for key, value in records)


def _bytes_field(value: bytes | None) -> bytes:
    return struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value


def encode_message(offset: int, magic: int, key: bytes | None, value: bytes | None,
                   timestamp_ms: int = -1, attributes: int = 0) -> bytes:
    """One uncompressed message as a log entry (LegacyRecord.write plus the offset and size
    that precede it in a message set). `timestamp_ms` is carried by magic 1 only."""
    _check_magic(magic)
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp_ms)
    body += _bytes_field(key) + _bytes_field(value)
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def decode_message_set(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """(offset, magic, key, value) of each message; checks sizes and CRCs."""
    out = []
    pos = 0
    while pos < len(data):
        if len(data) - pos < LOG_OVERHEAD:
            raise ProtocolError(f"message set: {len(data) - pos} bytes left, a log entry "
                                f"needs {LOG_OVERHEAD}")
        offset, size = struct.unpack_from(">qi", data, pos)
        start, end = pos + LOG_OVERHEAD, pos + LOG_OVERHEAD + size
        if size < RECORD_OVERHEAD[0] or end > len(data):
            raise ProtocolError(f"message at offset {offset}: size {size} does not fit")
        (crc,) = struct.unpack_from(">I", data, start)
        if zlib.crc32(data[start + 4:end]) != crc:
            raise ProtocolError(f"message at offset {offset}: CRC mismatch")
        magic = data[start + 4]
        _check_magic(magic)
        at = start + 6 + (8 if magic == 1 else 0)
        fields: list[bytes | None] = []
        for _ in range(2):
            (length,) = struct.unpack_from(">i", data, at)
            at += 4
            fields.append(None if length < 0 else data[at:at + length])
            at += max(length, 0)
        if at != end:
            raise ProtocolError(f"message at offset {offset}: {end - at} bytes unaccounted")
        out.append((offset, magic, fields[0], fields[1]))
        pos = end
    return out
