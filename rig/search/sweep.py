"""`rig sweep`: one scenario over a grid of parameters and seeds, simulated as Spark tasks.

Each point becomes a run directory laid out like `rig run`'s (scenario.yaml, run.json,
command.txt, events/, summary.json), so `rig report` works on any of them. The executors
simulate and write the event logs into the output folder (it must be shared storage on a real
cluster); the driver analyses every point in the same Spark application, then writes
sweep.json and the sweep report.
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rig import rundir
from rig._version import __version__
from rig.pipeline import RunOptions, _run_json, summarise
from rig.rundir import write_json
from rig.scenario.load import load_scenario
from rig.scenario.model import Scenario
from rig.scenario.resolve import resolved_yaml
from rig.search.grid import Axis, Point, check_runs, parse_grid, points
from rig.search.outdir import prepare_out
from rig.simulate import SimulationResult, simulate

MARKER = "sweep.json"
ANALYSIS_THREADS = 4
Echo = Callable[[str], None]


@dataclass
class SweepOptions:
    grid: Sequence[str]
    seeds: int = 1
    out: Path | None = None
    spark_master: str | None = None
    metrics: Sequence[str] = ()
    report: bool = True
    command: str = ""


@dataclass
class SweepOutcome:
    out: Path
    points: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None
    wall_s: dict[str, float] = field(default_factory=dict)


def point_folder(point: Point) -> str:
    return f"p{point.index:03d}-seed{point.seed}"


def point_command(file: str, point: Point, run_dir: Path) -> str:
    args = ["rig", "run", file]
    for assignment in point.sets():
        args += ["--set", assignment]
    return shlex.join([*args, "--seed", str(point.seed), "--out", str(run_dir)])


def simulate_point(task: tuple[Scenario, str, str, dict[str, Any]]
                   ) -> dict[str, SimulationResult]:
    """Executor side: write one point's run directory and simulate each variant into it.

    Module-level so Spark executors import it by name; returns the simulation results, which
    the driver needs for the checks in summary.json.
    """
    scenario, folder, command, sweep_info = task
    run_dir = Path(folder)
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    rundir.write_scenario(run_dir, resolved_yaml(scenario, __version__))
    rundir.write_command(run_dir, command)
    run_info = _run_json(scenario, RunOptions(command=command))
    rundir.write_run(run_dir, {**run_info, "sweep": sweep_info})
    return {variant.name: simulate(variant, rundir.event_log(run_dir, variant.name),
                                   scenario=scenario.name)
            for variant in scenario.variants}


def numeric_leaves(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number below `value` by dotted path (booleans are not numbers here)."""
    out: dict[str, float] = {}
    if isinstance(value, dict):
        for key, child in value.items():
            out.update(numeric_leaves(child, f"{prefix}{key}."))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out[prefix[:-1]] = value
    return out


def point_metrics(summary: dict[str, Any]) -> dict[str, dict[str, float]]:
    """A point's metrics: for each variant, the numeric leaves of `variants.<name>`."""
    return {name: numeric_leaves(entry) for name, entry in (summary.get("variants") or {}).items()}


def sweep(file: Path, options: SweepOptions, echo: Echo) -> SweepOutcome:
    """Run every point of the grid × seeds; write run dirs, sweep.json and report.html."""
    axes: list[Axis] = parse_grid(options.grid)
    check_runs(axes, options.seeds)
    base = load_scenario(file)
    seeds = [base.seed + k for k in range(options.seeds)]
    grid = points(axes, seeds)
    # Load every point on the driver first: a bad value is one clear error before any run.
    scenarios = [load_scenario(file, sets=p.sets(), seed=p.seed) for p in grid]
    out = (options.out or Path("reports") / f"{base.name}-sweep").resolve()
    previous = prepare_out(out, MARKER, "sweep")
    if previous is not None:
        echo(f"the previous results there were kept as {previous}")
    tasks = []
    for point, scenario in zip(grid, scenarios, strict=True):
        run_dir = out / "runs" / point_folder(point)
        info = {"sweep": str(out), "index": point.index, "params": point.params,
                "seed": point.seed}
        tasks.append((scenario, str(run_dir), point_command(str(file), point, run_dir), info))
    from rig.analysis.spark import DEFAULT_MASTER
    from rig.search.spark_tasks import spark_map

    master = options.spark_master or DEFAULT_MASTER
    echo(f"sweep {base.name}: {len(grid)} runs ({' × '.join(str(len(a.values)) for a in axes)}"
         f" points × {len(seeds)} seeds) as Spark tasks on {master} …")
    started = time.perf_counter()
    results = spark_map(simulate_point, tasks, master)
    simulated = time.perf_counter()
    echo(f"  simulated in {simulated - started:.1f} s; analysing each run on the driver …")
    # Spark runs jobs from several driver threads at once: the small analyses overlap.
    from concurrent.futures import ThreadPoolExecutor

    def analyse(i: int) -> dict[str, Any]:
        point, scenario, task = grid[i], scenarios[i], tasks[i]
        run_dir = Path(task[1])
        summary = summarise(run_dir, scenario, results[i], spark_master=master)
        statuses = {name: v["checks"]["status"] for name, v in summary["variants"].items()}
        return {"index": point.index, "params": point.params, "seed": point.seed,
                "run_dir": str(run_dir.relative_to(out)),
                "expectations_failed": sum(e["ok"] is not True for e in summary["expectations"]),
                "checks": statuses, "metrics": point_metrics(summary)}

    with ThreadPoolExecutor(max_workers=ANALYSIS_THREADS) as pool:
        rows = list(pool.map(analyse, range(len(grid))))
    analysed = time.perf_counter()
    outcome = SweepOutcome(out, rows, wall_s={"simulation": round(simulated - started, 3),
                                              "analysis": round(analysed - simulated, 3)})
    record = {"scenario": base.name, "file": str(file), "rig_version": __version__,
              "spark_master": master, "command": options.command,
              "grid": {a.key: list(a.values) for a in axes}, "seeds": seeds,
              "wall_seconds": outcome.wall_s, "points": rows}
    write_json(out / MARKER, record)
    if options.report:
        from rig.report.sweep import available_metrics, render_sweep

        known = set(available_metrics(record))
        for metric in options.metrics:
            if metric not in known:
                echo(f"  no run's summary has {metric!r} (a path below variants.<name>, e.g. "
                     "produce.acked_lost); the report leaves it out")

        outcome.report = render_sweep(record, rundir.report_path(out), options.metrics)
    return outcome
