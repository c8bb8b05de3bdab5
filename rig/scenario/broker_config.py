"""The broker settings rig models (`cluster.config` and a broker's own `config`), resolved:
Kafka's defaults, then the version profile's rules, then the scenario's settings
(rig.scenario.kafka_config reads them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BrokerConfig:
    """The broker settings rig models, under Kafka's names where Kafka has one."""

    inter_broker_protocol_version: str
    fetch_version: int
    # A follower's ListOffsets and OffsetsForLeaderEpoch versions (rig.scenario.api_versions);
    # the defaults are 3.9's at its own IBP.
    list_offsets_version: int = 9
    offsets_for_leader_epoch_version: int = 4
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
    heartbeat_retry_timeout_half_session: bool = True  # KAFKA-14392 (3.4)
    controller_quorum_election_timeout_ms: int = 1000  # KRaft's quorum (KIP-595; §12)
    controller_quorum_fetch_timeout_ms: int = 2000
    raft_pre_vote: bool = False  # KIP-996 (4.0)
    raft_check_quorum: bool = False  # KAFKA-15489 (3.7)
    kraft_noop_records: bool = False  # KIP-835 (3.3)
    metadata_max_idle_interval_ms: int = 500  # between the active controller's NoOpRecords
    eligible_leader_replicas_enable: bool = False  # KIP-966; the profile's default (4.1+: on)
    leader_epoch_bump_on_shrink: bool = False  # before metadata version 3.6 (KAFKA-15021)
    broker_epoch_checks: bool = True  # KIP-903 (3.5+), whatever protocol.fetch_version says
    elect_fenced_last_known_leader: bool = False  # before 4.1 (KAFKA-19522)
    kraft_unclean_election: bool = True  # 3.9+ (KAFKA-12670): the config is read
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
    offset_not_available: bool = True  # 2.2+ (KIP-207): ListOffsets latest waits for the HW
    failed_read_resets_follower: bool = False  # before 2.4 (KAFKA-8400)
    hw_on_follower_leo_change: bool = True  # 2.4+ (KAFKA-8841)
    controller_detects_bounce: bool = True  # 2.2+ (KIP-380): a re-registration is a failure too
    registration_waits_for_old_session: bool = False  # 0.8.2 (else a start inside it fails)
    epoch_start_at_election: bool = True  # 2.1+ (KAFKA-7415); before, at its first append
    fetch_leader_epoch_checked: bool = True  # 2.1+ (KIP-320): FENCED / UNKNOWN_LEADER_EPOCH
    follower_refetch_on_new_epoch: str = "any"  # 2.1+ (KIP-320); 2.0 "beyond-next"; "never"
    truncation_on_fetch: bool = True  # 2.8+ at IBP 2.7+ (KAFKA-10554): Fetch's diverging epoch
    out_of_range_halts: bool = False  # before 2.1 (KAFKA-7414): else truncate to its end
    out_of_range_restarts_log: bool = False  # before 0.9.0.1 (KAFKA-2143)
    timestamp_based_segments: bool = True  # 0.10.1+ (KIP-33): segment.ms, retention.ms
    retention_below_high_watermark: bool = True  # 0.11+ (KAFKA-5634)
    retention_log_start_when_compacted: bool = True  # 2.1+ (KAFKA-7400)
    retention_log_start_first: bool = True  # 3.0+ (KAFKA-12177): then bytes, then ms
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
