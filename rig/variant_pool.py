"""A scenario's variants simulated side by side, one process each, or one after another here.

Variants are independent: each builds its own cluster from its own seeded random streams and
writes its own event log, so a log holds the same bytes whichever process wrote it (a test
compares them). Worker processes come from multiprocessing's forkserver (spawn where there is
none), never from a fork of this process, which may be running threads (Spark's JVM boots on a
thread meanwhile). Workers ignore Ctrl-C; an interrupt, a SIGTERM (rig.cli unwinds it the same
way) or an error in a variant makes the parent kill them and raise, and the pipeline discards
the staging folder as after any failed run. A worker that dies without an answer (the
out-of-memory killer) is such an error, named with its signal: it never leaves the run waiting.
A plugin that breaks its contract (StrategyFailure) is the exception, as when the variants run
one by one: the variants already running finish, no other starts, and the pipeline keeps the
run so far.

A strategy registered in this process only (rig.testing's, for a test) cannot be rebuilt in
another: a scenario that uses one runs its variants here, one after another.
"""

from __future__ import annotations

import signal
import traceback
from multiprocessing import connection
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

from rig import rundir
from rig.errors import EnvironmentProblem, RigError, StrategyFailure
from rig.progress import Progress
from rig.scenario.model import Scenario, VariantSpec
from rig.simulate import SimulationResult, simulate
from rig.strategies import registry
from rig.worker_processes import all_cores, ignore_interrupts, worker_context

__all__ = ["default_workers", "simulate_variants"]


def default_workers(variants: int) -> int:
    """One process per variant, at most one per core this process may run on."""
    return max(1, min(all_cores(), variants))


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
    context = worker_context("rig.variant_pool")
    done: dict[str, SimulationResult] = {}
    waiting = list(variants)
    failure: StrategyFailure | None = None
    running: dict[str, _Worker] = {}
    try:
        while waiting or running:
            while waiting and failure is None and len(running) < count:
                variant = waiting.pop(0)
                running[variant.name] = _Worker(context, variant, rundir.event_log(
                    run_dir, variant.name), scenario.name, allow_plugin_paths)
            if failure is not None and not running:
                break
            ready = connection.wait([worker.answer for worker in running.values()])
            for name, worker in list(running.items()):
                if worker.answer not in ready:
                    continue
                del running[name]
                try:
                    result = done[name] = worker.result()
                except StrategyFailure as error:
                    # As one by one: the run so far is kept, with the variants already
                    # running finished whole; none starts after it.
                    failure = failure or error
                    continue
                progress.say(f"  {name}: {result.events:,} events in {result.wall_s:.2f} s")
    except BaseException:
        for worker in running.values():  # Ctrl-C, SIGTERM or an error: they stop now
            worker.kill()
        raise
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


class _Worker:
    """One variant simulated in a process of its own, its result (or the exception it raised)
    sent back on a pipe. Rig owns the process, so it can kill it, and knows when it died
    without an answer (the out-of-memory killer): a pool would start another worker and wait
    for the lost variant for ever."""

    def __init__(self, context: Any, variant: VariantSpec, events_path: Path, scenario: str,
                 allow_plugin_paths: bool):
        self.variant = variant.name
        self.answer, sender = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_simulate, args=(sender, variant, events_path, scenario, allow_plugin_paths),
            name=f"rig-variant-{variant.name}", daemon=True)
        self.process.start()
        sender.close()  # this end is the child's: its death closes the pipe

    def result(self) -> SimulationResult:
        """The variant's result, or what its process raised (raised here)."""
        try:
            ok, value, remote = self.answer.recv()
        except EOFError:
            self.process.join()
            raise EnvironmentProblem(f"the process simulating variant {self.variant} "
                                     f"{_death(self.process.exitcode)} before it finished; "
                                     "`--workers 1` simulates the variants one at a time, "
                                     "in rig's own process") from None
        finally:
            self.answer.close()
        self.process.join()
        if ok:
            return cast(SimulationResult, value)
        if remote:
            value.__cause__ = RemoteTraceback(remote)
        raise value

    def kill(self) -> None:
        """SIGKILL, not SIGTERM: the worker ignores nothing and tidies nothing up; the
        pipeline discards the staging folder its log was in."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.answer.close()


class RemoteTraceback(Exception):
    """Where an unexpected exception came from in the worker (its traceback, as text)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        why = (" (the kernel's out-of-memory killer sends it when memory runs out)"
               if name == "SIGKILL" else "")
        return f"was killed by {name}{why}"
    return f"exited with code {exitcode}"


def _simulate(sender: Connection, variant: VariantSpec, events_path: Path, scenario: str,
              allow_plugin_paths: bool) -> None:
    """In the worker: simulate, then send (True, result, "") or (False, exception, traceback
    text: "" for rig's own errors, which say everything in their message)."""
    ignore_interrupts()
    try:
        outcome: tuple[bool, Any, str] = (True, simulate(
            variant, events_path, scenario=scenario, allow_plugin_paths=allow_plugin_paths), "")
    except BaseException as error:  # sent to the parent, which raises it
        remote = "" if isinstance(error, RigError) else traceback.format_exc()
        outcome = (False, error, remote)
    try:
        sender.send(outcome)
    except Exception as unsent:  # an exception that does not pickle
        sender.send((False, RuntimeError(f"{outcome[1]!r} (not picklable: {unsent})"),
                     outcome[2]))
    finally:
        sender.close()
