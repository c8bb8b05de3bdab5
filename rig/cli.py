"""The `rig` command line. Exit codes: 0 ok, 1 an expectation or check failed, 2 bad input.

Each command lives in its own module under rig/commands; this file only assembles them.
"""

from __future__ import annotations

import signal
import sys
from typing import Annotated

import typer

from rig._version import __version__
from rig.commands import analyze, assign, fuzz, plugins, report, run, sweep, validate
from rig.commands import partition_for as partition_for_command
from rig.commands import protocol as protocol_command

app = typer.Typer(
    name="rig", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="A declarative, deterministic test rig for Kafka's replication data plane.\n\n"
         "Every figure rig reports is simulated; wire sizes are exact (really encoded).")


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


app.command()(validate.validate)
app.command()(run.run)
app.command()(analyze.analyze)
app.command()(report.report)
app.command()(assign.assign)
app.command()(plugins.plugins)
app.add_typer(protocol_command.app, name="protocol")
app.command("partition-for")(partition_for_command.partition_for)
app.command()(fuzz.fuzz)
app.command()(sweep.sweep)


class Terminated(BaseException):
    """SIGTERM arrived (`kill`, `docker stop`): unwinds like Ctrl-C, so every stage's cleanup
    runs (a run's staging folder is removed), then rig exits 143 as a process killed by it."""


def _terminate(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one unwinding is enough
    raise Terminated


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    except Terminated:
        print("rig: terminated", file=sys.stderr)
        sys.exit(128 + signal.SIGTERM)


if __name__ == "__main__":
    main()
