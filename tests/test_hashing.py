from __future__ import annotations

import pytest

from rig.hashing import fetcher_id, java_string_hash, kafka_abs, murmur2


@pytest.mark.parametrize(("data", "expected"), [
    # The vectors of Kafka's own UtilsTest.testMurmur2.
    (b"21", -973932308), (b"foobar", -790332482), (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971), (b"abc", 479470107)])
def test_murmur2_matches_kafka(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_java_string_hash() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("test-group") == 627841412
    assert kafka_abs(java_string_hash("test-group")) % 50 == 12
    assert java_string_hash("polygenelubricants") == -(1 << 31)  # Integer.MIN_VALUE
    assert kafka_abs(-(1 << 31)) == 0
    assert java_string_hash("é") == 233  # UTF-16 code unit, not UTF-8 bytes
    assert java_string_hash("𝄞") == 31 * 0xD834 + 0xDD1E  # a surrogate pair: two code units


def test_fetcher_id_spreads_partitions_like_abstractfetchermanager() -> None:
    assert {fetcher_id("test", p, 1) for p in range(100)} == {0}
    ids = [fetcher_id("test", p, 4) for p in range(8)]
    base = java_string_hash("test") * 31
    assert ids == [kafka_abs(((base + p + 2**31) % 2**32) - 2**31) % 4 for p in range(8)]
    assert len(set(ids)) == 4
