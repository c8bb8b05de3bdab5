"""The output folder of a sweep or a fuzz session: refuse folders rig did not make, keep earlier
results beside the new ones under a dated name (as `rig run` does), never delete them. The
folder is filled in place, by the mechanism `rig run` promotes with (rig/promotion.py): mount
points, symlinks and concurrent sessions behave the same."""

from __future__ import annotations

from pathlib import Path

from rig import promotion


def prepare_out(out: Path, marker: str, what: str) -> Path | None:
    """Make `out` empty and ready; return where an earlier session's results were moved, if any.

    `marker` is the file a finished session of this kind leaves (sweep.json, fuzz.json).
    """
    def ours(path: Path) -> bool:
        return (path / marker).is_file()

    _, previous = promotion.set_aside(out, ours, marker, f"{what} folder")
    return previous
