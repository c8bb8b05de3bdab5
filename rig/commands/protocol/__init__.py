"""`rig protocol`: Kafka wire-protocol tools, one module per subcommand (`fetch`) beside the
modules they share: the example they build, the annotated walk, the output, encode and decode."""

from __future__ import annotations

import typer

from rig.commands.protocol import fetch as fetch_command

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@app.callback()
def protocol() -> None:
    """Kafka wire-protocol tools: build, size, dump and decode Fetch messages (v0–v18)."""


app.command("fetch")(fetch_command.fetch)
