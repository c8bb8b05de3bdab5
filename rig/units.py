"""Human units in scenarios: durations (`500ms`, `10s`, `2m`, `1h`) and sizes (`4KiB`, `1GiB`).

Durations become integer milliseconds, sizes integer bytes; bandwidths (`125MiB/s`, `1Gbit/s`)
become bytes per second. Plain numbers are already in the base unit.
"""

from __future__ import annotations

import math
import re

_DURATION_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
                "d": 86_400_000}
_SIZE = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
         "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_BITS = {"bit": 1, "kbit": 1000, "mbit": 1000**2, "gbit": 1000**3,
         "bps": 1, "kbps": 1000, "mbps": 1000**2, "gbps": 1000**3}

_NUMBER_UNIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*")  # used with fullmatch

DURATION_PATTERN = r"^\s*\d+(\.\d+)?\s*(us|ms|s|m|min|h|d)\s*$"
SIZE_PATTERN = r"^\s*\d+(\.\d+)?\s*([KMGT]i?B|B)\s*$"
BANDWIDTH_PATTERN = r"^\s*\d+(\.\d+)?\s*(([KMGT]i?B|B)/s|[KMG]?bit/s|[KMG]?bps)\s*$"


def _split(text: str, what: str) -> tuple[float, str]:
    match = _NUMBER_UNIT.fullmatch(text)
    if not match:
        raise ValueError(f"{_short(text)} is not a {what}")
    return _float(match.group(1), text), match.group(2)


_LARGEST = 2**63 - 1  # every duration, size and bandwidth fits a Java long, as in Kafka


def _short(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:40]) + f"… ({len(text)} characters)"


def _float(value: int | float | str, text: str) -> float:
    """`value` as a finite float no larger than a Java long; ValueError otherwise."""
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or abs(number) > _LARGEST:
        raise ValueError(f"{_short(text)} is too large (at most {_LARGEST:,} in the base unit)")
    return number


def _whole(value: float, text: str, what: str) -> int:
    value = _float(value, text)
    if value != int(value):
        raise ValueError(f"{_short(text)} is not a whole number of {what}")
    return int(value)


def _duration(value: int | float | str, per_ms: int, unit_name: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        return _whole(_float(value, str(value)) * per_ms, str(value), unit_name)
    number, unit = _split(value, "duration (e.g. 500ms, 10s, 2m, 1h)")
    factor = _DURATION_MS.get(unit or "ms")
    if factor is None:
        raise ValueError(f"{value!r}: unknown duration unit {unit!r} (use us, ms, s, m, h or d)")
    return _whole(round(number * factor * per_ms, 6), value, unit_name)


def duration_ms(value: int | float | str) -> int:
    """Milliseconds in `value`: a number of ms, or a string such as `500ms`, `10s`, `2m`, `1h`."""
    return _duration(value, 1, "milliseconds")


def seconds_ms(value: int | float | str) -> int:
    """Milliseconds in `value` for a key Kafka counts in seconds: a plain number is seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _duration(value, 1000, "milliseconds")
    return duration_ms(value)


def duration_us(value: int | float | str) -> int:
    """Microseconds in `value`: a number of ms, or a string such as `250us`, `1ms`, `2s`."""
    return _duration(value, 1000, "microseconds")


def size_bytes(value: int | float | str) -> int:
    """Bytes in `value`: a number of bytes, or a string such as `4KiB`, `1GiB`, `10MB`."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int | float):
        return _whole(value, str(value), "bytes")
    number, unit = _split(value, "size (e.g. 4KiB, 1GiB)")
    factor = _SIZE.get((unit or "b").lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown size unit {unit!r} "
                         "(use B, KiB, MiB, GiB, KB, MB, GB)")
    return _whole(number * factor, value, "bytes")


def bandwidth_bytes_per_s(value: int | float | str) -> float:
    """Bytes per second in `value`: a number, `125MiB/s`, `1Gbit/s` or `10Gbps`; more than 0
    (a link that carries nothing is a network partition or `loss: 1`, not a bandwidth)."""
    rate = _bandwidth(value)
    if rate <= 0:
        raise ValueError(f"{_short(str(value))}: a bandwidth must be more than 0 (to cut a link, "
                         "use a network-partition fault or `loss: 1`)")
    return rate


def _bandwidth(value: int | float | str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a bandwidth")
    if isinstance(value, int | float):
        return _float(value, str(value))
    text = value.strip()
    if text.endswith("/s") and not text.lower().endswith("bit/s"):
        return float(size_bytes(text[:-2]))
    number, unit = _split(text.replace("/s", ""), "bandwidth (e.g. 125MiB/s, 10Gbit/s)")
    factor = _BITS.get(unit.lower().replace("/s", "") if unit else "")
    if factor is None:
        raise ValueError(f"{value!r}: unknown bandwidth unit (use e.g. 125MiB/s or 10Gbit/s)")
    return number * factor / 8


def format_duration_ms(ms: int) -> str:
    """The shortest exact human form of `ms` (`600000` → `10m`)."""
    for unit, factor in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % factor == 0:
            return f"{ms // factor}{unit}"
    return f"{ms}ms"
