"""Where report files go: safe file names from user text, no escape from the output folder,
atomic writes, and no overwriting a file rig did not write.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import quote

from rig import written
from rig.errors import RunDirError
from rig.promotion import write_error

__all__ = [
    "GENERATOR_MARK",
    "child_path",
    "href",
    "resolve_out",
    "safe_name",
    "write_text_atomic",
]

GENERATOR_MARK = '<meta name="generator" content="rig '  # in the <head> of every page rig writes
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120  # characters of a generated file name, before the extension


def safe_name(text: str, *, fallback: str = "run", limit: int = MAX_NAME) -> str:
    """A file-name fragment from any text: letters, digits, `.`, `_`, `-` only, no leading dot.

    Anything else becomes `-`, so "../x" can never name a parent folder; an over-long name is
    cut and given a short hash of the whole text, so two long names stay different.
    """
    name = _UNSAFE.sub("-", text).strip("-.")
    name = re.sub(r"[-.]{2,}", "-", name) or fallback  # "x/../y" → "x-y", no ".." at all
    if len(name) > limit:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = f"{name[: limit - 9].rstrip('-.')}-{digest}"
    return name


def child_path(folder: Path, name: str) -> Path:
    """folder/name, refusing a name that is not one plain file name inside `folder`."""
    bad = (
        not name
        or name in {".", ".."}
        or "/" in name
        or "\\" in name
        or "\0" in name
        or Path(name).is_absolute()
    )
    path = Path(folder) / name
    if bad or path.resolve().parent != Path(folder).resolve():
        raise RunDirError(f"refusing to write {name!r}: it would land outside {folder}")
    return path


def resolve_out(out: Path | None, folder: Path, default_name: str) -> Path:
    """The file to write: `out` as given, `default_name` inside `out` when that is an existing
    folder, or `default_name` inside `folder` when `out` is None."""
    if out is None:
        return child_path(folder, default_name)
    try:
        folder_given = out.is_dir()
    except OSError:  # a name too long: writing it says so in one line
        folder_given = False
    return child_path(out, default_name) if folder_given else out


def _written_by_rig(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return GENERATOR_MARK.encode() in head


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` so readers see the old file or the new one, never half of one.

    Refuses to replace a file rig did not write (a page without rig's generator tag), unless
    --force (rig/written.py): nothing a user wrote is lost to a mistyped --out.
    """
    written.check_replace([path], also=_written_by_rig)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # a file where a folder should be, a name too long, read-only
        raise write_error(exc, path) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is meant to be shared
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and (problem := write_error(exc, path)) is not exc:
            raise problem from None
        raise
    return path


def href(page: Path, target: Path) -> str:
    """A relative link from the page `page` to `target`, percent-encoded (never a scheme)."""
    rel = os.path.relpath(Path(target).resolve(), Path(page).resolve().parent)
    return quote(Path(rel).as_posix(), safe="/")
