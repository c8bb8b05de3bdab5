"""A variant's broker configuration (Kafka's `KafkaConfig`): the keys a scenario may set, by
Kafka's names, converted onto `BrokerConfig` over the defaults of the variant's Kafka version."""

from __future__ import annotations

from typing import Any

from rig import units
from rig.scenario import api_versions, profiles
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.problems import Collector
from rig.scenario.source import PathKey

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
    "metadata.max.idle.interval.ms": ("metadata_max_idle_interval_ms", units.duration_ms),
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
    "controller.socket.timeout.ms": ("controller_socket_timeout_ms", units.duration_ms),
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
def read_config(data: dict[str, Any], kafka: str, out: Collector,
                overrides: dict[str, Any] | None = None,
                at: PathKey = ("cluster", "config")) -> BrokerConfig:
    raw = {**data.get("cluster", {}).get("config", {}), **(overrides or {})}
    profile = profiles.profile(kafka)
    ibp = raw.pop("inter.broker.protocol.version", kafka)
    forced = data.get("protocol", {}).get("fetch_version")
    fields: dict[str, Any] = {
        "inter_broker_protocol_version": ibp,
        "fetch_version": forced if forced is not None else profiles.fetch_version_for_ibp(ibp),
        "list_offsets_version": api_versions.follower_list_offsets_version(kafka, ibp),
        "offsets_for_leader_epoch_version": api_versions.follower_epoch_version(ibp),
        "replica_lag_time_max_ms": profile.replica_lag_time_max_ms,
        "zookeeper_session_timeout_ms": profile.zookeeper_session_timeout_ms,
        "hw_holds_below_min_isr": profile.hw_holds_below_min_isr,
        "effective_min_isr": profile.effective_min_isr,
        "isr_rejoin_needs_epoch_start": profile.isr_rejoin_needs_epoch_start,
        "offset_not_available": profile.offset_not_available,
        "failed_read_resets_follower": profile.failed_read_resets_follower,
        "hw_on_follower_leo_change": profile.hw_on_follower_leo_change,
        "controller_detects_bounce": profile.controller_detects_bounce,
        "registration_waits_for_old_session": profile.registration_waits_for_old_session,
        "epoch_start_at_election": profile.epoch_start_at_election,
        "fetch_leader_epoch_checked": profile.fetch_leader_epoch_checked,
        "follower_refetch_on_new_epoch": profile.follower_refetch_on_new_epoch,
        "truncate_epochs_at_log_end": profile.truncate_epochs_at_log_end,
        "out_of_range_halts": profile.out_of_range_halts,
        "out_of_range_restarts_log": profile.out_of_range_restarts_log,
        "timestamp_based_segments": profile.timestamp_based_segments,
        "retention_below_high_watermark": profile.retention_below_high_watermark,
        "retention_log_start_when_compacted": profile.retention_log_start_when_compacted,
        "retention_log_start_first": profile.retention_log_start_first,
        # The 2.8 code asks inter.broker.protocol.version ≥ 2.7-IV1, the IBP of Fetch v12
        # (ApiVersion.isTruncationOnFetchSupported): a 2.8+ broker at IBP 2.6 asks the leader.
        "truncation_on_fetch": (profile.truncation_on_fetch
                                and profiles.fetch_version_for_ibp(ibp) >= 12),
        "epoch_end_before_first_known": profile.epoch_end_before_first_known,
        "election_order": profile.election_order,
        "isr_update": profiles.ibp_rule("isr_update", ibp),
        "alter_isr_takes_same_version": profile.alter_isr_takes_same_version,
        "hw_on_alter_isr_response": profile.hw_on_alter_isr_response,
        "alter_partition_ineligible": profile.alter_partition_ineligible,
        "eligible_leader_replicas_enable": profile.eligible_leader_replicas_enable,
        "leader_epoch_bump_on_shrink": profile.leader_epoch_bump_on_shrink,
        "broker_epoch_checks": profile.broker_epoch_checks,
        "elect_fenced_last_known_leader": profile.elect_fenced_last_known_leader,
        "kraft_unclean_election": profile.kraft_unclean_election,
        "raft_pre_vote": profile.raft_pre_vote,
        "raft_check_quorum": profile.raft_check_quorum,
        "kraft_noop_records": profile.kraft_noop_records,
        "heartbeat_retry_timeout_half_session": profile.heartbeat_retry_timeout_half_session,
        "unclean_leader_election_enable": profile.unclean_leader_election_enable,
        # log.message.format.version may not pass inter.broker.protocol.version (KafkaConfig's
        # check): a cluster still at an older IBP writes that IBP's format.
        "message_format": profiles.ibp_capped("message_format", kafka, ibp),
    }
    for key, value in raw.items():
        name, convert = _CONFIG_KEYS[key]
        try:
            fields[name] = convert(value)
        except ValueError as exc:
            out.add((*at, key), str(exc))
    return BrokerConfig(**fields)
