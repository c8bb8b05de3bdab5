"""`rig partition-for`: the partition Kafka picks for a record key (the default partitioner) or
for a consumer group's offsets (its __consumer_offsets partition)."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import typer

from rig.commands._common import fail
from rig.errors import UserError
from rig.hashing import OFFSETS_TOPIC, java_string_hash, kafka_abs, murmur2, offsets_partition

OFFSETS_TOPIC_PARTITIONS = 50  # offsets.topic.num.partitions


def key_partition(key: str, partitions: int) -> tuple[int, int]:
    """(murmur2 of the key's UTF-8 bytes, the partition): Kafka's BuiltInPartitioner
    .partitionForKey, (murmur2(key) & 0x7fffffff) % partitions (Utils.toPositive)."""
    h = murmur2(key.encode("utf-8"))
    return h, (h & 0x7FFFFFFF) % partitions


def group_partition(group: str, partitions: int = OFFSETS_TOPIC_PARTITIONS) -> tuple[int, int]:
    """(String.hashCode of the group id, the partition): the group coordinator's
    partitionFor, Utils.abs(groupId.hashCode) % offsets.topic.num.partitions."""
    return java_string_hash(group), offsets_partition(group, partitions)


def partition_for(
    key: Annotated[str | None, typer.Option(
        help="A record key (its UTF-8 bytes, as StringSerializer writes them).")] = None,
    group: Annotated[str | None, typer.Option(help="A consumer group id.")] = None,
    partitions: Annotated[int | None, typer.Option(
        help="Partitions of the topic (required with --key; default 50, "
             "offsets.topic.num.partitions, with --group).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the partition Kafka's default partitioner gives a key, or the __consumer_offsets
    partition that holds a group's offsets (and so picks its coordinator)."""
    try:
        if (key is None) == (group is None):
            raise UserError("give exactly one of --key K (with --partitions N) or --group G")
        if key is not None and partitions is None:
            raise UserError("--key needs --partitions N (the topic's partition count)")
        count = OFFSETS_TOPIC_PARTITIONS if partitions is None else partitions
        if count <= 0:
            raise UserError(f"--partitions must be ≥ 1 (got {count})")
    except UserError as error:
        fail(error)
    doc: dict[str, Any]  # OFFSETS_TOPIC: re-exported for callers of this module
    if key is not None:
        h, p = key_partition(key, count)
        doc = {"key": key, "partitions": count, "murmur2": h, "positive": h & 0x7FFFFFFF,
               "partition": p}
        text = (f"key {key!r} → partition {p} of {count}   (murmur2 {h}, "
                f"& 0x7fffffff = {h & 0x7FFFFFFF}, % {count} = {p})")
    else:
        assert group is not None
        h, p = group_partition(group, count)
        doc = {"group": group, "topic": OFFSETS_TOPIC, "partitions": count, "hash_code": h,
               "abs": kafka_abs(h), "partition": p}
        text = (f"group {group!r} → {OFFSETS_TOPIC} partition {p} of {count}   "
                f"(String.hashCode {h}, Utils.abs = {kafka_abs(h)}, % {count} = {p}); "
                "its leader is the group's coordinator")
    typer.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() if json_ else text)
