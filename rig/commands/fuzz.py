"""`rig fuzz`: random fault schedules against the safety checks; a violation is shrunk and kept."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from rig.commands._common import fail
from rig.errors import UserError


def fuzz(
    file: Annotated[Path, typer.Argument(help="The scenario file (its `fuzz:` block bounds "
                                              "the schedules drawn).")],
    runs: Annotated[int | None, typer.Option(
        min=1, help="Schedules to try per variant (default 100; with --until-violation or "
                    "--time-budget: no limit).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fuzz session: the same seed draws "
                                           "the same schedules.")] = 0,
    variant: Annotated[list[str] | None, typer.Option(
        help="Fuzz only this variant (default: every variant, one after another).")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Output folder (default reports/<name>-fuzz/).")] = None,
    spark_master: Annotated[str | None, typer.Option(
        help="Run the schedules as Spark tasks on this master (e.g. local[2], "
             "spark://host:7077); default: local worker processes (--workers).")] = None,
    workers: Annotated[int | None, typer.Option(
        min=1, help="Local worker processes (default: every core). The same runs give the "
                    "same results whatever the number.")] = None,
    until_violation: Annotated[bool, typer.Option(
        "--until-violation", help="Stop at the first violating run (in run order).")] = False,
    time_budget: Annotated[str | None, typer.Option(
        help="Stop starting runs after this long (e.g. 90s, 10m, 2h), shared by the "
             "variants; fuzz.json records which runs were done.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result.")] = False,
) -> None:
    """Draw random fault schedules, run them with the safety checks, shrink any violation.

    Exit 1 when a schedule broke a safety check (the minimal one is written as a runnable
    scenario in the output folder), 0 when none did, 2 on bad input, 3 when a violation's
    written scenario did not replay to the same event log (a bug in rig).
    """
    from rig import units
    from rig.search.draw import as_yaml_faults
    from rig.search.fuzz import fuzz as run_fuzz
    from rig.search.fuzz_report import FuzzOptions, kafka_defect_runs

    command = shlex.join(["rig", *sys.argv[1:]]) if sys.argv[1:2] == ["fuzz"] else (
        f"rig fuzz {shlex.quote(str(file))}" + (f" --runs {runs}" if runs else "")
        + f" --seed {seed}")
    try:
        budget_s = None if time_budget is None else units.duration_ms(time_budget) / 1000
    except ValueError as error:
        fail(UserError(f"--time-budget: {error}"))
    options = FuzzOptions(runs=runs, seed=seed, variants=variant or [], out=out,
                          spark_master=spark_master, command=command, workers=workers,
                          until_violation=until_violation, time_budget_s=budget_s)
    echo = (lambda _: None) if quiet else typer.echo
    try:
        outcome = run_fuzz(file, options, echo)
    except UserError as error:
        fail(error)
    for v in outcome.variants:
        speed = v.speed()
        pace = (f"{v.wall_s:.1f} s, {speed['runs_per_second'] or 0:.1f} runs/s, "
                f"{speed['simulated_seconds_per_wall_second'] or 0:.0f} simulated s per wall s"
                f" ({speed['simulated_seconds_per_wall_second_per_worker'] or 0:.0f} per "
                f"worker, {v.workers} worker{'s' if v.workers != 1 else ''})")
        stopped = {"time-budget": ", time budget spent", "interrupted": ", interrupted",
                   "worker-lost": ", STOPPED: a worker process died mid-run (killed, as by the "
                                  "out-of-memory killer); the runs before it are kept",
                   }.get(v.tally.stopped_by, "")
        unsettled = [r.index for r in v.tally.unsettled]
        if unsettled:  # liveness: not a violation, but worth a look
            shown = ", ".join(map(str, unsettled[:5])) + (", …" if len(unsettled) > 5 else "")
            typer.echo(f"  {v.variant}: {len(unsettled)} run{'s' if len(unsettled) != 1 else ''}"
                       f" not settled when the quiesce ran out (run {shown}); the first: "
                       f"python -m rig run {v.unsettled_file}")
            explained = kafka_defect_runs(v.tally.unsettled)
            if explained:
                typer.echo(f"  {v.variant}: of those, {explained}: liveness defects of this "
                           "Kafka release itself (docs/kafka.md §10–§11)")
        if v.found is None:
            typer.echo(f"{v.variant}: no violation in {v.runs_done} runs ({pace}{stopped})")
            continue
        shrunk = v.shrunk
        assert shrunk is not None
        others = len(v.violating_runs) - 1
        typer.echo(f"{v.variant}: VIOLATION of {', '.join(v.found.failed)} in run "
                   f"{v.found.index} ({len(v.found.faults)} faults"
                   + (f"; {others} more violating run{'s' if others != 1 else ''}"
                      if others > 0 else "")
                   + f"), shrunk to {len(v.minimal)} in {v.shrink_attempts} runs, "
                   + ("1-minimal (dropping any one fault passes)" if shrunk.one_minimal else
                      "NOT proven 1-minimal (the proof ran out of runs)")
                   + f"; {v.runs_done} runs ({pace}{stopped})")
        for f in as_yaml_faults(v.minimal):
            details = ", ".join(f"{k}={val}" for k, val in f.items() if k != "kind")
            typer.echo(f"    {f['kind']}: {details}")
        if v.error is not None:
            typer.echo(f"error: {v.error}", err=True)
        else:
            typer.echo(f"  replayed from {v.minimal_file.name if v.minimal_file else ''}: the "
                       "same event log (SHA-256)")
        typer.echo(f"  reproduce: python -m rig run {v.minimal_file}")
    typer.echo(f"fuzz results: {outcome.out / 'fuzz.json'}")
    raise typer.Exit(outcome.exit_code)
