"""The group coordinator's side of offset commits: __consumer_offsets records and their values.

A group's offsets live in __consumer_offsets partition abs(hashCode(group)) % partitions
(GroupMetadataManager.partitionFor); that partition's leader is the group's coordinator. A commit
is appended there as one batch of records keyed by (group, topic, partition) and acknowledged
once the high watermark passes it (offsets.commit.required.acks = -1). The log holds key ids
only, like every log here; the values (the committed offsets) are kept once per batch identity
in the OffsetStore, so a new coordinator that loads the partition reads exactly the records its
own replica holds — a commit it never replicated is not there. A committed offset carries the
leader epoch of the record before it (OffsetCommit v6+, 2.1+ clients, KIP-320; −1 when the
client sends none), which a consumer resuming from it validates (2.3+).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING

from rig.cluster.log import Batch, Log
from rig.cluster.replica import Role
from rig.hashing import OFFSETS_TOPIC, offsets_partition
from rig.protocol.errors import NOT_COORDINATOR
from rig.protocol.records import BATCH_HEADER_BYTES, record_size

if TYPE_CHECKING:
    from rig.cluster.broker import Broker

TopicPartition = tuple[str, int]
Committed = tuple[int, int]  # (offset, leader epoch; −1: none committed)
COORDINATOR_PRODUCER = -1000  # commit batches carry (COORDINATOR_PRODUCER - broker, sequence)
OFFSET_COMMIT_TIMEOUT_MS = 5000  # offsets.commit.timeout.ms
VALUE_BYTES = 2 + 8 + 4 + 2 + 8  # version, offset, leader epoch, metadata "", commit timestamp


class OffsetStore:
    """Key ids of (group, topic, partition) and the value of every commit record written."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, int], int] = {}
        self.names: list[tuple[str, str, int]] = []
        self.values: dict[tuple[int, int], dict[int, Committed]] = {}
        self.sequence = 0

    def key_id(self, group: str, key: TopicPartition) -> int:
        name = (group, key[0], key[1])
        found = self.ids.get(name)
        if found is None:
            found = self.ids[name] = len(self.names)
            self.names.append(name)
        return found

    def commit_batch(self, broker: int, group: str, offsets: dict[TopicPartition, Committed],
                     now_ms: float) -> Batch:
        """The batch a coordinator appends for one OffsetCommit request."""
        keys = array("i", (self.key_id(group, key) for key in sorted(offsets)))
        identity = (COORDINATOR_PRODUCER - broker, self.sequence)
        self.sequence += 1
        self.values[identity] = {self.key_id(group, key): committed
                                 for key, committed in offsets.items()}
        size = BATCH_HEADER_BYTES
        for i, key in enumerate(sorted(offsets)):
            key_bytes = 2 + 2 + len(group.encode()) + 2 + len(key[0].encode()) + 4
            size += record_size(i, 0, key_bytes, VALUE_BYTES)
        return Batch(0, len(keys), -1, size, identity[0], identity[1], now_ms, keys)

    def load(self, log: Log, group: str, below: int) -> dict[TopicPartition, Committed]:
        """A coordinator loading its partition: the latest committed offset of each of the
        group's partitions among the records of `log` below offset `below`."""
        out: dict[TopicPartition, Committed] = {}
        for batch in log.batches:
            if batch.end_offset > below:
                break
            values = self.values.get(batch.identity)
            if values is None or batch.keys is None:
                continue
            for key_id in batch.keys:
                name = self.names[key_id if key_id >= 0 else ~key_id]
                if name[0] == group and key_id >= 0:
                    out[(name[1], name[2])] = values[key_id]
        return out


def led_offsets_replica(broker: Broker, group: str) -> tuple[TopicPartition, bool]:
    """(the group's offsets partition, whether `broker` leads it: is its coordinator)."""
    partitions = broker.config.offsets_topic_num_partitions
    key = (OFFSETS_TOPIC, offsets_partition(group, partitions))
    replica = broker.replicas.get(key)
    return key, replica is not None and replica.role is Role.LEADER


def handle_offset_commit(broker: Broker, store: OffsetStore, group: str,
                         offsets: dict[TopicPartition, Committed],
                         reply: Callable[[int], None]) -> None:
    """OffsetCommit at `broker`: NOT_COORDINATOR unless it leads the group's partition; else
    append and answer when the HW passes the batch (or with the produce error)."""
    key, leads = led_offsets_replica(broker, group)
    if not leads:
        reply(NOT_COORDINATOR)
        return
    batch = store.commit_batch(broker.id, group, offsets, broker.now_ms)

    def answered(results: dict[TopicPartition, object], _: object) -> None:
        result = results.get(key)
        reply(result if isinstance(result, int) else 0)

    broker.on_produce({key: batch}, -1, OFFSET_COMMIT_TIMEOUT_MS, answered)


def handle_offset_fetch(broker: Broker, store: OffsetStore,
                        group: str) -> tuple[int, dict[TopicPartition, Committed]]:
    """OffsetFetch at `broker`: (error, committed offsets) from its own replica, below its HW."""
    key, leads = led_offsets_replica(broker, group)
    if not leads:
        return NOT_COORDINATOR, {}
    replica = broker.replicas[key]
    return 0, store.load(replica.log, group, replica.high_watermark)
