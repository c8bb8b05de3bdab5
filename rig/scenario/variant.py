"""One variant's merged document checked and resolved to a `VariantSpec`: every section read by
its own module, then the checks that span sections (Fetch version against sessions and message
format, compacted topics need keys, the quorum's timeouts, the cleaner's buffer, placement,
size limits)."""

from __future__ import annotations

from rig import units
from rig.scenario import profiles
from rig.scenario.controller_mode import check_controller_mode
from rig.scenario.faults import read_faults
from rig.scenario.kafka_config import read_config
from rig.scenario.limits import size_problems
from rig.scenario.model import OsSpec, StrategyRef, VariantSpec
from rig.scenario.nodes import read_brokers, read_controllers, read_network, read_os
from rig.scenario.problems import Collector
from rig.scenario.source import Document
from rig.scenario.strategies import read_strategies
from rig.scenario.topics import read_topics, with_offsets_topic
from rig.scenario.workload import read_consumers, read_producers

DEFAULT_SEED = 1
DEFAULT_DURATION = "1m"


def read_variant(name: str, doc: Document, out: Collector,
                 spoiled: frozenset[str] = frozenset()) -> VariantSpec | None:
    """Check and resolve one variant's merged document.

    `spoiled` names the top-level keys that failed the schema: the checks that read them are
    skipped (they would only repeat the schema's message), every other check still runs, so
    all the problems of a file show at once.
    """
    data = doc.data
    before = len(out.problems)

    def usable(*keys: str) -> bool:
        return spoiled.isdisjoint(keys)

    duration = 0
    if usable("duration"):
        try:
            duration = units.duration_ms(data.get("duration", DEFAULT_DURATION))
        except ValueError as exc:
            out.add(("duration",), str(exc))
        else:
            if duration <= 0:
                out.add(("duration",), "must be greater than 0 (e.g. 10m)")
    kafka = data.get("kafka", profiles.DEFAULT_PROFILE) if usable("kafka") else (
        profiles.DEFAULT_PROFILE)
    cluster_ok = usable("cluster")
    brokers = read_brokers(data, out) if cluster_ok else ()
    controllers = read_controllers(data, brokers, out) if cluster_ok else ()
    config_ok = usable("cluster", "kafka", "protocol")
    config = read_config(data, kafka, out) if config_ok else read_config({}, kafka, out)
    network = read_network(data, out) if usable("network") else read_network({}, out)
    topics_ok = cluster_ok and usable("topics")
    topics = read_topics(data, brokers, out) if topics_ok else ()
    strategies_ok = usable("strategies")
    strategies = read_strategies(data, kafka, out) if strategies_ok else {}
    if strategies_ok and config_ok:
        if "fetch_session" not in data.get("strategies", {}) and config.fetch_version < 7:
            strategies["fetch_session"] = StrategyRef("sessionless")  # no sessions before v7
        session = strategies.get("fetch_session")
        if session is not None and session.name == "incremental" and config.fetch_version < 7:
            out.add(("strategies", "fetch_session"),
                    f"incremental fetch sessions need Fetch v7 or later (KIP-227), but this "
                    f"variant sends v{config.fetch_version}: use kafka ≥ 1.1 or "
                    "protocol.fetch_version ≥ 7")
    # A follower must be able to read the log's format: Fetch v4 brought record batches
    # (message format 2, KIP-98), v2 message format 1 (KIP-32) (FetchRequest.json).
    least = {2: 4, 1: 2}.get(config.message_format, 0)
    if config_ok and config.fetch_version < least:
        out.add(("protocol", "fetch_version"),
                f"Fetch v{config.fetch_version} cannot carry message format "
                f"{config.message_format}, which this profile writes: it needs v{least} or later")
    if strategies_ok and config_ok and usable("cluster", "faults") and "controller" in strategies:
        check_controller_mode(data, kafka, strategies["controller"].name, out)
    broker_configs = {}
    raw_brokers = data["cluster"]["brokers"] if config_ok else None
    if isinstance(raw_brokers, list):
        for i, raw in enumerate(raw_brokers):
            if raw.get("config"):
                broker_configs[raw["id"]] = read_config(data, kafka, out, raw["config"],
                                                        ("cluster", "brokers", i, "config"))
    os_spec = read_os(data, out) if cluster_ok else OsSpec()
    workload_ok = topics_ok and usable("workload")
    racks = {b.rack for b in brokers if b.rack}
    producers = read_producers(data, topics, out, racks) if workload_ok else ()
    consumers = (read_consumers(data, topics, config, strategies, out, racks, kafka)
                 if workload_ok and config_ok and strategies_ok else ())
    faults = (read_faults(data, brokers, duration, out, producers, consumers, controllers)
              if cluster_ok and usable("faults", "duration") else ())
    topics = with_offsets_topic(topics, consumers, config, len(brokers))
    compacted = {t.name for t in topics if "compact" in str(t.config.get("cleanup.policy", ""))}
    for i, producer in enumerate(producers):
        if producer.topic in compacted and producer.keys == "none":
            out.add(("workload", "producers", i, "keys"),
                    f"topic {producer.topic!r} is compacted (cleanup.policy compact) and Kafka "
                    "refuses records without a key there: give keys, e.g. {uniform: 1000}")
    for key, value in (("controller.quorum.election.timeout.ms",
                        config.controller_quorum_election_timeout_ms),
                       ("controller.quorum.fetch.timeout.ms",
                        config.controller_quorum_fetch_timeout_ms)):
        if config_ok and value <= 0:
            out.add(("cluster", "config", key), f"must be at least 1ms (got {value} ms): the "
                    "quorum's voters would stand for election without ever waiting")
    if config_ok and config.log_cleaner_dedupe_buffer_size // config.log_cleaner_threads <= 1 << 20:
        # KafkaConfig: require(dedupeBufferSize / threads > 1024 * 1024)
        out.add(("cluster", "config", "log.cleaner.dedupe.buffer.size"),
                f"must be more than 1MiB per cleaner thread, as Kafka requires (got "
                f"{config.log_cleaner_dedupe_buffer_size} bytes over "
                f"{config.log_cleaner_threads} threads)")
    quiesce = 0
    if usable("quiesce"):
        try:
            quiesce = units.duration_ms(data.get("quiesce", "2m"))
        except ValueError as exc:
            out.add(("quiesce",), str(exc))
    placement = strategies.get("placement")
    if placement is not None and placement.name == "explicit":
        for i, topic in enumerate(topics):
            if topic.assignment is None:
                out.add(("topics", i), "the explicit placement needs an assignment for every topic")
    if spoiled or len(out.problems) > before:
        return None
    variant = VariantSpec(name=name, seed=data.get("seed", DEFAULT_SEED), duration_ms=duration,
                          kafka=kafka, brokers=brokers, config=config, network=network,
                          topics=topics, strategies=strategies, document=data,
                          broker_configs=broker_configs, os=os_spec, producers=producers,
                          faults=faults, quiesce_ms=quiesce, consumers=consumers,
                          events=data.get("events", "full"), controllers=controllers)
    for path, message in size_problems(variant, data.get("limits") or {}):
        out.add(path, message)
    return None if len(out.problems) > before else variant
