"""`rig validate`: schema and semantic checks of scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig.errors import ScenarioError, UserError


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
