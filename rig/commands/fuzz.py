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
    runs: Annotated[int, typer.Option(min=1, help="Schedules to try per variant.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the fuzz session: the same seed draws "
                                           "the same schedules.")] = 0,
    variant: Annotated[list[str] | None, typer.Option(
        help="Fuzz only this variant (default: every variant, one after another).")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Output folder (default reports/<name>-fuzz/).")] = None,
    spark_master: Annotated[str | None, typer.Option(
        help="Run the schedules as Spark tasks on this master (e.g. local[2], "
             "spark://host:7077); default: one after another in this process.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result.")] = False,
) -> None:
    """Draw random fault schedules, run them with the safety checks, shrink any violation.

    Exit 1 when a schedule broke a safety check (the minimal one is written as a runnable
    scenario in the output folder), 0 when none did.
    """
    from rig.search.draw import as_yaml_faults
    from rig.search.fuzz import FuzzOptions
    from rig.search.fuzz import fuzz as run_fuzz

    command = shlex.join(["rig", *sys.argv[1:]]) if sys.argv[1:2] == ["fuzz"] else (
        f"rig fuzz {shlex.quote(str(file))} --runs {runs} --seed {seed}")
    options = FuzzOptions(runs=runs, seed=seed, variants=variant or [], out=out,
                          spark_master=spark_master, command=command)
    echo = (lambda _: None) if quiet else typer.echo
    try:
        outcome = run_fuzz(file, options, echo)
    except UserError as error:
        fail(error)
    for v in outcome.variants:
        if v.found is None:
            typer.echo(f"{v.variant}: no violation in {v.runs_done} runs "
                       f"({v.wall_s:.1f} s, {v.runs_done / max(v.wall_s, 1e-9):.1f} runs/s)")
            continue
        typer.echo(f"{v.variant}: VIOLATION of {', '.join(v.found.failed)} in run "
                   f"{v.found.index} ({len(v.found.faults)} faults), shrunk to "
                   f"{len(v.minimal)} in {v.shrink_attempts} runs")
        for f in as_yaml_faults(v.minimal):
            details = ", ".join(f"{k}={val}" for k, val in f.items() if k != "kind")
            typer.echo(f"    {f['kind']}: {details}")
        typer.echo(f"  reproduce: python -m rig run {v.minimal_file}")
    typer.echo(f"fuzz results: {outcome.out / 'fuzz.json'}")
    raise typer.Exit(outcome.exit_code)
