"""`rig protocol fetch`: its options, checked, and the dispatch to encoding or --decode."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rig import written
from rig.commands._common import fail
from rig.commands.protocol.decode import decode_file
from rig.commands.protocol.encode import encode_example
from rig.commands.protocol.example import SPOKEN, check_example
from rig.errors import UserError


def fetch(
    version: Annotated[int | None, typer.Option(
        help=f"Fetch version, {SPOKEN} (for --decode: optional for a framed request).")] = None,
    topic: Annotated[str, typer.Option(help="Topic name (v13+ sends a made-up topic id).")]
    = "test",
    partitions: Annotated[int | None, typer.Option(
        help="Partitions the fetcher fetches: a full fetch lists them all.")] = None,
    incremental: Annotated[bool, typer.Option(
        "--incremental", help="An incremental fetch (v7+) in an existing session.")] = False,
    changed: Annotated[int | None, typer.Option(
        help="With --incremental: partitions listed because new or changed (the first K).")]
    = None,
    forgotten: Annotated[int | None, typer.Option(
        help="With --incremental: partitions dropped from the session (numbered after "
             "--partitions).")] = None,
    response: Annotated[bool, typer.Option(
        "--response", help="The leader's response instead of the request.")] = False,
    records_bytes: Annotated[int | None, typer.Option(
        help="With --response: bytes of records in each listed partition (zero filler).")]
    = None,
    replica_id: Annotated[int, typer.Option(
        help="The fetching broker (a follower); negative for a consumer.")] = 1,
    client_id: Annotated[str | None, typer.Option(
        help="Header client id (default broker-<id>-fetcher-0, or consumer-1).")] = None,
    session_id: Annotated[int | None, typer.Option(
        help="v7+ session id (default 0 for a full fetch, 1 for --incremental).")] = None,
    session_epoch: Annotated[int | None, typer.Option(
        help="v7+ session epoch (default 0 for a full fetch, 1 for --incremental).")] = None,
    correlation_id: Annotated[int, typer.Option(help="Header correlation id.")] = 0,
    rack_id: Annotated[str, typer.Option(help="v11+ rack of the fetcher.")] = "",
    hex_: Annotated[bool, typer.Option(
        "--hex", help="Print the bytes as a field-annotated hex dump.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    out: Annotated[Path | None, typer.Option(
        help="Write the encoded message (size prefix + header + body) to this file.")] = None,
    decode: Annotated[Path | None, typer.Option(
        help="Decode this file (raw or hex text; '-' for stdin) to JSON instead of encoding; "
             "with --hex, print the annotated dump.")] = None,
    framed: Annotated[bool, typer.Option(
        "--framed", help="With --decode: the bytes are size prefix + header + body.")] = False,
    body: Annotated[bool, typer.Option(
        "--body", help="With --decode: the bytes are a bare body (default: detect).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --out replace a file rig did not write.")] = False,
) -> None:
    """Encode a Fetch request or response; print its sizes and bytes, or --decode bytes.

    Body, header and wire bytes are what the encoder writes. Defaults follow Kafka's replica
    fetcher: replica_id = the broker, max_wait 500 ms, min_bytes 1, max_bytes 10 MiB, 1 MiB
    per partition, client id broker-<id>-fetcher-0.
    """
    try:
        if decode is not None:
            if framed and body:
                raise UserError("--framed and --body contradict each other: give one or neither")
            if out is not None:
                raise UserError("--out writes an encoded message; it does not go with --decode")
            decode_file(decode, response, version, True if framed else (False if body else None),
                    hex_, json_)
            return
        if framed or body:
            raise UserError("--framed and --body describe the input of --decode")
        ex = check_example(version, topic, partitions, incremental, changed, forgotten, response,
                      records_bytes, replica_id, session_id, session_epoch, rack_id)
        if client_id is None:
            client_id = f"broker-{replica_id}-fetcher-0" if replica_id >= 0 else "consumer-1"
        with written.replacing_anything(force):
            encode_example(ex, response, client_id, correlation_id, hex_, json_, out)
    except UserError as error:
        fail(error)
