"""`rig run` never loses files: foreign folders are refused, earlier runs are kept."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig import pipeline, rundir, variant_pool
from rig.errors import RunDirError
from rig.pipeline import RunOptions, is_run_dir, run
from rig.progress import Progress
from tests.conftest import ROOT, SMALL


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about folders: skip Spark and the report."""
    from rig.analysis import stages
    from rig.analysis.analysis import Timings

    monkeypatch.setattr(stages, "analyse", lambda run_dir, **_: ({}, Timings()))


def _run(path: Path, out: Path) -> pipeline.RunOutcome:
    return run(path, RunOptions(out=out, report=False, command="rig run x"), Progress(quiet=True))


def test_a_folder_with_someone_elses_files_is_refused(write_scenario: Any, tmp_path: Path,
                                                      no_spark: None) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(RunDirError, match="not a rig run directory"):
        _run(write_scenario(SMALL), out)
    assert (out / "thesis.tex").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "scenario.yaml"]


def test_a_new_run_keeps_the_previous_one(write_scenario: Any, tmp_path: Path,
                                          no_spark: None) -> None:
    out = tmp_path / "runs" / "small"
    first = _run(write_scenario(SMALL), out)
    assert first.previous is None and is_run_dir(out)
    (out / "notes.txt").write_text("kept with the run")
    second = _run(write_scenario(SMALL), out)
    assert second.previous is not None and (second.previous / "notes.txt").exists()
    assert is_run_dir(out) and not (out / "notes.txt").exists()
    for folder in (out, second.previous):
        assert {p.name for p in folder.iterdir()} >= {"run.json", "summary.json", "events",
                                                       "scenario.yaml", "command.txt",
                                                       "checks.json"}


def test_a_failing_run_leaves_no_staging_folder(write_scenario: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from rig.analysis import stages

    def broken(run_dir: Path, **_: Any) -> Any:
        raise RuntimeError("analysis exploded")

    monkeypatch.setattr(stages, "analyse", broken)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        _run(write_scenario(SMALL), out)
    assert list(tmp_path.iterdir()) == [tmp_path / "scenario.yaml"]


def test_the_run_dir_holds_the_resolved_scenario_and_the_command(
        write_scenario: Any, tmp_path: Path, no_spark: None) -> None:
    outcome = _run(write_scenario(SMALL), tmp_path / "out")
    resolved = (outcome.run_dir / "scenario.yaml").read_text()
    assert "replica.fetch.wait.max.ms: 500" in resolved and "fetch_version: 6" in resolved
    assert (outcome.run_dir / "command.txt").read_text() == "rig run x\n"
    assert sorted(p.name for p in (outcome.run_dir / "events").iterdir()) == ["v6.jsonl",
                                                                              "v7.jsonl"]
    checks = outcome.summary["variants"]["v7"]["checks"]
    assert checks["ok"] is True and checks["sizes_verified_by_encoder"] > 0


# Promotion (issue 15): mount points, symlinks, concurrent finishers, stale staging, signals,
# and a file system that refuses the results. Spark stays out: `fast` stubs the analysis.

@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Java, no Spark: summarise writes a bare summary.json."""
    import rig.analysis.spark

    def summarise(run_dir: Path, scenario: Any, results: Any, **_: Any) -> dict[str, Any]:
        summary = {"scenario": scenario.name, "variants": {}, "expectations": []}
        rundir.write_summary(run_dir, summary)
        return summary

    monkeypatch.setattr(pipeline, "summarise", summarise)
    monkeypatch.setattr(rig.analysis.spark, "check_java", lambda: None)


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".")
                  and not p.name.endswith(".lock"))


@pytest.mark.parametrize("visible", [True, False], ids=["ismount", "undetected"])
def test_an_empty_mount_point_receives_the_run(write_scenario: Any, tmp_path: Path, fast: None,
                                               mount: Callable[..., Path], visible: bool) -> None:
    out = mount(tmp_path / "out", visible=visible)
    outcome = _run(write_scenario(SMALL), out)
    assert outcome.run_dir == out and is_run_dir(out) and outcome.previous is None
    assert _hidden(out) == [] and _hidden(tmp_path) == []


@pytest.mark.parametrize("visible", [True, False], ids=["ismount", "undetected"])
def test_a_mount_point_holding_a_run_keeps_it_inside(write_scenario: Any, tmp_path: Path,
                                                     fast: None, mount: Callable[..., Path],
                                                     visible: bool) -> None:
    out = mount(tmp_path / "out", visible=visible)
    first = _run(write_scenario(SMALL), out)
    earlier = (out / "run.json").read_bytes()
    (out / "notes.txt").write_text("kept with the run")
    second = _run(write_scenario(SMALL), out)
    previous = second.previous
    assert first.previous is None and previous is not None and previous.parent == out
    assert previous.name.startswith("out.previous-")
    assert (previous / "run.json").read_bytes() == earlier and (previous / "notes.txt").exists()
    assert is_run_dir(out) and not (out / "notes.txt").exists()
    third = _run(write_scenario(SMALL), out)  # the kept run is not taken for part of a run
    assert third.previous is not None and (third.previous / "run.json").exists()
    assert sorted(p.name for p in out.iterdir() if ".previous-" in p.name) == sorted(
        [previous.name, third.previous.name])
    assert _hidden(out) == [] and _hidden(tmp_path) == []


def test_a_symlink_to_an_empty_folder_receives_the_run(write_scenario: Any, tmp_path: Path,
                                                       fast: None) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    _run(write_scenario(SMALL), link)
    assert link.is_symlink() and is_run_dir(real)
    again = _run(write_scenario(SMALL), link)  # an earlier run where the link points is kept
    assert link.is_symlink() and is_run_dir(real)
    assert again.previous is not None and again.previous.parent == tmp_path
    assert _hidden(tmp_path) == []


def test_a_dangling_symlink_receives_the_run_where_it_points(write_scenario: Any, tmp_path: Path,
                                                             fast: None) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "not-yet" / "there")
    _run(write_scenario(SMALL), link)
    assert link.is_symlink() and is_run_dir(tmp_path / "not-yet" / "there")


def test_runs_finishing_together_never_strand_one(write_scenario: Any, tmp_path: Path,
                                                  fast: None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs reach promotion at the same instant, many times: both land every time (the
    later in the target, the earlier as <name>.previous-<date>), no staging left behind."""
    scenario = write_scenario(SMALL)
    barrier = threading.Barrier(2)
    finishing = pipeline.summarise

    def summarise(*args: Any, **kw: Any) -> dict[str, Any]:
        summary = finishing(*args, **kw)
        barrier.wait(timeout=30)
        return summary

    monkeypatch.setattr(pipeline, "summarise", summarise)
    trials = 25
    for trial in range(trials):
        out = tmp_path / f"t{trial}" / "out"
        errors: list[BaseException] = []

        def one() -> None:
            try:
                _run(scenario, out)  # noqa: B023 - joined below, inside the same trial
            except BaseException as exc:
                errors.append(exc)  # noqa: B023

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], f"trial {trial}: {errors!r}"
        names = sorted(p.name for p in out.parent.iterdir() if not p.name.endswith(".lock"))
        assert len(names) == 2 and names[0] == "out" and names[1].startswith("out.previous-")
        assert all(is_run_dir(out.parent / n) for n in names)


_STUCK = """
import sys, time
from pathlib import Path
import rig.analysis.spark, rig.variant_pool
def simulate(variant, path, **kw):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\\n")
    time.sleep(600)
rig.variant_pool.simulate = simulate  # simulated here: --workers 1
rig.analysis.spark.check_java = lambda: None
sys.argv = ["rig", "run", sys.argv[1], "--out", sys.argv[2], "--no-report", "--quiet",
            "--workers", "1"]
from rig.cli import main
main()
"""


def _stuck_run(scenario: Path, out: Path) -> tuple[subprocess.Popen[str], Path]:
    """A `rig run` that stops in the middle of simulating; returns it and its staging folder."""
    proc = subprocess.Popen([sys.executable, "-c", _STUCK, str(scenario), str(out)],
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [p for p in out.parent.glob(f".{out.name}.staging-*")
                 if p.is_dir() and any(p.glob("events/*.jsonl"))]
        if found:
            return proc, found[0]
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the run never started simulating")


def test_a_staging_folder_of_a_killed_run_is_removed_by_the_next(write_scenario: Any,
                                                                 tmp_path: Path,
                                                                 fast: None) -> None:
    scenario, out = write_scenario(SMALL), tmp_path / "out"
    proc, staging = _stuck_run(scenario, out)
    alive, alive_staging = _stuck_run(scenario, tmp_path / "other")
    proc.kill()  # kill -9: no cleanup of its own
    proc.communicate()
    assert staging.exists()
    _run(scenario, out)
    assert not staging.exists() and not staging.with_name(staging.name + ".owner").exists()
    assert alive_staging.exists(), "a live run's staging folder was taken for stale"
    alive.kill()
    alive.communicate()


def test_sigterm_is_handled_like_ctrl_c(write_scenario: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc, staging = _stuck_run(write_scenario(SMALL), out)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and err.strip() == "rig: terminated"
    assert not staging.exists() and not out.exists() and _hidden(tmp_path) == []


def _cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from rig.cli import app

    return CliRunner().invoke(app, list(args))


def _one_line(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    for needle in needles:
        assert needle in result.output, result.output


def test_out_below_a_file_is_one_line(write_scenario: Any, tmp_path: Path, fast: None) -> None:
    (tmp_path / "file").write_text("mine")
    result = _cli("run", str(write_scenario(SMALL)), "--out", str(tmp_path / "file" / "sub"))
    _one_line(result, "is a file, not a folder")
    assert (tmp_path / "file").read_text() == "mine"


def test_a_too_long_name_is_one_line(write_scenario: Any, tmp_path: Path, fast: None) -> None:
    result = _cli("run", str(write_scenario(SMALL)), "--out", str(tmp_path / ("x" * 300)))
    _one_line(result, "300 characters")


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_a_file_system_that_refuses_the_run_is_one_line(write_scenario: Any, tmp_path: Path,
                                                        fast: None,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        code: int) -> None:
    """Read-only, full or forbidden: at the start (the staging folder) or mid-run (the events)."""
    scenario = write_scenario(SMALL)
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: Any, **kw: Any) -> None:
        if ".staging-" in self.name:
            raise OSError(code, os.strerror(code), str(self))
        real_mkdir(self, *args, **kw)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "mkdir", mkdir)
        _one_line(_cli("run", str(scenario), "--out", str(tmp_path / "out")), os.strerror(code))

    def simulate(variant: Any, path: Path, **kw: Any) -> Any:
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(variant_pool, "simulate", simulate)
    _one_line(_cli("run", str(scenario), "--out", str(tmp_path / "out"), "--workers", "1"),
              os.strerror(code))
    assert not (tmp_path / "out").exists() and _hidden(tmp_path) == []


def test_a_staging_folder_refused_leaves_no_owner_file(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The owner file is made before its folder; when the folder is refused, the owner file
    goes too, at once: left behind (locked until the collector closed it), the next run of
    this process could not clean it and the user's folder kept a stray `.owner`."""
    from rig import promotion
    from rig.errors import RunDirError

    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: Any, **kw: Any) -> None:
        if ".staging-" in self.name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        real_mkdir(self, *args, **kw)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with pytest.raises(RunDirError, match=os.strerror(errno.ENOSPC)):
        promotion.stage(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# Each child is a whole `rig run` up to its analysis, which is replaced: the run writes its
# summary, says it is ready, and waits for the word to finish, so both promote together. Without
# the analysis nothing would use Spark, so the JVM `rig run` boots beside its simulation
# (start_in_background) is not booted either: 24 JVMs started for nothing cost two minutes of
# CPU, and what is tested (the run directory's finishing rename) never reaches Spark.
_FINISHER = """
import sys, threading, time
from pathlib import Path
import rig.analysis.spark, rig.pipeline
from rig.pipeline import RunOptions, run
from rig.rundir import write_json
from rig.progress import Progress
scenario, root, me, trials = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
trial = 0
def summarise(run_dir, scenario, results, **_):
    summary = {"scenario": scenario.name, "variants": {}, "expectations": []}
    write_json(run_dir / "summary.json", summary)
    (root / f"ready{trial}-{me}").touch()
    while not (root / f"go{trial}").exists():
        time.sleep(0.001)
    return summary
def start_in_background(master=None):
    booted = threading.Thread(target=lambda: None)
    booted.start()
    return booted
rig.pipeline.summarise = summarise
rig.analysis.spark.check_java = lambda: None
rig.analysis.spark.start_in_background = start_in_background
for trial in range(trials):
    run(scenario, RunOptions(out=root / f"t{trial}" / "out", report=False), Progress(quiet=True))
    (root / f"done{trial}-{me}").touch()
assert "pyspark" not in sys.modules, "a finishing run reached Spark"
"""


def _wait_for(paths: list[Path], procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + 120
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, paths
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)


@pytest.mark.slow  # a dozen runs in each of two Python processes
def test_processes_finishing_together_never_strand_one(write_scenario: Any,
                                                       tmp_path: Path) -> None:
    """As above with two processes (as two shells or containers would run them), a dozen
    times; each process runs its dozen one after another (starting 24 interpreters cost more
    than the runs)."""
    scenario, trials = write_scenario(SMALL), 12
    procs = [subprocess.Popen([sys.executable, "-c", _FINISHER, str(scenario), str(tmp_path),
                               str(me), str(trials)], stderr=subprocess.PIPE, text=True,
                              cwd=ROOT) for me in range(2)]
    try:
        for trial in range(trials):
            _wait_for([tmp_path / f"ready{trial}-{me}" for me in range(2)], procs)
            (tmp_path / f"go{trial}").touch()
            _wait_for([tmp_path / f"done{trial}-{me}" for me in range(2)], procs)
            out = tmp_path / f"t{trial}" / "out"
            names = sorted(p.name for p in out.parent.iterdir() if not p.name.endswith(".lock"))
            assert len(names) == 2 and names[0] == "out" and names[1].startswith("out.previous-")
            assert all(is_run_dir(out.parent / n) for n in names)
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    errors = [err for p in procs for err in [p.communicate(timeout=120)[1]] if p.returncode]
    assert errors == [], errors
