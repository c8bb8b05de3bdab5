"""Kafka's record batch format v2 (magic 2): exact sizes of batches and records.

A batch is a 61-byte header plus its records; each record is a varint length followed by
attributes, timestamp delta, offset delta, key, value and headers, the varints zigzag-encoded.
Sizes only: the simulation never needs the bytes of a record. `Batch` is a batch as the model
carries it: the header fields it needs, the key ids of its records, and what cleaning kept (the
log, the replicas and the compaction strategies all hold the same type).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

BATCH_HEADER_BYTES = 61  # baseOffset 8 … recordsCount 4


def varint_size(value: int) -> int:
    """Bytes of a zigzag-encoded signed varint (Kafka's ByteUtils.sizeOfVarint): 7 bits a byte."""
    encoded = (value << 1) ^ (value >> 63)
    return (encoded.bit_length() + 6) // 7 or 1


@lru_cache(maxsize=1 << 16)
def record_size(offset_delta: int, timestamp_delta: int, key_size: int | None,
                value_size: int | None, headers: int = 0) -> int:
    """Bytes of one record inside a v2 batch, its length prefix included."""
    body = 1 + varint_size(timestamp_delta) + varint_size(offset_delta)
    body += varint_size(-1) if key_size is None else varint_size(key_size) + key_size
    body += varint_size(-1) if value_size is None else varint_size(value_size) + value_size
    body += varint_size(headers)
    return varint_size(body) + body


def batch_size(records: Iterable[tuple[int | None, int | None]], timestamp_delta: int = 0) -> int:
    """Bytes of a v2 batch holding `records` as (key size, value size) pairs, in order."""
    total = BATCH_HEADER_BYTES
    for offset_delta, (key_size, value_size) in enumerate(records):
        total += record_size(offset_delta, timestamp_delta, key_size, value_size)
    return total


@dataclass(slots=True)
class Batch:
    """One record batch: its header fields, and its records' keys (never their bytes)."""

    base_offset: int
    count: int
    epoch: int  # the leader epoch that wrote it
    size: int  # bytes in Kafka's v2 format
    producer: int
    sequence: int  # the producer's sequence of the first record
    timestamp_ms: float = 0.0  # the producer's create time
    keys: array | None = None  # key id per record ('i'; a tombstone is ~key); None: unkeyed
    tombstones: int = 0  # records among `keys` with a null value
    kept: array | None = None  # after cleaning: relative offsets of the records kept
    delete_horizon_ms: float = -1.0  # KIP-534: set when the cleaner first sees its tombstones

    @property
    def end_offset(self) -> int:
        return self.base_offset + self.count

    @property
    def records(self) -> int:
        """Records held (the offsets span `count`; cleaning can leave fewer)."""
        if self.kept is not None:
            return len(self.kept)
        return self.count

    @property
    def identity(self) -> tuple[int, int]:
        return (self.producer, self.sequence)
