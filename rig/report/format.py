"""Number formatting for the report: thousands separators, IEC units, ratios, a dash for unknown."""

from __future__ import annotations

import math
import re

__all__ = [
    "DASH",
    "fmt_by_name",
    "fmt_bytes",
    "fmt_change",
    "fmt_int",
    "fmt_ms_spread",
    "fmt_number",
    "fmt_rate",
    "fmt_ratio",
    "fmt_seconds",
    "human_bytes",
    "keep_units",
    "relative_change",
]

DASH = "—"  # shown for a value that is missing or undefined (no requests, no duration)
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_UNIT_GAP = re.compile(r"(?<=\d) (?=(?:[KMGTPE]iB|B)(?:/s)?\b)")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def fmt_int(value: object) -> str:
    """12031 → "12,031"; floats are rounded to the nearest integer; None → "—"."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    return f"{round(value):,}"  # type: ignore[call-overload]


def fmt_by_name(counts: object) -> str:
    """A count per name, as its total and the names in words, the largest first:
    {"NOT_LEADER": 1, "UNKNOWN_EPOCH": 3} → "4 (unknown epoch 3, not leader 1)" (a table
    cell on a phone wraps between words, never inside a 20-letter name); {} → "0"; anything
    else a dash."""
    if not isinstance(counts, dict) or not all(_is_number(n) for n in counts.values()):
        return DASH
    if not counts:
        return "0"
    ranked = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    named = ", ".join(f"{str(name).replace('_', ' ').lower()} {fmt_int(n)}"
                      for name, n in ranked)
    return f"{fmt_int(sum(counts.values()))} ({named})"


def fmt_usd(value: object) -> str:
    """US dollars: 1234.5 → "$1,234.50"; below a cent, two significant digits ("$0.0042")."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    amount = float(value)  # type: ignore[arg-type]
    return f"${amount:,.2f}" if abs(amount) >= 0.01 or amount == 0 else f"${amount:.2g}"


def human_bytes(value: object) -> str:
    """Bytes in IEC units with three significant digits: 48124 → "47.0 KiB"."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    size = float(value)  # type: ignore[arg-type]
    unit = 0
    while abs(size) >= 1024 and unit < len(_UNITS) - 1:
        size /= 1024
        unit += 1
    if unit == 0:
        return f"{round(size):,} B"
    digits = 2 if abs(size) < 10 else 1 if abs(size) < 100 else 0
    return f"{size:,.{digits}f} {_UNITS[unit]}"


def fmt_bytes(value: object) -> str:
    """Exact bytes, plus the human size when it is 1 KiB or more: "1,048,576 (1.00 MiB)"."""
    exact = fmt_int(value)
    if exact == DASH or abs(float(value)) < 1024:  # type: ignore[arg-type]
        return exact
    return f"{exact} ({human_bytes(value)})"


def fmt_rate(value: object) -> str:
    """Bytes per second, exact and human: "48,124 B/s (47.0 KiB/s)"."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    rate = float(value)  # type: ignore[arg-type]
    exact = f"{rate:,.1f}" if 0 < abs(rate) < 10 and rate != round(rate) else f"{round(rate):,}"
    if abs(rate) < 1024:
        return f"{exact} B/s"
    return f"{exact} B/s ({human_bytes(rate)}/s)"


def fmt_ratio(value: object) -> str:
    """364.5757… → "364.6×"; large ratios get thousands separators."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    return f"{float(value):,.1f}×"  # type: ignore[arg-type]


def fmt_number(value: object) -> str:
    """A measured value of unknown kind: ints with separators, floats to 4 significant digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == round(value) and abs(value) < 1e15:
            return f"{round(value):,}"
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.1f}"
    if value is None:
        return DASH
    return str(value)


def fmt_seconds(value: object) -> str:
    """Seconds to the millisecond, as summary.json holds partition-seconds and recovery times:
    30.009828 → "30.010", 36.0 → "36.000" (every cell of a row with the same three decimals)."""
    if not _is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        return DASH
    return f"{float(value):,.3f}"  # type: ignore[arg-type]


def fmt_ms_spread(spread: object) -> str:
    """A {min, p50, max} of milliseconds in seconds: "7.000 / 8.000 / 9.000", or one value when
    all three are equal; a dash when it is not one."""
    if not isinstance(spread, dict):
        return DASH
    values = [spread.get(k) for k in ("min", "p50", "max")]
    if not all(_is_number(x) for x in values):
        return DASH
    low, mid, high = (float(x) for x in values)  # type: ignore[arg-type]
    if not all(math.isfinite(x) for x in (low, mid, high)):
        return DASH
    if low == high:
        return f"{low / 1000:,.3f}"
    return f"{low / 1000:,.3f} / {mid / 1000:,.3f} / {high / 1000:,.3f}"


def relative_change(base: object, value: object) -> float | None:
    """(value - base) / |base|; ±inf when base is 0 and value is not; None when either is not
    a number."""
    if not (_is_number(base) and _is_number(value)):
        return None
    b, v = float(base), float(value)  # type: ignore[arg-type]
    if not (math.isfinite(b) and math.isfinite(v)):
        return None
    if b == 0:
        return 0.0 if v == 0 else math.copysign(math.inf, v)
    return (v - b) / abs(b)


def fmt_change(change: float | None) -> str:
    """A relative change for a comparison: "=", "+3.2 %", "−0.04 %", "×12.5", "new" (from 0).

    Three significant digits, a real minus sign, and a factor instead of a percentage once
    something grew more than tenfold (+1,150 % reads worse than ×12.5).
    """
    if change is None or math.isnan(change):
        return DASH
    if change == 0:
        return "="
    if math.isinf(change):
        return "from 0"
    if change >= 9:
        return f"×{change + 1:,.1f}"
    pct = change * 100
    digits = max(0, 2 - math.floor(math.log10(abs(pct)))) if abs(pct) < 100 else 0
    text = f"{abs(pct):,.{min(digits, 3)}f}"
    return f"{'+' if pct > 0 else '−'}{text} %"


def keep_units(text: str) -> str:
    """Glue each number to its unit with a no-break space: "11.7 KiB" never splits on a phone."""
    return _UNIT_GAP.sub("\u00a0", text)
