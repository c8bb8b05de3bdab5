"""`rig partition-for`: keys and group ids land where Kafka puts them, checked against a
separate port of Kafka's Java code written here (not rig.hashing)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app

runner = CliRunner()


def _java_int(x: int) -> int:
    """Java's int overflow: keep 32 bits, two's complement."""
    return (x + 2**31) % 2**32 - 2**31


def _unsigned_shift(x: int, n: int) -> int:
    """Java's >>> on an int."""
    return (x % 2**32) >> n


def java_murmur2(data: bytes) -> int:
    """A line-by-line port of Kafka's Utils.murmur2 with Java int semantics (signed bytes,
    wrapping multiplication, >>>), kept apart from rig.hashing on purpose."""
    length = len(data)
    seed, m, r = _java_int(0x9747B28C), 0x5BD1E995, 24
    h = _java_int(seed ^ length)
    signed = [b - 256 if b > 127 else b for b in data]  # Java bytes are signed
    for i in range(length // 4):
        i4 = i * 4
        k = ((signed[i4] & 0xFF) + ((signed[i4 + 1] & 0xFF) << 8)
             + ((signed[i4 + 2] & 0xFF) << 16) + ((signed[i4 + 3] & 0xFF) << 24))
        k = _java_int(k)
        k = _java_int(k * m)
        k = _java_int(k ^ _unsigned_shift(k, r))
        k = _java_int(k * m)
        h = _java_int(h * m)
        h = _java_int(h ^ k)
    rest = length % 4
    base = length & ~3
    if rest == 3:
        h = _java_int(h ^ ((signed[base + 2] & 0xFF) << 16))
    if rest >= 2:
        h = _java_int(h ^ ((signed[base + 1] & 0xFF) << 8))
    if rest >= 1:
        h = _java_int(h ^ (signed[base] & 0xFF))
        h = _java_int(h * m)
    h = _java_int(h ^ _unsigned_shift(h, 13))
    h = _java_int(h * m)
    return _java_int(h ^ _unsigned_shift(h, 15))


def java_hash_code(text: str) -> int:
    """String.hashCode over UTF-16 code units."""
    h = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = _java_int(31 * h + int.from_bytes(units[i:i + 2], "little"))
    return h


def invoke(*args: object) -> Any:
    return runner.invoke(app, ["partition-for", *map(str, args)])


def as_json(*args: object) -> dict[str, Any]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


@pytest.mark.parametrize(("data", "expected"), [
    # Kafka's UtilsTest.testMurmur2 vectors: they vouch for the port below.
    (b"21", -973932308), (b"foobar", -790332482), (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971), (b"abc", 479470107)])
def test_the_ported_murmur2_matches_kafkas_vectors(data: bytes, expected: int) -> None:
    assert java_murmur2(data) == expected


KEYS = ["21", "foobar", "abc", "", "a", "ab", "order-42", "user:1001", "ключ", "键🔑", "x" * 257,
        "a-little-bit-longer-string"]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("partitions", [1, 3, 10, 50, 1000])
def test_keys_go_where_kafkas_default_partitioner_puts_them(key: str, partitions: int) -> None:
    h = java_murmur2(key.encode("utf-8"))
    doc = as_json("--key", key, "--partitions", partitions)
    assert doc["murmur2"] == h
    assert doc["partition"] == (h & 0x7FFFFFFF) % partitions


def test_known_key_placements_and_the_text_form() -> None:
    assert as_json("--key", "foobar", "--partitions", 10)["partition"] == 6
    assert as_json("--key", "foobar", "--partitions", 50)["partition"] == 16
    result = invoke("--key", "foobar", "--partitions", 10)
    assert result.output.startswith("key 'foobar' → partition 6 of 10")


def test_a_group_lands_on_its_offsets_partition() -> None:
    doc = as_json("--group", "test-group")
    assert (doc["partition"], doc["partitions"], doc["topic"]) == (12, 50, "__consumer_offsets")
    assert doc["hash_code"] == java_hash_code("test-group") == 627841412
    assert invoke("--group", "test-group").output.startswith(
        "group 'test-group' → __consumer_offsets partition 12 of 50")


@pytest.mark.parametrize("group", ["test-group", "payments", "", "g-ü", "𝄞-group",
                                   "polygenelubricants", "console-consumer-12345"])
@pytest.mark.parametrize("partitions", [50, 7, 1])
def test_groups_follow_utils_abs_of_string_hash_code(group: str, partitions: int) -> None:
    h = java_hash_code(group)
    expected = (0 if h == -2**31 else abs(h)) % partitions  # Utils.abs(MIN_VALUE) is 0
    assert as_json("--group", group, "--partitions", partitions)["partition"] == expected


def test_integer_min_value_hash_is_mapped_to_zero_not_negative() -> None:
    assert java_hash_code("polygenelubricants") == -2**31
    doc = as_json("--group", "polygenelubricants")
    assert (doc["abs"], doc["partition"]) == (0, 0)


@pytest.mark.parametrize(("args", "message"), [
    (["--key", "k"], "--key needs --partitions"),
    (["--key", "k", "--group", "g"], "exactly one"),
    ([], "exactly one"),
    (["--key", "k", "--partitions", 0], "must be ≥ 1"),
    (["--group", "g", "--partitions", -3], "must be ≥ 1"),
])
def test_bad_arguments_exit_2_with_one_line(args: list[Any], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
