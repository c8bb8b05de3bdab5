"""`rig analyze`: redo a run's analysis, summary and expectations from its files alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.commands._common import fail
from rig.errors import UserError


def analyze(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `rig run`.")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    spark_master: Annotated[str | None, typer.Option(
        help="Spark master URL for the analysis (default: local mode).")] = None,
) -> None:
    """Re-analyse RUN_DIR from its event logs, checks.json and run.json (never re-simulates):
    rewrite the metric tables and summary.json and judge the expectations again. The report is
    left as it was (`rig report RUN_DIR` redraws it). Exit 1 if an expectation or check fails."""
    from rig import rundir
    from rig.commands.run import print_verdicts
    from rig.pipeline import analyze as analyze_run_dir
    from rig.pipeline import failed_checks, is_run_dir
    from rig.progress import Progress

    progress = Progress(quiet=quiet)
    try:
        if not is_run_dir(run_dir):
            raise UserError(f"{run_dir} is not a rig run directory (no {rundir.RUN_JSON})")
        progress.say(f"analysing {run_dir} with Spark …")
        summary = analyze_run_dir(run_dir, spark_master=spark_master, say=progress.say,
                                  begin=progress.begin)
    except UserError as error:
        fail(error)
    failed = print_verdicts(summary, quiet)
    if not quiet:
        typer.echo(f"summary: {rundir.summary_path(run_dir)}")
    raise typer.Exit(1 if failed or failed_checks(summary) else 0)
