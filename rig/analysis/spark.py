"""Start (or reuse) the quiet, local-by-default SparkSession the analysis runs on.

Checks for a usable Java first (rig.analysis.java), so a missing JVM is one clear line instead
of a stack trace.
pyspark is imported only inside functions: importing this module never starts Spark.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from rig.analysis import class_archive
from rig.analysis.java import JavaInfo, check_java

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_MASTER", "JavaInfo", "check_java", "claim_start_seconds", "get_spark",
           "last_start_seconds", "start_in_background", "stop_spark"]

DEFAULT_MASTER = "local[2]"

# Only ERROR and above from the JVM: Spark's WARNs (loopback hostname, native-hadoop) are noise
# for a rig user, and they print before any Python-side setLogLevel could run. The gateway logger
# is named so Spark's shell mode keeps ERROR instead of announcing a switch to WARN.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
logger.repl.name = org.apache.spark.api.python.PythonGatewayServer
logger.repl.level = error
"""


_lock = threading.Lock()
_session: SparkSession | None = None
_master: str | None = None
_scratch: Path | None = None
_start_seconds: float | None = None  # how long the running session took to start
_start_claimed = False  # claim_start_seconds has reported it
_java_started: str | None = None  # the java of a session this process started


def _scratch_dir() -> Path:
    """One temp dir per process for warehouse, local dirs, derby and the log4j file."""
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="rig-spark-"))
        (_scratch / "log4j2.properties").write_text(_LOG4J2, encoding="utf-8")
        atexit.register(_cleanup)
    return _scratch


def _cleanup() -> None:
    stop_spark()
    if _java_started is not None:
        # Spark ran here without a class archive: have one made for the next start-up.
        class_archive.start_training(_java_started)
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)


@contextlib.contextmanager
def _jvm_log(log: Path) -> Iterator[BinaryIO]:
    """`log` opened for the JVM started inside this block to use as its stderr, for its whole
    life (see _launch_jvm); on a failed start its tail is shown.

    The JVM prints some lines no logging setting reaches (Spark 4's "Using incubator modules").
    Only the JVM's stderr goes to the log: this process's own stays where it was, so Spark can
    start on a thread while the simulation prints its progress."""
    with log.open("ab") as sink:
        try:
            yield sink
        except Exception:
            tail = log.read_text("utf-8", "replace").strip().splitlines()[-5:]
            if tail:
                print("spark: " + "\nspark: ".join(tail), file=sys.stderr)
            raise


def _launch_jvm(settings: list[tuple[str, str]], sink: BinaryIO) -> None:
    """Launch Spark's JVM (PySpark's py4j gateway) with `settings` and `sink` as its stderr,
    unless this process has one already (a session stopped and started again reuses it).

    PySpark launches it inside SparkContext with the same settings (`launch_gateway(conf)`,
    spark-submit --conf ...) but with this process's stderr; launch_gateway's `popen_kwargs` is
    its documented hook for the child's streams, and a gateway already set is the one
    SparkContext uses."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(settings)
    gateway = launch_gateway(conf, popen_kwargs={"stderr": sink})
    SparkContext._ensure_initialized(gateway=gateway)


def _pin_worker_python(master: str) -> None:
    """Make Spark's Python workers run this interpreter, before the SparkContext reads it.

    PySpark's SparkContext takes its workers' interpreter from PYSPARK_PYTHON when it starts
    (default: whatever `python3` is first on PATH, which may lack rig's dependencies). A local
    master's workers run on this machine, so they run this interpreter, whatever the environment
    says. A remote master's executors may live elsewhere: a PYSPARK_PYTHON the user set is kept.
    """
    if master.startswith("local") or not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable


def get_spark(master: str | None = None) -> SparkSession:
    """Return the process's SparkSession for `master` (default local[2]), starting it if needed.

    A session already running on another master is stopped first: one JVM per process.
    """
    global _session, _master, _start_seconds, _start_claimed, _java_started
    master = master or DEFAULT_MASTER
    with _lock:
        if _session is not None and _master == master:
            return _session
        if _session is not None:
            _stop_locked()
        started = time.perf_counter()
        java = check_java()
        _pin_worker_python(master)
        scratch = _scratch_dir()
        from pyspark.sql import SparkSession

        java_opts = " ".join(
            [
                f"-Dlog4j.configurationFile=file:{scratch / 'log4j2.properties'}",
                f"-Dderby.system.home={scratch / 'derby'}",
                # The driver lives for seconds and plans a few dozen small queries: the JIT's
                # optimising tier (C2) spent more CPU compiling Spark than its code saved, about
                # half of the start-up and of the analysis on 2 cores (issue 19). C1 alone.
                "-XX:TieredStopAtLevel=1",
                *class_archive.jvm_options(java.path),
            ]
        )
        settings = [
            ("spark.master", master),
            ("spark.app.name", "rig-analysis"),
            ("spark.ui.enabled", "false"),
            ("spark.ui.showConsoleProgress", "false"),
            # The tables are tiny after aggregation: a handful of shuffle partitions is plenty.
            ("spark.sql.shuffle.partitions", "4"),
            # Adaptive execution re-plans after each shuffle, one job per stage: on tables this
            # small the re-planning costs more than any skew or coalescing it could fix.
            ("spark.sql.adaptive.enabled", "false"),
            ("spark.default.parallelism", "4"),
            ("spark.sql.catalogImplementation", "in-memory"),
            ("spark.sql.warehouse.dir", str(scratch / "warehouse")),
            ("spark.local.dir", str(scratch / "local")),
            ("spark.driver.extraJavaOptions", java_opts),
            # A cluster's executors only relay simulations to their Python workers: C1 alone too.
            ("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1"),
            ("spark.sql.session.timeZone", "UTC"),
        ]
        builder = SparkSession.builder
        for key, value in settings:
            builder = builder.config(key, value)
        with _jvm_log(scratch / "jvm-stderr.log") as sink:
            _launch_jvm(settings, sink)
            session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        _session, _master = session, master
        _java_started = java.path
        _start_seconds = time.perf_counter() - started
        _start_claimed = False
        return session


def last_start_seconds() -> float | None:
    """How long the running session took to start (None: none is running)."""
    return _start_seconds if _session is not None else None


def claim_start_seconds() -> float | None:
    """How long the running session took to start, to the first caller after that start
    (an analysis reports the start-up it waited for, or that ran beside its simulation); None
    to every later caller, and when no session is running."""
    global _start_claimed
    with _lock:
        if _session is None or _start_claimed:
            return None
        _start_claimed = True
        return _start_seconds


def start_in_background(master: str | None = None) -> threading.Thread:
    """Start the session for `master` on a thread, so the JVM boots while this process does
    something else (simulates, parses the logs); get_spark waits for it (one session per
    process). A failed start is left for the next get_spark to raise."""

    def start() -> None:
        with contextlib.suppress(Exception):
            get_spark(master)

    thread = threading.Thread(target=start, name="rig-spark-start", daemon=True)
    thread.start()
    return thread


def _stop_locked() -> None:
    global _session, _master
    if _session is not None:
        _session.stop()
    _session, _master = None, None


def stop_spark() -> None:
    """Stop the session started by get_spark, if any (tests and the CLI's clean exit)."""
    with _lock:
        _stop_locked()
