"""What every command shares: turning a UserError into its one-line message and exit code."""

from __future__ import annotations

from typing import NoReturn

import typer

from rig.errors import ScenarioError, UserError


def fail(error: UserError) -> NoReturn:
    """Print `error` (every problem of a ScenarioError on its own line) and exit with its code."""
    if isinstance(error, ScenarioError):
        for problem in error.problems:
            typer.echo(str(problem), err=True)
    else:
        typer.echo(f"error: {error}", err=True)
    raise typer.Exit(error.exit_code)
