"""A topic's log settings on a broker (Kafka's LogConfig): its cleanup policy, what the log
cleaner is told, and the segment and index sizes its replicas' logs are made with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from rig.cluster.log import Log
from rig.scenario.broker_config import BrokerConfig
from rig.strategies.compaction.base import CleanerSettings, CleaningConfig

DEFAULT_POLICY = "delete"


def compacted(config: Mapping[str, Any]) -> bool:
    return "compact" in str(config.get("cleanup.policy", DEFAULT_POLICY))


def deletes(config: Mapping[str, Any]) -> bool:
    return "delete" in str(config.get("cleanup.policy", DEFAULT_POLICY))


def cleaning_config(config: Mapping[str, Any], broker: BrokerConfig) -> CleaningConfig:
    defaults = CleaningConfig()
    return CleaningConfig(
        min_cleanable_dirty_ratio=float(config.get("min.cleanable.dirty.ratio",
                                                   defaults.min_cleanable_dirty_ratio)),
        delete_retention_ms=int(config.get("delete.retention.ms", defaults.delete_retention_ms)),
        min_compaction_lag_ms=int(config.get("min.compaction.lag.ms",
                                             defaults.min_compaction_lag_ms)),
        max_compaction_lag_ms=int(config.get("max.compaction.lag.ms",
                                             defaults.max_compaction_lag_ms)),
        segment_bytes=int(config.get("segment.bytes", broker.log_segment_bytes)))


def cleaner_settings(config: BrokerConfig) -> CleanerSettings:
    return CleanerSettings(
        threads=config.log_cleaner_threads,
        dedupe_buffer_bytes=config.log_cleaner_dedupe_buffer_size,
        load_factor=config.log_cleaner_io_buffer_load_factor,
        io_bytes_per_second=config.log_cleaner_io_max_bytes_per_second,
        backoff_ms=config.log_cleaner_backoff_ms)


def log_factory(config: Mapping[str, Any], broker: BrokerConfig, *,
                internal: bool = False) -> Callable[[], Log]:
    """Makes the empty logs of a topic's replicas on one broker, with the topic's segment and
    index settings (read once for all its partitions)."""
    default_segment = 100 << 20 if internal else broker.log_segment_bytes  # offsets topic
    return partial(Log, int(config.get("segment.bytes", default_segment)),
                   int(config.get("segment.ms", 7 * 24 * 3600 * 1000)),
                   int(config.get("index.interval.bytes", broker.log_index_interval_bytes)),
                   broker.timestamp_based_segments and broker.message_format >= 1)
