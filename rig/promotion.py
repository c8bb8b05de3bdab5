"""Putting finished results in place: the one mechanism `rig run`, `rig sweep` and `rig fuzz`
share for their output folder. Nothing here knows what a run holds; callers pass the test
"is this folder an earlier result of mine?".

How a target is filled (see `Target`):
- a symlink is followed: the results land where it points (created when it dangles);
- a target that can be renamed is *replaced*: the new results are built in a staging folder
  beside it and renamed into place (atomic); an earlier result is renamed aside first, to
  `<name>.previous-<date>`;
- a mount point (Docker's `-v …:/out`), which no rename can replace, is *filled in place*:
  staging, lock and kept results live inside it, and the entries are moved in one by one; an
  earlier result is moved into `<name>.previous-<date>/` inside it. A rename that fails with
  EBUSY, EXDEV or EPERM (a mount point `os.path.ismount` cannot see) falls back to the same.
- one lock file per target (`.<name>.lock`, an flock) lets one finisher at a time compare and
  move, so two runs finishing together both land: the later one in the target, the earlier one
  as `<name>.previous-<date>`.
- a staging folder `.<name>.staging-<pid>-<hex>` has an owner file beside it
  (`….owner`) that its process holds an flock on for as long as it lives. The kernel drops
  that lock when the process dies, however it dies (kill -9 included), so the next rig that
  can take it knows the owner is gone and removes the folder. A folder without an owner file
  (another tool's, or an older rig's) is left alone.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rig.errors import RunDirError

__all__ = ["MAX_NAME", "Staging", "Target", "bookkeeping", "clean_stale", "locate",
           "set_aside", "stage", "write_error"]

# The longest folder name rig accepts for a target: it adds `.previous-YYYYmmdd-HHMMSS-NN`
# beside it and `.staging-<pid>-<hex>.owner` for its work, within the file system's 255.
MAX_NAME = 200
_NAME_MAX = 255  # what Linux, macOS and Windows file systems take for one name
# Errors of renaming a folder that is a mount point, or of renaming across file systems: the
# target is then filled in place instead.
_CANNOT_RENAME = {errno.EBUSY, errno.EXDEV, errno.EPERM, errno.EINVAL}
# Errors that say the output file system refuses to take the results: the user's to fix.
_NO_WRITE = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM,
             errno.ENAMETOOLONG, errno.ENOTDIR, errno.EEXIST, errno.ELOOP}
_KEPT = re.compile(r".+\.(previous|failed|finished)-\d{8}-\d{6}(-\d+)?")
_STAGING = re.compile(r"\..+\.staging-\d+-[0-9a-f]{8}(\.owner(-new)?)?")
_LOCK = re.compile(r"\..+\.lock")

Ours = Callable[[Path], bool]


def bookkeeping(name: str) -> bool:
    """Whether a folder entry is rig's own bookkeeping (a staging folder, an owner or lock
    file, an earlier result kept under a dated name) rather than part of a result."""
    return bool(_KEPT.fullmatch(name) or _STAGING.fullmatch(name) or _LOCK.fullmatch(name))


@dataclass(frozen=True)
class Target:
    """Where results go. `path` is the folder itself (symlinks followed); `in_place` says it is
    filled in place (a mount point); `home` holds its staging, lock and kept results."""

    given: Path
    path: Path
    in_place: bool

    @property
    def name(self) -> str:
        return self.path.name or "out"

    @property
    def home(self) -> Path:
        return self.path if self.in_place else self.path.parent

    @property
    def lock_path(self) -> Path:
        return self.home / f".{self.name}.lock"

    def entries(self) -> list[Path]:
        """What the target holds besides rig's bookkeeping (which only a target filled in
        place holds, also one `os.path.ismount` cannot see)."""
        try:
            found = sorted(self.path.iterdir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise write_error(exc, self.given) from None
        return [p for p in found if not bookkeeping(p.name)]

    def kept_path(self, kind: str, stamp: dt.datetime) -> Path:
        """A free `<name>.<kind>-<date>[-n]` in `home`: how earlier or failed results are kept."""
        base = f"{self.name}.{kind}-{stamp:%Y%m%d-%H%M%S}"
        path, n = self.home / base, 1
        while path.exists() or path.is_symlink():
            n += 1
            path = self.home / f"{base}-{n}"
        return path


def locate(given: Path) -> Target:
    """Resolve `given` (following symlinks, also dangling ones) and decide how to fill it."""
    path = Path(os.path.realpath(given))
    try:
        in_place = path.is_dir() and os.path.ismount(path)
    except OSError:  # a name too long, a loop: `check` says so
        in_place = False
    return Target(given=given, path=path, in_place=in_place)


def check(target: Target, ours: Ours, what: str) -> None:
    """Refuse, before any work, a target rig must not or cannot fill: a file, a path below a
    file, a name too long, or a folder holding anything but an earlier result (`ours`)."""
    given = target.given
    if len(target.name) > MAX_NAME or any(len(p) > _NAME_MAX for p in target.path.parts):
        longest = max(len(part) for part in target.path.parts)
        raise RunDirError(f"{given}: a folder name is {longest} characters long; rig takes at "
                          f"most {MAX_NAME} (it keeps earlier results beside it under longer "
                          "names): choose a shorter --out")
    for part in target.path.parents:
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                raise RunDirError(f"{given}: {part} is a file, not a folder; choose another "
                                  "--out")
            break
    if target.path.exists() and not target.path.is_dir():
        raise RunDirError(f"{given} exists and is a file; choose another --out")
    if target.entries() and not ours(target.path):
        raise RunDirError(f"{given} exists, is not empty and is not a rig {what}; rig "
                          "will not write into it: choose another --out or move it away")


def write_error(exc: OSError, given: Path) -> OSError:
    """`exc` as the one-line RunDirError to show when the file system refuses the results
    (full, read-only, no permission, a name too long), else `exc` itself: a bug to see."""
    if exc.errno not in _NO_WRITE:
        return exc
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(given) else ""
    return RunDirError(f"cannot write the results to {given}: {exc.strerror}{where}")


@contextmanager
def _locked(target: Target) -> Iterator[None]:
    """Hold the target's lock file. A file system without locks (some network or FUSE ones)
    goes unlocked rather than failing the run."""
    try:
        handle = open(target.lock_path, "a")  # noqa: SIM115 - held for the block
    except OSError as exc:
        raise write_error(exc, target.given) from None
    with handle:
        with suppress(OSError):
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _stamp(folder: Path, marker: str) -> dt.datetime:
    try:
        return dt.datetime.fromtimestamp((folder / marker).stat().st_mtime)
    except OSError:
        return dt.datetime.now()


def _move(source: Path, dest: Path) -> None:
    """Rename, or copy and delete across file systems."""
    try:
        source.rename(dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.move(str(source), str(dest))


def _marker_last(entries: list[Path], marker: str) -> list[Path]:
    """`entries` with the marker moved last: a folder that holds the marker holds it all."""
    return sorted(entries, key=lambda p: p.name == marker)


def _set_aside_in_place(target: Target, entries: list[Path], marker: str) -> Path:
    """Move an earlier result's entries into `<name>.previous-<date>/` inside the target."""
    previous = target.kept_path("previous", _stamp(target.path, marker))
    previous.mkdir()
    for entry in sorted(entries, key=lambda p: p.name != marker):  # its marker first
        entry.rename(previous / entry.name)
    return previous


def _make_room(target: Target, ours: Ours, marker: str, what: str) -> tuple[Target, Path | None]:
    """Under the lock: set an earlier result aside and leave the target absent (replaced) or
    empty (in place). Returns the target as it must be filled, and where the earlier went."""
    entries = target.entries()
    if entries and not ours(target.path):
        raise RunDirError(f"{target.given} was filled by something else while rig ran and is "
                          f"not a rig {what}")
    if target.in_place:
        return target, _set_aside_in_place(target, entries, marker) if entries else None
    if not target.path.exists():
        return target, None
    # An empty folder is filled in place: it keeps its owner, mode and any shell inside it.
    in_place = Target(target.given, target.path, in_place=True)
    if not entries:
        return in_place, None
    try:
        previous = target.kept_path("previous", _stamp(target.path, marker))
        target.path.rename(previous)
        return target, previous
    except OSError as exc:
        if exc.errno not in _CANNOT_RENAME:
            raise
    # A mount point `os.path.ismount` missed (a bind mount of the same file system): the
    # earlier result is kept inside it, and the new one moved in.
    return in_place, _set_aside_in_place(in_place, entries, marker)


def set_aside(given: Path, ours: Ours, marker: str, what: str) -> tuple[Target, Path | None]:
    """Make `given` an empty folder ready to write into (for results written in place, like a
    sweep's); return it and where an earlier result was kept, if there was one."""
    target = locate(given)
    check(target, ours, what)
    clean_stale(target)
    try:
        target.home.mkdir(parents=True, exist_ok=True)
        with _locked(target):
            target, previous = _make_room(target, ours, marker, what)
            target.path.mkdir(exist_ok=True)
    except OSError as exc:
        raise write_error(exc, given) from None
    return target, previous


@dataclass
class Staging:
    """A folder where results are built before they are put in place; see the module's notes
    on its owner file."""

    target: Target
    path: Path
    _owner: IO[bytes] | None = field(default=None, repr=False)

    @property
    def owner_path(self) -> Path:
        return self.path.with_name(self.path.name + ".owner")

    def _release(self) -> None:
        if self._owner is not None:
            self._owner.close()
            self._owner = None
        self.owner_path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Remove the staging folder (a run stopped or failed: nothing to keep)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._release()

    def keep(self, kind: str) -> Path:
        """Keep the staging folder, visible, as `<name>.<kind>-<date>` beside the target."""
        kept = self.target.kept_path(kind, dt.datetime.now())
        try:
            self.path.rename(kept)
        except OSError:
            return self.path
        self._release()
        return kept

    def promote(self, ours: Ours, marker: str, what: str) -> Path | None:
        """Put the finished results in place; return where an earlier result was kept.

        Never strands them: if the file system refuses, they are kept, visible, as
        `<name>.finished-<date>` and the RunDirError raised says so.
        """
        try:
            with _locked(self.target):
                target, previous = _make_room(self.target, ours, marker, what)
                if target.in_place:
                    for entry in _marker_last(list(self.path.iterdir()), marker):
                        _move(entry, target.path / entry.name)
                    self.path.rmdir()
                else:
                    self.path.rename(target.path)
        except (OSError, RunDirError) as exc:
            kept = self.keep("finished")
            reason = exc if isinstance(exc, RunDirError) else write_error(exc, self.target.given)
            raise RunDirError(f"{reason}; the finished results are kept in {kept}") from None
        self._release()
        return previous


def stage(given: Path) -> Staging:
    """A new staging folder for results that will go to `given`, owned by this process; stale
    staging folders of processes that are gone are removed on the way."""
    target = locate(given)
    pid = os.getpid()
    try:
        target.home.mkdir(parents=True, exist_ok=True)
        clean_stale(target)
        path = target.home / f".{target.name}.staging-{pid}-{secrets.token_hex(4)}"
        staging = Staging(target, path)
        # Locked under a name no cleaner looks at, then renamed: a cleaner never finds the
        # owner file unlocked while its process lives.
        fresh = staging.owner_path.with_name(staging.owner_path.name + "-new")
        staging._owner = open(fresh, "xb")  # noqa: SIM115 - held while the process lives
        try:
            with suppress(OSError):  # no locks here: the folder is then never taken for stale
                fcntl.flock(staging._owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
            staging._owner.write(f"rig process {pid}, started "
                                 f"{dt.datetime.now():%Y-%m-%d %H:%M:%S}\n".encode())
            staging._owner.flush()
            fresh.rename(staging.owner_path)
            path.mkdir()
        except OSError:
            # No folder, so no owner file either: closed and removed now, not left locked
            # until the collector closes it (a second run in this process could not clean it).
            staging._release()
            fresh.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise write_error(exc, given) from None
    return staging


def clean_stale(target: Target) -> list[Path]:
    """Remove the staging folders in `target`'s home whose owner process is gone; return them.

    The owner is gone when its owner file's lock can be taken; a file system that cannot lock
    says nothing, and then nothing is removed.
    """
    removed = []
    try:
        owners = [p for p in target.home.iterdir()
                  if p.name.endswith(".owner") and _STAGING.fullmatch(p.name)]
    except OSError:
        return []
    for owner_path in owners:
        try:
            handle = open(owner_path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            continue
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner lives (or locks say nothing here)
            folder = owner_path.with_name(owner_path.name.removesuffix(".owner"))
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                owner_path.unlink(missing_ok=True)
                removed.append(folder)
    return removed
