"""A standalone Spark cluster (one master, one worker) on 127.0.0.1, from pyspark's own
installation, for the tests that run a sweep or a fuzz session on a real master URL."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

STARTUP_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a daemon and its JVM (its own process group, started by this fixture)."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as reply:
            return int(json.load(reply).get("aliveworkers", 0))
    except OSError:
        return 0


@dataclass(frozen=True)
class Standalone:
    url: str  # the master URL, spark://127.0.0.1:PORT
    work: Path  # the worker's work dir: one folder per application it ran executors for


@pytest.fixture(scope="module")
def standalone_spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """Start `spark-class ...Master` and `...Worker` on 127.0.0.1; stop both afterwards."""
    try:
        import pyspark
    except ImportError:
        pytest.skip("pyspark is not installed")
    from rig.analysis.spark import check_java
    from rig.errors import EnvironmentProblem

    try:
        check_java()
    except EnvironmentProblem as problem:
        pytest.skip(str(problem))
    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    folder = tmp_path_factory.mktemp("standalone")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    daemons: list[subprocess.Popen[bytes]] = []

    def start(args: list[str], log: str) -> None:
        with (folder / log).open("wb") as sink:
            daemons.append(subprocess.Popen([str(spark_class), *args], env=env, stdout=sink,
                                            stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
               str(port), "--webui-port", str(ui)], "master.log")
        start(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "2",
               "--memory", "2g", "--webui-port", str(worker_ui), "--work-dir",
               str(folder / "work"), url], "worker.log")
        deadline = time.monotonic() + STARTUP_S
        while _alive_workers(ui) < 1:
            if time.monotonic() > deadline or any(d.poll() is not None for d in daemons):
                logs = "\n".join((folder / n).read_text("utf-8", "replace")[-2000:]
                                 for n in ("master.log", "worker.log"))
                pytest.fail(f"the standalone Spark cluster did not start:\n{logs}")
            time.sleep(1)
        yield Standalone(url, folder / "work")
    finally:
        for daemon in reversed(daemons):
            _stop(daemon)
