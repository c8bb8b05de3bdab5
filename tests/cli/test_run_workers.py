"""`rig run` simulates a scenario's variants side by side (rig.variant_pool): the same event logs
and results as one after another, a plugin's failure in a worker still names it, and a run
stopped meanwhile leaves neither workers nor a staging folder behind."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.errors import StrategyFailure
from rig.progress import Progress
from rig.scenario.load import load_scenario
from rig.strategies import registry
from rig.variant_pool import default_workers, simulate_variants
from tests.conftest import ROOT, SMALL
from tests.processes import descendants, forkserver_workers, wait_gone

Write = Callable[..., Path]

THREE = SMALL.replace("""  v7:
    strategies: {fetch_session: incremental}
""", """  v7:
    strategies: {fetch_session: incremental}
  v7-rf:
    kafka: "2.4"
    strategies: {fetch_session: incremental}
workload:
  producers:
    - {topic: test, rate: 500, keys: {uniform: 100}, acks: all}
""")


def _logs(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "events").glob("*.jsonl"))}


def test_side_by_side_writes_the_logs_and_results_one_by_one_would(write_scenario: Write,
                                                                    tmp_path: Path) -> None:
    scenario = load_scenario(write_scenario(THREE))
    quiet = Progress(quiet=True)
    here = simulate_variants(scenario, tmp_path / "here", workers=1, allow_plugin_paths=False,
                             progress=quiet)
    pooled = simulate_variants(scenario, tmp_path / "pool", workers=2, allow_plugin_paths=False,
                               progress=quiet)
    assert list(pooled) == ["v6", "v7", "v7-rf"]  # the scenario's order, whichever ended first
    assert _logs(tmp_path / "pool") == _logs(tmp_path / "here")
    assert len(_logs(tmp_path / "here")) == 3
    for name in here:
        assert dataclasses.replace(pooled[name], wall_s=0) == dataclasses.replace(
            here[name], wall_s=0)
        assert here[name].events > 1000


def test_a_plugin_failing_in_a_worker_is_the_runs_strategy_failure(write_scenario: Write,
                                                                   tmp_path: Path) -> None:
    # Named by path, so a worker can import it (a class registered by rig.testing cannot be).
    path = "tests.plugins.test_plugins_guard:CrashingSessions"
    scenario = load_scenario(write_scenario(SMALL.replace(
        "strategies: {fetch_session: incremental}",
        "strategies: {fetch_session: '" + path + "'}")))
    assert scenario.variant("v7").strategies["fetch_session"].name == path
    with pytest.raises(StrategyFailure) as failure:
        simulate_variants(scenario, tmp_path / "run", workers=2, allow_plugin_paths=True,
                          progress=Progress(quiet=True))
    assert (failure.value.variant, failure.value.plugin) == ("v7", path)
    assert "raised ZeroDivisionError: division by zero" in str(failure.value)


def test_a_strategy_registered_in_this_process_runs_here(write_scenario: Write,
                                                         tmp_path: Path) -> None:
    from tests.plugins.test_plugins_guard import CrashingSessions

    with registry.temporarily("fetch_session", CrashingSessions, "crashing-here") as name:
        scenario = load_scenario(write_scenario(SMALL.replace(
            "strategies: {fetch_session: incremental}",
            "strategies: {fetch_session: " + name + "}")))
        with pytest.raises(StrategyFailure) as failure:  # found, so it ran in this process
            simulate_variants(scenario, tmp_path / "run", workers=2, allow_plugin_paths=False,
                              progress=Progress(quiet=True))
    assert failure.value.origin == registry.TEST


def test_workers_are_one_per_variant_up_to_the_cores() -> None:
    cores = len(os.sched_getaffinity(0))
    assert default_workers(1) == 1
    assert default_workers(2) == min(2, cores)
    assert default_workers(1000) == cores


# Busy for far longer than the test waits (an idle hour would be simulated in closed form, in
# seconds): the workers are still simulating when the signal comes.
LONG = SMALL.replace("duration: 5s", "duration: 5m") + """workload:
  producers:
    - {topic: test, rate: 1000, keys: {uniform: 1000}, acks: all}
"""


def _simulating(proc: subprocess.Popen[str], tmp_path: Path, find: Callable[[], set[int]],
                enough: Callable[[set[int]], bool]) -> set[int]:
    """Wait until the run's staging folder holds event logs and `find()` gives `enough`
    processes; those processes."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = find()
        staging = [p for p in tmp_path.glob(".out.staging-*") if any(p.glob("events/*.jsonl"))]
        if staging and enough(found):
            return found
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the workers never started simulating")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_while_its_workers_simulate_leaves_nothing_behind(
        write_scenario: Write, tmp_path: Path, stop: signal.Signals) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "RIG_SPARK_CDS": "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rig.cli", "run", str(write_scenario(LONG)), "--out", str(out),
         "--no-report", "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
        # As from a terminal: pytest-xdist's workers ignore SIGINT, and an ignored signal is
        # inherited across exec, so without this the run would never see the Ctrl-C.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the forkserver and its two workers (and the JVM)
    workers = _simulating(proc, tmp_path, lambda: descendants(proc.pid),
                          lambda found: len(found) >= 3)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, 128 + signal.SIGTERM), err
    assert "Traceback" not in err, err
    assert not wait_gone(workers), "a worker outlived the run"
    assert not out.exists() and not list(tmp_path.glob(".out*"))


def test_a_worker_killed_mid_run_is_named_and_the_run_ends(write_scenario: Write,
                                                           tmp_path: Path) -> None:
    """The out-of-memory killer's SIGKILL on one variant's process: a pool would start another
    worker and wait for the lost variant for ever (it did: `rig run` hung). Now the run ends at
    once, exit 2, naming the variant and the signal; the other worker is killed too and
    nothing is left behind."""
    out = tmp_path / "out"
    env = {**os.environ, "RIG_SPARK_CDS": "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rig.cli", "run", str(write_scenario(LONG)), "--out", str(out),
         "--no-report", "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    workers = _simulating(proc, tmp_path, lambda: forkserver_workers(proc.pid),
                          lambda found: len(found) == 2)
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()  # the old pool waited here for ever
        raise
    assert proc.returncode == 2, err
    assert "Traceback" not in err, err
    assert "was killed by SIGKILL (the kernel's out-of-memory killer" in err, err
    assert "`--workers 1` simulates the variants one at a time" in err, err
    assert any(f"variant {v} was killed" in err for v in ("v6", "v7")), err
    assert not wait_gone(workers), "a worker outlived the run"
    assert not out.exists() and not list(tmp_path.glob(".out*"))
