"""`rig sweep`: one scenario over a grid of parameters and seeds, as Spark tasks, with a report."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from rig.commands._common import fail
from rig.errors import UserError


def sweep(
    file: Annotated[Path, typer.Argument(help="The scenario file.")],
    grid: Annotated[list[str], typer.Option(
        metavar="KEY.PATH=V1,V2,…",
        help="A parameter and its values, e.g. topics.0.partitions=100,400 (repeat for more; "
             "the runs are the cross product).")],
    seeds: Annotated[int, typer.Option(min=1, help="Runs per grid point, with seeds "
                                               "S, S+1, … from the scenario's seed S.")] = 1,
    out: Annotated[Path | None, typer.Option(
        help="Output folder (default reports/<name>-sweep/).")] = None,
    spark_master: Annotated[str | None, typer.Option(
        help="Spark master URL (default local[2]); e.g. spark://host:7077.")] = None,
    metric: Annotated[list[str] | None, typer.Option(
        metavar="PATH", help="A summary metric to chart, below variants.<name> (e.g. "
                             "produce.acked_lost); repeat for more. Default: a few headline "
                             "metrics.")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip the HTML report.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
) -> None:
    """Run the cross product of grid values and seeds as Spark tasks; chart metrics across it."""
    from rig.search.sweep import SweepOptions
    from rig.search.sweep import sweep as run_sweep

    command = shlex.join(["rig", *sys.argv[1:]]) if sys.argv[1:2] == ["sweep"] else ""
    options = SweepOptions(grid=grid, seeds=seeds, out=out, spark_master=spark_master,
                           metrics=metric or [], report=not no_report, command=command)
    echo = (lambda _: None) if quiet else typer.echo
    try:
        outcome = run_sweep(file, options, echo)
    except UserError as error:
        fail(error)
    if not quiet:
        failed = [p for p in outcome.points if p["expectations_failed"]]
        typer.echo(f"{len(outcome.points)} runs in {outcome.out / 'runs'}"
                   + (f"; {len(failed)} with failed expectations" if failed else ""))
        typer.echo(f"sweep results: {outcome.out / 'sweep.json'}")
        if outcome.report is not None:
            typer.echo(f"report: {outcome.report}")
