"""A class-data-sharing archive for Spark's JVM: the classes its start-up and rig's analysis load,
mapped from one file instead of read from some 300 jars and verified one by one (the JDK's
AppCDS; JEP 350 dynamic archives, JDK 13+).

On a loaded 2-core machine Spark's start-up went from 13.0–15.2 s to 4.6–5.5 s with the archive,
and the first analysis after it from 19.6–23.2 s to 15.5 s (issue 19).

The archive is made once per machine (and per Java and PySpark install), in the background:
when a process that ran Spark without one exits, it starts
`python -m rig.commands.train_class_archive`, detached and at low priority, which runs a small
scenario through rig's analysis with the JVM option -XX:ArchiveClassesAtExit, waits for the JVM
to write the archive as it exits, and moves it into place (one atomic rename, so no JVM ever
maps a half-written file). A JVM that cannot use an
archive (another JDK build, another class path) ignores it, as -Xshare:auto does.

It lives in $XDG_CACHE_HOME/rig/spark-cds (default ~/.cache/rig/spark-cds), about 180 MB.
RIG_SPARK_CDS=off turns it off (no archive used, none made).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

__all__ = ["archive_path", "jvm_options", "start_training", "train_into"]

_ENV = "RIG_SPARK_CDS"
_TRAIN = "train:"  # RIG_SPARK_CDS=train:PATH, set for the training process: write PATH
_STALE_LOCK_S = 30 * 60
# The JVM's own log lines (CDS warnings among them) go to its stderr, which rig keeps in the
# JVM's log file, not to the stdout of the user's terminal (unified logging's default).
_QUIET = ("-Xlog:disable", "-Xlog:all=warning:stderr")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rig" / "spark-cds"


def _off() -> bool:
    return os.environ.get(_ENV, "").strip().lower() in ("0", "off", "false", "no")


def archive_path(java: str) -> Path:
    """Where the archive for `java` and this PySpark install lives (whether made yet or not)."""
    real = Path(os.path.realpath(java))
    parts = [str(real), _version("pyspark")]
    for candidate in (real.parent.parent / "lib" / "server" / "libjvm.so", real):
        if candidate.exists():  # a JDK upgrade in place makes a new archive
            stat = candidate.stat()
            parts.append(f"{candidate}:{stat.st_size}:{stat.st_mtime_ns}")
            break
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
    return _cache_dir() / f"spark-{key}.jsa"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def jvm_options(java: str) -> list[str]:
    """The driver JVM's options for class data sharing: use the archive when it exists, write it
    when this is the training process, nothing when it is turned off or not made yet."""
    setting = os.environ.get(_ENV, "")
    if setting.startswith(_TRAIN):
        return [f"-XX:ArchiveClassesAtExit={setting[len(_TRAIN):]}", *_QUIET]
    if _off():
        return []
    path = archive_path(java)
    return [f"-XX:SharedArchiveFile={path}", *_QUIET] if path.is_file() else []


def train_into(partial: Path) -> None:
    """Make the JVMs this process starts from now on write their class archive to `partial`
    as they exit (the training process calls it before starting Spark)."""
    os.environ[_ENV] = f"{_TRAIN}{partial}"


def _lock_is_stale(lock: Path) -> bool:
    try:
        pid_text, _, started = lock.read_text(encoding="utf-8").partition(" ")
        if time.time() - float(started) > _STALE_LOCK_S:
            return True
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError):
        return False
    return False


def start_training(java: str) -> bool:
    """Start the detached process that makes the archive for `java`, unless it exists, is
    turned off, this is the training process, or another process is making it; True when
    started."""
    if _off() or os.environ.get(_ENV, "").startswith(_TRAIN):
        return False
    path = archive_path(java)
    if path.is_file():
        return False
    lock = path.with_suffix(".training")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if lock.exists() and _lock_is_stale(lock):
            lock.unlink(missing_ok=True)
        handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return False  # another process trains, or the cache is not writable: run without
    # Claimed for this process first (O_EXCL: one trainer per archive), then handed to the
    # trainer below once it has a pid; a lock whose pid is gone is stale either way.
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {time.time()}")
    log = path.with_suffix(".log")
    try:
        with log.open("wb") as sink:
            child = subprocess.Popen(
                [sys.executable, "-m", "rig.commands.train_class_archive", str(path), java],
                stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, start_new_session=True,
                cwd=tempfile.gettempdir(), env={**os.environ, _ENV: ""})
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    lock.write_text(f"{child.pid} {time.time()}", encoding="utf-8")
    return True
