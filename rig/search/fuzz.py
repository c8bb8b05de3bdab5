"""`rig fuzz`: random fault schedules against the safety checks, shrinking what fails.

For each variant, run i draws its schedule and seed from `run_rng(seed, i)`, so a session is
reproducible from `--seed`. Runs go on every core (rig.search.parallel: `--workers`, default all
cores) or as Spark tasks (`--spark-master`); either way results are folded in run order, so the
same runs give the same violations and the same fuzz.json (apart from fuzz_report.TIMING_KEYS)
whatever the number of workers. The first violating run (lowest index) is shrunk to a 1-minimal
schedule, written as a runnable scenario, and replayed from what was written: its event-log
digest must equal the run's, else the session reports an error instead of a violation. What the
session found, and fuzz.json, are rig.search.fuzz_report's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from rig.errors import UserError
from rig.scenario.load import load_scenario
from rig.scenario.source import load_yaml_file
from rig.search.bounds import FuzzBounds, variant_bounds
from rig.search.case_files import write_minimal, write_unsettled
from rig.search.cases import CaseResult, compiler, judge, run_case
from rig.search.draw import Fault, draw_schedule, run_rng
from rig.search.fuzz_report import (
    MARKER,
    FuzzOptions,
    FuzzOutcome,
    Replay,
    VariantOutcome,
    write_report,
)
from rig.search.outdir import prepare_out
from rig.search.parallel import Job, Tally, fuzz_gc, run_local
from rig.search.shrink import shrink
from rig.worker_processes import all_cores

DEFAULT_RUNS = 100
PROGRESS_EVERY_S = 5.0
Echo = Callable[[str], None]


def draw_case(data: dict[str, Any], variant: str | None, bounds: FuzzBounds, seed: int,
              index: int) -> tuple[dict[str, Any], str | None, list[Fault], int, int]:
    rng = run_rng(seed, index)
    faults = draw_schedule(rng, bounds)
    return data, variant, faults, rng.randrange(2**31), index


def run_task(task: tuple[dict[str, Any], str | None, list[Fault], int, int]) -> CaseResult:
    """One fuzz run; module-level so Spark executors can import it by name (each executor
    process compiles the scenario once: rig.search.cases.compiler)."""
    data, variant, faults, seed, index = task
    return run_case(data, variant, faults, seed, index)


def _progress(name: str, workers: int, duration_ms: int, started: float, echo: Echo
              ) -> Callable[[Tally], None]:
    last = [started]

    def report(tally: Tally) -> None:
        now = time.perf_counter()
        if now - last[0] < PROGRESS_EVERY_S:
            return
        last[0] = now
        wall = now - started
        per_wall = tally.done * duration_ms / 1000 / wall
        echo(f"  {name}: {tally.done} runs, {wall:.1f} s, {tally.done / wall:.1f} runs/s, "
             f"{per_wall:.0f} simulated s per wall s ({per_wall / workers:.0f} per worker), "
             f"{len(tally.violating)} violating")

    return report


def _run_variant(data: dict[str, Any], variant: str | None, bounds: FuzzBounds,
                 options: FuzzOptions, deadline: float | None, echo: Echo,
                 duration_ms: int) -> VariantOutcome:
    name = variant or "default"
    tally = Tally(until_violation=options.until_violation)
    workers = 1 if options.spark_master else (options.workers or all_cores())
    started = time.perf_counter()
    if options.spark_master:
        from rig.search.spark_tasks import spark_map

        assert options.runs is not None, "checked by fuzz()"
        tasks = [draw_case(data, variant, bounds, options.seed, i) for i in range(options.runs)]
        results = spark_map(run_task, tasks, options.spark_master)
        for result in sorted(results, key=lambda r: r.index):
            if tally.add(result):
                break
    else:
        job = Job(data, variant, bounds, options.seed)
        run_local(job, options.runs, workers, tally, deadline,
                  _progress(name, workers, duration_ms, started, echo))
    outcome = VariantOutcome(name, tally.done, time.perf_counter() - started, tally.found,
                             [r.index for r in tally.violating], tally=tally, workers=workers,
                             duration_ms=duration_ms)
    return outcome


def _fuzz_variant(file: Path, data: dict[str, Any], variant: str | None, bounds: FuzzBounds,
                  options: FuzzOptions, deadline: float | None, echo: Echo,
                  duration_ms: int) -> VariantOutcome:
    outcome = _run_variant(data, variant, bounds, options, deadline, echo, duration_ms)
    if outcome.tally.unsettled:
        assert options.out is not None
        outcome.unsettled_file = write_unsettled(options.out, options.command, data, variant,
                                                 outcome.tally.unsettled[0])
    found = outcome.found
    if found is None:
        return outcome
    started = time.perf_counter()
    echo(f"  {outcome.variant}: run {found.index} violates {', '.join(found.failed)} with "
         f"{len(found.faults)} faults; shrinking …")
    target = found.failed[0]
    runner = compiler(data, variant)
    seen: dict[bytes, CaseResult] = {}
    simulated = [0]

    def run(faults: list[Fault]) -> CaseResult:
        simulated[0] += 1
        result = seen[_key(faults)] = runner.run(faults, found.seed)
        return result

    def fails(faults: list[Fault]) -> bool:  # the search: a schedule tried before is not rerun
        known = seen.get(_key(faults))
        return target in (known if known is not None else run(faults)).failed

    def verify(faults: list[Fault]) -> bool:  # the 1-minimality proof: every run is repeated
        return target in run(faults).failed

    low = {"at": bounds.window_ms[0], "restart_after": bounds.hold_ms[0],
           "heal_after": bounds.hold_ms[0]}
    with fuzz_gc():
        shrunk = shrink(found.faults, fails, low, options.shrink_budget, verify=verify)
        minimal = run(shrunk.faults)  # the run the minimal scenario must reproduce
    outcome.shrunk, outcome.minimal, outcome.shrink_attempts = shrunk, shrunk.faults, simulated[0]
    assert options.out is not None
    outcome.minimal_file = write_minimal(options.out, options.command, file, data, variant, found,
                                         shrunk.faults, target)
    if target not in minimal.failed:
        outcome.error = (f"the shrunk schedule no longer fails {target} when run again "
                         "(a non-deterministic run: a bug in rig)")
    found_file = outcome.minimal_file.with_name(f"{outcome.variant}-found.yaml")
    for role, path, expected in (("found", found_file, found),
                                 ("minimal", outcome.minimal_file, minimal)):
        with fuzz_gc():
            replay = _replay(path, runner.scenario, expected)
        outcome.replays[role] = replay
        if not replay.reproduced and outcome.error is None:
            outcome.error = (f"{path} does not reproduce run {found.index}'s {role} schedule: "
                             f"its event log hashes to {replay.replayed_sha256[:16]}…, the run's "
                             f"to {expected.events_sha256[:16]}… (a bug in rig: please report "
                             "it with both files)")
    outcome.shrink_wall_s = time.perf_counter() - started
    return outcome


def _key(faults: list[Fault]) -> bytes:
    return orjson.dumps(faults, option=orjson.OPT_SORT_KEYS)


def _replay(path: Path, scenario: str, expected: CaseResult) -> Replay:
    """Load the written scenario like `rig run` does and run it into a digest.

    The run is labelled with the fuzzed scenario's name (run.start's `scenario` field), as the
    fuzz run was; everything else comes from the file.
    """
    spec = load_scenario(path).variants[0]
    replayed = judge(spec, scenario, expected.faults, spec.seed, expected.index)
    return Replay(path, expected.events_sha256, replayed.events_sha256, replayed.failed)


def _check_options(options: FuzzOptions) -> None:
    if options.runs is None and not options.until_violation and options.time_budget_s is None:
        options.runs = DEFAULT_RUNS
    if options.workers is not None and options.workers < 1:
        raise UserError("--workers must be at least 1")
    if options.time_budget_s is not None and options.time_budget_s <= 0:
        raise UserError("--time-budget must be more than 0 (e.g. 10m)")
    if options.spark_master and (options.runs is None or options.time_budget_s is not None):
        raise UserError("with --spark-master, give --runs (every run is a Spark task, planned "
                        "up front); --time-budget and open-ended runs are for local workers")


def fuzz(file: Path, options: FuzzOptions, echo: Echo) -> FuzzOutcome:
    """Fuzz each chosen variant of `file`; write fuzz.json and one minimal YAML per violation."""
    _check_options(options)
    scenario = load_scenario(file, only_variants=options.variants)  # every problem, up front
    doc = load_yaml_file(file)
    data: dict[str, Any] = doc.data
    bounds = variant_bounds(doc, scenario)
    names = list(bounds)
    durations = {name: v.duration_ms for name, v in zip(names, scenario.variants, strict=True)}
    options.out = options.out or Path("reports") / f"{scenario.name}-fuzz"
    previous = prepare_out(options.out, MARKER, "fuzz")
    if previous is not None:
        echo(f"the previous results there were kept as {previous}")
    workers = "Spark tasks" if options.spark_master else (
        f"{options.workers or all_cores()} worker(s)")
    ends = time.monotonic() + options.time_budget_s if options.time_budget_s else None
    outcomes = []
    for position, name in enumerate(names):
        b = bounds[name]
        how_many = (f"{options.runs} runs" if options.runs is not None else "runs")
        stops = (["at the first violation"] if options.until_violation else []) + (
            [f"within {options.time_budget_s:g} s"] if options.time_budget_s is not None else [])
        echo(f"fuzzing {name or 'default'}: {how_many}{' ' if stops else ''}"
             f"{' or '.join(stops)}, seed {options.seed}, {workers}, "
             f"kinds {', '.join(b.kinds)}, ≤ {b.max_faults} faults in "
             f"[{b.window_ms[0]} ms, {b.window_ms[1]} ms]")
        deadline = None
        if ends is not None:  # the budget left, shared among the variants left
            deadline = time.monotonic() + (ends - time.monotonic()) / (len(names) - position)
        outcomes.append(_fuzz_variant(file, data, name, b, options, deadline, echo,
                                      durations[name]))
    write_report(options, scenario.name, str(file), outcomes, bounds)
    return FuzzOutcome(options.out, outcomes)
