"""Shared fixtures: small scenario files written on the fly."""

from __future__ import annotations

import errno
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

SMALL = """
name: small
seed: 7
duration: 5s
kafka: "1.1"
cluster:
  brokers: 2
topics:
  - name: test
    partitions: 10
    replication_factor: 2
variants:
  v6:
    protocol: {fetch_version: 6}
    strategies: {fetch_session: sessionless}
  v7:
    strategies: {fetch_session: incremental}
"""


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(text: str = SMALL, name: str = "scenario.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


@dataclass(frozen=True)
class ShippedRun:
    run_dir: Path
    exit_code: int
    output: str


@pytest.fixture(scope="session")
def shipped_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ShippedRun]:
    """Every scenario in scenarios/, run once per test session with `rig run` (Spark, report):
    the golden tests judge them, the browser tests open their reports."""
    from typer.testing import CliRunner

    from rig.analysis.spark import check_java
    from rig.cli import app
    from rig.errors import EnvironmentProblem

    try:
        check_java()
    except EnvironmentProblem as problem:
        if os.environ.get("CI"):
            pytest.fail(str(problem))
        pytest.skip(str(problem))
    root = tmp_path_factory.mktemp("shipped")
    runs = {}
    for scenario in sorted((ROOT / "scenarios").glob("*.yaml")):
        out = root / scenario.stem
        result = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out), "--quiet"])
        runs[scenario.stem] = ShippedRun(out, result.exit_code, result.output)
    return runs


@pytest.fixture(scope="session")
def shipped(shipped_results: dict[str, ShippedRun]) -> dict[str, Path]:
    """scenario stem → its run directory (a report is written even when an expectation fails)."""
    for stem, run in shipped_results.items():
        assert run.exit_code in (0, 1), (stem, run.output)
        assert (run.run_dir / "report.html").exists(), stem
    return {stem: run.run_dir for stem, run in shipped_results.items()}


@pytest.fixture
def mount(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Make a folder behave like a mount point (Docker's `-v …:/out`): renaming or removing it
    fails with EBUSY, and os.path.ismount says so unless `visible=False` (a bind mount of the
    same file system, which ismount cannot see)."""
    mounts: set[str] = set()
    seen: set[str] = set()
    real_ismount, real_rename, real_rmdir = os.path.ismount, os.rename, os.rmdir

    def busy(*paths: Any) -> None:
        for path in paths:
            if os.path.realpath(path) in mounts:
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))

    def rename(src: Any, dst: Any, **kw: Any) -> None:
        busy(src, dst)
        real_rename(src, dst, **kw)

    def rmdir(path: Any, **kw: Any) -> None:
        busy(path)
        real_rmdir(path, **kw)

    monkeypatch.setattr(os.path, "ismount",
                        lambda p: os.path.realpath(p) in seen or real_ismount(p))
    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "rmdir", rmdir)

    def make(path: Path, visible: bool = True) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        mounts.add(os.path.realpath(path))
        if visible:
            seen.add(os.path.realpath(path))
        return path

    return make
