"""The scenario as plain frozen data: what one variant of a scenario asks rig to simulate.

Everything here is validated and in base units (ms, bytes, bytes/s); no YAML, no defaults left to
resolve. Later stages read these objects and never the YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rig.scenario.broker_config import BrokerConfig
from rig.scenario.client_config import METADATA_MAX_AGE_MS, RETRY_BACKOFF_MS

STRATEGY_KINDS = ("placement", "replication", "isr", "fetch_session", "compaction", "controller")


@dataclass(frozen=True)
class BrokerSpec:
    id: int
    rack: str | None = None
    fenced: bool = False  # registered but fenced (KRaft): never a new partition's leader


@dataclass(frozen=True)
class ControllerSpec:
    """A KRaft controller node (a voter of the metadata quorum): dedicated, or `combined` with
    the broker of the same id (one process: it crashes and restarts with that broker)."""

    id: int
    rack: str | None = None
    combined: bool = False


@dataclass(frozen=True)
class LinkSpec:
    latency_us: int
    bandwidth_bytes_per_s: float


@dataclass(frozen=True)
class NetworkSpec:
    same_rack: LinkSpec
    cross_rack: LinkSpec

    def link(self, rack_a: str | None, rack_b: str | None) -> LinkSpec:
        """Brokers in different racks use the cross-rack link; unknown racks count as same."""
        if rack_a is None or rack_b is None or rack_a == rack_b:
            return self.same_rack
        return self.cross_rack


@dataclass(frozen=True)
class OsSpec:
    """Page cache writeback of the brokers' machines (Linux defaults: 30 s expiry, 5 s wakeup)."""

    dirty_expire_ms: int = 30_000
    writeback_interval_ms: int = 5_000


@dataclass(frozen=True)
class SizeDist:
    """Record sizes: `fixed`, `uniform` between low and high, or `normal` (mean, stddev)."""

    kind: str
    low: int
    high: int = 0


@dataclass(frozen=True)
class ProducerSpec:
    name: str
    topic: str
    rate: float  # records per second while producing
    burst_on_ms: int = 0  # 0: constant rate; else `rate` for on, silence for off
    burst_off_ms: int = 0
    record_size: SizeDist = SizeDist("fixed", 100)
    key_size: int = 16
    keys: str = "none"  # none | uniform | zipf
    key_count: int = 0
    zipf_s: float = 1.0
    partitioner: str = "murmur2"  # murmur2 | round-robin | sticky | explicit
    explicit_partition: int = 0
    acks: int = -1  # 0, 1 or -1 (all)
    linger_ms: int = 5
    batch_size: int = 16384
    retries: int = 2_147_483_647
    request_timeout_ms: int = 30_000
    delivery_timeout_ms: int = 120_000
    start_ms: int = 0
    stop_ms: int | None = None
    count: int | None = None
    rack: str | None = None  # client.rack: the zone it runs in (None: reached over same-rack links)

    @property
    def node(self) -> str:
        """Its name on the network and in the event log."""
        return f"producer-{self.name}"


@dataclass(frozen=True)
class ConsumerSpec:
    """A consumer group reading one topic (Kafka's consumer defaults)."""

    group: str
    topic: str
    members: int = 1
    assignment: str = "range"  # range | round-robin
    start: str = "latest"  # latest | earliest (auto.offset.reset)
    fetch_version: int | None = None  # None: the cluster's Fetch version
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    max_partition_fetch_bytes: int = 1 << 20
    fetch_max_bytes: int = 50 << 20
    request_timeout_ms: int = 30_000
    retry_backoff_ms: int = RETRY_BACKOFF_MS
    start_ms: int = 0
    lag_sample_ms: int = 1000  # 0: no lag samples
    commit: str = "none"  # none | auto (enable.auto.commit) | poll (after each poll with records)
    auto_commit_interval_ms: int = 5000
    racks: tuple[str, ...] = ()  # client.rack of member i: racks[i % len(racks)]; () = none
    metadata_max_age_ms: int = METADATA_MAX_AGE_MS  # keeps a preferred read replica (KIP-392)
    rack_aware_assignment: bool = True  # KIP-881 (3.5+ clients): range matches member racks

    def rack_of(self, member: int) -> str | None:
        return self.racks[member % len(self.racks)] if self.racks else None

    def member_node(self, member: int) -> str:
        """Member `member`'s name on the network and in the event log (its client.id)."""
        return f"consumer-{self.group}-{member}"


@dataclass(frozen=True)
class FaultSpec:
    """One fault: what, on which nodes, when (a time or an event trigger), and for how long."""

    kind: str
    index: int
    at_ms: int | None = None
    after_event: str | None = None
    after_where: Mapping[str, Any] = field(default_factory=dict)
    after_delay_ms: int = 0
    brokers: tuple[int, ...] = ()
    controllers: tuple[int | str, ...] = ()  # KRaft controller ids, or "active"
    rack: str | None = None
    groups: tuple[tuple[int | str, ...], ...] = ()
    between: tuple[int | str, ...] = ()
    latency_us: int | None = None
    bandwidth_bytes_per_s: float | None = None
    loss: float = 0.0
    restart_after_ms: int | None = None
    heal_after_ms: int | None = None
    description: str = ""
    # alter-config: the topic whose settings change (None: the cluster-wide default) and what
    # they become (min.insync.replicas only); reassign: a partition's topic, its index, the target
    topic: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    partition: int | None = None
    replicas: tuple[int, ...] = ()


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
    broker_configs: Mapping[int, BrokerConfig] = field(default_factory=dict)  # per-broker
    os: OsSpec = OsSpec()
    producers: tuple[ProducerSpec, ...] = ()
    consumers: tuple[ConsumerSpec, ...] = ()
    faults: tuple[FaultSpec, ...] = ()
    quiesce_ms: int = 120_000
    events: str = "full"  # full | fetch-aggregated (idle fetch rounds in closed form)
    controllers: tuple[ControllerSpec, ...] = ()  # KRaft's quorum; (): one that never fails

    def broker_config(self, broker: int) -> BrokerConfig:
        return self.broker_configs.get(broker, self.config)


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
    skipped_expectations: tuple[Expectation, ...] = ()  # of variants `--variant` left out
    # `report.headline`: the figures the report leads with, paths under variants.<name>.
    report_headline: tuple[str, ...] = ()

    def variant(self, name: str) -> VariantSpec:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(name)
