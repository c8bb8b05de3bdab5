from __future__ import annotations

import pytest

from rig import units


@pytest.mark.parametrize(("text", "ms"), [
    ("500ms", 500), ("10s", 10_000), ("2m", 120_000), ("1h", 3_600_000), ("7d", 604_800_000),
    ("1.5s", 1500), (250, 250), ("  3 s ", 3000)])
def test_durations(text: str | int, ms: int) -> None:
    assert units.duration_ms(text) == ms


@pytest.mark.parametrize(("text", "n"), [
    ("4KiB", 4096), ("1GiB", 1 << 30), ("1MB", 1_000_000), ("100B", 100), (7, 7)])
def test_sizes(text: str | int, n: int) -> None:
    assert units.size_bytes(text) == n


@pytest.mark.parametrize(("text", "bps"), [
    ("125MiB/s", 125 * 1024 * 1024), ("10Gbit/s", 1.25e9), ("8bps", 1.0), (1000, 1000.0)])
def test_bandwidths(text: str | int, bps: float) -> None:
    assert units.bandwidth_bytes_per_s(text) == bps


@pytest.mark.parametrize("bad", ["10 sec", "ms", "1.5ms2", True, "0.5us"])
def test_bad_durations_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        units.duration_ms(bad)  # type: ignore[arg-type]


def test_microseconds_and_formatting() -> None:
    assert units.duration_us("250us") == 250
    assert units.duration_us(0.5) == 500
    assert units.format_duration_ms(600_000) == "10m"
    assert units.format_duration_ms(1500) == "1500ms"
