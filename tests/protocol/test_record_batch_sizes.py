"""Record batch v2 sizes against an independent byte encoder written here.

The encoder follows Kafka's DefaultRecordBatch (the 61-byte header) and DefaultRecord.writeTo
(apache/kafka clients/.../common/record/), with ByteUtils' zigzag varints, and is itself checked
against the byte vectors of Kafka's ByteUtilsTest. rig only computes sizes; this proves them.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.protocol.records import BATCH_HEADER_BYTES, batch_size, record_size, varint_size

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)

# -- the independent encoder --------------------------------------------------------------------


def _unsigned_varint(u: int) -> bytes:
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def write_varint(n: int) -> bytes:
    """ByteUtils.writeVarint: 32-bit zigzag, then 7 bits a byte."""
    assert -(2**31) <= n < 2**31
    return _unsigned_varint(((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def write_varlong(n: int) -> bytes:
    """ByteUtils.writeVarlong: 64-bit zigzag, then 7 bits a byte."""
    assert -(2**63) <= n < 2**63
    return _unsigned_varint(((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), which the v2 batch stores over attributes … the last record."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


Header = tuple[str, bytes | None]


def encode_record(offset_delta: int, timestamp_delta: int, key: bytes | None,
                  value: bytes | None, headers: tuple[Header, ...] = ()) -> bytes:
    """DefaultRecord.writeTo: length varint, attributes, timestampDelta varlong, offsetDelta
    varint, key and value (varint length, −1 for null), headers count and headers."""
    body = bytearray(b"\x00")  # attributes: unused
    body += write_varlong(timestamp_delta)
    body += write_varint(offset_delta)
    for field in (key, value):
        body += write_varint(-1) if field is None else write_varint(len(field)) + field
    body += write_varint(len(headers))
    for name, header_value in headers:
        utf8 = name.encode()
        body += write_varint(len(utf8)) + utf8
        body += (write_varint(-1) if header_value is None
                 else write_varint(len(header_value)) + header_value)
    return write_varint(len(body)) + bytes(body)


# baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEAD = struct.Struct(">qiib")  # the 17 bytes before the CRC
_TAIL = struct.Struct(">hiqqqhii")  # the 40 bytes the CRC covers, before the records


def encode_batch(records: list[tuple[bytes | None, bytes | None]], base_offset: int = 0,
                 timestamp_delta: int = 0, leader_epoch: int = 0) -> bytes:
    body = b"".join(encode_record(i, timestamp_delta, key, value)
                    for i, (key, value) in enumerate(records))
    tail = _TAIL.pack(0, len(records) - 1, 1_700_000_000_000, 1_700_000_000_000, -1, -1, -1,
                      len(records)) + body
    batch_length = 4 + 1 + 4 + len(tail)  # everything after baseOffset and batchLength
    head = _HEAD.pack(base_offset, batch_length, leader_epoch, 2)
    return head + struct.pack(">I", _crc32c(tail)) + tail


def records_strategy(max_size: int = 300) -> st.SearchStrategy[bytes | None]:
    return st.none() | st.binary(max_size=max_size)


# -- the encoder itself, against Kafka's own vectors ---------------------------------------------
@pytest.mark.parametrize(("n", "encoded"), [  # ByteUtilsTest.testVarintSerde
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"),
    (1048575, "feff7f"), (-1048576, "ffff7f"), (1048576, "80808001"),
    (134217727, "feffff7f"), (134217728, "8080808001"),
    (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
])
def test_encoder_varint_matches_kafka_byteutils(n: int, encoded: str) -> None:
    assert write_varint(n) == bytes.fromhex(encoded)


@pytest.mark.parametrize(("n", "encoded"), [  # ByteUtilsTest.testVarlongSerde
    (17179869184, "808080808001"), (-17179869185, "818080808001"),
    (2**63 - 1, "feffffffffffffffff01"), (-(2**63), "ffffffffffffffffff01"),
])
def test_encoder_varlong_matches_kafka_byteutils(n: int, encoded: str) -> None:
    assert write_varlong(n) == bytes.fromhex(encoded)


def test_encoder_crc32c_check_value() -> None:
    assert _crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value


def test_encoder_header_is_61_bytes_with_records_at_offset_61() -> None:
    # DefaultRecordBatch: RECORD_BATCH_OVERHEAD = RECORDS_OFFSET = 61.
    assert _HEAD.size + 4 + _TAIL.size == 61
    encoded = encode_batch([(None, b"v")])
    assert encoded[61:] == encode_record(0, 0, None, b"v")
    assert struct.unpack_from(">i", encoded, 8)[0] == len(encoded) - 12  # LOG_OVERHEAD
    assert encoded[16] == 2  # magic
    assert struct.unpack_from(">i", encoded, 57)[0] == 1  # recordsCount


def test_encoder_null_key_is_a_minus_one_length() -> None:
    # length 7 (zigzag 0e), attributes, ts delta 0, offset delta 0, key −1 (01), value length 1
    # (02), 'x', no headers
    assert encode_record(0, 0, None, b"x") == bytes.fromhex("0e" "00" "00" "00" "01" "02" "78" "00")


# -- rig's sizes --------------------------------------------------------------------------------
def test_batch_header_constant_is_kafkas() -> None:
    assert BATCH_HEADER_BYTES == 61


@given(INT64)
def test_varint_size_is_the_varlong_encoding_length(n: int) -> None:
    assert varint_size(n) == len(write_varlong(n))


@given(INT32)
def test_varint_size_is_the_varint_encoding_length(n: int) -> None:
    assert varint_size(n) == len(write_varint(n))


@pytest.mark.parametrize(("n", "size"), [
    (63, 1), (64, 2), (-64, 1), (-65, 2),  # zigzag 126/128: the one-byte limit is 127
    (8191, 2), (8192, 3), (-8192, 2), (-8193, 3),  # zigzag 16382/16384
    (2**20 - 1, 3), (2**20, 4), (2**27 - 1, 4), (2**27, 5), (2**31 - 1, 5), (-(2**31), 5),
    (2**34, 6), (2**63 - 1, 10), (-(2**63), 10),
])
def test_varint_size_at_byte_boundaries(n: int, size: int) -> None:
    assert varint_size(n) == size == len(write_varlong(n))


@given(offset_delta=st.integers(0, 2**31 - 1), timestamp_delta=INT64,
       key=records_strategy(), value=records_strategy(20_000))
def test_record_size_is_the_encoded_record_length(offset_delta: int, timestamp_delta: int,
                                                  key: bytes | None,
                                                  value: bytes | None) -> None:
    expected = len(encode_record(offset_delta, timestamp_delta, key, value))
    assert record_size(offset_delta, timestamp_delta, None if key is None else len(key),
                       None if value is None else len(value)) == expected


@pytest.mark.parametrize(("key_len", "value_len"), [
    (None, None), (0, 0), (None, 0), (0, None), (63, 64), (64, 63), (8191, 8192), (8192, 8191),
])
def test_record_size_around_length_varint_boundaries(key_len: int | None,
                                                     value_len: int | None) -> None:
    key = None if key_len is None else b"k" * key_len
    value = None if value_len is None else b"v" * value_len
    assert record_size(0, 0, key_len, value_len) == len(encode_record(0, 0, key, value))


def test_record_length_prefix_grows_when_the_body_reaches_64_bytes() -> None:
    # Body = attributes + ts delta + offset delta + key −1 + value length + v + headers = 6 + v
    # bytes. v = 57 → body 63 (1-byte prefix); v = 58 → body 64 (zigzag 128: 2-byte prefix).
    assert record_size(0, 0, None, 57) == 1 + 63 == len(encode_record(0, 0, None, b"x" * 57))
    assert record_size(0, 0, None, 58) == 2 + 64 == len(encode_record(0, 0, None, b"x" * 58))


@settings(deadline=None)  # big batches: encoding them in pure Python takes a while
@given(records=st.lists(st.tuples(records_strategy(200), records_strategy(2000)),
                        min_size=1, max_size=80),
       timestamp_delta=st.integers(0, 2**40))
def test_batch_size_is_the_encoded_batch_length(
        records: list[tuple[bytes | None, bytes | None]], timestamp_delta: int) -> None:
    sizes = [(None if k is None else len(k), None if v is None else len(v)) for k, v in records]
    expected = len(encode_batch(records, timestamp_delta=timestamp_delta))
    assert batch_size(sizes, timestamp_delta) == expected


def test_batch_offset_deltas_cross_the_one_byte_varint_limit() -> None:
    # Offset deltas 0…69: from delta 64 on the offsetDelta varint takes two bytes, so each of
    # the last six records is 9 bytes (8 + 1) instead of 8.
    records = [(None, b"v")] * 70
    assert batch_size([(None, 1)] * 70) == len(encode_batch(records))
    assert batch_size([(None, 1)] * 64) == 61 + 64 * 8
    assert batch_size([(None, 1)] * 70) - batch_size([(None, 1)] * 64) == 6 * 9


def test_empty_batch_is_just_the_header() -> None:
    assert batch_size([]) == 61
