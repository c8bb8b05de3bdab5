"""The stages of `rig run`, in order: load → simulate → analyse → summarise → report → judge.

Each stage reads what the previous one wrote to the run directory (laid out by rig.rundir): the
simulation writes the event logs and checks.json, and `analyze` builds the metric tables and
summary.json from those files alone, so `rig analyze RUN_DIR` can redo it. The run is built in
a staging folder and put in place at the end (rig/promotion.py), so a failed run leaves the
previous results untouched, and a previous run is kept (renamed), never overwritten.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig import cost, promotion, rundir
from rig._version import __version__
from rig.checks import Status, merge
from rig.errors import StrategyFailure, UserError
from rig.expectations import evaluate
from rig.progress import Progress
from rig.scenario.load import load_scenario
from rig.scenario.model import Expectation, Scenario
from rig.scenario.resolve import resolved_yaml
from rig.scenario.summary_keys import path_parts
from rig.simulate import SimulationResult
from rig.strategies import guard
from rig.variant_pool import default_workers, simulate_variants

RUN_MARKER = rundir.RUN_JSON


@dataclass
class RunOptions:
    out: Path | None = None
    seed: int | None = None
    sets: Sequence[str] = ()
    variants: Sequence[str] = ()
    report: bool = True
    spark_master: str | None = None
    allow_plugin_paths: bool = False
    command: str = ""
    price_profile: str | None = None  # --price-profile: every variant's traffic at these prices
    # Processes simulating the variants side by side (rig.variant_pool); None: one per variant,
    # up to the cores. 1, the default for callers in Python, simulates them here.
    workers: int | None = 1


@dataclass
class RunOutcome:
    run_dir: Path
    summary: dict[str, Any]
    failed_expectations: list[dict[str, Any]] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)
    previous: Path | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.failed_expectations or self.failed_checks else 0


def is_run_dir(path: Path) -> bool:
    marker = path / RUN_MARKER
    try:
        return "rig_version" in orjson.loads(marker.read_bytes())
    except (OSError, orjson.JSONDecodeError, TypeError):
        return False


def check_target(target: Path) -> None:
    """Refuse a target that exists and is not an earlier rig run: it may hold someone's files."""
    promotion.check(promotion.locate(target), is_run_dir, "run directory")




def _run_json(scenario: Scenario, options: RunOptions) -> dict[str, Any]:
    return {
        "scenario": scenario.name,
        "description": scenario.description,
        "file": scenario.file,
        "seed": scenario.seed,
        "rig_version": __version__,
        "scenario_sha256": scenario.source_sha256,
        "command": options.command,
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "variants": {v.name: {"duration_ms": v.duration_ms,
                              "fetch_version": v.config.fetch_version,
                              "kafka": v.kafka,
                              "strategies": {k: r.name for k, r in v.strategies.items()},
                              "cost": cost.resolve(v.document.get("cost"),
                                                   options.price_profile).as_json()}
                     for v in scenario.variants},
        # How the report presents the run (rig.report.firstscreen reads it).
        "report": {"headline": list(scenario.report_headline)},
    }


def _checks_summary(result: SimulationResult) -> dict[str, Any]:
    status = merge(c.status for c in result.checks)
    return {"ok": status.as_json, "status": status.value,
            "violations": [v for c in result.checks for v in c.violations],
            "checks": {c.name: {"status": c.status.value, "note": c.note} for c in result.checks},
            "sizes_verified_by_encoder": result.sizes_verified}


def _expectation_json(expectation: Expectation) -> dict[str, Any]:
    return dataclasses.asdict(expectation)


def _expectation_of(record: dict[str, Any]) -> Expectation:
    ratio = record.get("ratio")
    return Expectation(**{**record, "ratio": tuple(ratio) if ratio else None})


def record_checks(run_dir: Path, scenario: Scenario,
                  results: dict[str, SimulationResult]) -> None:
    """Write RUN_DIR/checks.json: each variant's online checks and simulation figures (in the
    scenario's variant order) and the expectations to judge the summary by — all `analyze`
    needs beside the event logs and run.json."""
    rundir.write_checks(run_dir, {
        "variants": {name: {"checks": _checks_summary(result),
                            "simulation": {"events": result.events, "steps": result.steps,
                                           "wall_seconds": round(result.wall_s, 3)}}
                     for name, result in results.items()},
        "expectations": [_expectation_json(e) for e in scenario.expectations],
    })


def run(file: Path, options: RunOptions, progress: Progress) -> RunOutcome:
    scenario = load_scenario(file, sets=options.sets, seed=options.seed,
                             only_variants=options.variants)
    target = options.out or Path("reports") / scenario.name
    check_target(target)
    guard.preflight(scenario.variants, allow_paths=options.allow_plugin_paths)
    from rig.analysis.spark import (
        check_java,
        last_start_seconds,
        start_in_background,
        stop_spark,
    )

    check_java()  # before simulating: a long run must not end in "no Java"
    # The JVM boots on the other core while the (single-threaded) simulation runs, and is ready
    # or nearly so when the analysis needs it (issue 19). A failed run stops the session it
    # started; one this process had before (a sweep's, a test's) is not this run's to stop.
    ours = last_start_seconds() is None
    booting = start_in_background(options.spark_master)
    stop = stop_spark if ours else (lambda: None)
    stage = promotion.stage(target)
    staging = stage.path
    try:
        run_info = _run_json(scenario, options)
        rundir.write_scenario(staging, resolved_yaml(scenario, __version__))
        rundir.write_command(staging, options.command)
        rundir.write_run(staging, run_info)
        workers = (options.workers if options.workers is not None
                   else default_workers(len(scenario.variants)))
        results = simulate_variants(scenario, staging, workers=workers,
                                    allow_plugin_paths=options.allow_plugin_paths,
                                    progress=progress)
        progress.say("analysing the event logs with Spark …")
        summary = summarise(staging, scenario, results, spark_master=options.spark_master,
                            say=progress.say, begin=progress.begin)
        if options.report:
            from rig.report import render_report

            started = time.perf_counter()
            render_report(staging)
            progress.say(f"  report: {time.perf_counter() - started:.2f} s")
    except StrategyFailure as failure:
        _stop_after(booting, stop)
        failure.partial_run = stage.keep("failed")
        raise
    except BaseException as exc:
        _stop_after(booting, stop)
        stage.discard()
        problem = promotion.write_error(exc, target) if isinstance(exc, OSError) else exc
        if problem is not exc:  # a full or read-only disk: the user's to fix, no traceback
            raise problem from None
        raise
    previous = stage.promote(is_run_dir, RUN_MARKER, "run directory")
    failed = [e for e in summary["expectations"] if e["ok"] is not True]
    return RunOutcome(target, summary, failed, failed_checks(summary), previous)


def _stop_after(booting: threading.Thread, stop: Callable[[], None]) -> None:
    """A failed run leaves no Spark session behind: the one starting for it is stopped once up
    (on its own thread, so the error is not kept waiting for a JVM to boot)."""

    def later() -> None:
        booting.join()
        stop()

    if booting.is_alive():
        threading.Thread(target=later, name="rig-spark-stop", daemon=True).start()
    else:
        stop()


def failed_checks(summary: dict[str, Any]) -> list[str]:
    """"variant: status" for each variant whose checks did not pass, unless an expectation
    judges that variant's checks."""
    return [f"{name}: {c['status']}" for name, v in summary["variants"].items()
            for c in [v["checks"]]
            if c["status"] != Status.OK.value and not c["expected_by_scenario"]]


def summarise(run_dir: Path, scenario: Scenario, results: dict[str, SimulationResult], *,
              spark_master: str | None = None,
              say: Callable[[str], None] | None = None,
              begin: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Record the checks of a finished simulation, then `analyze` the run directory."""
    record_checks(run_dir, scenario, results)
    return analyze(run_dir, spark_master=spark_master, say=say, begin=begin)


def analyze(run_dir: Path, *, spark_master: str | None = None,
            say: Callable[[str], None] | None = None,
            begin: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Analyse RUN_DIR from its files alone (run.json, checks.json, the event logs): write the
    metric tables and summary.json, judge the expectations, and return the summary.

    The summary is the same whenever it is rebuilt from the same files, but for its `timings`
    (where this analysis spent its time). `say` hears a line per step as it ends, `begin` its
    name as it starts.
    """
    from rig.analysis.stages import analyse  # Spark stays out of `import rig`

    run_dir = Path(run_dir)
    run_info = rundir.read_run(run_dir)
    recorded = rundir.read_checks(run_dir)
    if recorded is None:
        raise UserError(f"{rundir.checks_path(run_dir)} is missing: the run never finished "
                          "simulating, or an older rig wrote it (run it again with `rig run`)")
    metrics, timings = analyse(run_dir, spark_master=spark_master, say=say, begin=begin)
    expectations = [_expectation_of(e) for e in recorded.get("expectations") or []]
    summary: dict[str, Any] = {"scenario": run_info.get("scenario"),
                               "seed": run_info.get("seed"),
                               "rig_version": __version__,
                               "scenario_sha256": run_info.get("scenario_sha256"),
                               "variants": {}}
    # A variant whose checks an expectation speaks about (e.g. "this variant must lose
    # acknowledged records") is judged by that expectation, not by its checks' status.
    judged = {parts[1] for parts in (path_parts(e.metric) for e in expectations if e.metric)
              if parts[0] == "variants" and parts[2:3] == ["checks"]}
    for name, online in (recorded.get("variants") or {}).items():
        entry = dict(metrics.get(name, {}))
        entry["checks"] = {**online["checks"], "expected_by_scenario": name in judged}
        entry["simulation"] = online["simulation"]
        summary["variants"][name] = entry
    summary["expectations"] = evaluate(expectations, summary)
    summary["timings"] = timings.as_json()
    rundir.write_summary(run_dir, summary)
    return summary
