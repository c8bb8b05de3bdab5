"""Shared fixtures: small scenario files written on the fly."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import textwrap
import time
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
# `deep` (`make explore`, the nightly explore workflow) draws ten times as many (tests.examples).
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.register_profile("deep", max_examples=1000, print_blob=True)
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
    (a whole-suite run needs them all), the costliest first (`scenarios` comes in that order),
    then reads the result when the lock is free.
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

        started = time.perf_counter()
        result = CliRunner().invoke(app, ["run", str(self.scenarios[stem]), "--out",
                                          str(self.root / stem), "--quiet"])
        seconds = round(time.perf_counter() - started, 1)
        output = result.output
        if result.exc_info is not None and not isinstance(result.exception, SystemExit):
            output += "".join(traceback.format_exception(*result.exc_info))
        partial = self._result(stem).with_suffix(".partial")
        partial.write_bytes(orjson.dumps({"exit_code": result.exit_code, "output": output,
                                          "seconds": seconds}))
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
    costs = Costs.load()
    ordered = sorted(shipped_scenarios(), key=lambda p: -costs.scenario(p.stem))
    return ShippedRuns(shared_dir(tmp_path_factory, "shipped"), ordered)


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
#
# A suite on two workers ends when its last long test ends: a two-minute test handed out last
# costs two minutes of wall. So work is handed out longest first (LPT), by what each piece cost
# when last measured: tests/costs.json holds the seconds of each shipped scenario's `rig run` and
# of every test that took a second or more. `RIG_TEST_COSTS=tests/costs.json make test` measures
# them again and rewrites the file. A scenario or slow test it does not know yet goes first.

COSTS = ROOT / "tests" / "costs.json"
SHIPPED_FIXTURES = frozenset({"shipped", "shipped_results"})
UNKNOWN_SLOW_S = 10.0  # a test marked slow or spark that costs.json has not measured yet
MEASURED_FROM_S = 1.0  # costs.json keeps the tests that took this long or longer


@dataclass(frozen=True)
class Costs:
    """tests/costs.json: {"scenarios": {stem: seconds}, "tests": {node id: seconds},
    "modules": {test file: seconds}}: a test of a measured module that "tests" leaves out took
    less than MEASURED_FROM_S."""

    scenarios: Mapping[str, float]
    tests: Mapping[str, float]
    modules: Mapping[str, float]

    @classmethod
    def load(cls, path: Path = COSTS) -> Costs:
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            data = {}
        return cls(data.get("scenarios") or {}, data.get("tests") or {},
                   data.get("modules") or {})

    def scenario(self, stem: str) -> float:
        """An unmeasured scenario counts as the costliest: it is started first, not last."""
        known = self.scenarios.get(stem)
        return known if known is not None else max(self.scenarios.values(), default=0.0) + 1

    def test(self, item: pytest.Item) -> float:
        known = self.tests.get(item.nodeid)
        if known is not None:
            return known
        if item.nodeid.split("::")[0] in self.modules:
            return 0.0
        slow = item.get_closest_marker("slow") or item.get_closest_marker("spark")
        return UNKNOWN_SLOW_S if slow else 0.0


def _reads_shipped(item: pytest.Item) -> bool:
    return bool(SHIPPED_FIXTURES & set(getattr(item, "fixturenames", ())))


def _shipped_stem(item: pytest.Item) -> str | None:
    """The one shipped scenario a test reads (its `stem` parameter); None for a test that reads
    several or names one in its body."""
    callspec = getattr(item, "callspec", None)
    stem = callspec.params.get("stem") if callspec is not None else None
    return stem if isinstance(stem, str) else None


def _unit(item: pytest.Item) -> str:
    """What pytest-xdist hands out as one piece: the test's xdist_group, or the test alone."""
    group = item.get_closest_marker("xdist_group")
    return f"group:{group.kwargs['name']}" if group is not None else item.nodeid


def pytest_configure(config: pytest.Config) -> None:
    # xdist's loadgroup would otherwise hand out the groups with the most tests first, whatever
    # they cost; collection order (set below) is the order wanted.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the tests longest piece first.

    Runs before pytest-xdist's own hook of the same name (tryfirst): that one reads the
    xdist_group marks added here to tell its scheduler which tests go together, so a mark added
    after it would group nothing.

    A test that uses an expensive module-scoped fixture (a standalone Spark cluster, a fuzz
    session) is grouped with its module, so one worker builds that fixture once, not each.
    A shipped scenario is a piece too: its `rig run` (ShippedRuns) costs the first test that
    reads it, so the tests of one scenario sit together, at the place the run's cost puts them;
    a test that reads several scenarios goes last, when they have all been run.
    """
    for item in items:
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(defs and defs[-1].scope == "module" for defs in definitions.values()):
            item.add_marker(pytest.mark.xdist_group(name=item.nodeid.split("::")[0]))
    costs = Costs.load()
    piece: dict[str, str] = {}
    cost: dict[str, float] = {}
    for item in items:
        if _reads_shipped(item):
            item.user_properties.append(("reads_shipped", True))  # for pytest_sessionfinish
            stem = _shipped_stem(item)
            key = f"shipped:{stem}" if stem is not None else "shipped:*"
            cost[key] = costs.scenario(stem) if stem is not None else -1.0
        else:
            key = _unit(item)
            cost[key] = cost.get(key, 0.0) + costs.test(item)
        piece[item.nodeid] = key
    first = {key: i for i, key in reversed(list(enumerate(piece[it.nodeid] for it in items)))}
    items.sort(key=lambda it: (-cost[piece[it.nodeid]], first[piece[it.nodeid]]))


_UNGROUPED = ("pytest-xdist did not group this test with its module: this pytest and "
              "pytest-xdist do not work together under --dist loadgroup (pytest-xdist#1386); "
              "install the versions pyproject.toml allows")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Under --dist loadgroup, a grouped test whose node id lacks its `@group` fails before its
    fixtures are built. Nothing else would fail: a module-scoped fixture would quietly be built
    once per worker instead of once."""
    if (hasattr(item.config, "workerinput") and item.config.getvalue("loadgroup")
            and item.get_closest_marker("xdist_group") is not None
            and not _grouped(item.nodeid)):
        pytest.fail(_UNGROUPED, pytrace=False)


def _grouped(nodeid: str) -> bool:
    """pytest-xdist's loadgroup mark on a node id: an `@` after any parameter brackets."""
    return nodeid.rfind("@") > nodeid.rfind("]")


def _ungrouped(nodeid: str) -> str:
    return nodeid[:nodeid.rfind("@")] if _grouped(nodeid) else nodeid


_measured: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("RIG_TEST_COSTS") and not dict(report.user_properties).get("reads_shipped"):
        nodeid = _ungrouped(report.nodeid)
        _measured[nodeid] = _measured.get(nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With RIG_TEST_COSTS=PATH, write what this run measured there (see Costs): on the
    controller, which hears every worker's reports; the scenarios' seconds come from the
    result files the workers shared. A test that reads shipped scenarios is not measured: its
    time is mostly the run of whichever scenario it happened to read first."""
    target = os.environ.get("RIG_TEST_COSTS")
    if not target or hasattr(session.config, "workerinput") or session.testsfailed:
        return
    tests = {nodeid: round(seconds, 1) for nodeid, seconds in sorted(_measured.items())
             if seconds >= MEASURED_FROM_S}
    modules: dict[str, float] = {}
    for nodeid, seconds in sorted(_measured.items()):
        module = nodeid.split("::")[0]
        modules[module] = round(modules.get(module, 0.0) + seconds, 1)
    folder = shared_dir(session.config._tmp_path_factory, "shipped")  # type: ignore[attr-defined]
    scenarios = {}
    for result in sorted(folder.glob("*.result.json")):
        seconds = orjson.loads(result.read_bytes()).get("seconds")
        if seconds is not None:
            scenarios[result.name.removesuffix(".result.json")] = seconds
    Path(target).write_bytes(orjson.dumps({"scenarios": scenarios, "tests": tests,
                                           "modules": modules},
                                          option=orjson.OPT_INDENT_2) + b"\n")


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
