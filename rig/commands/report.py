"""`rig report`: re-render a run's report, compare several runs, or index a matrix of runs.

Reads saved results only (never re-simulates); `--export` adds CSV or Parquet copies for other
tools. Output files never land outside their folder and never replace a file rig did not write.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rig import rundir, written
from rig.commands._common import fail
from rig.errors import UserError

INDEX_NAME = "index.html"


class ExportFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"


def _not_a_run(path: Path) -> str | None:
    """Why `path` is not a finished rig run, or None when it is one."""
    from rig.pipeline import is_run_dir

    if not path.is_dir():
        return "not a folder"
    if not is_run_dir(path):
        return f"no {rundir.RUN_JSON}"
    if not rundir.summary_path(path).exists():
        return f"no {rundir.SUMMARY}: the run did not finish"
    return None


def _index_folder(run_dirs: list[Path]) -> Path:
    """Where the index goes by default: the folder holding the runs (reports/ for reports/*/)."""
    parents = [os.path.abspath(p.parent if p.name else p.parent.parent) for p in run_dirs]
    common = Path(os.path.commonpath(parents))
    cwd = Path.cwd()
    return common.relative_to(cwd) if common.is_relative_to(cwd) else common


def report(
    run_dirs: Annotated[list[Path], typer.Argument(
        help="Run directories written by `rig run`; two or more are compared in one report.")],
    out: Annotated[Path | None, typer.Option(
        help="Output file. Default: RUN_DIR/report.html for one run; "
             "reports/compare-<A>-vs-<B>.html for a comparison; index.html in the folder "
             "holding the runs for --index. An existing folder gets the default name inside.")
    ] = None,
    index: Annotated[bool, typer.Option(
        "--index", help="Write a matrix overview of the runs (folders that are not finished "
                        "runs are skipped with a note) instead of a report.")] = False,
    export: Annotated[ExportFormat | None, typer.Option(
        help="Also write the metric tables to RUN_DIR/export/ as CSV or Parquet; Parquet "
             "converts the event logs too (with Spark).")] = None,
    spark_master: Annotated[str | None, typer.Option(
        help="Spark master URL for --export parquet (default: local mode).")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace output files rig did not write (a page at --out, files in "
                        "export/).")] = False,
) -> None:
    """Re-render a run's report, compare several runs, or index many (never re-simulates)."""
    try:
        with written.replacing_anything(force):
            _report(run_dirs, out, index, export, spark_master)
    except UserError as error:
        fail(error)


def _report(run_dirs: list[Path], out: Path | None, index: bool, export: ExportFormat | None,
            spark_master: str | None) -> None:
    from rig.report import render_comparison, render_index, render_report
    from rig.report.compare import COMPARE_FOLDER, comparison_name, run_labels
    from rig.report.index import Skipped
    from rig.report.paths import resolve_out

    if index:
        runs, skipped = [], []
        for path in run_dirs:
            reason = _not_a_run(path)
            if reason is None:
                runs.append(path)
            else:
                skipped.append(Skipped(path, reason))
                typer.echo(f"skipped {path}: {reason}", err=True)
        if not runs:
            raise UserError("none of the folders given is a finished rig run; nothing to "
                            "index")
        for path in runs:
            if not rundir.report_path(path).exists():  # the index links to every report
                render_report(path)
        target = resolve_out(out, _index_folder(runs), INDEX_NAME)
        page = render_index(runs, target, skipped)
        typer.echo(f"index: {page} ({len(runs)} runs, {len(skipped)} skipped)")
    else:
        for path in run_dirs:
            reason = _not_a_run(path)
            if reason is not None:
                raise UserError(f"{path} is not a finished rig run ({reason})")
        runs = list(run_dirs)
        if len(runs) == 1:
            target = resolve_out(out, runs[0], rundir.REPORT)
            typer.echo(f"report: {render_report(runs[0], target)}")
        else:
            name = comparison_name(run_labels(runs))
            target = resolve_out(out, COMPARE_FOLDER, name)
            typer.echo(f"comparison: {render_comparison(runs, target)}")
    if export is not None:
        from rig.analysis.export import export_run

        for path in runs:
            files = export_run(path, export.value, spark_master=spark_master)
            typer.echo(f"export: {len(files)} {export.value} files in "
                       f"{rundir.export_dir(path)}")
