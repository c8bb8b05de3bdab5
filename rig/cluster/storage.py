"""A broker's storage tasks: the log cleaner's threads, retention, and samples of its logs.

Cleaner threads (log.cleaner.threads) each ask the compaction strategy for the next log; a pass
is computed when it starts and swapped in after (bytes read + written) / throughput of simulated
time — the throttle (log.cleaner.io.max.bytes.per.second, or the disk) is shared by the threads
busy at that moment. A thread that finds nothing sleeps log.cleaner.backoff.ms. A crash stops
every thread (a pass in progress is lost; the checkpoint is written only when a pass ends), and
a truncation of the log during a pass aborts it.

Retention (cleanup.policy delete) runs every log.retention.check.interval.ms and deletes whole
non-active segments below the high watermark. Samples go out every STORAGE_SAMPLE_MS, only for
logs that were written, read or rewritten since the previous one, so an idle cluster costs
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.log import Log
from rig.cluster.log_rewrite import delete_oldest_segments, replace_segments
from rig.cluster.partition import TopicPartition
from rig.cluster.segment import LookupStats
from rig.events import names
from rig.scenario.broker_config import BrokerConfig
from rig.strategies.compaction.base import (
    CleanerSettings,
    CleaningConfig,
    CleanPass,
    CompactedLog,
    log_to_clean,
)

if TYPE_CHECKING:
    from rig.cluster.replica import Replica

STORAGE_SAMPLE_MS = 2000
DISK_BYTES_PER_SECOND = 200 * (1 << 20)  # the cleaner's speed when nothing throttles it
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
                   int(config.get("index.interval.bytes", broker.log_index_interval_bytes)))


def apply_pass(log: Log, plan: CleanPass) -> None:
    """Swap a finished pass into `log` and move its cleaner checkpoint (LogCleanerManager
    .doneCleaning)."""
    replace_segments(log, plan.segments_replaced, plan.group_bases, plan.batches)
    log.clean_offset = plan.end_offset


class BrokerStorage:
    def __init__(self, broker: Process, ctx: NodeContext, replicas: dict[TopicPartition, Replica]):
        self.broker = broker
        self.ctx = ctx
        self.replicas = replicas
        self.touched: dict[tuple[str, int], Replica] = {}
        self.in_progress: set[tuple[str, int]] = set()
        self.busy = 0
        self.settings = cleaner_settings(broker.config)
        self.sizes: dict[tuple[str, int], int] = {}  # each log's size at its last sample
        self.disk = 0  # their sum: the broker's disk, kept without visiting idle logs
        # Logs appended to (since this process started, or with segments then): only they
        # can have a segment for retention to delete, so an idle log costs it nothing.
        self.written: dict[tuple[str, int], Replica] = {}
        self._rank: dict[tuple[str, int], int] = {}  # the broker's replica order
        # What the broker does when retention moves a log's start (ReplicaManager's, wired by
        # the broker: its fetch sessions and fetchers hear of it).
        self.log_start_moved: Callable[[Replica], None] = lambda _replica: None

    @property
    def strategy(self) -> Any:
        return self.ctx.strategies.compaction

    def _topic_config(self, topic: str) -> Mapping[str, Any]:
        return self.ctx.topics.config(topic)

    def start(self) -> None:
        """Arm the tasks of a (re)started broker."""
        broker = self.broker
        self.in_progress.clear()
        self.busy = 0
        self.written.clear()  # the same map the replica manager adds appended logs to
        self.written.update((key, r) for key, r in self.replicas.items()
                            if r.log.segment_count > 1)
        broker.every(STORAGE_SAMPLE_MS, self.sample)
        broker.every(broker.config.log_retention_check_interval_ms, self.retention)
        config = self.ctx.topics.by_topic
        compacted_topics = {topic for topic in config if compacted(config[topic])}
        if (self.strategy is not None and broker.config.log_cleaner_enable and compacted_topics
                and any(key[0] in compacted_topics for key in self.replicas)):
            for thread in range(self.settings.threads):
                self._after(0, thread)

    # -- the cleaner ----------------------------------------------------------------------
    def _after(self, delay_ms: float, thread: int) -> None:
        broker = self.broker
        incarnation = broker.incarnation

        def run() -> None:
            if broker.alive and broker.incarnation == incarnation:
                self._work(thread)

        broker.schedule(max(1, int(delay_ms * 1000)), run)

    def _candidates(self) -> list[CompactedLog]:
        out = []
        for key, replica in self.replicas.items():
            config = self._topic_config(key[0])
            if key in self.in_progress or not compacted(config):
                continue
            out.append(CompactedLog(key[0], key[1], replica.log,
                                    cleaning_config(config, self.broker.config),
                                    replica.high_watermark))
        return out

    def _work(self, thread: int) -> None:
        broker = self.broker
        if broker.stalled:
            self._after(self.settings.backoff_ms, thread)
            return
        now_ms = broker.now_ms
        chosen = self.strategy.select(self._candidates(), now_ms)
        if chosen is None:
            self._after(self.settings.backoff_ms, thread)
            return
        plan = self.strategy.clean(chosen, self.settings, now_ms)
        target = chosen.target
        key = (target.topic, target.partition)
        self.in_progress.add(key)
        self.busy += 1
        rate = self.settings.io_bytes_per_second
        rate = (DISK_BYTES_PER_SECOND if math.isinf(rate) else rate) / self.busy
        duration_ms = (plan.bytes_read + plan.bytes_written) / rate * 1000
        log = target.log
        before = (log.layout, log.size_bytes, len(log.segments))
        incarnation = broker.incarnation

        def finish() -> None:
            if not broker.alive or broker.incarnation != incarnation:
                return
            self._finish(thread, key, log, plan, chosen.cleanable_ratio, before, duration_ms)

        broker.schedule(max(1, int(duration_ms * 1000)), finish)

    def _finish(self, thread: int, key: tuple[str, int], log: Log, plan: CleanPass,
                ratio: float, before: tuple[int, int, int], duration_ms: float) -> None:
        self.in_progress.discard(key)
        self.busy = max(0, self.busy - 1)
        layout, size_before, segments_before = before
        aborted = log.layout != layout
        if not aborted:
            apply_pass(log, plan)
        replica = self.replicas.get(key)
        if replica is not None:
            self.touched[key] = replica
        self.ctx.emit(
            names.CLEANER_PASS, broker=self.broker.id, thread=thread, topic=key[0],
            partition=key[1], keys_mapped=plan.keys_mapped, map_capacity=plan.map_capacity,
            map_full=plan.map_full, records_read=plan.records_read,
            records_removed=plan.records_removed, tombstones_removed=plan.tombstones_removed,
            bytes_read=plan.bytes_read, bytes_written=plan.bytes_written,
            duration_ms=round(duration_ms, 3), dirty_ratio=round(ratio, 6),
            first_dirty_offset=int(plan.details.get("first_dirty_offset", 0)),
            end_offset=plan.end_offset, segments_before=segments_before,
            segments_after=len(log.segments), log_bytes_before=size_before,
            log_bytes_after=log.size_bytes, aborted=aborted)
        self._work(thread)

    # -- retention ------------------------------------------------------------------------
    def retention(self) -> None:
        broker = self.broker
        now_ms = broker.now_ms
        if len(self._rank) != len(self.replicas):
            self._rank = {key: i for i, key in enumerate(self.replicas)}
        for key in sorted(self.written, key=self._rank.__getitem__):
            replica = self.written[key]
            log = replica.log
            if log.segment_count <= 1:
                del self.written[key]  # one segment (the next append puts it back)
                continue
            config = self._topic_config(key[0])
            if not deletes(config):
                continue
            retention_ms = int(config.get("retention.ms", broker.config.log_retention_ms))
            retention_bytes = int(config.get("retention.bytes",
                                             broker.config.log_retention_bytes))
            count, reason = self._deletable(log, replica.high_watermark, now_ms, retention_ms,
                                            retention_bytes)
            if not count:
                continue
            deleted = delete_oldest_segments(log, count)
            self.log_start_moved(replica)
            self.touched[key] = replica
            self.ctx.emit(names.LOG_RETENTION, broker=broker.id, topic=key[0],
                                    partition=key[1], segments_deleted=count,
                                    records_deleted=deleted,
                                    log_start_offset=log.log_start_offset, reason=reason)

    @staticmethod
    def _deletable(log: Log, high_watermark: int, now_ms: float, retention_ms: int,
                   retention_bytes: int) -> tuple[int, str]:
        """How many of the oldest segments retention deletes (UnifiedLog.deleteOldSegments:
        never the active segment, only segments wholly below the high watermark)."""
        segments = log.segments
        by_time = 0
        while (by_time < len(segments) - 1
               and now_ms - segments[by_time].largest_timestamp_ms > retention_ms
               and segments[by_time + 1].base_offset <= high_watermark):
            by_time += 1
        by_size = 0
        if retention_bytes >= 0:
            diff = log.size_bytes - retention_bytes
            while (by_size < len(segments) - 1 and diff - segments[by_size].size >= 0
                   and segments[by_size + 1].base_offset <= high_watermark):
                diff -= segments[by_size].size
                by_size += 1
        if by_size > by_time:
            return by_size, "retention.bytes"
        return by_time, "retention.ms"

    # -- samples --------------------------------------------------------------------------
    def sample(self) -> None:
        """Every STORAGE_SAMPLE_MS: one log.sample per compacted log that changed, and one
        broker.storage with the broker's disk and its lookups — never one event per fetch."""
        if not self.touched:
            return
        broker = self.broker
        now_ms = broker.now_ms
        emit = self.ctx.emit
        total = LookupStats()
        for key, replica in sorted(self.touched.items()):
            log = replica.log
            self.disk += log.size_bytes - self.sizes.get(key, 0)
            self.sizes[key] = log.size_bytes
            stats = log.lookups
            total.merge(stats)
            config = self._topic_config(key[0])
            if compacted(config):
                ratio = round(log_to_clean(CompactedLog(
                    key[0], key[1], log, cleaning_config(config, broker.config),
                    replica.high_watermark), now_ms).cleanable_ratio, 6)
                emit(names.LOG_SAMPLE, broker=broker.id, topic=key[0], partition=key[1],
                     leader=replica.role.name == "LEADER", size_bytes=log.size_bytes,
                     segments=len(log.segments),
                     index_bytes=sum(s.index_bytes for s in log.segments),
                     time_index_bytes=sum(s.time_index_bytes for s in log.segments),
                     log_start_offset=log.log_start_offset, log_end_offset=log.log_end_offset,
                     records=sum(b.records for b in log.batches), dirty_ratio=ratio,
                     lookups=stats.count, lookup_bytes=stats.total,
                     lookup_min=max(0, stats.low), lookup_max=stats.high,
                     lookup_samples=list(stats.samples))
            stats.reset()
        emit(names.BROKER_STORAGE, broker=broker.id, size_bytes=self.disk, logs=len(self.sizes),
             changed=len(self.touched), lookups=total.count, lookup_bytes=total.total,
             lookup_min=max(0, total.low), lookup_max=total.high,
             lookup_samples=list(total.samples))
        self.touched.clear()
