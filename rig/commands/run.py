"""`rig run`: simulate, analyse, summarise, report and judge a scenario."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rig.commands._common import fail
from rig.errors import UserError


def run(
    file: Annotated[Path, typer.Argument(help="The scenario file.")],
    out: Annotated[Path | None, typer.Option(
        help="Run directory (default reports/<name>/).")] = None,
    seed: Annotated[int | None, typer.Option(help="Override the scenario's seed.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY.PATH=VALUE",
                    help="Override a scenario value, e.g. topics.0.partitions=100.")] = None,
    variant: Annotated[list[str] | None, typer.Option(help="Run only this variant.")] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip the HTML report.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors.")] = False,
    spark_master: Annotated[str | None, typer.Option(
        help="Spark master URL for the analysis (default: local mode).")] = None,
    allow_plugin_paths: Annotated[bool, typer.Option(
        "--allow-plugin-paths",
        help="Allow strategies named as module:Class in the scenario (runs that code).")] = False,
    price_profile: Annotated[str | None, typer.Option(
        "--price-profile", metavar="PROFILE",
        help="Price every variant's cross-zone traffic with this profile (aws, gcp, azure, "
             "msk, none) instead of the scenario's `cost:`.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, metavar="N",
        help="Simulate the variants on N processes side by side (default: one per variant, "
             "up to the cores; 1: one after another). The event logs are the same.")] = None,
) -> None:
    """Simulate a scenario, analyse it with Spark, write summary.json and report.html."""
    from rig.pipeline import RunOptions
    from rig.pipeline import run as run_pipeline
    from rig.progress import Progress

    command = shlex.join(["rig", *sys.argv[1:]]) if sys.argv[1:2] == ["run"] else ""
    options = RunOptions(out=out, seed=seed, sets=set_ or [], variants=variant or [],
                         report=not no_report, spark_master=spark_master,
                         allow_plugin_paths=allow_plugin_paths, price_profile=price_profile,
                         workers=workers,
                         command=command or f"rig run {shlex.quote(str(file))}")
    progress = Progress(quiet=quiet)
    from rig.cost import PROFILES
    if price_profile is not None and price_profile not in PROFILES:
        fail(UserError(f"--price-profile: unknown profile {price_profile!r} (profiles: "
                       f"{', '.join(PROFILES)})"))
    try:
        skipped = _skipped(file, options)
        outcome = run_pipeline(file, options, progress)
    except UserError as error:
        fail(error)
    _print_outcome(outcome, quiet)
    if skipped and not quiet:
        typer.echo(f"skipped {len(skipped)} expectations about variants not run "
                   f"(--variant {', '.join(options.variants)}):")
        for text in skipped:
            typer.echo(f"  skipped {text}")
    raise typer.Exit(outcome.exit_code)


def _skipped(file: Path, options: Any) -> list[str]:
    """The expectations `--variant` leaves out: they speak of variants this run does not
    simulate, so they are reported as skipped, neither passed nor failed."""
    if not options.variants:
        return []
    from rig.scenario.load import load_scenario

    scenario = load_scenario(file, sets=options.sets, seed=options.seed,
                             only_variants=options.variants)
    return [e.text for e in scenario.skipped_expectations]


def print_verdicts(summary: dict[str, Any], quiet: bool) -> list[dict[str, Any]]:
    """Print each expectation's verdict and the failed checks; return the failed expectations."""
    from rig.pipeline import failed_checks
    from rig.report.format import fmt_number

    expectations = summary.get("expectations", [])
    if not quiet and expectations:
        typer.echo("expectations:")
        for e in expectations:
            mark = {True: "pass", False: "FAIL", None: "UNKNOWN"}[e["ok"]]
            value = e["value"]
            # A float as the report shows it (30,102.0, not 3.01e+04); an int as it is.
            shown = fmt_number(value) if isinstance(value, float) else f"{value}"
            typer.echo(f"  {mark:7} {e['expect']}   (measured {shown})")
    for check in failed_checks(summary):
        typer.echo(f"check failed: {check}", err=True)
    failed = [e for e in expectations if e["ok"] is not True]
    if failed:
        typer.echo(f"{len(failed)} of {len(expectations)} expectations failed", err=True)
    return failed


def _print_outcome(outcome: Any, quiet: bool) -> None:
    print_verdicts(outcome.summary, quiet)
    if not quiet:
        from rig import rundir

        typer.echo(f"run directory: {outcome.run_dir}")
        report = rundir.report_path(outcome.run_dir)
        if report.exists():
            typer.echo(f"report: {report}")
        if outcome.previous is not None:
            typer.echo(f"the previous run there was kept as {outcome.previous}")
