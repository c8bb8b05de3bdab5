"""A scenario's variants simulated side by side, one process each, or one after another here.

Variants are independent: each builds its own cluster from its own seeded random streams and
writes its own event log, so a log holds the same bytes whichever process wrote it (a test
compares them). Worker processes come from multiprocessing's forkserver (spawn where there is
none), never from a fork of this process, which may be running threads (Spark's JVM boots on a
thread meanwhile). Workers ignore Ctrl-C; an interrupt, a SIGTERM (rig.cli unwinds it the same
way) or an error in a variant makes the parent terminate them and raise, and the pipeline
discards the staging folder as after any failed run. A plugin that breaks its contract
(StrategyFailure) is the exception, as when the variants run one by one: the variants already
running finish, no other starts, and the pipeline keeps the run so far.

A strategy registered in this process only (rig.testing's, for a test) cannot be rebuilt in
another: a scenario that uses one runs its variants here, one after another.
"""

from __future__ import annotations

import multiprocessing.pool
import os
from multiprocessing.pool import AsyncResult
from pathlib import Path

from rig import rundir
from rig.errors import StrategyFailure
from rig.progress import Progress
from rig.scenario.model import Scenario, VariantSpec
from rig.simulate import SimulationResult, simulate
from rig.strategies import registry
from rig.worker_processes import ignore_interrupts, worker_context

__all__ = ["default_workers", "simulate_variants"]


def default_workers(variants: int) -> int:
    """One process per variant, at most one per core this process may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, variants))


def simulate_variants(scenario: Scenario, run_dir: Path, *, workers: int,
                      allow_plugin_paths: bool, progress: Progress) -> dict[str, SimulationResult]:
    """Simulate every variant of `scenario` into RUN_DIR's event logs, on up to `workers`
    processes; the results in the scenario's variant order."""
    variants = scenario.variants
    if workers <= 1 or len(variants) <= 1 or not all(map(_portable, variants)):
        return _one_by_one(scenario, run_dir, allow_plugin_paths, progress)
    count = min(workers, len(variants))
    progress.begin(f"simulating {', '.join(v.name for v in variants)} "
                   f"on {count} processes")
    done: dict[str, SimulationResult] = {}
    waiting = list(variants)
    failure: StrategyFailure | None = None
    pool = worker_context("rig.variant_pool").Pool(count, initializer=ignore_interrupts)
    try:
        running: dict[str, AsyncResult[SimulationResult]] = {}
        while waiting or running:
            while waiting and failure is None and len(running) < count:
                variant = waiting.pop(0)
                running[variant.name] = pool.apply_async(_simulate, (
                    variant, rundir.event_log(run_dir, variant.name), scenario.name,
                    allow_plugin_paths))
            if failure is not None and not running:
                break
            for name, handle in list(running.items()):
                if not handle.ready():
                    continue
                del running[name]
                try:
                    result = done[name] = handle.get()
                except StrategyFailure as error:
                    # As one by one: the run so far is kept, with the variants already
                    # running finished whole; none starts after it.
                    failure = failure or error
                    continue
                progress.say(f"  {name}: {result.events:,} events in {result.wall_s:.2f} s")
            if running:
                next(iter(running.values())).wait(0.05)
    except BaseException:
        _kill(pool)  # Ctrl-C, SIGTERM or an error: the workers stop now, mid-simulation
        raise
    pool.close()
    pool.join()
    if failure is not None:
        raise failure
    return {v.name: done[v.name] for v in variants}


def _one_by_one(scenario: Scenario, run_dir: Path, allow_plugin_paths: bool,
                progress: Progress) -> dict[str, SimulationResult]:
    results: dict[str, SimulationResult] = {}
    for variant in scenario.variants:
        progress.start(f"simulating {variant.name}", variant.duration_ms * 1000)
        result = results[variant.name] = simulate(
            variant, rundir.event_log(run_dir, variant.name), scenario=scenario.name,
            allow_plugin_paths=allow_plugin_paths, progress=progress.update)
        progress.say(f"  {variant.name}: {result.events:,} events in {result.wall_s:.2f} s")
    return results


def _portable(variant: VariantSpec) -> bool:
    """Whether another process can build the variant's strategies (by name or path)."""
    return all(registry.origin_of(kind, ref.name) != registry.TEST
               for kind, ref in variant.strategies.items())


def _simulate(variant: VariantSpec, events_path: Path, scenario: str,
              allow_plugin_paths: bool) -> SimulationResult:
    return simulate(variant, events_path, scenario=scenario,
                    allow_plugin_paths=allow_plugin_paths)


def _kill(pool: multiprocessing.pool.Pool) -> None:
    """SIGKILL the workers first, then let the pool tidy up: Pool.terminate alone sends SIGTERM
    and joins its handler threads, which an interrupt can catch half-way through a hand-off."""
    for process in list(getattr(pool, "_pool", ())):  # the pool's worker processes
        if process.is_alive():
            process.kill()
    pool.terminate()
    pool.join()
