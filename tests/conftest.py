"""Shared fixtures: small scenario files written on the fly."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import textwrap
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# CI (`.ci/run` sets CI) draws the same examples every run, as Hypothesis advises for CI: a red
# build then means a change broke something, never that this run drew a new example. A local
# `make test` explores fresh examples each time; HYPOTHESIS_PROFILE picks either by hand.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or
                      ("ci" if os.environ.get("CI") else "explore"))

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


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder every process of this test session sees: the session's own temp folder, or,
    under pytest-xdist, the one above the workers' (each worker's basetemp is a child of it)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def _flock(path: Path, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (made if missing); yields False at once when `wait` is
    False and another process holds it."""
    with path.open("a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class ShippedRuns(Mapping[str, ShippedRun]):
    """Every scenario in scenarios/, run with `rig run` (simulation, Spark, report) at most once
    per test session, on first use, whichever test (or xdist worker) asks first.

    Each scenario has its own lock file and result file in a folder all workers share: a worker
    that needs a scenario another is running works on another one nobody has started meanwhile
    (a whole-suite run needs them all), then reads the result when the lock is free.
    """

    def __init__(self, root: Path, scenarios: list[Path]):
        self.root = root
        self.scenarios = {p.stem: p for p in scenarios}
        self._runs: dict[str, ShippedRun] = {}

    def __iter__(self) -> Iterator[str]:
        return iter(self.scenarios)

    def __len__(self) -> int:
        return len(self.scenarios)

    def __getitem__(self, stem: str) -> ShippedRun:
        if stem not in self.scenarios:
            raise KeyError(stem)
        if stem not in self._runs:
            self._runs[stem] = self._get(stem)
        return self._runs[stem]

    def _result(self, stem: str) -> Path:
        return self.root / f"{stem}.result.json"

    def _load(self, stem: str) -> ShippedRun:
        data = orjson.loads(self._result(stem).read_bytes())
        return ShippedRun(self.root / stem, data["exit_code"], data["output"])

    def _run_locked(self, stem: str) -> None:
        """Run `stem` unless its result exists (the caller holds its lock)."""
        if self._result(stem).exists():
            return
        from typer.testing import CliRunner

        from rig.cli import app

        result = CliRunner().invoke(app, ["run", str(self.scenarios[stem]), "--out",
                                          str(self.root / stem), "--quiet"])
        output = result.output
        if result.exc_info is not None and not isinstance(result.exception, SystemExit):
            output += "".join(traceback.format_exception(*result.exc_info))
        partial = self._result(stem).with_suffix(".partial")
        partial.write_bytes(orjson.dumps({"exit_code": result.exit_code, "output": output}))
        partial.replace(self._result(stem))

    def _get(self, stem: str) -> ShippedRun:
        lock = self.root / f"{stem}.lock"
        while not self._result(stem).exists():
            with _flock(lock, wait=False) as mine:
                if mine:
                    self._run_locked(stem)
                    break
            # Another worker is running it: run one nobody has started, or else wait for it.
            if not self._help_once():
                with _flock(lock):
                    self._run_locked(stem)
        return self._load(stem)

    def _help_once(self) -> bool:
        for other in self.scenarios:
            if self._result(other).exists():
                continue
            with _flock(self.root / f"{other}.lock", wait=False) as mine:
                if mine:
                    self._run_locked(other)
                    return True
        return False


def shipped_scenarios() -> list[Path]:
    return sorted((ROOT / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="session")
def shipped_results(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, ShippedRun]:
    """scenario stem → its `rig run` (run dir, exit code, output); each scenario in scenarios/
    is run once per test session, when a test first reads it: the golden tests judge them, the
    browser tests open their reports."""
    from rig.analysis.spark import check_java
    from rig.errors import EnvironmentProblem

    try:
        check_java()
    except EnvironmentProblem as problem:
        if os.environ.get("CI"):
            pytest.fail(str(problem))
        pytest.skip(str(problem))
    return ShippedRuns(shared_dir(tmp_path_factory, "shipped"), shipped_scenarios())


class ShippedDirs(Mapping[str, Path]):
    """stem → run directory, each checked when read: `rig run` exited 0 or 1 (a report is
    written even when an expectation fails) and wrote report.html."""

    def __init__(self, runs: Mapping[str, ShippedRun]):
        self.runs = runs

    def __iter__(self) -> Iterator[str]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, stem: str) -> Path:
        run = self.runs[stem]
        assert run.exit_code in (0, 1), (stem, run.output)
        assert (run.run_dir / "report.html").exists(), stem
        return run.run_dir


@pytest.fixture(scope="session")
def shipped(shipped_results: Mapping[str, ShippedRun]) -> Mapping[str, Path]:
    """scenario stem → its run directory (a report is written even when an expectation fails)."""
    return ShippedDirs(shipped_results)


# Scheduling for pytest-xdist (`make test` runs `-n JOBS --dist loadgroup`) ----------------------

SHIPPED_FIXTURES = frozenset({"shipped", "shipped_results"})
CHEAP_MODULE_FIXTURES = frozenset({"chromium"})  # a second browser costs a second or two


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that read the shipped scenario runs go first, so both workers start on them at once
    and share the simulations (ShippedRuns), the longest first; the rest fill in behind.

    A test that uses an expensive module-scoped fixture (a standalone Spark cluster, a fuzz
    session) is grouped with its module, so one worker builds that fixture once, not each.
    """
    for item in items:
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(name not in CHEAP_MODULE_FIXTURES and defs and defs[-1].scope == "module"
               for name, defs in definitions.items()):
            item.add_marker(pytest.mark.xdist_group(name=item.nodeid.split("::")[0]))
    items.sort(key=lambda item: not SHIPPED_FIXTURES & set(getattr(item, "fixturenames", ())))


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
