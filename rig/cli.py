"""The `rig` command line. Exit codes: 0 ok, 1 an expectation or check failed, 2 bad input."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import orjson
import typer

from rig._version import __version__
from rig.errors import ScenarioError, UserError

app = typer.Typer(
    name="rig", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="A declarative, deterministic test rig for Kafka's replication data plane.\n\n"
         "Every figure rig reports is simulated; wire sizes are exact (really encoded).")

F = TypeVar("F", bound=Callable[..., Any])


def _fail(error: UserError) -> NoReturn:
    lines = ([str(p) for p in error.problems] if isinstance(error, ScenarioError)
             else [str(error)])
    for line in lines:
        typer.echo(f"error: {line}" if not isinstance(error, ScenarioError) else line, err=True)
    raise typer.Exit(error.exit_code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rig {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """rig: simulate Kafka replication scenarios and compare strategies."""


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="Scenario files to check.")],
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY.PATH=VALUE",
                                                   help="Override a scenario value.")] = None,
) -> None:
    """Check scenario files against the schema and Kafka's rules; print every problem."""
    from rig.scenario.load import load_scenario

    failed = False
    for file in files:
        try:
            scenario = load_scenario(file, sets=set_ or [])
        except UserError as error:
            failed = True
            lines = (error.problems if isinstance(error, ScenarioError) else [error])
            for line in lines:
                typer.echo(str(line), err=True)
            continue
        variants = ", ".join(v.name for v in scenario.variants)
        typer.echo(f"{file}: ok ({len(scenario.variants)} variants: {variants}; "
                   f"{len(scenario.expectations)} expectations)")
    if failed:
        raise typer.Exit(2)


@app.command()
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
) -> None:
    """Simulate a scenario, analyse it with Spark, write summary.json and report.html."""
    from rig.pipeline import RunOptions
    from rig.pipeline import run as run_pipeline
    from rig.progress import Progress

    command = shlex.join(["rig", *sys.argv[1:]]) if sys.argv[1:2] == ["run"] else ""
    options = RunOptions(out=out, seed=seed, sets=set_ or [], variants=variant or [],
                         report=not no_report, spark_master=spark_master,
                         allow_plugin_paths=allow_plugin_paths,
                         command=command or f"rig run {shlex.quote(str(file))}")
    progress = Progress(quiet=quiet)
    try:
        outcome = run_pipeline(file, options, progress)
    except UserError as error:
        _fail(error)
    _print_outcome(outcome, quiet)
    raise typer.Exit(outcome.exit_code)


def _print_outcome(outcome: Any, quiet: bool) -> None:
    expectations = outcome.summary.get("expectations", [])
    if not quiet and expectations:
        typer.echo("expectations:")
        for e in expectations:
            mark = {True: "pass", False: "FAIL", None: "UNKNOWN"}[e["ok"]]
            value = e["value"]
            shown = f"{value:,.4g}" if isinstance(value, float) else f"{value}"
            typer.echo(f"  {mark:7} {e['expect']}   (measured {shown})")
    for check in outcome.failed_checks:
        typer.echo(f"check failed: {check}", err=True)
    if outcome.failed_expectations:
        typer.echo(f"{len(outcome.failed_expectations)} of {len(expectations)} expectations "
                   "failed", err=True)
    if not quiet:
        typer.echo(f"run directory: {outcome.run_dir}")
        report = outcome.run_dir / "report.html"
        if report.exists():
            typer.echo(f"report: {report}")
        if outcome.previous is not None:
            typer.echo(f"the previous run there was kept as {outcome.previous}")


@app.command()
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
        _fail(error)
    typer.echo(f"report: {path}")


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--{what} takes comma-separated integers, got {text!r}") from None


@app.command()
def assign(
    brokers: Annotated[str, typer.Option(help="Broker ids, e.g. 0,1,2,3,4,5.")],
    partitions: Annotated[int, typer.Option(help="Number of partitions.")],
    replication_factor: Annotated[int, typer.Option(help="Replicas per partition.")],
    racks: Annotated[str | None, typer.Option(
        help="Rack of each broker, e.g. a,a,a,b,b,b.")] = None,
    start_index: Annotated[int | None, typer.Option(
        help="Fixed start index (Kafka draws it at random otherwise).")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the random start index and shift.")] = 1,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the replica assignment Kafka's placement (AdminUtils) gives."""
    from rig.engine import Streams
    from rig.scenario.model import BrokerSpec
    from rig.strategies.placement import PlacementError
    from rig.strategies.placement.kafka import kafka_assignment, rack_alternated

    try:
        ids = _int_list(brokers, "brokers")
        rack_names = [r.strip() for r in racks.split(",")] if racks else []
        if rack_names and len(rack_names) != len(ids):
            raise UserError(f"--racks names {len(rack_names)} racks for {len(ids)} brokers")
        if len(set(ids)) != len(ids):
            raise UserError(f"--brokers lists a broker twice: {brokers}")
        specs = [BrokerSpec(b, rack_names[i] if rack_names else None) for i, b in enumerate(ids)]
        try:
            assignment = kafka_assignment(specs, partitions, replication_factor,
                                          Streams(seed).get("placement"), start_index)
        except PlacementError as exc:
            raise UserError(str(exc)) from None
    except UserError as error:
        _fail(error)
    order = rack_alternated(specs) if rack_names else sorted(ids)
    if json_:
        typer.echo(orjson.dumps({
            "brokers": ids, "racks": rack_names or None, "broker_order": order,
            "start_index": start_index, "seed": seed if start_index is None else None,
            "assignment": {str(p): list(r) for p, r in enumerate(assignment)}},
            option=orjson.OPT_INDENT_2).decode())
        return
    if rack_names:
        typer.echo("rack-alternated broker order: " + ", ".join(map(str, order)))
    rack_of = {s.id: s.rack for s in specs}
    for p, replicas in enumerate(assignment):
        where = (f"   racks {', '.join(str(rack_of[r]) for r in replicas)}" if rack_names else "")
        typer.echo(f"partition {p}: {', '.join(map(str, replicas))}{where}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
