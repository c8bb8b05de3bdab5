"""Kafka's hash functions, bit for bit: Java's String.hashCode, Kafka's Utils.abs and murmur2."""

from __future__ import annotations

import struct
from functools import lru_cache

_WORDS = struct.Struct("<I")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


@lru_cache(maxsize=1024)  # a topic's name is hashed again for each of its partitions
def java_string_hash(text: str) -> int:
    """Java's String.hashCode: 31·h + c over UTF-16 code units, in 32-bit two's complement."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def kafka_abs(value: int) -> int:
    """Kafka's Utils.abs: the absolute value, with Integer.MIN_VALUE mapped to 0."""
    return 0 if value == -(1 << 31) else abs(value)


OFFSETS_TOPIC = "__consumer_offsets"


def offsets_partition(group: str, partitions: int = 50) -> int:
    """The __consumer_offsets partition of a group (GroupMetadataManager.partitionFor):
    Utils.abs(groupId.hashCode) % offsets.topic.num.partitions."""
    return kafka_abs(java_string_hash(group)) % partitions


def fetcher_id(topic: str, partition: int, num_fetchers: int) -> int:
    """Which replica fetcher thread serves a partition (AbstractFetcherManager.getFetcherId)."""
    return kafka_abs(_int32(31 * java_string_hash(topic) + partition)) % num_fetchers


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (Utils.murmur2, seed 0x9747b28c) as a signed 32-bit int."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for (k,) in _WORDS.iter_unpack(data[:length - length % 4]):  # little-endian 32-bit words
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length % 4
    base = length - tail
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return _int32(h)
