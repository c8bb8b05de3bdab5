"""The output folder of a sweep or a fuzz session: refuse folders rig did not make, keep earlier
results beside the new ones under a dated name (as `rig run` does), never delete them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from rig.errors import RunDirError


def prepare_out(out: Path, marker: str, what: str) -> Path | None:
    """Make `out` empty and ready; return where an earlier session's results were moved, if any.

    `marker` is the file a finished session of this kind leaves (sweep.json, fuzz.json).
    """
    if out.exists() and not out.is_dir():
        raise RunDirError(f"{out} exists and is a file; choose another --out")
    previous = None
    if out.is_dir() and any(out.iterdir()):
        if not (out / marker).is_file():
            raise RunDirError(f"{out} exists, is not empty and is not a rig {what} folder; rig "
                              "will not write into it: choose another --out or move it away")
        stamp = dt.datetime.fromtimestamp((out / marker).stat().st_mtime)
        previous = out.with_name(f"{out.name}.previous-{stamp:%Y%m%d-%H%M%S}")
        n = 1
        while previous.exists():
            n += 1
            previous = out.with_name(f"{out.name}.previous-{stamp:%Y%m%d-%H%M%S}-{n}")
        out.rename(previous)
    out.mkdir(parents=True, exist_ok=True)
    return previous
