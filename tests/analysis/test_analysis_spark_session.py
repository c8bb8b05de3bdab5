"""Spark session set-up: the Java check, lazy imports, quiet reuse."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rig.analysis.spark import check_java
from rig.errors import EnvironmentProblem, UserError

ROOT = Path(__file__).parents[2]


def _fake_java(folder: Path, output: str, code: int = 0) -> Path:
    """A `java` script printing `output` on stderr, like `java -version` does."""
    folder.mkdir(parents=True, exist_ok=True)
    java = folder / "java"
    java.write_text(f"#!/bin/sh\necho '{output}' >&2\nexit {code}\n", encoding="utf-8")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return java


def test_no_java_anywhere_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as info:
        check_java({"PATH": str(tmp_path), "JAVA_HOME": ""})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("PySpark needs Java 17+, and none was found")
    assert "apt-get install openjdk-17-jre-headless" in message and "JAVA_HOME" in message
    assert isinstance(info.value, UserError) and info.value.exit_code == 2


def test_java_on_path_is_found(tmp_path: Path) -> None:
    _fake_java(tmp_path / "bin", 'openjdk version "21.0.2" 2024-01-16')
    found = check_java({"PATH": str(tmp_path / "bin")})
    assert found.major == 21 and found.path == str(tmp_path / "bin" / "java")


def test_java_home_wins_over_path(tmp_path: Path) -> None:
    _fake_java(tmp_path / "home" / "bin", 'openjdk version "17.0.15" 2025-04-15')
    _fake_java(tmp_path / "path", 'openjdk version "21" 2023-09-19')
    found = check_java({"PATH": str(tmp_path / "path"), "JAVA_HOME": str(tmp_path / "home")})
    assert found.major == 17


def test_old_java_is_named(tmp_path: Path) -> None:
    _fake_java(tmp_path, 'java version "1.8.0_392"')
    with pytest.raises(EnvironmentProblem, match=r"is Java 8: install it"):
        check_java({"PATH": str(tmp_path)})


def test_broken_java_home_is_named_even_with_java_on_path(tmp_path: Path) -> None:
    _fake_java(tmp_path / "path", 'openjdk version "17.0.1"')
    with pytest.raises(EnvironmentProblem, match=r"JAVA_HOME=.*no working bin/java"):
        check_java({"PATH": str(tmp_path / "path"), "JAVA_HOME": str(tmp_path / "nowhere")})


def test_java_that_does_not_start_is_named_with_the_jvms_words(tmp_path: Path) -> None:
    """A java that is there but cannot start (here as under a memory limit, `ulimit -v`, below
    what the JVM reserves) is not "none was found": that sent users to install a Java they
    had. One line: the binary, its exit code, the JVM's first two lines."""
    java = _fake_java(tmp_path, "Error occurred during initialization of VM\n"
                                "Could not reserve enough space for object heap\n"
                                "Error: Could not create the Java Virtual Machine.", code=1)
    with pytest.raises(EnvironmentProblem) as info:
        check_java({"PATH": str(tmp_path)})
    assert str(info.value) == (
        f"PySpark needs Java 17+, and {java} does not run: exit code 1: Error occurred during "
        "initialization of VM; Could not reserve enough space for object heap")
    assert info.value.exit_code == 2
    _fake_java(tmp_path / "home" / "bin", "Error: Could not create the Java Virtual Machine.",
               code=1)
    _fake_java(tmp_path / "path", 'openjdk version "17.0.1"')
    with pytest.raises(EnvironmentProblem, match=r"JAVA_HOME=.* has no working bin/java \(exit "
                                                 r"code 1: Error: Could not create the Java"):
        check_java({"PATH": str(tmp_path / "path"), "JAVA_HOME": str(tmp_path / "home")})


def test_a_java_printing_no_version_is_named(tmp_path: Path) -> None:
    java = _fake_java(tmp_path, "hello")
    with pytest.raises(EnvironmentProblem, match=f"{java} does not run: `{java} -version` "
                                                 "printed no version: hello"):
        check_java({"PATH": str(tmp_path)})


def test_get_spark_without_java_never_shows_a_java_stack_trace(tmp_path: Path) -> None:
    """In a subprocess with PATH and JAVA_HOME stripped: the error comes before any JVM."""
    code = (
        "from rig.analysis.spark import get_spark\n"
        "from rig.errors import EnvironmentProblem\n"
        "try:\n    get_spark()\n"
        "except EnvironmentProblem as e:\n    print('ERR', e)\n"
        "import sys; assert 'pyspark' not in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PATH")}
    env["PATH"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ERR PySpark needs Java 17+, and none was found")
    assert done.stdout.count("\n") == 1
    assert "Exception" not in done.stderr and "java." not in done.stderr


def test_import_rig_analysis_does_not_import_pyspark() -> None:
    code = (
        "import sys, rig, rig.analysis, rig.analysis.spark, rig.analysis.fetch_metrics\n"
        "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules, 'pyspark imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


@pytest.mark.spark
def test_session_is_reused_quiet_and_leaves_no_files_in_cwd(spark: Any) -> None:
    from rig.analysis.spark import get_spark

    assert get_spark() is spark
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.sparkContext.master == "local[2]"
    assert not Path(conf.get("spark.sql.warehouse.dir").removeprefix("file:")).is_relative_to(
        Path.cwd()
    )
    for leftover in ("spark-warehouse", "metastore_db", "derby.log"):
        assert not (Path.cwd() / leftover).exists()


@pytest.mark.spark
def test_workers_run_rigs_interpreter_whatever_python3_is_on_path(tmp_path: Path) -> None:
    """A `python3` first on PATH without rig's packages, and PYSPARK_PYTHON pointing at it:
    Spark's local workers still run the interpreter rig runs in (issue 14: a worker that ran the
    bare `python3` could not import structlog)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to("/bin/false")
    code = (
        "import sys\n"
        "from rig.analysis.spark import get_spark\n"
        "sc = get_spark().sparkContext\n"
        "seen = sc.parallelize([0, 1], 2).map(lambda _: __import__('sys').executable).collect()\n"
        "assert set(seen) == {sys.executable}, (seen, sys.executable)\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PATH": f"{bare}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYSPARK_PYTHON": str(bare / "python3")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


_BOOT_BESIDE_A_FAILING_SIMULATION = """
import sys, threading, time
from pathlib import Path
from pyspark import SparkContext
from rig import pipeline, variant_pool
from rig.analysis import spark
from rig.progress import Progress
ticks = 0
def simulate(*args, **kwargs):
    global ticks
    booting = [t for t in threading.enumerate() if t.name == "rig-spark-start"]
    while booting and booting[0].is_alive():  # the simulation's progress, printed meanwhile
        print(f"tick {ticks}", file=sys.stderr, flush=True)
        ticks += 1
        time.sleep(0.1)
    raise RuntimeError("the simulation broke")
variant_pool.simulate = simulate
try:
    pipeline.run(Path(sys.argv[1]), pipeline.RunOptions(out=Path(sys.argv[2]), report=False),
                 Progress(quiet=True))
except RuntimeError as error:
    print("raised:", error)
for thread in threading.enumerate():
    if thread.name == "rig-spark-stop":
        thread.join()
print("ticks", ticks, "session", spark.last_start_seconds() is not None,
      "jvm", SparkContext._gateway.proc.pid)
"""


@pytest.mark.spark
def test_rig_run_boots_spark_beside_the_simulation_and_a_failed_run_leaves_no_jvm(
        tmp_path: Path) -> None:
    """`rig run` starts Spark before simulating (issue 19): the simulation's progress still
    reaches stderr while the JVM boots (only the JVM's own stderr goes to its log), a failed
    simulation stops the session, and the JVM is gone once the process has exited."""
    done = subprocess.run(
        [sys.executable, "-c", _BOOT_BESIDE_A_FAILING_SIMULATION,
         str(ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml"), str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    raised, last = done.stdout.strip().splitlines()[-2:]
    assert raised == "raised: the simulation broke"
    _, ticks, _, session, _, pid = last.split()
    assert int(ticks) > 0  # the JVM was still booting while the simulation ran
    assert [line for line in done.stderr.splitlines() if line.startswith("tick")] == [
        f"tick {i}" for i in range(int(ticks))]
    assert "incubator" not in done.stderr  # the JVM's own lines went to its log
    assert session == "False"  # stopped after the failure
    assert not (tmp_path / "run").exists()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"the JVM (pid {pid}) outlived the failed run")
