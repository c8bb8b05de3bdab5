"""`rig validate`: schema and semantic checks of scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rig.errors import ScenarioError, UserError

if TYPE_CHECKING:
    from rig.errors import Problem
    from rig.scenario.model import Scenario


def validate(
    files: Annotated[list[Path], typer.Argument(help="Scenario files to check.")],
    set_: Annotated[list[str] | None, typer.Option("--set", metavar="KEY.PATH=VALUE",
                                                   help="Override a scenario value.")] = None,
    allow_plugin_paths: Annotated[bool, typer.Option(
        "--allow-plugin-paths",
        help="Also load strategies named as module:Class in the scenario (runs that code).")
    ] = False,
) -> None:
    """Check scenario files against the schema and Kafka's rules; print every problem.

    Every strategy a scenario names is also loaded and created with its options, so a broken
    or missing plugin shows here rather than in the middle of a run.
    """
    from rig.scenario.load import load_scenario
    from rig.strategies import guard

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
        strategy_problems = guard.strategy_problems(scenario.variants,
                                                       allow_paths=allow_plugin_paths)
        if strategy_problems:
            failed = True
            for kind, message in strategy_problems:
                typer.echo(f"{file}: $.strategies.{kind}: {message}", err=True)
            continue
        fuzz_problems = _fuzz_problems(file, scenario)
        if fuzz_problems:
            failed = True
            for line in fuzz_problems:
                typer.echo(str(line), err=True)
            continue
        variants = ", ".join(v.name for v in scenario.variants)
        typer.echo(f"{file}: ok ({len(scenario.variants)} variants: {variants}; "
                   f"{len(scenario.expectations)} expectations)")
    if failed:
        raise typer.Exit(2)


def _fuzz_problems(file: Path, scenario: Scenario) -> list[Problem]:
    """What `rig fuzz` would refuse in the file's `fuzz:` bounds (a window outside the run, a
    kind the variant's controller cannot take, ...), so validate says it first."""
    from rig.scenario.source import load_yaml_file
    from rig.search.bounds import variant_bounds

    doc = load_yaml_file(file)
    declared = [doc.data, *(doc.data.get("variants") or {}).values()]
    if not any("fuzz" in (part or {}) for part in declared):
        return []
    try:
        variant_bounds(doc, scenario)
    except ScenarioError as error:
        return error.problems
    return []
