"""Number formatting helpers of the report."""

from __future__ import annotations

import pytest

from rig.report.format import (
    DASH,
    fmt_by_name,
    fmt_bytes,
    fmt_int,
    fmt_number,
    fmt_rate,
    fmt_ratio,
    human_bytes,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12031, "12,031"),
        (0, "0"),
        (1_234_567.6, "1,234,568"),
        (None, DASH),
        (True, DASH),
        (float("nan"), DASH),
        ("12", DASH),
    ],
)
def test_fmt_int(value: object, text: str) -> None:
    assert fmt_int(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (33, "33 B"),
        (1023, "1,023 B"),
        (1024, "1.00 KiB"),
        (48_124, "47.0 KiB"),
        (12_031, "11.7 KiB"),
        (150 * 1024, "150 KiB"),
        (3 * 1024**3, "3.00 GiB"),
        (None, DASH),
    ],
)
def test_human_bytes(value: object, text: str) -> None:
    assert human_bytes(value) == text


def test_fmt_bytes_adds_the_human_size_from_one_kib() -> None:
    assert fmt_bytes(33) == "33"
    assert fmt_bytes(12_031) == "12,031 (11.7 KiB)"
    assert fmt_bytes(1_048_576) == "1,048,576 (1.00 MiB)"
    assert fmt_bytes(None) == DASH


def test_fmt_rate() -> None:
    assert fmt_rate(48_124.0) == "48,124 B/s (47.0 KiB/s)"
    assert fmt_rate(212.0) == "212 B/s"
    assert fmt_rate(2.5) == "2.5 B/s"
    assert fmt_rate(0.0) == "0 B/s"
    assert fmt_rate(None) == DASH


def test_fmt_ratio_matches_the_seed_measurement() -> None:
    assert fmt_ratio(12_031 / 33) == "364.6×"
    assert fmt_ratio(1.0) == "1.0×"
    assert fmt_ratio(12_345.67) == "12,345.7×"
    assert fmt_ratio(None) == DASH


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (12031, "12,031"),
        (0.0526, "0.0526"),
        (2.0, "2"),
        (123456.78, "123,456.8"),
        (None, DASH),
        (True, "true"),
        ("n/a", "n/a"),
    ],
)
def test_fmt_number(value: object, text: str) -> None:
    assert fmt_number(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"UNKNOWN_LEADER_EPOCH": 4}, "4 (unknown leader epoch 4)"),
        ({"A": 1, "C": 1200, "B": 1}, "1,202 (c 1,200, a 1, b 1)"),  # largest first, then by name
        ({}, "0"),
        (None, DASH),
        ({"A": "x"}, DASH),
    ],
)
def test_fmt_by_name(value: object, text: str) -> None:
    assert fmt_by_name(value) == text
