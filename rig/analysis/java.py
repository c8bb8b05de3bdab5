"""The Java that Spark's launcher will run, checked before anything starts it.

A missing, too old or broken JVM is one clear line (exit 2), never a Java stack trace: rig runs
`java -version` itself, as `spark-class` would pick the binary (JAVA_HOME first, then PATH).
A java that is there but does not start (a memory limit below what the JVM reserves, a broken
install) is named with the JVM's own words: "none was found" would send the user to install a
Java they already have.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rig.errors import EnvironmentProblem

__all__ = ["JavaInfo", "check_java"]

_INSTALL_HINT = "install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


@dataclass(frozen=True)
class JavaInfo:
    """The java binary Spark will launch and its major version."""

    path: str
    major: int


def _required_java_major() -> int:
    """Spark 4 runs on Java 17+; Spark 3.5 still ran on 8 and 11."""
    try:
        major = int(metadata.version("pyspark").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        major = 4
    return 17 if major >= 4 else 8


def _java_major(java: str) -> tuple[int | None, str]:
    """Run `java -version`: (its major version, "") or (None, why not); the reason is "" when
    there is no such file, else what went wrong, on one line (the JVM's first two lines)."""
    try:
        # In the temp folder: a JVM that fails to start writes hs_err_pid*.log where it runs.
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60,
                              check=False, cwd=tempfile.gettempdir())
    except FileNotFoundError:
        return None, ""
    except (OSError, subprocess.SubprocessError) as error:
        return None, str(error)
    # A fatal error report's lines start with "#" (and the first is only that).
    said_lines = (done.stderr + done.stdout).splitlines()
    lines = [line for line in (raw.strip().lstrip("#").strip() for raw in said_lines) if line]
    said = _one_line(lines)
    if done.returncode != 0:
        words = _one_line(lines[:2])[:300]
        return None, f"exit code {done.returncode}" + (f": {words}" if words else "")
    # `openjdk version "17.0.15"`, `java version "1.8.0_392"`, `openjdk version "21" 2023-09-19`
    found = re.search(r'version "(\d+)(?:\.(\d+))?', said)
    if found is None:
        return None, f"`{java} -version` printed no version: {said[:300]}"
    first, second = int(found.group(1)), int(found.group(2) or 0)
    return (second if first == 1 else first), ""


def _one_line(lines: list[str]) -> str:
    """Lines as one: a sentence ended by its full stop, other lines by a semicolon."""
    return " ".join(line if line.endswith((".", ":")) or i == len(lines) - 1 else f"{line};"
                    for i, line in enumerate(lines))


def check_java(env: dict[str, str] | None = None) -> JavaInfo:
    """Find the java Spark's launcher will use (JAVA_HOME first, like `spark-class`) or raise.

    Raises EnvironmentProblem with a one-line message when none works or it is too old.
    """
    env = dict(os.environ) if env is None else env
    need = _required_java_major()
    java_home = env.get("JAVA_HOME", "").strip()
    on_path = shutil.which("java", path=env.get("PATH", ""))
    why = ""
    if java_home:
        # spark-class runs $JAVA_HOME/bin/java whenever JAVA_HOME is set, so that is the one
        # that must work, even if another java on PATH would.
        java = str(Path(java_home) / "bin" / "java")
        major, why = _java_major(java)
        if major is None and on_path and _java_major(on_path)[0] is not None:
            raise EnvironmentProblem(
                f"JAVA_HOME={java_home} has no working bin/java"
                + (f" ({why})" if why else "")
                + f", and Spark uses it before {on_path}: fix JAVA_HOME or unset it"
            )
    elif on_path:
        java = on_path
        major, why = _java_major(on_path)
    else:
        java, major = "", None
    if major is None and why:
        raise EnvironmentProblem(f"PySpark needs Java {need}+, and {java} does not run: {why}")
    if major is None:
        raise EnvironmentProblem(f"PySpark needs Java {need}+, and none was found: {_INSTALL_HINT}")
    if major < need:
        raise EnvironmentProblem(
            f"PySpark needs Java {need}+, but {java} is Java {major}: {_INSTALL_HINT}"
        )
    return JavaInfo(path=java, major=major)
