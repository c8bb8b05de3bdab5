"""Small file helpers for the analysis stage: read run.json, write metric tables atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

__all__ = ["read_json", "write_json_atomic"]


def read_json(path: Path) -> Any:
    """Parse a JSON file; None when it does not exist (a partial run dir is still analysable)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return orjson.loads(data)


def write_json_atomic(path: Path, value: Any) -> None:
    """Write `value` as JSON so readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE))
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
