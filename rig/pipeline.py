"""The stages of `rig run`, in order: load → simulate → analyse → summarise → report → judge.

Each stage reads what the previous one wrote to the run directory. The run is built in a staging
folder beside the target and moved into place at the end, so a failed run leaves the previous
results untouched, and a previous run is kept (renamed), never overwritten.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig._version import __version__
from rig.checks import Status, merge
from rig.errors import RunDirError, StrategyFailure
from rig.expectations import evaluate
from rig.progress import Progress
from rig.scenario.load import load_scenario
from rig.scenario.model import Scenario
from rig.scenario.resolve import resolved_yaml
from rig.simulate import SimulationResult, simulate
from rig.strategies import guard

RUN_MARKER = "run.json"


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
    if target.exists() and not target.is_dir():
        raise RunDirError(f"{target} exists and is a file; choose another --out")
    if target.is_dir() and any(target.iterdir()) and not is_run_dir(target):
        raise RunDirError(f"{target} exists, is not empty and is not a rig run directory; "
                          "rig will not write into it: choose another --out or move it away")


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
    os.replace(tmp, path)


def _promote(staging: Path, target: Path) -> Path | None:
    """Move the finished run into place; keep an earlier run beside it under a dated name."""
    previous = None
    if target.is_dir() and any(target.iterdir()):
        stamp = dt.datetime.fromtimestamp(target.joinpath(RUN_MARKER).stat().st_mtime)
        previous = target.with_name(f"{target.name}.previous-{stamp:%Y%m%d-%H%M%S}")
        n = 1
        while previous.exists():
            n += 1
            previous = target.with_name(f"{target.name}.previous-{stamp:%Y%m%d-%H%M%S}-{n}")
        target.rename(previous)
    elif target.is_dir():
        target.rmdir()
    staging.rename(target)
    return previous


def _keep_partial(staging: Path, target: Path) -> Path:
    """Keep a run that a strategy broke off beside the target, under a dated name: its event logs
    show what led up to the failure. The target itself stays untouched."""
    stamp = dt.datetime.now()
    kept = target.with_name(f"{target.name}.failed-{stamp:%Y%m%d-%H%M%S}")
    n = 1
    while kept.exists():
        n += 1
        kept = target.with_name(f"{target.name}.failed-{stamp:%Y%m%d-%H%M%S}-{n}")
    staging.rename(kept)
    return kept


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
                              "strategies": {k: r.name for k, r in v.strategies.items()}}
                     for v in scenario.variants},
    }


def _checks_summary(result: SimulationResult) -> dict[str, Any]:
    status = merge(c.status for c in result.checks)
    return {"ok": status.as_json, "status": status.value,
            "violations": [v for c in result.checks for v in c.violations],
            "checks": {c.name: {"status": c.status.value, "note": c.note} for c in result.checks},
            "sizes_verified_by_encoder": result.sizes_verified}


def run(file: Path, options: RunOptions, progress: Progress) -> RunOutcome:
    scenario = load_scenario(file, sets=options.sets, seed=options.seed,
                             only_variants=options.variants)
    target = options.out or Path("reports") / scenario.name
    check_target(target)
    guard.preflight(scenario.variants, allow_paths=options.allow_plugin_paths)
    from rig.analysis.spark import check_java  # no pyspark import: only runs `java -version`

    check_java()  # before simulating: a long run must not end in "no Java"
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.staging-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        run_info = _run_json(scenario, options)
        (staging / "scenario.yaml").write_text(resolved_yaml(scenario, __version__), "utf-8")
        (staging / "command.txt").write_text(options.command + "\n", "utf-8")
        write_json(staging / RUN_MARKER, run_info)
        results: dict[str, SimulationResult] = {}
        for variant in scenario.variants:
            progress.start(f"simulating {variant.name}", variant.duration_ms * 1000)
            results[variant.name] = simulate(
                variant, staging / "events" / f"{variant.name}.jsonl", scenario=scenario.name,
                allow_plugin_paths=options.allow_plugin_paths, progress=progress.update)
            r = results[variant.name]
            progress.say(f"  {variant.name}: {r.events:,} events in {r.wall_s:.2f} s")
        progress.say("analysing the event logs with Spark …")
        summary = summarise(staging, scenario, results, spark_master=options.spark_master)
        if options.report:
            from rig.report import render_report

            render_report(staging)
    except StrategyFailure as failure:
        failure.partial_run = _keep_partial(staging, target)
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    previous = _promote(staging, target)
    failed = [e for e in summary["expectations"] if e["ok"] is not True]
    failed_checks = [f"{name}: {c['status']}" for name, v in summary["variants"].items()
                     for c in [v["checks"]]
                     if c["status"] != Status.OK.value and not c["expected_by_scenario"]]
    return RunOutcome(target, summary, failed, failed_checks, previous)


def summarise(run_dir: Path, scenario: Scenario, results: dict[str, SimulationResult], *,
              spark_master: str | None = None) -> dict[str, Any]:
    """Analyse `run_dir`'s event logs, judge the expectations, write and return summary.json."""
    from rig.analysis import analyze_run  # Spark stays out of `import rig`
    from rig.analysis.stages import run_stages

    metrics = analyze_run(run_dir, spark_master=spark_master)
    for name, extra in run_stages(run_dir, spark_master=spark_master).items():
        metrics["variants"].setdefault(name, {}).update(extra)
    summary: dict[str, Any] = {"scenario": scenario.name, "seed": scenario.seed,
                               "rig_version": __version__,
                               "scenario_sha256": scenario.source_sha256,
                               "variants": {}}
    # A variant whose checks an expectation speaks about (e.g. "this variant must lose
    # acknowledged records") is judged by that expectation, not by its checks' status.
    judged = {e.metric.split(".")[1] for e in scenario.expectations
              if e.metric and e.metric.startswith("variants.")
              and e.metric.split(".")[2:3] == ["checks"]}
    for name, result in results.items():
        entry = dict(metrics["variants"].get(name, {}))
        entry["checks"] = {**_checks_summary(result), "expected_by_scenario": name in judged}
        entry["simulation"] = {"events": result.events, "steps": result.steps,
                               "wall_seconds": round(result.wall_s, 3)}
        summary["variants"][name] = entry
    summary["expectations"] = evaluate(scenario.expectations, summary)
    write_json(run_dir / "summary.json", summary)
    return summary
