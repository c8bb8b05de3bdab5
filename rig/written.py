"""Which loose files rig wrote, so that it replaces only those (and any file with --force).

rig knows a file as its own in one of two ways:
- an HTML page carries rig's generator tag in its <head> (rig/report/paths.py);
- any other file (CSV and Parquet exports, `rig protocol fetch --out` bytes) is listed in the
  manifest `.rig-written.json` of its folder with the size and modification time it had when
  rig wrote it. A file changed since (a user edited it) no longer matches and is the user's.

Anything else that exists is refused with one line naming it, unless the command was given
`--force` (`replacing_anything`). A folder or a symlink in the way is refused even then.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import orjson

from rig.errors import RunDirError

__all__ = ["MANIFEST", "check_replace", "is_ours", "record", "replacing_anything"]

MANIFEST = ".rig-written.json"
_force: ContextVar[bool] = ContextVar("rig_replace_anything", default=False)


@contextmanager
def replacing_anything(force: bool = True) -> Iterator[None]:
    """Within this block, files rig did not write may be replaced (the user said --force)."""
    token = _force.set(force)
    try:
        yield
    finally:
        _force.reset(token)


def _manifest(folder: Path) -> dict[str, list[int]]:
    try:
        data = orjson.loads((folder / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _stamp(path: Path) -> list[int] | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def is_ours(path: Path) -> bool:
    """Whether `path` is a regular file listed, as it is now, in its folder's manifest."""
    stamp = _stamp(path)
    return (stamp is not None and path.is_file() and not path.is_symlink()
            and _manifest(path.parent).get(path.name) == stamp)


def check_replace(paths: Iterable[Path], *, also: Callable[[Path], bool] | None = None) -> None:
    """Refuse, before anything is written, to replace any of `paths` that exists and that rig
    did not write (`is_ours`, or `also` for files that carry their own mark)."""
    force = _force.get()
    for path in paths:
        try:
            if not (path.exists() or path.is_symlink()):
                continue
        except OSError as exc:  # a name too long, a loop
            raise RunDirError(f"cannot write {path}: {exc.strerror}") from None
        if path.is_symlink() or not path.is_file():
            raise RunDirError(f"{path} exists and is not a plain file; rig will not replace it: "
                              "move it away or choose another --out")
        if not (force or is_ours(path) or (also is not None and also(path))):
            raise RunDirError(f"{path} exists and was not written by rig (or was changed "
                              "since); rig will not replace it: move it away, choose another "
                              "--out, or pass --force")


def record(paths: Iterable[Path]) -> None:
    """List `paths`, just written, in their folders' manifests (written atomically)."""
    by_folder: dict[Path, list[Path]] = {}
    for path in paths:
        by_folder.setdefault(path.parent, []).append(path)
    for folder, written in by_folder.items():
        files = _manifest(folder)
        for path in written:
            stamp = _stamp(path)
            if stamp is not None:
                files[path.name] = stamp
        data = orjson.dumps({"written_by": "rig", "files": dict(sorted(files.items()))},
                            option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        fd, tmp = tempfile.mkstemp(prefix=f"{MANIFEST}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, folder / MANIFEST)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
