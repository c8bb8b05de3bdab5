"""From a scenario file to a validated `Scenario`: parse, override, schema, variants, semantics.

Every problem found is collected and raised together as one ScenarioError, each located as
`FILE:LINE: $.path: message`.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rig import units
from rig.errors import Problem, ScenarioError
from rig.hashing import OFFSETS_TOPIC
from rig.scenario import profiles
from rig.scenario.model import (
    STRATEGY_KINDS,
    BrokerConfig,
    BrokerSpec,
    ConsumerSpec,
    Expectation,
    FaultSpec,
    LinkSpec,
    NetworkSpec,
    OsSpec,
    ProducerSpec,
    Scenario,
    SizeDist,
    StrategyRef,
    TopicSpec,
    VariantSpec,
)
from rig.scenario.overrides import apply_sets, deep_merge
from rig.scenario.schema import schema_problems
from rig.scenario.source import Document, Lines, PathKey, load_yaml_file

DEFAULT_VARIANT = "default"
DEFAULT_SEED = 1
DEFAULT_DURATION = "1m"
DEFAULT_LATENCY = "500us"
DEFAULT_BANDWIDTH = "10Gbit/s"
SUMMARY_ROOTS = ("scenario", "seed", "rig_version", "variants", "expectations")

# Broker config keys (Kafka's names) → (BrokerConfig field, converter).
_CONFIG_KEYS: dict[str, tuple[str, Any]] = {
    "num.replica.fetchers": ("num_replica_fetchers", int),
    "replica.fetch.wait.max.ms": ("replica_fetch_wait_max_ms", units.duration_ms),
    "replica.fetch.min.bytes": ("replica_fetch_min_bytes", units.size_bytes),
    "replica.fetch.max.bytes": ("replica_fetch_max_bytes", units.size_bytes),
    "replica.fetch.response.max.bytes": ("replica_fetch_response_max_bytes", units.size_bytes),
    "replica.fetch.backoff.ms": ("replica_fetch_backoff_ms", units.duration_ms),
    "replica.lag.time.max.ms": ("replica_lag_time_max_ms", units.duration_ms),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", units.duration_ms),
    "max.incremental.fetch.session.cache.slots": ("max_incremental_fetch_session_cache_slots", int),
    "min.insync.replicas": ("min_insync_replicas", int),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", bool),
    "log.flush.interval.messages": ("log_flush_interval_messages", int),
    "log.flush.interval.ms": ("log_flush_interval_ms", units.duration_ms),
    "log.segment.bytes": ("log_segment_bytes", units.size_bytes),
    "replica.high.watermark.checkpoint.interval.ms": (
        "replica_high_watermark_checkpoint_interval_ms", units.duration_ms),
    "replica.socket.timeout.ms": ("replica_socket_timeout_ms", units.duration_ms),
    "auto.leader.rebalance.enable": ("auto_leader_rebalance_enable", bool),
    "leader.imbalance.check.interval.seconds": ("leader_imbalance_check_interval_ms",
                                                units.seconds_ms),
    "leader.imbalance.per.broker.percentage": ("leader_imbalance_per_broker_percentage", int),
    "log.cleaner.enable": ("log_cleaner_enable", bool),
    "log.cleaner.threads": ("log_cleaner_threads", int),
    "log.cleaner.dedupe.buffer.size": ("log_cleaner_dedupe_buffer_size", units.size_bytes),
    "log.cleaner.io.buffer.load.factor": ("log_cleaner_io_buffer_load_factor", float),
    "log.cleaner.io.max.bytes.per.second": ("log_cleaner_io_max_bytes_per_second",
                                            units.bandwidth_bytes_per_s),
    "log.cleaner.backoff.ms": ("log_cleaner_backoff_ms", units.duration_ms),
    "log.index.interval.bytes": ("log_index_interval_bytes", units.size_bytes),
    "log.retention.ms": ("log_retention_ms", units.duration_ms),
    "log.retention.bytes": ("log_retention_bytes", int),
    "log.retention.check.interval.ms": ("log_retention_check_interval_ms", units.duration_ms),
    "offsets.topic.num.partitions": ("offsets_topic_num_partitions", int),
    "offsets.topic.replication.factor": ("offsets_topic_replication_factor", int),
}
_TOPIC_CONFIG: dict[str, Any] = {
    "min.insync.replicas": int, "flush.messages": int, "segment.bytes": units.size_bytes,
    "unclean.leader.election.enable": bool,
    "cleanup.policy": str, "min.cleanable.dirty.ratio": float,
    "delete.retention.ms": units.duration_ms, "min.compaction.lag.ms": units.duration_ms,
    "max.compaction.lag.ms": units.duration_ms, "segment.ms": units.duration_ms,
    "index.interval.bytes": units.size_bytes, "retention.ms": units.duration_ms,
    "retention.bytes": int,
}


class _Collector:
    """Problems of one document, deduplicated across variants."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.problems: list[Problem] = []

    def add(self, path: PathKey, message: str) -> None:
        problem = self.doc.problem(path, message)
        if problem not in self.problems:
            self.problems.append(problem)


def _brokers(data: dict[str, Any], out: _Collector) -> tuple[BrokerSpec, ...]:
    raw = data["cluster"]["brokers"]
    if isinstance(raw, int):
        return tuple(BrokerSpec(i) for i in range(raw))
    brokers = tuple(BrokerSpec(b["id"], b.get("rack"), b.get("fenced", False)) for b in raw)
    seen: dict[int, int] = {}
    for i, broker in enumerate(brokers):
        if broker.id in seen:
            out.add(("cluster", "brokers", i, "id"),
                    f"broker id {broker.id} is used twice (also at index {seen[broker.id]})")
        seen.setdefault(broker.id, i)
    racked = [b for b in brokers if b.rack is not None]
    if racked and len(racked) != len(brokers):
        missing = [b.id for b in brokers if b.rack is None]
        out.add(("cluster", "brokers"),
                f"some brokers have a rack and some do not (no rack: {missing}); Kafka refuses "
                "rack-aware placement then: give every broker a rack, or none")
    return brokers


def _config(data: dict[str, Any], kafka: str, out: _Collector,
            overrides: dict[str, Any] | None = None,
            at: PathKey = ("cluster", "config")) -> BrokerConfig:
    raw = {**data.get("cluster", {}).get("config", {}), **(overrides or {})}
    profile = profiles.profile(kafka)
    ibp = raw.pop("inter.broker.protocol.version", kafka)
    forced = data.get("protocol", {}).get("fetch_version")
    fields: dict[str, Any] = {
        "inter_broker_protocol_version": ibp,
        "fetch_version": forced if forced is not None else profiles.fetch_version_for_ibp(ibp),
        "replica_lag_time_max_ms": profile.replica_lag_time_max_ms,
        "zookeeper_session_timeout_ms": profile.zookeeper_session_timeout_ms,
        "hw_holds_below_min_isr": profile.hw_holds_below_min_isr,
        "isr_rejoin_needs_epoch_start": profile.isr_rejoin_needs_epoch_start,
        "controller_detects_bounce": profile.controller_detects_bounce,
    }
    for key, value in raw.items():
        name, convert = _CONFIG_KEYS[key]
        try:
            fields[name] = convert(value)
        except ValueError as exc:
            out.add((*at, key), str(exc))
    return BrokerConfig(**fields)


def _link(raw: dict[str, Any], fallback: LinkSpec, at: PathKey, out: _Collector) -> LinkSpec:
    latency_us, bandwidth = fallback.latency_us, fallback.bandwidth_bytes_per_s
    try:
        if "latency" in raw:
            latency_us = units.duration_us(raw["latency"])
        if "bandwidth" in raw:
            bandwidth = units.bandwidth_bytes_per_s(raw["bandwidth"])
    except ValueError as exc:
        out.add(at, str(exc))
    return LinkSpec(latency_us, bandwidth)


def _network(data: dict[str, Any], out: _Collector) -> NetworkSpec:
    raw = data.get("network", {})
    defaults = LinkSpec(units.duration_us(DEFAULT_LATENCY),
                        units.bandwidth_bytes_per_s(DEFAULT_BANDWIDTH))
    same = _link(raw, defaults, ("network",), out)
    cross = _link(raw.get("cross_rack", {}), same, ("network", "cross_rack"), out)
    return NetworkSpec(same, cross)


def _topics(data: dict[str, Any], brokers: Sequence[BrokerSpec],
            out: _Collector) -> tuple[TopicSpec, ...]:
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


def _os(data: dict[str, Any], out: _Collector) -> OsSpec:
    raw = data.get("cluster", {}).get("os", {})
    try:
        return OsSpec(units.duration_ms(raw.get("dirty_expire", "30s")),
                      units.duration_ms(raw.get("writeback_interval", "5s")))
    except ValueError as exc:
        out.add(("cluster", "os"), str(exc))
        return OsSpec()


def _size_dist(raw: Any) -> SizeDist:
    if isinstance(raw, dict) and "uniform" in raw:
        low, high = (units.size_bytes(v) for v in raw["uniform"])
        return SizeDist("uniform", low, high)
    if isinstance(raw, dict) and "normal" in raw:
        return SizeDist("normal", units.size_bytes(raw["normal"]["mean"]),
                        units.size_bytes(raw["normal"]["stddev"]))
    return SizeDist("fixed", units.size_bytes(raw))


def _producers(data: dict[str, Any], topics: Sequence[TopicSpec],
               out: _Collector) -> tuple[ProducerSpec, ...]:
    by_name = {t.name: t for t in topics}
    result = []
    for i, raw in enumerate(data.get("workload", {}).get("producers", [])):
        at: PathKey = ("workload", "producers", i)
        topic = by_name.get(raw["topic"])
        if topic is None:
            out.add((*at, "topic"), f"no topic named {raw['topic']!r} (topics: "
                    f"{', '.join(by_name)})")
            continue
        rate, on, off = raw.get("rate", 1000), 0, 0
        if isinstance(rate, dict):
            burst = rate["bursty"]
            rate, on, off = burst["rate"], units.duration_ms(burst["on"]), units.duration_ms(
                burst["off"])
            if on <= 0:
                out.add((*at, "rate"), "a burst needs on > 0")
        keys, key_count, zipf_s = "none", 0, 1.0
        raw_keys = raw.get("keys", "none")
        if isinstance(raw_keys, dict) and "uniform" in raw_keys:
            keys, key_count = "uniform", raw_keys["uniform"]
        elif isinstance(raw_keys, dict):
            keys, key_count = "zipf", raw_keys["zipf"]["keys"]
            zipf_s = raw_keys["zipf"].get("s", 1.0)
        partitioner: Any = raw.get("partitioner", "murmur2" if keys != "none" else "sticky")
        explicit = 0
        if isinstance(partitioner, dict):
            partitioner, explicit = "explicit", partitioner["explicit"]
            if explicit >= topic.partitions:
                out.add((*at, "partitioner"), f"partition {explicit} does not exist: "
                        f"{topic.name} has {topic.partitions}")
        if partitioner == "murmur2" and keys == "none":
            out.add((*at, "partitioner"), "murmur2 partitions by key, but this producer sends "
                    "no keys: choose keys, or round-robin / sticky")
        acks = {"all": -1}.get(raw.get("acks", "all"), raw.get("acks", "all"))
        result.append(ProducerSpec(
            name=raw.get("name", f"producer-{i}"), topic=topic.name, rate=float(rate),
            burst_on_ms=on, burst_off_ms=off,
            record_size=_size_dist(raw.get("record_size", 100)),
            key_size=units.size_bytes(raw.get("key_size", 16)), keys=keys, key_count=key_count,
            zipf_s=zipf_s, partitioner=partitioner, explicit_partition=explicit, acks=int(acks),
            linger_ms=units.duration_ms(raw.get("linger", "5ms")),
            batch_size=units.size_bytes(raw.get("batch_size", "16KiB")),
            retries=raw.get("retries", 2_147_483_647),
            request_timeout_ms=units.duration_ms(raw.get("request_timeout", "30s")),
            delivery_timeout_ms=units.duration_ms(raw.get("delivery_timeout", "2m")),
            start_ms=units.duration_ms(raw.get("start", 0)),
            stop_ms=units.duration_ms(raw["stop"]) if "stop" in raw else None,
            count=raw.get("count")))
    return tuple(result)


def _consumers(data: dict[str, Any], topics: Sequence[TopicSpec], config: BrokerConfig,
               strategies: dict[str, StrategyRef], out: _Collector) -> tuple[ConsumerSpec, ...]:
    by_name = {t.name: t for t in topics}
    groups: dict[str, int] = {}
    result = []
    for i, raw in enumerate(data.get("workload", {}).get("consumers", [])):
        at: PathKey = ("workload", "consumers", i)
        if raw["topic"] not in by_name:
            out.add((*at, "topic"), f"no topic named {raw['topic']!r} (topics: "
                    f"{', '.join(by_name)})")
            continue
        count = raw.get("groups", 1)
        names = [raw["group"]] if count == 1 else [
            f"{raw['group']}-{n:0{len(str(count))}d}" for n in range(1, count + 1)]
        for name in names:
            if name in groups:
                out.add((*at, "group"), f"group {name!r} is defined twice (also "
                        f"workload.consumers[{groups[name]}])")
                break
            groups[name] = i
        version = raw.get("fetch_version")
        session = strategies.get("fetch_session")
        if (session is not None and session.name == "incremental"
                and (version or config.fetch_version) < 7):
            out.add((*at, "fetch_version"), "incremental fetch sessions need Fetch v7 or later")
        start_ms = units.duration_ms(raw.get("start_at", 0))
        ramp_ms = units.duration_ms(raw.get("ramp", 0))
        for n, name in enumerate(names):
            result.append(ConsumerSpec(
                group=name, topic=raw["topic"], members=raw.get("members", 1),
                assignment=raw.get("assignment", "range"), start=raw.get("start", "latest"),
                fetch_version=version,
                fetch_max_wait_ms=units.duration_ms(raw.get("fetch_max_wait", "500ms")),
                fetch_min_bytes=units.size_bytes(raw.get("fetch_min_bytes", 1)),
                max_partition_fetch_bytes=units.size_bytes(
                    raw.get("max_partition_fetch_bytes", "1MiB")),
                fetch_max_bytes=units.size_bytes(raw.get("fetch_max_bytes", "50MiB")),
                start_ms=start_ms + ramp_ms * n // len(names),
                lag_sample_ms=units.duration_ms(raw.get("lag_sample", "1s")),
                commit=raw.get("commit", "none"),
                auto_commit_interval_ms=units.duration_ms(
                    raw.get("auto_commit_interval", "5s"))))
    return tuple(result)


_FAULT_TARGETS = {
    "crash": "brokers", "power-loss": "brokers", "stall": "brokers", "fetcher-stuck": "brokers",
    "zk-session-expiry": "brokers", "rack-failure": "rack", "network-partition": "groups",
    "link": "between", "controller-failover": None,
}


def _faults(data: dict[str, Any], brokers: Sequence[BrokerSpec],
            out: _Collector) -> tuple[FaultSpec, ...]:
    ids = {b.id for b in brokers}
    racks = {b.rack for b in brokers if b.rack}
    result = []
    for i, raw in enumerate(data.get("faults", [])):
        at: PathKey = ("faults", i)
        kind = raw["kind"]
        targets = tuple(raw.get("brokers", ())) + ((raw["broker"],) if "broker" in raw else ())
        need = _FAULT_TARGETS[kind]
        if need == "brokers" and not targets:
            out.add(at, f"a {kind} fault needs `broker` or `brokers`")
        for b in targets:
            if b not in ids:
                out.add(at, f"broker {b} is not in the cluster")
        if need == "rack" and raw.get("rack") not in racks:
            out.add((*at, "rack"), f"rack {raw.get('rack')!r} is not a rack of this cluster "
                    f"(racks: {', '.join(sorted(racks)) or 'none'})")
        if need == "groups" and "groups" not in raw:
            out.add(at, "a network-partition needs `groups` (lists of brokers, or \"zk\")")
        if need == "between" and "between" not in raw:
            out.add(at, "a link fault needs `between: [node, node]`")
        for node in [n for g in raw.get("groups", []) for n in g] + list(raw.get("between", [])):
            if node != "zk" and node not in ids:
                out.add(at, f"node {node} is not in the cluster")
        after = raw.get("after", {})
        result.append(FaultSpec(
            kind=kind, index=i,
            at_ms=units.duration_ms(raw["at"]) if "at" in raw else None,
            after_event=after.get("event"), after_where=dict(after.get("where", {})),
            after_delay_ms=units.duration_ms(after.get("delay", 0)),
            brokers=targets, rack=raw.get("rack"),
            groups=tuple(tuple(g) for g in raw.get("groups", [])),
            between=tuple(raw.get("between", ())),
            latency_us=units.duration_us(raw["latency"]) if "latency" in raw else None,
            bandwidth_bytes_per_s=(units.bandwidth_bytes_per_s(raw["bandwidth"])
                                   if "bandwidth" in raw else None),
            loss=raw.get("loss", 0.0),
            restart_after_ms=(units.duration_ms(raw["restart_after"])
                              if "restart_after" in raw else None),
            heal_after_ms=units.duration_ms(raw["heal_after"]) if "heal_after" in raw else None,
            description=raw.get("description", "")))
    return tuple(result)


def _strategies(data: dict[str, Any], out: _Collector) -> dict[str, StrategyRef]:
    from rig.strategies import registry  # registry imports the model; keep the import local

    chosen: dict[str, StrategyRef] = {}
    raw = data.get("strategies", {})
    for kind in STRATEGY_KINDS:
        value = raw.get(kind)
        if value is None:
            default = registry.DEFAULTS[kind]
            if default is not None:
                chosen[kind] = StrategyRef(default)
            continue
        ref = (StrategyRef(value) if isinstance(value, str)
               else StrategyRef(value["name"], dict(value.get("options", {}))))
        if ":" not in ref.name and ref.name not in registry.known_names(kind):
            known = ", ".join(registry.known_names(kind)) or "none yet in this rig version"
            out.add(("strategies", kind), f"unknown {kind} strategy {ref.name!r}; known: {known}")
        chosen[kind] = ref
    return chosen


def _variant(name: str, doc: Document, out: _Collector) -> VariantSpec | None:
    data = doc.data
    before = len(out.problems)
    try:
        duration = units.duration_ms(data.get("duration", DEFAULT_DURATION))
    except ValueError as exc:
        out.add(("duration",), str(exc))
        duration = 0
    if duration <= 0 and len(out.problems) == before:
        out.add(("duration",), "must be greater than 0 (e.g. 10m)")
    kafka = data.get("kafka", profiles.DEFAULT_PROFILE)
    brokers = _brokers(data, out)
    config = _config(data, kafka, out)
    network = _network(data, out)
    topics = _topics(data, brokers, out)
    strategies = _strategies(data, out)
    if "fetch_session" not in data.get("strategies", {}) and config.fetch_version < 7:
        strategies["fetch_session"] = StrategyRef("sessionless")  # no sessions before v7
    session = strategies.get("fetch_session")
    if session is not None and session.name == "incremental" and config.fetch_version < 7:
        out.add(("strategies", "fetch_session"),
                f"incremental fetch sessions need Fetch v7 or later (KIP-227), but this variant "
                f"sends v{config.fetch_version}: use kafka ≥ 1.1 or protocol.fetch_version ≥ 7")
    broker_configs = {}
    raw_brokers = data["cluster"]["brokers"]
    if isinstance(raw_brokers, list):
        for i, raw in enumerate(raw_brokers):
            if raw.get("config"):
                broker_configs[raw["id"]] = _config(data, kafka, out, raw["config"],
                                                    ("cluster", "brokers", i, "config"))
    os_spec = _os(data, out)
    producers = _producers(data, topics, out)
    faults = _faults(data, brokers, out)
    consumers = _consumers(data, topics, config, strategies, out)
    topics = _with_offsets_topic(topics, consumers, config, len(brokers))
    compacted = {t.name for t in topics if "compact" in str(t.config.get("cleanup.policy", ""))}
    for i, producer in enumerate(producers):
        if producer.topic in compacted and producer.keys == "none":
            out.add(("workload", "producers", i, "keys"),
                    f"topic {producer.topic!r} is compacted (cleanup.policy compact) and Kafka "
                    "refuses records without a key there: give keys, e.g. {uniform: 1000}")
    if config.log_cleaner_dedupe_buffer_size // config.log_cleaner_threads <= 1 << 20:
        # KafkaConfig: require(dedupeBufferSize / threads > 1024 * 1024)
        out.add(("cluster", "config", "log.cleaner.dedupe.buffer.size"),
                f"must be more than 1MiB per cleaner thread, as Kafka requires (got "
                f"{config.log_cleaner_dedupe_buffer_size} bytes over "
                f"{config.log_cleaner_threads} threads)")
    try:
        quiesce = units.duration_ms(data.get("quiesce", "2m"))
    except ValueError as exc:
        out.add(("quiesce",), str(exc))
        quiesce = 0
    placement = strategies.get("placement")
    if placement is not None and placement.name == "explicit":
        for i, topic in enumerate(topics):
            if topic.assignment is None:
                out.add(("topics", i), "the explicit placement needs an assignment for every topic")
    if len(out.problems) > before:
        return None
    return VariantSpec(name=name, seed=data.get("seed", DEFAULT_SEED), duration_ms=duration,
                       kafka=kafka, brokers=brokers, config=config, network=network,
                       topics=topics, strategies=strategies, document=data,
                       broker_configs=broker_configs, os=os_spec, producers=producers,
                       faults=faults, quiesce_ms=quiesce, consumers=consumers,
                       events=data.get("events", "full"))


def _with_offsets_topic(topics: tuple[TopicSpec, ...], consumers: Sequence[ConsumerSpec],
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


def _expectations(doc: Document, variants: Sequence[str],
                  out: _Collector) -> tuple[Expectation, ...]:
    result = []
    for i, raw in enumerate(doc.data.get("expect", [])):
        at: PathKey = ("expect", i)
        paths = [raw["metric"]] if "metric" in raw else list(raw["ratio"])
        for path in paths:
            parts = path.split(".")
            key = "metric" if "metric" in raw else "ratio"
            if parts[0] not in SUMMARY_ROOTS:
                out.add((*at, key), f"{path!r} does not start with a summary.json key "
                        f"({', '.join(SUMMARY_ROOTS)})")
            elif parts[0] == "variants" and (len(parts) < 2 or parts[1] not in variants):
                out.add((*at, key), f"{path!r} names no variant of this scenario "
                        f"(variants: {', '.join(variants)})")
        result.append(Expectation(
            op=raw["op"], value=raw["value"], metric=raw.get("metric"),
            ratio=(raw["ratio"][0], raw["ratio"][1]) if "ratio" in raw else None,
            tolerance=raw.get("tolerance", 0.0), description=raw.get("description", ""),
            line=doc.lines.locate(at, doc.file)[1]))
    return tuple(result)


def load_scenario(path: str | Path, *, sets: Sequence[str] = (), seed: int | None = None,
                  only_variants: Sequence[str] = ()) -> Scenario:
    """Load, check and resolve a scenario file; raise ScenarioError listing every problem."""
    path = Path(path)
    raw_doc = load_yaml_file(path)
    sets = list(sets) + ([f"seed={seed}"] if seed is not None else [])
    if not isinstance(raw_doc.data, dict):
        raise ScenarioError([raw_doc.problem((), "a scenario is a map of keys (name, cluster, "
                                             "topics, …)")])
    doc = apply_sets(raw_doc, sets) if sets else raw_doc
    problems = schema_problems(doc)
    if problems:
        raise ScenarioError(problems)
    base = {k: v for k, v in doc.data.items() if k not in ("variants", "expect")}
    overrides: dict[str, Any] = doc.data.get("variants") or {DEFAULT_VARIANT: {}}
    unknown = [v for v in only_variants if v not in overrides]
    if unknown:
        raise ScenarioError([doc.problem(("variants",), f"no variant named {', '.join(unknown)}; "
                                         f"variants: {', '.join(overrides)}")])
    out = _Collector(doc)
    variants = []
    for name, override in overrides.items():
        if only_variants and name not in only_variants:
            continue
        lines = Lines(dict(doc.lines.by_path))
        sub = Lines({p[2:]: w for p, w in doc.lines.by_path.items()
                     if p[:2] == ("variants", name) and len(p) > 2})
        merged = deep_merge(copy.deepcopy(base), override, lines, sub)
        merged_doc = Document(merged, doc.file, lines)
        for problem in schema_problems(merged_doc):
            if problem not in out.problems:
                out.problems.append(problem)
        if out.problems:
            continue
        variant = _variant(name, merged_doc, out)
        if variant is not None:
            variants.append(variant)
    if out.problems:
        raise ScenarioError(out.problems)
    expectations = _expectations(doc, list(overrides), out)
    if out.problems:
        raise ScenarioError(out.problems)
    source = path.read_bytes()
    return Scenario(name=doc.data["name"], description=doc.data.get("description", ""),
                    file=str(path), source_sha256=hashlib.sha256(source).hexdigest(),
                    seed=doc.data.get("seed", DEFAULT_SEED), variants=tuple(variants),
                    expectations=expectations, document=doc.data)
