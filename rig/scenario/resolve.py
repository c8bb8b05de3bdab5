"""The resolved scenario: every variant with all defaults filled in, as written to a run dir."""

from __future__ import annotations

from typing import Any

import yaml

from rig.scenario.model import Scenario, VariantSpec
from rig.units import format_duration_ms

_CONFIG_NAMES = {
    "inter_broker_protocol_version": "inter.broker.protocol.version",
    "num_replica_fetchers": "num.replica.fetchers",
    "replica_fetch_wait_max_ms": "replica.fetch.wait.max.ms",
    "replica_fetch_min_bytes": "replica.fetch.min.bytes",
    "replica_fetch_max_bytes": "replica.fetch.max.bytes",
    "replica_fetch_response_max_bytes": "replica.fetch.response.max.bytes",
    "replica_fetch_backoff_ms": "replica.fetch.backoff.ms",
    "replica_lag_time_max_ms": "replica.lag.time.max.ms",
    "zookeeper_session_timeout_ms": "zookeeper.session.timeout.ms",
    "max_incremental_fetch_session_cache_slots": "max.incremental.fetch.session.cache.slots",
    "min_insync_replicas": "min.insync.replicas",
    "unclean_leader_election_enable": "unclean.leader.election.enable",
}


def _variant(v: VariantSpec) -> dict[str, Any]:
    config = {kafka_name: getattr(v.config, attr) for attr, kafka_name in _CONFIG_NAMES.items()}
    return {
        "seed": v.seed,
        "duration": format_duration_ms(v.duration_ms),
        "kafka": v.kafka,
        "protocol": {"fetch_version": v.config.fetch_version},
        "cluster": {"brokers": [{"id": b.id, **({"rack": b.rack} if b.rack else {}),
                                 **({"fenced": True} if b.fenced else {})}
                                for b in v.brokers],
                    **({"controllers": [{"id": c.id, **({"rack": c.rack} if c.rack else {}),
                                         **({"combined": True} if c.combined else {})}
                                        for c in v.controllers]} if v.controllers else {}),
                    "config": config},
        "network": {
            "latency": f"{v.network.same_rack.latency_us}us",
            "bandwidth": f"{v.network.same_rack.bandwidth_bytes_per_s:.0f}B/s",
            "cross_rack": {"latency": f"{v.network.cross_rack.latency_us}us",
                           "bandwidth": f"{v.network.cross_rack.bandwidth_bytes_per_s:.0f}B/s"}},
        "topics": [{"name": t.name, "partitions": t.partitions,
                    "replication_factor": t.replication_factor,
                    **({"config": dict(t.config)} if t.config else {}),
                    **({"assignment": [list(r) for r in t.assignment]} if t.assignment else {})}
                   for t in v.topics],
        "strategies": {kind: ({"name": ref.name, "options": dict(ref.options)} if ref.options
                              else ref.name) for kind, ref in v.strategies.items()},
    }


def resolved_yaml(scenario: Scenario, rig_version: str) -> str:
    document = {
        "name": scenario.name,
        "description": scenario.description,
        "variants": {v.name: _variant(v) for v in scenario.variants},
        "expect": [{k: v for k, v in {"metric": e.metric,
                                       "ratio": list(e.ratio) if e.ratio else None,
                                       "op": e.op, "value": e.value,
                                       "tolerance": e.tolerance or None,
                                       "description": e.description or None}.items()
                    if v is not None} for e in scenario.expectations],
    }
    if scenario.report_headline:
        document["report"] = {"headline": list(scenario.report_headline)}
    header = (f"# {scenario.name}, resolved by rig {rig_version} from {scenario.file}\n"
              f"# (sha256 {scenario.source_sha256}): every variant with all defaults filled in.\n")
    return header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
