"""A broker's storage tasks: the log cleaner's threads, retention, and samples of its logs.

Cleaner threads (log.cleaner.threads) each ask the compaction strategy for the next log; a pass
is computed when it starts and swapped in after (bytes read + written) / throughput of simulated
time — the throttle (log.cleaner.io.max.bytes.per.second, or the disk) is shared by the threads
busy at that moment. A thread that finds nothing sleeps log.cleaner.backoff.ms. A crash stops
every thread (a pass in progress is lost; the checkpoint is written only when a pass ends), and
a truncation of the log during a pass aborts it.

Retention deletes whole segments, oldest first, as rig.cluster.retention says for the release:
for a log not compacted 30 s after the broker starts and every log.retention.check.interval.ms
after, for a compacted one after each cleaner thread's pass (or its finding nothing to clean).
Samples go out every STORAGE_SAMPLE_MS, only for logs that were written, read or rewritten since
the previous one, so an idle cluster costs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rig.cluster.context import NodeContext, Process
from rig.cluster.log import Log
from rig.cluster.log_config import cleaner_settings, cleaning_config, compacted, deletes
from rig.cluster.log_rewrite import delete_oldest_segments, replace_segments
from rig.cluster.partition import TopicPartition
from rig.cluster.retention import RetentionRules, deletable
from rig.cluster.segment import LookupStats
from rig.events import names
from rig.strategies.compaction.base import CleanPass, CompactedLog, log_to_clean

if TYPE_CHECKING:
    from rig.cluster.replica import Replica

STORAGE_SAMPLE_MS = 2000
DISK_BYTES_PER_SECOND = 200 * (1 << 20)  # the cleaner's speed when nothing throttles it
# LogManager starts its retention task this long after it starts, then runs it every
# log.retention.check.interval.ms (InitialTaskDelayMs; log.initial.task.delay.ms, internal, 3.8+).
INITIAL_TASK_DELAY_MS = 30_000


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
        config = broker.config
        self.rules = RetentionRules(config.retention_below_high_watermark,
                                    config.retention_log_start_first,
                                    config.retention_log_start_when_compacted)
        self.sizes: dict[tuple[str, int], int] = {}  # each log's size at its last sample
        self.disk = 0  # their sum: the broker's disk, kept without visiting idle logs
        # Logs appended to (since this process started, or holding data then) or whose log
        # start moved up: only they can have a segment for retention to delete, so an idle
        # log costs it nothing.
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
                            if r.log.retainable)
        broker.every(STORAGE_SAMPLE_MS, self.sample)
        broker.every(broker.config.log_retention_check_interval_ms, self.retention,
                     first_ms=INITIAL_TASK_DELAY_MS)
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
            self.retain_compacted()
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
        self.retain_compacted()
        self._work(thread)

    # -- retention ------------------------------------------------------------------------
    def retention(self) -> None:
        """Every log.retention.check.interval.ms: retention of the logs not compacted
        (LogManager.cleanupLogs; a compacted log's is its cleaner thread's, retain_compacted)."""
        for key, replica, topic_config in self._due(compacted_logs=False):
            self._retain(key, replica, topic_config)

    def retain_compacted(self) -> None:
        """What a cleaner thread does after each pass, or finding nothing to clean: retention of
        the compacted logs no thread is cleaning (LogCleaner.cleanFilthiestLog →
        LogCleanerManager.deletableLogs). With the cleaner off they keep every segment."""
        for key, replica, topic_config in self._due(compacted_logs=True):
            if key not in self.in_progress:
                self._retain(key, replica, topic_config)

    def _due(self, compacted_logs: bool) -> list[tuple[tuple[str, int], Replica, Any]]:
        """The logs that may have a segment to delete, compacted or not, in the broker's order."""
        if len(self._rank) != len(self.replicas):
            self._rank = {key: i for i, key in enumerate(self.replicas)}
        due = []
        for key in sorted(self.written, key=self._rank.__getitem__):
            replica = self.written[key]
            if not replica.log.retainable:
                del self.written[key]  # (the next append, or a log start moved, puts it back)
                continue
            topic_config = self._topic_config(key[0])
            if compacted(topic_config) == compacted_logs:
                due.append((key, replica, topic_config))
        return due

    def _retain(self, key: tuple[str, int], replica: Replica,
                topic_config: Mapping[str, Any]) -> None:
        """rig.cluster.retention's passes over one log, one `log.retention` event per pass that
        deletes (Log.deleteOldSegments)."""
        broker = self.broker
        config = broker.config
        rules = self.rules
        log = replica.log
        now_ms = broker.now_ms
        retention_ms = int(topic_config.get("retention.ms", config.log_retention_ms))
        retention_bytes = int(topic_config.get("retention.bytes", config.log_retention_bytes))
        bound = replica.high_watermark if rules.below_high_watermark else None
        moved = False
        for reason in rules.passes(deletes(topic_config)):
            count = deletable(log, reason, bound, now_ms, retention_ms, retention_bytes)
            if not count:
                continue
            deleted = delete_oldest_segments(log, count, now_ms)
            moved = True
            self.ctx.emit(names.LOG_RETENTION, broker=broker.id, topic=key[0], partition=key[1],
                          segments_deleted=count, records_deleted=deleted,
                          log_start_offset=log.log_start_offset, reason=reason)
        if moved:
            self.log_start_moved(replica)
            self.touched[key] = replica

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
