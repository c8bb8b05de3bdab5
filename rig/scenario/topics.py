"""A variant's topics: partitions and replication factor or an explicit assignment, checked
against the brokers; the topic-level configs (Kafka's `LogConfig` keys); and
`__consumer_offsets`, added when a consumer group commits offsets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig import units
from rig.hashing import OFFSETS_TOPIC
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.model import BrokerSpec, ConsumerSpec, TopicSpec
from rig.scenario.problems import Collector
from rig.scenario.source import PathKey

_TOPIC_CONFIG: dict[str, Any] = {
    "min.insync.replicas": int, "flush.messages": int, "segment.bytes": units.size_bytes,
    "unclean.leader.election.enable": bool,
    "cleanup.policy": str, "min.cleanable.dirty.ratio": float,
    "delete.retention.ms": units.duration_ms, "min.compaction.lag.ms": units.duration_ms,
    "max.compaction.lag.ms": units.duration_ms, "segment.ms": units.duration_ms,
    "index.interval.bytes": units.size_bytes, "retention.ms": units.duration_ms,
    "retention.bytes": int,
}


def read_topics(data: dict[str, Any], brokers: Sequence[BrokerSpec],
                out: Collector) -> tuple[TopicSpec, ...]:
    topics = []
    names: dict[str, int] = {}
    broker_ids = {b.id for b in brokers}
    for i, raw in enumerate(data["topics"]):
        at: PathKey = ("topics", i)
        name = raw["name"]
        if name in names:
            out.add((*at, "name"), f"topic {name!r} is defined twice (also topics[{names[name]}])")
        names.setdefault(name, i)
        assignment = raw.get("assignment")
        partitions = raw.get("partitions")
        rf = raw.get("replication_factor")
        if assignment is not None:
            lengths = {len(replicas) for replicas in assignment}
            if len(lengths) > 1:
                out.add((*at, "assignment"),
                        "every partition must have the same number of replicas "
                        f"(got {sorted(lengths)})")
            for p, replicas in enumerate(assignment):
                if len(set(replicas)) != len(replicas):
                    out.add((*at, "assignment", p), f"partition {p} lists a broker twice")
                unknown = sorted(set(replicas) - broker_ids)
                if unknown:
                    out.add((*at, "assignment", p),
                            f"partition {p} names brokers {unknown} that are not in the cluster")
            if partitions is not None and partitions != len(assignment):
                out.add((*at, "partitions"), f"partitions is {partitions} but the assignment "
                        f"lists {len(assignment)}")
            if rf is not None and lengths and rf != max(lengths):
                out.add((*at, "replication_factor"), f"replication_factor is {rf} but the "
                        f"assignment has {max(lengths)} replicas per partition")
            partitions = len(assignment)
            rf = max(lengths) if lengths else 0
        else:
            if partitions is None:
                out.add(at, "partitions is required (or give an assignment)")
            if rf is None:
                out.add(at, "replication_factor is required (or give an assignment)")
            if rf is not None and rf > len(brokers):
                out.add((*at, "replication_factor"),
                        f"must be ≤ {len(brokers)} brokers (got {rf})")
        config: dict[str, Any] = {}
        for key, value in raw.get("config", {}).items():
            try:
                config[key] = _TOPIC_CONFIG[key](value)
            except ValueError as exc:
                out.add((*at, "config", key), str(exc))
        topics.append(TopicSpec(
            name=name, partitions=partitions or 0, replication_factor=rf or 0,
            assignment=tuple(tuple(r) for r in assignment) if assignment is not None else None,
            config=config))
    return tuple(topics)


def with_offsets_topic(topics: tuple[TopicSpec, ...], consumers: Sequence[ConsumerSpec],
                       config: BrokerConfig, brokers: int) -> tuple[TopicSpec, ...]:
    """Add __consumer_offsets (compacted, 100 MiB segments) when a group commits offsets and the
    scenario did not declare it; its replication factor is at most the brokers."""
    if not any(c.commit != "none" for c in consumers):
        return topics
    if any(t.name == OFFSETS_TOPIC for t in topics):
        return topics
    rf = max(1, min(config.offsets_topic_replication_factor, brokers))
    return (*topics, TopicSpec(OFFSETS_TOPIC, config.offsets_topic_num_partitions, rf,
                               config={"cleanup.policy": "compact",
                                       "segment.bytes": 100 << 20}))
