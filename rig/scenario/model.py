"""The scenario as plain frozen data: what one variant of a scenario asks rig to simulate.

Everything here is validated and in base units (ms, bytes, bytes/s); no YAML, no defaults left to
resolve. Later stages read these objects and never the YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STRATEGY_KINDS = ("placement", "replication", "isr", "fetch_session", "compaction")


@dataclass(frozen=True)
class BrokerSpec:
    id: int
    rack: str | None = None


@dataclass(frozen=True)
class LinkSpec:
    latency_us: int
    bandwidth_bytes_per_s: float


@dataclass(frozen=True)
class NetworkSpec:
    same_rack: LinkSpec
    cross_rack: LinkSpec

    def link(self, rack_a: str | None, rack_b: str | None) -> LinkSpec:
        return self.same_rack if rack_a == rack_b else self.cross_rack


@dataclass(frozen=True)
class BrokerConfig:
    """The broker settings rig models, under Kafka's names where Kafka has one."""

    inter_broker_protocol_version: str
    fetch_version: int
    num_replica_fetchers: int = 1
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_min_bytes: int = 1
    replica_fetch_max_bytes: int = 1024 * 1024
    replica_fetch_response_max_bytes: int = 10 * 1024 * 1024
    replica_fetch_backoff_ms: int = 1000
    replica_lag_time_max_ms: int = 30_000
    zookeeper_session_timeout_ms: int = 18_000
    max_incremental_fetch_session_cache_slots: int = 1000
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    replication_factor: int
    assignment: tuple[tuple[int, ...], ...] | None = None
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StrategyRef:
    name: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    """One check over summary.json: `metric op value`, or `ratio[0] / ratio[1] op value`."""

    op: str
    value: float | bool | None
    metric: str | None = None
    ratio: tuple[str, str] | None = None
    tolerance: float = 0.0
    description: str = ""
    line: int | None = None

    @property
    def text(self) -> str:
        subject = self.metric if self.metric else f"{self.ratio[0]} / {self.ratio[1]}"  # type: ignore[index]
        tolerance = f" ± {self.tolerance:g}" if self.tolerance else ""
        return f"{subject} {self.op} {self.value}{tolerance}"


@dataclass(frozen=True)
class VariantSpec:
    """One fully resolved variant: the input of the engine."""

    name: str
    seed: int
    duration_ms: int
    kafka: str
    brokers: tuple[BrokerSpec, ...]
    config: BrokerConfig
    network: NetworkSpec
    topics: tuple[TopicSpec, ...]
    strategies: Mapping[str, StrategyRef]
    document: Mapping[str, Any]  # the merged scenario document of this variant, for the record


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    file: str
    source_sha256: str
    seed: int
    variants: tuple[VariantSpec, ...]
    expectations: tuple[Expectation, ...]
    document: Mapping[str, Any]  # the base document after --set overrides

    def variant(self, name: str) -> VariantSpec:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(name)
