"""When a broker's logs reach the disk: flush.messages, log.flush.interval.ms, and the OS
writing dirty pages back (Kafka's LogManager flush task; the page cache is the OS's)."""

from __future__ import annotations

from rig.cluster.context import NodeContext
from rig.cluster.partition import TopicPartition
from rig.cluster.replica import Replica
from rig.scenario.broker_config import BrokerConfig


class LogManager:
    def __init__(self, config: BrokerConfig, ctx: NodeContext):
        self.config = config
        self.ctx = ctx
        self.dirty_logs: dict[TopicPartition, Replica] = {}  # logs with unflushed appends

    def reset(self, replicas: dict[TopicPartition, Replica]) -> None:
        """After a crash the logs still unflushed are what the next flush finds."""
        self.dirty_logs = {r.key: r for r in replicas.values() if r.log.dirty}

    def load_logs(self, replicas: dict[TopicPartition, Replica], now_ms: float) -> None:
        """LogManager.loadLogs as a new process starts: each segment on disk becomes a
        LogSegment made now. Before KIP-33 a segment's roll clock is when that object was made
        (LogSegment.created), so a restart puts off every time-based roll (KIP-33's case)."""
        for replica in replicas.values():
            if not replica.log.timestamps:
                for segment in replica.log.segments:
                    segment.created_ms = now_ms

    def appended(self, replica: Replica) -> None:
        """An append (as leader or follower): flush at once past the topic's flush.messages."""
        self.dirty_logs[replica.key] = replica
        limit = self.ctx.topics.flush_messages(replica.key, self.config)
        if limit and replica.log.unflushed_records() >= limit:
            replica.log.flush()

    def flush_by_time(self) -> None:
        for replica in self.dirty_logs.values():
            replica.log.flush()
        self.dirty_logs.clear()

    def os_writeback(self, now_ms: float) -> None:
        cutoff = now_ms - self.ctx.os.dirty_expire_ms
        for key, replica in list(self.dirty_logs.items()):
            replica.log.write_back(cutoff)
            if not replica.log.dirty:
                del self.dirty_logs[key]
