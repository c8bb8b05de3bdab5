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
from rig.scenario import profiles
from rig.scenario.model import (
    STRATEGY_KINDS,
    BrokerConfig,
    BrokerSpec,
    Expectation,
    LinkSpec,
    NetworkSpec,
    Scenario,
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
    brokers = tuple(BrokerSpec(b["id"], b.get("rack")) for b in raw)
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


def _config(data: dict[str, Any], kafka: str, out: _Collector) -> BrokerConfig:
    raw = dict(data.get("cluster", {}).get("config", {}))
    profile = profiles.profile(kafka)
    ibp = raw.pop("inter.broker.protocol.version", kafka)
    forced = data.get("protocol", {}).get("fetch_version")
    fields: dict[str, Any] = {
        "inter_broker_protocol_version": ibp,
        "fetch_version": forced if forced is not None else profiles.fetch_version_for_ibp(ibp),
        "replica_lag_time_max_ms": profile.replica_lag_time_max_ms,
        "zookeeper_session_timeout_ms": profile.zookeeper_session_timeout_ms,
    }
    for key, value in raw.items():
        name, convert = _CONFIG_KEYS[key]
        try:
            fields[name] = convert(value)
        except ValueError as exc:
            out.add(("cluster", "config", key), str(exc))
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
        topics.append(TopicSpec(
            name=name, partitions=partitions or 0, replication_factor=rf or 0,
            assignment=tuple(tuple(r) for r in assignment) if assignment is not None else None,
            config=dict(raw.get("config", {}))))
    return tuple(topics)


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
    session = strategies.get("fetch_session")
    if session is not None and session.name == "incremental" and config.fetch_version < 7:
        out.add(("strategies", "fetch_session"),
                f"incremental fetch sessions need Fetch v7 or later (KIP-227), but this variant "
                f"sends v{config.fetch_version}: use kafka ≥ 1.1 or protocol.fetch_version ≥ 7")
    placement = strategies.get("placement")
    if placement is not None and placement.name == "explicit":
        for i, topic in enumerate(topics):
            if topic.assignment is None:
                out.add(("topics", i), "the explicit placement needs an assignment for every topic")
    if len(out.problems) > before:
        return None
    return VariantSpec(name=name, seed=data.get("seed", DEFAULT_SEED), duration_ms=duration,
                       kafka=kafka, brokers=brokers, config=config, network=network,
                       topics=topics, strategies=strategies, document=data)


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
