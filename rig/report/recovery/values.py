"""Tolerant readers the recovery section's tables and charts share: a metrics table (None
when missing), a whole number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rig import rundir
from rig.report.inputs import number

__all__ = [
    "Fmt",
    "read_table",
    "to_int",
]

Fmt = Callable[[Any], str]


def _rows(value: Any) -> list[dict[str, Any]]:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def read_table(run_dir: Path, name: str) -> list[dict[str, Any]] | None:
    """A metrics table's rows; None when the file is missing or unreadable (an older run)."""
    try:
        value = orjson.loads(rundir.metric_path(run_dir, name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return _rows(value) if isinstance(value, list) else None


def to_int(value: Any) -> int:
    """`value` as a whole number; 0 when it is not a finite number."""
    n = number(value)
    return int(n) if n is not None else 0
