"""`rig fuzz`: random fault schedules against the safety checks, shrinking what fails.

For each variant, run i draws its schedule and seed from `run_rng(seed, i)`, so a session is
reproducible from `--seed`. Locally, runs go one after another and stop at the first violation;
with a Spark master they all run as tasks and the first violating run (lowest index) is taken,
so both find the same schedule. That schedule is shrunk and written as a runnable scenario.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rig._version import __version__
from rig.scenario.load import load_scenario
from rig.scenario.overrides import deep_merge
from rig.scenario.source import Lines, load_yaml_file
from rig.search.bounds import FuzzBounds, fuzz_bounds
from rig.search.cases import CaseResult, case_document, dump_case, run_case
from rig.search.draw import Fault, as_yaml_faults, draw_schedule, run_rng
from rig.search.outdir import prepare_out
from rig.search.shrink import shrink

MARKER = "fuzz.json"
Echo = Callable[[str], None]


@dataclass
class FuzzOptions:
    runs: int
    seed: int = 0
    variants: Sequence[str] = ()
    out: Path | None = None
    spark_master: str | None = None
    shrink_budget: int = 120
    command: str = ""


@dataclass
class VariantOutcome:
    variant: str
    runs_done: int
    wall_s: float
    found: CaseResult | None = None
    violating_runs: list[int] = field(default_factory=list)
    minimal: list[Fault] = field(default_factory=list)
    minimal_file: Path | None = None
    shrink_attempts: int = 0


@dataclass
class FuzzOutcome:
    out: Path
    variants: list[VariantOutcome]

    @property
    def exit_code(self) -> int:
        return 1 if any(v.found is not None for v in self.variants) else 0


def draw_case(data: dict[str, Any], variant: str | None, bounds: FuzzBounds, seed: int,
              index: int) -> tuple[dict[str, Any], str | None, list[Fault], int, int]:
    rng = run_rng(seed, index)
    faults = draw_schedule(rng, bounds)
    return data, variant, faults, rng.randrange(2**31), index


def run_task(task: tuple[dict[str, Any], str | None, list[Fault], int, int]) -> CaseResult:
    """One fuzz run; module-level so Spark executors can import it by name."""
    data, variant, faults, seed, index = task
    return run_case(data, variant, faults, seed, index)


def _merged(data: dict[str, Any], variant: str | None) -> dict[str, Any]:
    if variant is None or not data.get("variants"):
        return data
    base = {k: v for k, v in data.items() if k not in ("variants", "expect")}
    merged: dict[str, Any] = deep_merge(base, data["variants"][variant], Lines(), Lines())
    return merged


def _fuzz_variant(file: Path, data: dict[str, Any], variant: str | None, bounds: FuzzBounds,
                  options: FuzzOptions, echo: Echo) -> VariantOutcome:
    name = variant or "default"
    started = time.perf_counter()
    found: CaseResult | None = None
    violating: list[int] = []
    if options.spark_master:
        from rig.search.spark_tasks import spark_map

        tasks = [draw_case(data, variant, bounds, options.seed, i) for i in range(options.runs)]
        results = spark_map(run_task, tasks, options.spark_master)
        violating = [r.index for r in results if r.violated]
        found = next((r for r in results if r.violated), None)
        done = len(results)
    else:
        done = 0
        for i in range(options.runs):
            result = run_task(draw_case(data, variant, bounds, options.seed, i))
            done += 1
            if done % 50 == 0:
                echo(f"  {name}: {done} runs, {time.perf_counter() - started:.1f} s")
            if result.violated:
                found, violating = result, [i]
                break
    outcome = VariantOutcome(name, done, time.perf_counter() - started, found, violating)
    if found is None:
        return outcome
    echo(f"  {name}: run {found.index} violates {', '.join(found.failed)} with "
         f"{len(found.faults)} faults; shrinking …")
    target = found.failed[0]

    def fails(faults: list[Fault]) -> bool:
        return target in run_case(data, variant, faults, found.seed).failed

    low = {"at": bounds.window_ms[0], "restart_after": bounds.hold_ms[0],
           "heal_after": bounds.hold_ms[0]}
    shrunk = shrink(found.faults, fails, low, options.shrink_budget)
    outcome.minimal, outcome.shrink_attempts = shrunk.faults, shrunk.attempts
    outcome.minimal_file = _write_case(file, data, variant, options, found, shrunk.faults, target)
    return outcome


def _write_case(file: Path, data: dict[str, Any], variant: str | None, options: FuzzOptions,
                found: CaseResult, faults: list[Fault], check: str) -> Path:
    name = variant or "default"
    out = options.out
    assert out is not None
    doc = case_document(data, variant, faults, found.seed)
    doc["name"] = f"{data['name']}-{name}-minimal"
    doc["description"] = (f"Found by rig fuzz (run {found.index} of {file.name}, variant {name}) "
                          f"and shrunk from {len(found.faults)} faults to {len(faults)}: the "
                          f"{check} check fails.")
    path = out / f"{name}-minimal.yaml"
    header = (f"# A fault schedule that breaks `{check}`, found and shrunk by\n"
              f"#   {options.command}\n"
              f"# rig {__version__}. Reproduce: rig run {path}\n")
    path.write_text(header + dump_case(doc), encoding="utf-8")
    original = case_document(data, variant, found.faults, found.seed)
    original["name"] = f"{data['name']}-{name}-found"
    (out / f"{name}-found.yaml").write_text(
        f"# The schedule as first drawn (run {found.index}), before shrinking.\n"
        + dump_case(original), encoding="utf-8")
    return path


def fuzz(file: Path, options: FuzzOptions, echo: Echo) -> FuzzOutcome:
    """Fuzz each chosen variant of `file`; write fuzz.json and one minimal YAML per violation."""
    scenario = load_scenario(file, only_variants=options.variants)  # every problem, up front
    doc = load_yaml_file(file)
    data: dict[str, Any] = doc.data
    names: list[str | None] = ([v.name for v in scenario.variants] if data.get("variants")
                               else [None])
    bounds = {name: fuzz_bounds(doc, _merged(data, name)) for name in names}
    options.out = options.out or Path("reports") / f"{scenario.name}-fuzz"
    previous = prepare_out(options.out, MARKER, "fuzz")
    if previous is not None:
        echo(f"the previous results there were kept as {previous}")
    outcomes = []
    for name in names:
        b = bounds[name]
        echo(f"fuzzing {name or 'default'}: {options.runs} runs, seed {options.seed}, "
             f"kinds {', '.join(b.kinds)}, ≤ {b.max_faults} faults in "
             f"[{b.window_ms[0]} ms, {b.window_ms[1]} ms]")
        outcomes.append(_fuzz_variant(file, data, name, b, options, echo))
    _write_report(options, scenario.name, str(file), outcomes, bounds)
    return FuzzOutcome(options.out, outcomes)


def _write_report(options: FuzzOptions, scenario: str, file: str,
                  outcomes: list[VariantOutcome], bounds: dict[str | None, FuzzBounds]) -> None:
    assert options.out is not None
    report = {
        "scenario": scenario, "file": file, "rig_version": __version__, "seed": options.seed,
        "runs": options.runs, "spark_master": options.spark_master, "command": options.command,
        "variants": {
            o.variant: {
                "runs_done": o.runs_done,
                "wall_seconds": round(o.wall_s, 3),
                "runs_per_second": round(o.runs_done / o.wall_s, 2) if o.wall_s else None,
                "bounds": {"kinds": list(b.kinds), "max_faults": b.max_faults,
                           "window_ms": list(b.window_ms), "hold_ms": list(b.hold_ms),
                           "brokers": list(b.brokers)},
                "violation": None if o.found is None else {
                    **o.found.as_json(),
                    "violating_runs": o.violating_runs,
                    "minimal_faults": as_yaml_faults(o.minimal),
                    "minimal_scenario": str(o.minimal_file),
                    "shrink_attempts": o.shrink_attempts,
                },
            } for o, b in zip(outcomes, bounds.values(), strict=True)
        },
    }
    (options.out / MARKER).write_bytes(
        orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
