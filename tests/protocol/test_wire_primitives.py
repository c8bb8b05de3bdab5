"""Primitive encodings: varint boundaries, string and bytes prefixes, reader bounds checks."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.protocol.primitives import (
    INT8,
    INT32,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    UUID,
    CodecFailure,
    Reader,
    RecordsLength,
    array_prefix_size,
    bytes_size,
    string_size,
    uvarint_size,
    write_uvarint,
)


def _uvarint(n: int) -> bytes:
    buf = bytearray()
    write_uvarint(buf, n)
    return bytes(buf)


@pytest.mark.parametrize(
    ("n", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (16383, b"\xff\x7f"),
        (16384, b"\x80\x80\x01"),
        (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
    ],
)
def test_uvarint_known_encodings(n: int, encoded: bytes) -> None:
    assert _uvarint(n) == encoded
    assert uvarint_size(n) == len(encoded)
    assert Reader(encoded).uvarint() == n


@given(st.integers(0, 2**32 - 1))
def test_uvarint_round_trips_and_sizes(n: int) -> None:
    encoded = _uvarint(n)
    assert len(encoded) == uvarint_size(n)
    r = Reader(encoded)
    assert r.uvarint() == n
    assert r.remaining == 0


def test_uvarint_rejects_more_than_five_bytes() -> None:
    with pytest.raises(CodecFailure, match="longer than 5 bytes"):
        Reader(b"\xff" * 6).uvarint()


@pytest.mark.parametrize("flexible", [False, True])
@given(value=st.one_of(st.none(), st.text(max_size=300)))
def test_nullable_string_round_trips_and_sizes(flexible: bool, value: str | None) -> None:
    buf = bytearray()
    NULLABLE_STRING.write(buf, value, flexible)
    assert len(buf) == string_size(value, flexible)
    r = Reader(bytes(buf))
    assert NULLABLE_STRING.read(r, flexible) == value
    assert r.remaining == 0


def test_string_prefixes() -> None:
    classic, compact = bytearray(), bytearray()
    STRING.write(classic, "test", False)
    STRING.write(compact, "test", True)
    assert bytes(classic) == b"\x00\x04test"  # int16 length
    assert bytes(compact) == b"\x05test"  # unsigned varint of length + 1


def test_null_strings_and_records() -> None:
    for scalar, flexible, expected in [
        (NULLABLE_STRING, False, b"\xff\xff"),
        (NULLABLE_STRING, True, b"\x00"),
        (RECORDS, False, b"\xff\xff\xff\xff"),
        (RECORDS, True, b"\x00"),
    ]:
        buf = bytearray()
        scalar.write(buf, None, flexible)
        assert bytes(buf) == expected


def test_non_nullable_string_refuses_null_both_ways() -> None:
    with pytest.raises(CodecFailure, match="not nullable"):
        STRING.write(bytearray(), None, False)
    with pytest.raises(CodecFailure, match="non-nullable"):
        STRING.read(Reader(b"\xff\xff"), False)


@pytest.mark.parametrize("flexible", [False, True])
@pytest.mark.parametrize("length", [0, 126, 127, 128, 16382, 16383, 16384])
def test_records_length_writes_placeholder_of_exact_size(flexible: bool, length: int) -> None:
    buf = bytearray()
    RECORDS.write(buf, RecordsLength(length), flexible)
    assert len(buf) == bytes_size(length, flexible)
    assert RECORDS.read(Reader(bytes(buf)), flexible) == bytes(length)


def test_array_prefix_sizes() -> None:
    assert array_prefix_size(None, False) == array_prefix_size(5, False) == 4
    assert array_prefix_size(None, True) == array_prefix_size(126, True) == 1
    assert array_prefix_size(127, True) == 2  # 127 + 1 = 128 needs a second varint byte


def test_fixed_width_values_are_checked() -> None:
    with pytest.raises(CodecFailure, match="out of range"):
        INT8.write(bytearray(), 128, False)
    with pytest.raises(CodecFailure, match="must be an int"):
        INT32.write(bytearray(), True, False)
    with pytest.raises(CodecFailure, match="16 bytes"):
        UUID.write(bytearray(), b"short", False)


def test_reader_reports_truncation_with_offset() -> None:
    r = Reader(b"\x00\x00")
    with pytest.raises(CodecFailure, match="needs 4 bytes at offset 0, 2 left"):
        INT32.read(r, False)


def test_reader_rejects_negative_lengths_other_than_null() -> None:
    with pytest.raises(CodecFailure, match="negative length -2"):
        Reader(b"\xff\xfe").length(False, struct.Struct(">h"))
