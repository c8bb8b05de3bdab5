"""From a scenario file to a validated `Scenario`: parse, override, schema, variants, semantics.

Every problem found is collected and raised together as one ScenarioError, each located as
`FILE:LINE: $.path: message`.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rig import units
from rig.errors import Problem, ScenarioError
from rig.events import names as event_names
from rig.hashing import OFFSETS_TOPIC
from rig.scenario import profiles, summary_keys
from rig.scenario.limits import size_problems
from rig.scenario.model import (
    STRATEGY_KINDS,
    BrokerConfig,
    BrokerSpec,
    ConsumerSpec,
    ControllerSpec,
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
from rig.scenario.schema import schema_errors
from rig.scenario.source import Document, Lines, PathKey, json_path, load_yaml_file

DEFAULT_VARIANT = "default"
DEFAULT_SEED = 1
DEFAULT_DURATION = "1m"
DEFAULT_LATENCY = "500us"
DEFAULT_BANDWIDTH = "10Gbit/s"
MAX_SEED = 2**63 - 1  # the schema's bound: a Java long

# Broker config keys (Kafka's names) → (BrokerConfig field, converter).
_CONFIG_KEYS: dict[str, tuple[str, Any]] = {
    "num.replica.fetchers": ("num_replica_fetchers", int),
    "replica.selector.class": ("replica_selector_class", str),
    "replica.fetch.wait.max.ms": ("replica_fetch_wait_max_ms", units.duration_ms),
    "replica.fetch.min.bytes": ("replica_fetch_min_bytes", units.size_bytes),
    "replica.fetch.max.bytes": ("replica_fetch_max_bytes", units.size_bytes),
    "replica.fetch.response.max.bytes": ("replica_fetch_response_max_bytes", units.size_bytes),
    "replica.fetch.backoff.ms": ("replica_fetch_backoff_ms", units.duration_ms),
    "replica.lag.time.max.ms": ("replica_lag_time_max_ms", units.duration_ms),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", units.duration_ms),
    "broker.heartbeat.interval.ms": ("broker_heartbeat_interval_ms", units.duration_ms),
    "broker.session.timeout.ms": ("broker_session_timeout_ms", units.duration_ms),
    "controller.quorum.election.timeout.ms": ("controller_quorum_election_timeout_ms",
                                              units.duration_ms),
    "controller.quorum.fetch.timeout.ms": ("controller_quorum_fetch_timeout_ms",
                                           units.duration_ms),
    "eligible.leader.replicas.enable": ("eligible_leader_replicas_enable", bool),
    "max.incremental.fetch.session.cache.slots": ("max_incremental_fetch_session_cache_slots", int),
    "min.insync.replicas": ("min_insync_replicas", int),
    "unclean.leader.election.enable": ("unclean_leader_election_enable", bool),
    "log.flush.interval.messages": ("log_flush_interval_messages", int),
    "log.flush.interval.ms": ("log_flush_interval_ms", units.duration_ms),
    "log.segment.bytes": ("log_segment_bytes", units.size_bytes),
    "replica.high.watermark.checkpoint.interval.ms": (
        "replica_high_watermark_checkpoint_interval_ms", units.duration_ms),
    "replica.socket.timeout.ms": ("replica_socket_timeout_ms", units.duration_ms),
    "controlled.shutdown.max.retries": ("controlled_shutdown_max_retries", int),
    "controlled.shutdown.retry.backoff.ms": ("controlled_shutdown_retry_backoff_ms",
                                             units.duration_ms),
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
    """Problems of one document, deduplicated across variants.

    While a variant is checked, `doc` is its merged document; a problem about a value that the
    variant itself sets is reported under `$.variants.<name>…`, where the user wrote it.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self.problems: list[Problem] = []
        self.variant: str | None = None
        self.override: Any = None

    def add(self, path: PathKey, message: str) -> None:
        file, line = self.doc.lines.locate(path, self.doc.file)
        shown = path
        if self.variant is not None and _holds(self.override, path):
            shown = ("variants", self.variant, *path)
        problem = Problem(file, line, json_path(shown), message)
        if problem not in self.problems:
            self.problems.append(problem)


def _holds(data: Any, path: PathKey) -> bool:
    """Whether `data` (a variant's override) sets the value at `path` or one above it."""
    node = data
    for part in path:
        if isinstance(node, list) and isinstance(part, int):
            if not 0 <= part < len(node):
                return False
            node = node[part]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False
    return True


class _Units:
    """Converts the unit values of one scenario item, each bad one reported at its own key."""

    def __init__(self, raw: dict[str, Any], at: PathKey, out: _Collector):
        self.raw, self.at, self.out = raw, at, out

    def get(self, key: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
        """`convert(raw[key])`, or of `default` when the key is absent; None when neither is
        given. A value that does not convert is reported and read as 0."""
        value = self.raw.get(key, default)
        if value is None:
            return None
        try:
            return convert(value)
        except ValueError as exc:
            self.out.add((*self.at, key), str(exc))
            return 0


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


def _controllers(data: dict[str, Any], brokers: Sequence[BrokerSpec], out: _Collector,
                 ) -> tuple[ControllerSpec, ...]:
    """cluster.controllers: the KRaft quorum's voters (KIP-595). A count: dedicated nodes with
    the ids after the highest broker id, racks round-robin over the brokers' racks; a list:
    dedicated nodes with their ids and racks; {combined: [ids]}: controllers inside brokers."""
    raw = data["cluster"].get("controllers")
    if raw is None:
        return ()
    at: PathKey = ("cluster", "controllers")
    ids = sorted(b.id for b in brokers)
    rack_of = {b.id: b.rack for b in brokers}
    listed = ", ".join(map(str, ids))
    if isinstance(raw, int):
        racks = sorted({b.rack for b in brokers if b.rack})
        first = ids[-1] + 1 if ids else 0
        return tuple(ControllerSpec(first + i, racks[i % len(racks)] if racks else None)
                     for i in range(raw))
    seen: set[int] = set()
    result: list[ControllerSpec] = []
    if isinstance(raw, dict):
        for i, node in enumerate(raw["combined"]):
            if node not in rack_of:
                out.add((*at, "combined", i), f"broker {node} is not in the cluster (brokers: "
                        f"{listed}): a combined controller runs inside a broker")
            elif node in seen:
                out.add((*at, "combined", i), f"broker {node} is listed twice")
            else:
                seen.add(node)
                result.append(ControllerSpec(node, rack_of[node], combined=True))
        return tuple(result)
    for i, entry in enumerate(raw):
        node = entry["id"]
        if node in rack_of:
            out.add((*at, i, "id"), f"id {node} is broker {node}'s: a dedicated controller "
                    f"needs an id of its own (brokers: {listed}), or use {{combined: [...]}} "
                    "for controllers that run inside brokers")
        elif node in seen:
            out.add((*at, i, "id"), f"controller id {node} is used twice")
        else:
            seen.add(node)
            result.append(ControllerSpec(node, entry.get("rack")))
    return tuple(result)


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
        "effective_min_isr": profile.effective_min_isr,
        "isr_rejoin_needs_epoch_start": profile.isr_rejoin_needs_epoch_start,
        "controller_detects_bounce": profile.controller_detects_bounce,
        "epoch_start_at_election": profile.epoch_start_at_election,
        "truncate_epochs_at_log_end": profile.truncate_epochs_at_log_end,
        # The 2.8 code asks inter.broker.protocol.version ≥ 2.7-IV1, the IBP of Fetch v12
        # (ApiVersion.isTruncationOnFetchSupported): a 2.8+ broker at IBP 2.6 asks the leader.
        "truncation_on_fetch": (profile.truncation_on_fetch
                                and profiles.fetch_version_for_ibp(ibp) >= 12),
        "epoch_end_before_first_known": profile.epoch_end_before_first_known,
        "election_order": profile.election_order,
        "isr_update": profiles.ibp_rule("isr_update", ibp),
        "hw_on_alter_isr_response": profile.hw_on_alter_isr_response,
        "alter_partition_ineligible": profile.alter_partition_ineligible,
        "eligible_leader_replicas_enable": profile.eligible_leader_replicas_enable,
        "leader_epoch_bump_on_shrink": profile.leader_epoch_bump_on_shrink,
        "elect_fenced_last_known_leader": profile.elect_fenced_last_known_leader,
        "raft_pre_vote": profile.raft_pre_vote,
        "raft_check_quorum": profile.raft_check_quorum,
        "unclean_leader_election_enable": profile.unclean_leader_election_enable,
        "message_format": profile.message_format,
    }
    for key, value in raw.items():
        name, convert = _CONFIG_KEYS[key]
        try:
            fields[name] = convert(value)
        except ValueError as exc:
            out.add((*at, key), str(exc))
    return BrokerConfig(**fields)


def _link(raw: dict[str, Any], fallback: LinkSpec, at: PathKey, out: _Collector) -> LinkSpec:
    u = _Units(raw, at, out)
    latency_us = u.get("latency", units.duration_us)
    bandwidth = u.get("bandwidth", units.bandwidth_bytes_per_s)
    return LinkSpec(fallback.latency_us if latency_us is None else latency_us,
                    fallback.bandwidth_bytes_per_s if bandwidth is None else bandwidth)


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


def _client_racks(raw: dict[str, Any], at: PathKey, racks: set[str], out: _Collector
                  ) -> tuple[str, ...]:
    """A client's `rack` (client.rack): one rack or a list; each must be a broker's rack (a
    zone no broker is in is a typo here: nothing could be same-zone with it)."""
    given = raw.get("rack")
    if given is None:
        return ()
    listed = (given,) if isinstance(given, str) else tuple(given)
    for i, rack in enumerate(listed):
        if rack not in racks:
            where = (*at, "rack") if isinstance(given, str) else (*at, "rack", i)
            out.add(where, f"rack {rack!r} is not a rack of this cluster's brokers (racks: "
                    f"{', '.join(sorted(racks)) or 'none: give the brokers racks first'})")
    return listed


def _producers(data: dict[str, Any], topics: Sequence[TopicSpec],
               out: _Collector, racks: set[str]) -> tuple[ProducerSpec, ...]:
    by_name = {t.name: t for t in topics}
    result = []
    for i, raw in enumerate(data.get("workload", {}).get("producers", [])):
        at: PathKey = ("workload", "producers", i)
        topic = by_name.get(raw["topic"])
        if topic is None:
            out.add((*at, "topic"), f"no topic named {raw['topic']!r} (topics: "
                    f"{', '.join(by_name)})")
            continue
        u = _Units(raw, at, out)
        rate, on, off = raw.get("rate", 1000), 0, 0
        if isinstance(rate, dict):
            burst = _Units(rate["bursty"], (*at, "rate", "bursty"), out)
            rate = rate["bursty"]["rate"]
            on, off = burst.get("on", units.duration_ms), burst.get("off", units.duration_ms)
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
            record_size=u.get("record_size", _size_dist, 100) or SizeDist("fixed", 0),
            key_size=u.get("key_size", units.size_bytes, 16), keys=keys, key_count=key_count,
            zipf_s=zipf_s, partitioner=partitioner, explicit_partition=explicit, acks=int(acks),
            linger_ms=u.get("linger", units.duration_ms, "5ms"),
            batch_size=u.get("batch_size", units.size_bytes, "16KiB"),
            retries=raw.get("retries", 2_147_483_647),
            request_timeout_ms=u.get("request_timeout", units.duration_ms, "30s"),
            delivery_timeout_ms=u.get("delivery_timeout", units.duration_ms, "2m"),
            start_ms=u.get("start", units.duration_ms, 0),
            stop_ms=u.get("stop", units.duration_ms),
            count=raw.get("count"),
            rack=next(iter(_client_racks(raw, at, racks, out)), None)))
    return tuple(result)


def _consumers(data: dict[str, Any], topics: Sequence[TopicSpec], config: BrokerConfig,
               strategies: dict[str, StrategyRef], out: _Collector,
               racks: set[str], kafka: str) -> tuple[ConsumerSpec, ...]:
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
                and version is not None and version < 7):  # the cluster's: checked once
            out.add((*at, "fetch_version"), "incremental fetch sessions need Fetch v7 or later")
        u = _Units(raw, at, out)
        start_ms = u.get("start_at", units.duration_ms, 0)
        ramp_ms = u.get("ramp", units.duration_ms, 0)
        fetch_max_wait_ms = u.get("fetch_max_wait", units.duration_ms, "500ms")
        fetch_min_bytes = u.get("fetch_min_bytes", units.size_bytes, 1)
        max_partition_fetch_bytes = u.get("max_partition_fetch_bytes", units.size_bytes, "1MiB")
        fetch_max_bytes = u.get("fetch_max_bytes", units.size_bytes, "50MiB")
        lag_sample_ms = u.get("lag_sample", units.duration_ms, "1s")
        auto_commit_interval_ms = u.get("auto_commit_interval", units.duration_ms, "5s")
        metadata_max_age_ms = u.get("metadata_max_age", units.duration_ms, "5m")
        client_racks = _client_racks(raw, at, racks, out)
        assignor = raw.get("assignment", "range")
        rack_aware = raw.get("rack_aware_assignment")
        if rack_aware and assignor != "range":
            out.add((*at, "rack_aware_assignment"), f"the {assignor} assignor is not rack-aware "
                    "in Kafka (KIP-881 made range and the sticky assignors rack-aware): use "
                    "assignment: range, or leave rack_aware_assignment out")
        if rack_aware is None:
            rack_aware = profiles.profile(kafka).rack_aware_assignment
        for n, name in enumerate(names):
            result.append(ConsumerSpec(
                group=name, topic=raw["topic"], members=raw.get("members", 1),
                assignment=assignor, start=raw.get("start", "latest"),
                fetch_version=version,
                fetch_max_wait_ms=fetch_max_wait_ms, fetch_min_bytes=fetch_min_bytes,
                max_partition_fetch_bytes=max_partition_fetch_bytes,
                fetch_max_bytes=fetch_max_bytes,
                start_ms=start_ms + ramp_ms * n // len(names),
                lag_sample_ms=lag_sample_ms,
                commit=raw.get("commit", "none"),
                auto_commit_interval_ms=auto_commit_interval_ms,
                racks=client_racks, metadata_max_age_ms=metadata_max_age_ms,
                rack_aware_assignment=rack_aware and assignor == "range"))
    return tuple(result)


_FAULT_TARGETS = {
    "crash": "brokers", "power-loss": "brokers", "controlled-shutdown": "brokers",
    "stall": "brokers", "fetcher-stuck": "brokers",
    "zk-session-expiry": "brokers", "rack-failure": "rack", "network-partition": "groups",
    "link": "between", "controller-failover": None, "alter-config": "config",
}


def _never_fires(raw: dict[str, Any], at: PathKey, fault: FaultSpec, ids: set[int],
                 duration_ms: int, out: _Collector) -> None:
    """Report a trigger that cannot fire in this run: the run would pass without the fault."""
    end = units.format_duration_ms(duration_ms)
    if fault.at_ms is not None and duration_ms and fault.at_ms >= duration_ms:
        out.add((*at, "at"), f"{raw['at']} is not before the end of the run (duration {end}): "
                "this fault would never fire; inject it earlier or lengthen the duration")
    if fault.after_event is None:
        return
    if fault.after_event not in event_names.ALL:
        close = difflib.get_close_matches(fault.after_event, sorted(event_names.ALL), n=1)
        hint = (f"; did you mean {close[0]!r}?" if close
                else "; the names are listed in rig/events/names.py")
        out.add((*at, "after", "event"), f"no event is named {fault.after_event!r}, so this "
                f"fault would never fire{hint}")
    if duration_ms and fault.after_delay_ms >= duration_ms:
        out.add((*at, "after", "delay"), f"{raw['after']['delay']} is not shorter than the run "
                f"(duration {end}): this fault would never fire")
    for key in ("broker", "leader"):
        value = fault.after_where.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value not in ids:
            out.add((*at, "after", "where", key), f"broker {value} is not in the cluster, so "
                    "no event matches and this fault would never fire")


def _client_nodes(node: dict[str, Any], producers: Sequence[ProducerSpec],
                  consumers: Sequence[ConsumerSpec], at: PathKey, out: _Collector) -> list[str]:
    """The network nodes a client entry of a partition group names: `{producer: NAME}`, or
    `{consumer: GROUP}` (every member) or `{consumer: GROUP, member: N}`."""
    if "producer" in node:
        found = [p.node for p in producers if p.name == node["producer"]]
        if not found:
            out.add(at, f"no producer is named {node['producer']!r} (producers: "
                    f"{', '.join(p.name for p in producers) or 'none'})")
        return found
    group = next((c for c in consumers if c.group == node["consumer"]), None)
    if group is None:
        out.add(at, f"no consumer group is named {node['consumer']!r} (groups: "
                f"{', '.join(c.group for c in consumers) or 'none'})")
        return []
    member = node.get("member")
    if member is not None and member >= group.members:
        out.add(at, f"group {group.group!r} has {group.members} member(s): member {member} "
                f"does not exist (members count from 0)")
        return []
    return [group.member_node(m) for m in ([member] if member is not None
                                           else range(group.members))]


def _faults(data: dict[str, Any], brokers: Sequence[BrokerSpec], duration_ms: int,
            out: _Collector, producers: Sequence[ProducerSpec] = (),
            consumers: Sequence[ConsumerSpec] = (),
            controllers: Sequence[ControllerSpec] = ()) -> tuple[FaultSpec, ...]:
    ids = {b.id for b in brokers}
    voters = {c.id for c in controllers}
    racks = {b.rack for b in brokers if b.rack}
    result = []
    for i, raw in enumerate(data.get("faults", [])):
        at: PathKey = ("faults", i)
        kind = raw["kind"]
        targets = tuple(raw.get("brokers", ())) + ((raw["broker"],) if "broker" in raw else ())
        need = _FAULT_TARGETS[kind]
        named = tuple(raw.get("controllers", ())) + ((raw["controller"],)
                                                     if "controller" in raw else ())
        if need == "brokers" and not targets and not (named and kind in _CONTROLLER_FAULTS):
            out.add(at, f"a {kind} fault needs `broker` or `brokers`"
                    + (" (or `controller`)" if kind in _CONTROLLER_FAULTS else ""))
        _controller_targets(raw, at, kind, named, voters, out)
        for b in targets:
            if b not in ids:
                key = "broker" if raw.get("broker") == b else "brokers"
                out.add((*at, key), f"broker {b} is not in the cluster (brokers: "
                        f"{', '.join(map(str, sorted(ids)))})")
        if need == "rack" and raw.get("rack") not in racks:
            out.add((*at, "rack"), f"rack {raw.get('rack')!r} is not a rack of this cluster "
                    f"(racks: {', '.join(sorted(racks)) or 'none'})")
        if need == "groups" and "groups" not in raw:
            out.add(at, "a network-partition needs `groups` (lists of brokers, the controller's "
                    "node: \"zk\", or \"controller\" in KRaft, {producer: NAME} or "
                    "{consumer: GROUP[, member: N]})")
        if need == "between" and "between" not in raw:
            out.add(at, "a link fault needs `between: [node, node]`")
        _alter_config(raw, at, kind, data, out)
        groups: list[tuple[int | str, ...]] = []
        for g, group in enumerate(raw.get("groups", [])):
            nodes: list[int | str] = []
            for n, node in enumerate(group):
                if isinstance(node, dict):  # a client (a network partition may cut clients)
                    nodes.extend(_client_nodes(node, producers, consumers,
                                               (*at, "groups", g, n), out))
                else:
                    nodes.append(node)
            groups.append(tuple(nodes))
        for node in [n for g in groups for n in g] + list(raw.get("between", [])):
            if isinstance(node, int) and node not in ids and node not in voters:
                out.add(at, f"node {node} is not in the cluster")
        after = raw.get("after", {})
        u = _Units(raw, at, out)
        delay = _Units(after, (*at, "after"), out).get("delay", units.duration_ms, 0)
        result.append(FaultSpec(
            kind=kind, index=i,
            at_ms=u.get("at", units.duration_ms),
            after_event=after.get("event"), after_where=dict(after.get("where", {})),
            after_delay_ms=delay,
            brokers=targets, controllers=named, rack=raw.get("rack"),
            groups=tuple(groups),
            between=tuple(raw.get("between", ())),
            latency_us=u.get("latency", units.duration_us),
            bandwidth_bytes_per_s=u.get("bandwidth", units.bandwidth_bytes_per_s),
            loss=raw.get("loss", 0.0),
            restart_after_ms=u.get("restart_after", units.duration_ms),
            heal_after_ms=u.get("heal_after", units.duration_ms),
            description=raw.get("description", ""),
            topic=raw.get("topic"), config=dict(raw.get("config", {}))))
        _never_fires(raw, at, result[-1], ids, duration_ms, out)
    return tuple(result)


_CONTROLLER_FAULTS = ("crash", "power-loss")


def _alter_config(raw: dict[str, Any], at: PathKey, kind: str, data: dict[str, Any],
                  out: _Collector) -> None:
    """`topic` and `config` belong to alter-config, which needs `config` and names a topic of
    the scenario (or none: the cluster-wide default)."""
    if kind != "alter-config":
        for key in ("topic", "config"):
            if key in raw:
                out.add((*at, key), f"`{key}` is for an alter-config fault, not {kind}")
        return
    if "config" not in raw:
        out.add(at, "an alter-config fault needs `config`, e.g. {min.insync.replicas: 1}")
    topic = raw.get("topic")
    names = [t.get("name") for t in data.get("topics") or [] if isinstance(t, dict)]
    if topic is not None and topic not in names:
        out.add((*at, "topic"), f"no topic is named {topic!r} (topics: "
                f"{', '.join(map(str, names)) or 'none'}); leave `topic` out to change the "
                "cluster-wide default")


def _controller_targets(raw: dict[str, Any], at: PathKey, kind: str,
                        named: tuple[int | str, ...], voters: set[int], out: _Collector) -> None:
    """The controllers a crash or power-loss names: ids of cluster.controllers, or "active"
    (whichever is the active controller when the fault fires). Whether the variant has a
    quorum at all is _controller_mode's question."""
    if not named or not voters:
        return
    key = "controller" if "controller" in raw else "controllers"
    if kind not in _CONTROLLER_FAULTS:
        out.add((*at, key), f"a {kind} fault cannot name a controller: crash and power-loss "
                "do (network-partition groups and link name a controller by its id)")
        return
    for node in named:
        if node != "active" and node not in voters:
            out.add((*at, key), f"controller {node} is not in cluster.controllers (ids: "
                    f"{', '.join(map(str, sorted(voters)))}, or \"active\")")


def _strategies(data: dict[str, Any], kafka: str, out: _Collector) -> dict[str, StrategyRef]:
    """The strategies a variant names, and for the kinds it does not name, the default of its
    Kafka version (the profile's) or of the kind."""
    from rig.strategies import registry  # registry imports the model; keep the import local

    chosen: dict[str, StrategyRef] = {}
    raw = data.get("strategies", {})
    profile = profiles.profile(kafka)
    by_version = {"replication": profile.replication, "isr": profile.isr,
                  "controller": profile.controller}
    for kind in STRATEGY_KINDS:
        value = raw.get(kind)
        if value is None:
            default = by_version.get(kind, registry.DEFAULTS[kind])
            if default is not None:
                chosen[kind] = StrategyRef(default, profile.isr_options if kind == "isr" else {})
            continue
        ref = (StrategyRef(value) if isinstance(value, str)
               else StrategyRef(value["name"], dict(value.get("options", {}))))
        if ":" not in ref.name and ref.name not in registry.known_names(kind):
            known = ", ".join(registry.known_names(kind)) or "none yet in this rig version"
            out.add(("strategies", kind), f"unknown {kind} strategy {ref.name!r}; known: {known}")
        chosen[kind] = ref
    return chosen


def _variant(name: str, doc: Document, out: _Collector,
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
    brokers = _brokers(data, out) if cluster_ok else ()
    controllers = _controllers(data, brokers, out) if cluster_ok else ()
    config_ok = usable("cluster", "kafka", "protocol")
    config = _config(data, kafka, out) if config_ok else _config({}, kafka, out)
    network = _network(data, out) if usable("network") else _network({}, out)
    topics_ok = cluster_ok and usable("topics")
    topics = _topics(data, brokers, out) if topics_ok else ()
    strategies_ok = usable("strategies")
    strategies = _strategies(data, kafka, out) if strategies_ok else {}
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
        _controller_mode(data, kafka, strategies["controller"].name, out)
    broker_configs = {}
    raw_brokers = data["cluster"]["brokers"] if config_ok else None
    if isinstance(raw_brokers, list):
        for i, raw in enumerate(raw_brokers):
            if raw.get("config"):
                broker_configs[raw["id"]] = _config(data, kafka, out, raw["config"],
                                                    ("cluster", "brokers", i, "config"))
    os_spec = _os(data, out) if cluster_ok else OsSpec()
    workload_ok = topics_ok and usable("workload")
    racks = {b.rack for b in brokers if b.rack}
    producers = _producers(data, topics, out, racks) if workload_ok else ()
    consumers = (_consumers(data, topics, config, strategies, out, racks, kafka)
                 if workload_ok and config_ok and strategies_ok else ())
    faults = (_faults(data, brokers, duration, out, producers, consumers, controllers)
              if cluster_ok and usable("faults", "duration") else ())
    topics = _with_offsets_topic(topics, consumers, config, len(brokers))
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


# Keys and faults that belong to one controller kind only (docs/kafka.md §10, §12).
_ZK_ONLY_KEYS = ("zookeeper.session.timeout.ms",)
_KRAFT_ONLY_KEYS = ("broker.heartbeat.interval.ms", "broker.session.timeout.ms",
                    "eligible.leader.replicas.enable", "controller.quorum.election.timeout.ms",
                    "controller.quorum.fetch.timeout.ms")
_ZK_ONLY_FAULTS = ("zk-session-expiry", "controller-failover")
_NODE_OF = {"zookeeper": "zk", "kraft": "controller"}


def _controller_mode(data: dict[str, Any], kafka: str, kind: str, out: _Collector) -> None:
    """The controller a variant runs must be one its Kafka release has, and the settings,
    faults and nodes it names must be of that controller: a ZooKeeper key in a KRaft variant
    (or the reverse) would otherwise be silently ignored."""
    profile = profiles.profile(kafka)
    if not profile.accepts_controller(kind):
        if kind == "zookeeper":
            out.add(("strategies", "controller"), f"Kafka {kafka} has no ZooKeeper mode "
                    "(removed in 4.0, KIP-833): use strategies.controller: kraft, or kafka 3.9 "
                    "or older")
        else:
            out.add(("strategies", "controller"), f"Kafka {kafka} has no KRaft mode rig "
                    "models (KRaft is production-ready from 3.3, KIP-833): use kafka ≥ 3.5")
    if kind not in _NODE_OF:
        return  # a plugin's control plane: its keys are its own business
    other = "kraft" if kind == "zookeeper" else "zookeeper"
    wrong = _KRAFT_ONLY_KEYS if kind == "zookeeper" else _ZK_ONLY_KEYS
    places: list[tuple[PathKey, dict[str, Any]]] = [
        (("cluster", "config"), data.get("cluster", {}).get("config") or {})]
    raw_brokers = data.get("cluster", {}).get("brokers")
    for i, raw in enumerate(raw_brokers if isinstance(raw_brokers, list) else []):
        if isinstance(raw, dict) and isinstance(raw.get("config"), dict):
            places.append((("cluster", "brokers", i, "config"), raw["config"]))
    for at, config in places:
        for key in wrong:
            if key in config:
                out.add((*at, key), f"{key} is a {other} setting, but this variant runs the "
                        f"{kind} controller (kafka {kafka}): it would have no effect; drop it, "
                        f"or set strategies.controller: {other}")
    quorum = data.get("cluster", {}).get("controllers")
    if kind == "zookeeper" and quorum is not None:
        out.add(("cluster", "controllers"), "cluster.controllers is KRaft's controller quorum, "
                f"but this variant runs the zookeeper controller (kafka {kafka}), which elects "
                "its controller among the brokers through ZooKeeper: drop it, or set "
                "strategies.controller: kraft")
    for i, raw in enumerate(data.get("faults") or []):
        for key in ("controller", "controllers"):
            if key not in raw:
                continue
            if kind == "zookeeper":
                out.add(("faults", i, key), f"{key} names a KRaft controller node, but this "
                        f"variant runs the zookeeper controller (kafka {kafka}); its controller "
                        "is a broker (crash that broker, or use controller-failover)")
            elif quorum is None:
                out.add(("faults", i, key), "this variant has one controller that never "
                        "fails (no cluster.controllers): declare the quorum, e.g. "
                        "cluster.controllers: 3, to crash a controller")
        if kind == "kraft" and raw.get("kind") in _ZK_ONLY_FAULTS:
            instead = ("a KRaft broker has no ZooKeeper session: cut it off from node "
                       "\"controller\" with a network-partition instead"
                       if raw["kind"] == "zk-session-expiry"
                       else "crash the active controller instead (cluster.controllers, then "
                       "a crash with controller: active)")
            out.add(("faults", i, "kind"), f"{raw['kind']} acts on ZooKeeper, but this variant "
                    f"runs the kraft controller (kafka {kafka}); {instead}")
        nodes = [n for g in raw.get("groups") or [] for n in g] + list(raw.get("between") or [])
        for node in nodes:
            if kind == "kraft" and quorum is not None and node == "controller":
                out.add(("faults", i), "with cluster.controllers the controllers are nodes of "
                        "their own: name them by id, not \"controller\"")
            elif isinstance(node, str) and node != _NODE_OF[kind]:
                out.add(("faults", i), f"node {node!r} exists only with the {other} controller;"
                        f" this variant runs {kind}, whose node is {_NODE_OF[kind]!r}")


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


def _expectations(doc: Document, variants: Sequence[str] | None, run: Sequence[str],
                  out: _Collector) -> tuple[tuple[Expectation, ...], tuple[Expectation, ...]]:
    """The expectations to judge, and those skipped because they speak of a variant that is
    not run (`--variant`): those cannot be measured, so they are neither passed nor failed."""
    judged: list[Expectation] = []
    skipped: list[Expectation] = []
    for i, raw in enumerate(doc.data.get("expect", [])):
        at: PathKey = ("expect", i)
        key = "metric" if "metric" in raw else "ratio"
        paths = [(raw["metric"], (*at, key))] if key == "metric" else [
            (m, (*at, key, n)) for n, m in enumerate(raw["ratio"])]
        kinds = []
        for path, where in paths:
            problem, kind = summary_keys.check(path, variants)
            if problem is not None:
                out.add(where, problem)
            kinds.append(kind)
        value = raw["value"]
        if (all(k == "number" for k in kinds) and value is not None
                and not (isinstance(value, int | float) and not isinstance(value, bool))):
            out.add((*at, "value"), f"{value!r} is not a number, but {raw.get(key)} is "
                    "measured as one: give a number (or null for 'not measured')")
        expectation = Expectation(
            op=raw["op"], value=value, metric=raw.get("metric"),
            ratio=(raw["ratio"][0], raw["ratio"][1]) if "ratio" in raw else None,
            tolerance=raw.get("tolerance", 0.0), description=raw.get("description", ""),
            line=doc.lines.locate(at, doc.file)[1])
        named = {parts[1] for parts in (summary_keys.path_parts(p) for p, _ in paths)
                 if parts[0] == "variants" and len(parts) > 1}
        (skipped if named - set(run) else judged).append(expectation)
    return tuple(judged), tuple(skipped)


def _report_headline(doc: Document, errors: Sequence[tuple[PathKey, PathKey, str]],
                     out: _Collector) -> tuple[str, ...]:
    """`report.headline`: each path must name one value of every variant's summary entry."""
    if any(spoiled[:1] == ("report",) for _, spoiled, _ in errors):
        return ()  # the schema said what is wrong with it
    paths = (doc.data.get("report") or {}).get("headline") or []
    for i, path in enumerate(paths):
        problem = summary_keys.check_variant_path(path)
        if problem is not None:
            out.add(("report", "headline", i), problem)
    return tuple(paths)


def _spoiled(errors: Sequence[tuple[PathKey, PathKey, str]], variant: str) -> frozenset[str]:
    """The top-level keys of `variant`'s merged document that failed the schema."""
    keys = set()
    for _, spoiled, _ in errors:
        if spoiled[:1] == ("variants",) and len(spoiled) >= 3 and spoiled[1] == variant:
            spoiled = spoiled[2:]
        if spoiled and isinstance(spoiled[0], str) and spoiled[0] != "variants":
            keys.add(spoiled[0])
    return frozenset(keys)


def _with_seed(doc: Document, seed: int) -> Document:
    """`doc` with the seed of `--seed`, which is checked and reported as `--seed`."""
    if not 0 <= seed <= MAX_SEED:
        raise ScenarioError([Problem("--seed", None, "$.seed",
                                     f"must be between 0 and {MAX_SEED} (got {seed})")])
    lines = Lines(dict(doc.lines.by_path))
    lines.by_path[("seed",)] = ("--seed", None)
    return Document({**doc.data, "seed": seed}, doc.file, lines, doc.raw)


def load_scenario(path: str | Path, *, sets: Sequence[str] = (), seed: int | None = None,
                  only_variants: Sequence[str] = ()) -> Scenario:
    """Load, check and resolve a scenario file; raise ScenarioError listing every problem.

    Schema problems do not stop the semantic checks of the parts they leave intact, so a file
    shows all its mistakes at once.
    """
    path = Path(path)
    raw_doc = load_yaml_file(path)
    if not isinstance(raw_doc.data, dict):
        raise ScenarioError([raw_doc.problem((), "a scenario is a map of keys (name, cluster, "
                                             "topics, …)")])
    doc = apply_sets(raw_doc, list(sets)) if sets else raw_doc
    if seed is not None:
        doc = _with_seed(doc, seed)
    out = _Collector(doc)
    errors = schema_errors(doc)
    for where, _, message in errors:
        out.add(where, message)
    raw_variants = doc.data.get("variants")
    overrides: dict[str, Any] = (raw_variants if isinstance(raw_variants, dict) and raw_variants
                                 else {DEFAULT_VARIANT: {}})
    unknown = [v for v in only_variants if v not in overrides]
    if unknown:
        raise ScenarioError([doc.problem(("variants",), f"no variant named {', '.join(unknown)}; "
                                         f"variants: {', '.join(overrides)}")])
    base = {k: v for k, v in doc.data.items() if k not in ("variants", "expect", "report")}
    variants = []
    for name, override in overrides.items():
        if only_variants and name not in only_variants:
            continue
        if not isinstance(override, dict):
            continue  # the schema said so
        lines = Lines(dict(doc.lines.by_path))
        sub = Lines({p[2:]: w for p, w in doc.lines.by_path.items()
                     if p[:2] == ("variants", name) and len(p) > 2})
        merged = deep_merge(copy.deepcopy(base), override, lines, sub)
        out.doc, out.variant, out.override = Document(merged, doc.file, lines), name, override
        merged_errors = schema_errors(out.doc)
        for where, _, message in merged_errors:
            if not _holds(override, where):  # the override itself was checked with the file
                out.add(where, message)
        variant = _variant(name, out.doc, out, _spoiled([*errors, *merged_errors], name))
        if variant is not None:
            variants.append(variant)
    out.doc, out.variant, out.override = doc, None, None
    expectations: tuple[Expectation, ...] = ()
    skipped: tuple[Expectation, ...] = ()
    if not any(spoiled[:1] == ("expect",) for _, spoiled, _ in errors):
        # a variant name the schema refused would make every expectation about it "unknown"
        names_ok = not any(spoiled == ("variants",) for _, spoiled, _ in errors)
        expectations, skipped = _expectations(doc, list(overrides) if names_ok else None,
                                              list(only_variants) or list(overrides), out)
    headline = _report_headline(doc, errors, out)
    if out.problems:
        raise ScenarioError(sorted(out.problems, key=_file_order))
    return Scenario(name=doc.data["name"], description=doc.data.get("description", ""),
                    file=str(path), source_sha256=hashlib.sha256(raw_doc.raw).hexdigest(),
                    seed=doc.data.get("seed", DEFAULT_SEED), variants=tuple(variants),
                    expectations=expectations, document=doc.data,
                    skipped_expectations=skipped, report_headline=headline)


def _file_order(problem: Problem) -> tuple[int, str, int, str]:
    """Problems of the file in line order, then those of `--set`/`--seed`."""
    in_file = problem.line is not None
    return (0 if in_file else 1, problem.file, problem.line or 0, problem.path)
