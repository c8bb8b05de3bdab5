"""`rig fuzz`: random fault schedules against the safety checks, shrinking what fails.

For each variant, run i draws its schedule and seed from `run_rng(seed, i)`, so a session is
reproducible from `--seed`. Runs go on every core (rig.search.parallel: `--workers`, default all
cores) or as Spark tasks (`--spark-master`); either way results are folded in run order, so the
same runs give the same violations and the same fuzz.json (apart from TIMING_KEYS) whatever the
number of workers. The first violating run (lowest index) is shrunk to a 1-minimal schedule,
written as a runnable scenario, and replayed from what was written: its event-log digest must
equal the run's, else the session reports an error instead of a violation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig._version import __version__
from rig.errors import UserError
from rig.scenario.load import load_scenario
from rig.scenario.source import load_yaml_file
from rig.search.bounds import FuzzBounds, variant_bounds
from rig.search.case_files import write_minimal, write_unsettled
from rig.search.cases import CaseResult, compiler, judge, run_case
from rig.search.draw import Fault, as_yaml_faults, draw_schedule, run_rng
from rig.search.outdir import prepare_out
from rig.search.parallel import Job, Tally, fuzz_gc, run_local
from rig.search.shrink import Shrunk, shrink
from rig.worker_processes import all_cores

MARKER = "fuzz.json"
# fuzz.json keys whose values depend on the machine, its load or the number of workers; every
# other key is a function of the inputs and of the runs done (the `command` echoes the input).
TIMING_KEYS = ("wall_seconds", "runs_per_second", "speed")
DEFAULT_RUNS = 100
PROGRESS_EVERY_S = 5.0
Echo = Callable[[str], None]


@dataclass
class FuzzOptions:
    runs: int | None  # None: until a violation (--until-violation) or the time budget
    seed: int = 0
    variants: Sequence[str] = ()
    out: Path | None = None
    spark_master: str | None = None
    shrink_budget: int = 120
    command: str = ""
    workers: int | None = None  # local processes; None: every core
    until_violation: bool = False
    time_budget_s: float | None = None  # the fuzz runs of the whole session (all variants)


@dataclass
class Replay:
    """A written scenario run again from its file: does it give the run's event log?"""

    file: Path
    expected_sha256: str
    replayed_sha256: str
    failed: list[str]

    @property
    def reproduced(self) -> bool:
        return self.expected_sha256 == self.replayed_sha256

    def as_json(self) -> dict[str, Any]:
        return {"file": str(self.file), "events_sha256": self.expected_sha256,
                "replayed_sha256": self.replayed_sha256, "reproduced": self.reproduced,
                "failed": self.failed}


@dataclass
class VariantOutcome:
    variant: str
    runs_done: int
    wall_s: float
    found: CaseResult | None = None
    violating_runs: list[int] = field(default_factory=list)
    minimal: list[Fault] = field(default_factory=list)
    minimal_file: Path | None = None
    shrink_attempts: int = 0  # runs the shrink simulated (its 1-minimality proof included)
    tally: Tally = field(default_factory=Tally)
    workers: int = 1
    duration_ms: int = 0
    shrunk: Shrunk | None = None
    shrink_wall_s: float = 0.0
    replays: dict[str, Replay] = field(default_factory=dict)
    error: str | None = None  # a violation rig could not reproduce from what it wrote
    unsettled_file: Path | None = None  # the first run the quiesce left unsettled, as a scenario

    @property
    def simulated_s(self) -> float:
        """The runs' simulated seconds, counting each run's duration (not its quiesce)."""
        return self.runs_done * self.duration_ms / 1000

    def speed(self) -> dict[str, Any]:
        wall, cpu = self.wall_s, self.tally.cpu_s
        per_wall = self.simulated_s / wall if wall else None
        return {
            "workers": self.workers,
            "wall_seconds": round(wall, 3),
            "runs_per_second": round(self.runs_done / wall, 2) if wall else None,
            "simulated_seconds_per_wall_second": None if per_wall is None else round(per_wall, 1),
            "simulated_seconds_per_wall_second_per_worker": (
                None if per_wall is None else round(per_wall / self.workers, 1)),
            "cpu_seconds": round(cpu, 3),
            "simulated_seconds_per_cpu_second": round(self.simulated_s / cpu, 1) if cpu else None,
            "shrink_and_replay_wall_seconds": round(self.shrink_wall_s, 3),
        }


@dataclass
class FuzzOutcome:
    out: Path
    variants: list[VariantOutcome]

    @property
    def exit_code(self) -> int:
        """3: a violation did not replay from its written scenario; 1: a violation; 2: a worker
        died, so fewer runs were done than asked; else 0."""
        if any(v.error is not None for v in self.variants):
            return 3
        if any(v.found is not None for v in self.variants):
            return 1
        return 2 if any(v.tally.stopped_by == "worker-lost" for v in self.variants) else 0


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
    _write_report(options, scenario.name, str(file), outcomes, bounds)
    return FuzzOutcome(options.out, outcomes)


def _variant_report(o: VariantOutcome, b: FuzzBounds, options: FuzzOptions,
                    file: str) -> dict[str, Any]:
    t = o.tally
    reproduce = (f"rig fuzz {file} --variant {o.variant} --seed {options.seed} "
                 f"--runs {o.runs_done}") if o.variant != "default" else (
        f"rig fuzz {file} --seed {options.seed} --runs {o.runs_done}")
    entry: dict[str, Any] = {
        "runs_done": o.runs_done,
        "run_indices": {"first": 0, "last": o.runs_done - 1} if o.runs_done else None,
        "stopped_by": t.stopped_by,
        "reproduce": reproduce,
        "wall_seconds": round(o.wall_s, 3),
        "runs_per_second": round(o.runs_done / o.wall_s, 2) if o.wall_s else None,
        "speed": o.speed(),
        "simulated_seconds": o.simulated_s,
        "simulated_seconds_with_quiesce": round(t.simulated_ms / 1000, 3),
        "events": t.events,
        "runs_sha256": t.runs_sha256,
        "violating_runs": [r.index for r in t.violating],
        # Liveness, which the checks do not judge: runs not settled when their quiesce ran out.
        "unsettled_runs": [r.index for r in t.unsettled],
        "unsettled_scenario": str(o.unsettled_file) if o.unsettled_file else None,
        "bounds": {"kinds": list(b.kinds), "max_faults": b.max_faults,
                   "window_ms": list(b.window_ms), "hold_ms": list(b.hold_ms),
                   "brokers": list(b.brokers)},
        "violation": None,
    }
    if o.found is not None:
        shrunk = o.shrunk
        assert shrunk is not None
        entry["violation"] = {
            **o.found.as_json(),
            "violating_runs": o.violating_runs,
            "minimal_faults": as_yaml_faults(o.minimal),
            "minimal_scenario": str(o.minimal_file),
            "shrink_attempts": o.shrink_attempts,
            "one_minimal": shrunk.one_minimal,
            "shrink": {
                "runs": o.shrink_attempts,
                "budget": options.shrink_budget,
                "budget_exhausted": shrunk.budget_exhausted,
                "faults_found": len(o.found.faults),
                "faults_after_search": shrunk.searched,
                "faults_minimal": len(o.minimal),
                "one_minimal": shrunk.one_minimal,
                "one_minimal_runs": shrunk.one_minimal_runs,
            },
            "replay": {role: r.as_json() for role, r in o.replays.items()},
            "error": o.error,
        }
    return entry


def _write_report(options: FuzzOptions, scenario: str, file: str,
                  outcomes: list[VariantOutcome], bounds: dict[str | None, FuzzBounds]) -> None:
    assert options.out is not None
    report = {
        "scenario": scenario, "file": file, "rig_version": __version__, "seed": options.seed,
        "runs": options.runs, "until_violation": options.until_violation,
        "time_budget_seconds": options.time_budget_s,
        "spark_master": options.spark_master, "command": options.command,
        "speed": {"workers": None if options.spark_master else (options.workers or all_cores()),
                  "cores": all_cores()},
        "variants": {
            o.variant: _variant_report(o, b, options, file)
            for o, b in zip(outcomes, bounds.values(), strict=True)
        },
    }
    (options.out / MARKER).write_bytes(
        orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
