"""The scenario as plain frozen data: what one variant of a scenario asks rig to simulate.

Everything here is validated and in base units (ms, bytes, bytes/s); no YAML, no defaults left to
resolve. Later stages read these objects and never the YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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
    # KRaft (docs/kafka.md §12): BrokerLifecycleManager's heartbeat, the controller's session.
    broker_heartbeat_interval_ms: int = 2000
    broker_session_timeout_ms: int = 9000
    controller_quorum_election_timeout_ms: int = 1000  # KRaft's quorum (KIP-595; §12)
    controller_quorum_fetch_timeout_ms: int = 2000
    raft_pre_vote: bool = False  # KIP-996 (4.0)
    raft_check_quorum: bool = False  # KAFKA-15489 (3.7)
    eligible_leader_replicas_enable: bool = False  # KIP-966; the profile's default (4.1+: on)
    leader_epoch_bump_on_shrink: bool = False  # before metadata version 3.6 (KAFKA-15021)
    broker_epoch_checks: bool = True  # KIP-903 (3.5+), whatever protocol.fetch_version says
    elect_fenced_last_known_leader: bool = False  # before 4.1 (KAFKA-19522)
    max_incremental_fetch_session_cache_slots: int = 1000
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False  # the profile's default: true before 0.11
    # The message format (magic) the brokers write (log.message.format.version follows the
    # inter-broker protocol by default): 0 and 1 are message sets, 2 record batches (0.11+).
    message_format: int = 2
    log_flush_interval_messages: int | None = None  # None: never (Kafka's default)
    log_flush_interval_ms: int | None = None
    log_segment_bytes: int = 1 << 30
    replica_high_watermark_checkpoint_interval_ms: int = 5000
    replica_socket_timeout_ms: int = 30_000
    controller_socket_timeout_ms: int = 30_000  # the broker's AlterIsr channel to the controller
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_ms: int = 300_000
    leader_imbalance_per_broker_percentage: int = 10
    # Storage: the log cleaner, indexes, retention, __consumer_offsets (docs/kafka.md §5–§7).
    log_cleaner_enable: bool = True
    log_cleaner_threads: int = 1
    log_cleaner_dedupe_buffer_size: int = 128 << 20
    log_cleaner_io_buffer_load_factor: float = 0.9
    log_cleaner_io_max_bytes_per_second: float = float("inf")
    log_cleaner_backoff_ms: int = 15_000
    log_index_interval_bytes: int = 4096
    log_retention_ms: int = 7 * 24 * 3600 * 1000
    log_retention_bytes: int = -1
    log_retention_check_interval_ms: int = 300_000
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    # Behaviour that changed across releases, set by the version profile:
    hw_holds_below_min_isr: bool = True  # 3.7+: the HW waits for min.insync.replicas
    effective_min_isr: bool = True  # 3.7+: min.insync.replicas capped at the replication factor
    isr_rejoin_needs_epoch_start: bool = True  # 2.1+: rejoin only past the epoch's start
    controller_detects_bounce: bool = True  # 2.2+ (KIP-380): a re-registration is a failure too
    registration_waits_for_old_session: bool = False  # 0.8.2 (else a start inside it fails)
    epoch_start_at_election: bool = True  # 2.1+ (KAFKA-7415); before, at its first append
    fetch_leader_epoch_checked: bool = True  # 2.1+ (KIP-320): FENCED / UNKNOWN_LEADER_EPOCH
    follower_refetch_on_new_epoch: str = "any"  # 2.1+ (KIP-320); 2.0 "beyond-next"; "never"
    truncation_on_fetch: bool = True  # 2.8+ at IBP 2.7+ (KAFKA-10554): Fetch's diverging epoch
    truncate_epochs_at_log_end: bool = True  # 2.7+, 2.6.1 (KAFKA-10706): a cut at the log end
    epoch_end_before_first_known: str = "first-start"  # 2.0+ (KIP-279); 1.x "undefined" (HW)
    election_order: str = "assignment-order"  # 1.1+; "isr-order" before
    # How a ZooKeeper-mode leader changes its ISR (KIP-497, by inter.broker.protocol.version):
    # "zookeeper-write" (before 2.7), "alter-isr-every-50ms" (2.7), "alter-isr" (2.8+).
    isr_update: str = "alter-isr"
    alter_isr_takes_same_version: bool = True  # 3.0+ (KAFKA-12751): an answer at its version
    hw_on_alter_isr_response: bool = True  # 3.1+ (KAFKA-13091)
    alter_partition_ineligible: bool = True  # 3.3+ (KIP-841), ZooKeeper mode: controller, leader
    # KIP-392 (2.4+): "rack-aware" = RackAwareReplicaSelector; "none" = consumers read leaders.
    replica_selector_class: str = "none"


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
    retry_backoff_ms: int = 100
    start_ms: int = 0
    lag_sample_ms: int = 1000  # 0: no lag samples
    commit: str = "none"  # none | auto (enable.auto.commit) | poll (after each poll with records)
    auto_commit_interval_ms: int = 5000
    racks: tuple[str, ...] = ()  # client.rack of member i: racks[i % len(racks)]; () = none
    metadata_max_age_ms: int = 300_000  # how long a preferred read replica is kept (KIP-392)
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
