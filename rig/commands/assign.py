"""`rig assign`: the replica assignment Kafka's placement gives."""

from __future__ import annotations

from typing import Annotated

import orjson
import typer

from rig.commands._common import fail
from rig.errors import UserError

# What one command prints at most: a topic's partitions and a cluster's brokers, as scenarios allow.
MAX_PARTITIONS = 1_000_000
MAX_BROKERS = 10_000


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--{what} takes comma-separated integers, got {text!r}") from None


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
    from rig.strategies.placement.kafka import kafka_assignment, rack_alternated, start_and_shift

    try:
        if not 1 <= partitions <= MAX_PARTITIONS:
            raise UserError(f"--partitions must be between 1 and {MAX_PARTITIONS:,} (got "
                            f"{partitions:,})")
        if len(brokers) > 12 * MAX_BROKERS:  # ids up to 11 digits and a comma each
            raise UserError(f"--brokers lists more than {MAX_BROKERS:,} brokers")
        ids = _int_list(brokers, "brokers")
        if len(ids) > MAX_BROKERS:
            raise UserError(f"--brokers lists {len(ids):,} brokers; at most {MAX_BROKERS:,}")
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
        fail(error)
    order = rack_alternated(specs) if rack_names else sorted(ids)
    # What the assignment drew, from a stream of the same seed (the same draws it made).
    drawn = (None if start_index is not None and start_index >= 0 else
             start_and_shift(len(ids), Streams(seed).get("placement")))
    if json_:
        typer.echo(orjson.dumps({
            "brokers": ids, "racks": rack_names or None, "broker_order": order,
            "start_index": start_index, "seed": seed if start_index is None else None,
            **({"drawn": {"start_index": drawn[0], "replica_shift": drawn[1]}} if drawn else {}),
            "assignment": {str(p): list(r) for p, r in enumerate(assignment)}},
            option=orjson.OPT_INDENT_2).decode())
        return
    if drawn is not None:
        typer.echo(f"drew start index {drawn[0]} and replica shift {drawn[1]} from --seed {seed}; "
                   f"to fix them, pass --seed {seed} again, or --start-index {drawn[0]} (which "
                   f"sets the shift to {drawn[0]} too, as Kafka's fixedStartIndex does)")
    if rack_names:
        typer.echo("rack-alternated broker order: " + ", ".join(map(str, order)))
    rack_of = {s.id: s.rack for s in specs}
    for p, replicas in enumerate(assignment):
        where = (f"   racks {', '.join(str(rack_of[r]) for r in replicas)}" if rack_names else "")
        typer.echo(f"partition {p}: {', '.join(map(str, replicas))}{where}")
