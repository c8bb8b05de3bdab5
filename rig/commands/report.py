"""`rig report`: re-render a run's report from its saved results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.commands._common import fail
from rig.errors import UserError


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories written by `rig run`.")],
    out: Annotated[Path | None, typer.Option(
        help="Output file (default RUN_DIR/report.html).")] = None,
) -> None:
    """Re-render the report of a run from its saved results (never re-simulates)."""
    from rig.pipeline import is_run_dir

    try:
        if len(run_dirs) != 1:
            raise UserError("rig report takes one run directory in this version; comparing "
                            "several runs in one report is not built yet")
        run_dir = run_dirs[0]
        if not is_run_dir(run_dir) or not (run_dir / "summary.json").exists():
            raise UserError(f"{run_dir} is not a finished rig run (no run.json / summary.json)")
        from rig.report import render_report

        path = render_report(run_dir, out)
    except UserError as error:
        fail(error)
    typer.echo(f"report: {path}")
