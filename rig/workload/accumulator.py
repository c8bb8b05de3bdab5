"""Kafka's RecordAccumulator as rig's producer needs it: records drawn (key, partition, value
size) into one open batch per partition, closed at `batch.size` or at the end of the linger, and
queued per partition until the Sender takes them. Batches are sized exactly in the format the
brokers write; each carries (producer, sequence) so checks can follow it into logs.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable

from rig.engine.rng import randrange_of
from rig.protocol.legacy_records import message_size
from rig.protocol.records import BATCH_HEADER_BYTES, record_size
from rig.scenario.model import ProducerSpec
from rig.workload.batches import BatchQueues, OpenBatch
from rig.workload.keyed_records import KeyedRecords, applies, key_partition


class RecordAccumulator:
    """The records of one producer from their draw to a closed batch in its partition's queue.

    Every draw comes from the producer's stream in a fixed order (key, partition, value size per
    record), so a run's batches are a function of its seed. `queues` is shared with the Sender:
    it takes batches from the head and puts retried ones back there."""

    def __init__(self, spec: ProducerSpec, partitions: int, rng: random.Random,
                 message_format: int, keep_keys: bool):
        self.spec = spec
        self.partitions = partitions
        self.rng = rng
        self.sequence = 0  # the next record's sequence number
        # Key ids travel with the batches only where the cleaner needs them: compacted topics.
        self.keep_keys = keep_keys
        self._round_robin = itertools.count()
        self._sticky: int | None = None
        self.open_batches: dict[int, OpenBatch] = {}
        self.queues = BatchQueues()
        self._key_partition: dict[int, int] = {}
        self._zipf_cdf: list[float] = []
        # The bytes a batch takes in the format the brokers write (log.message.format.version):
        # a record batch v2 (0.11+) or a message set of magic 0 / 1 (LegacyRecord), which has
        # no header of its own and a fixed overhead per message.
        magic = message_format
        self._batch_header = BATCH_HEADER_BYTES if magic >= 2 else 0
        self._record_size: Callable[[int, int, int | None, int | None], int] = (
            record_size if magic >= 2
            else lambda _offset_delta, _timestamp_delta, key, value: message_size(magic, key,
                                                                                   value))
        if spec.keys == "zipf":
            weights = [1 / (k ** spec.zipf_s) for k in range(1, spec.key_count + 1)]
            total = sum(weights)
            acc = 0.0
            for w in weights:
                acc += w / total
                self._zipf_cdf.append(acc)
        # Keyed records of one size go in bulk (rig.workload.keyed_records): the same batches.
        self._bulk = (KeyedRecords(self, self._batch_header, self._record_size)
                      if applies(self) else None)

    # -- records -------------------------------------------------------------------------------
    def _key(self) -> int | None:
        spec = self.spec
        if spec.keys == "uniform":
            return self.rng.randrange(spec.key_count)
        if spec.keys == "zipf":
            return bisect.bisect_left(self._zipf_cdf, self.rng.random())
        return None

    def _partition(self, key: int | None) -> int:
        spec = self.spec
        if spec.partitioner == "explicit":
            return spec.explicit_partition
        if spec.partitioner == "murmur2" and key is not None:
            partition = self._key_partition.get(key)
            if partition is None:
                partition = self._key_partition[key] = key_partition(key, self.partitions)
            return partition
        if spec.partitioner == "round-robin":
            return next(self._round_robin) % self.partitions
        if self._sticky is None:  # sticky (2.4+): one partition until its batch closes
            self._sticky = self.rng.randrange(self.partitions)
        return self._sticky

    def _value_size(self) -> int:
        dist = self.spec.record_size
        if dist.kind == "uniform":
            return self.rng.randint(dist.low, dist.high)
        if dist.kind == "normal":
            return max(0, round(self.rng.gauss(dist.low, dist.high)))
        return dist.low

    def add_records(self, count: int, now_ms: float) -> None:
        """Draw `count` records (key, partition, value size, in that order each, from the
        producer's stream) into the open batches: `_key`, `_partition` and `_value_size` per
        record, with what they look up each time looked up once (the hot loop of a producer
        sending a million records)."""
        if self._bulk is not None:
            self._bulk.add(count, now_ms)
            return
        spec = self.spec
        rng = self.rng
        draw_key: Callable[[], int | None] = (
            randrange_of(rng, 0, spec.key_count) if spec.keys == "uniform" else self._key)
        keyed = spec.keys in ("uniform", "zipf")
        murmur = spec.partitioner == "murmur2"
        known_partitions = self._key_partition
        dist = spec.record_size
        draw_value: Callable[[], int] | None = (
            randrange_of(rng, dist.low, dist.high + 1) if dist.kind == "uniform"  # randint
            else self._value_size if dist.kind == "normal" else None)
        fixed_value = dist.low
        key_size = spec.key_size
        batch_limit = spec.batch_size
        open_batches = self.open_batches
        keep_keys = self.keep_keys
        size_of = self._record_size
        header = self._batch_header
        for _ in range(count):
            key = draw_key() if keyed else None
            if murmur and key is not None:
                partition = known_partitions.get(key)
                if partition is None:
                    partition = self._partition(key)
            else:
                partition = self._partition(key)
            record_key = key_size if key is not None else None
            value_size = fixed_value if draw_value is None else draw_value()
            batch = open_batches.get(partition)
            size = 0
            if batch is not None:
                size = size_of(batch.records, 0, record_key, value_size)
                if batch.size + size > batch_limit:
                    self._close(partition, now_ms)
                    partition = self._partition(key)  # a sticky partitioner moves on
                    batch = open_batches.get(partition)
                    size = 0
            if batch is None:
                batch = open_batches[partition] = OpenBatch(0, header, self.sequence, now_ms)
            batch.size += size or size_of(batch.records, 0, record_key, value_size)
            batch.records += 1
            if key is not None and keep_keys:
                batch.keys.append(key)
            self.sequence += 1

    def _close(self, partition: int, now_ms: float) -> None:
        batch = self.open_batches.pop(partition)
        if self.spec.partitioner == "sticky":
            self._sticky = None
        self.queues.append((self.spec.topic, partition), batch)

    def close_all(self, now_ms: float) -> None:
        """Close every open batch: a tick is one linger long, so each has waited its linger
        (the accumulator's `ready`)."""
        for partition in list(self.open_batches):
            self._close(partition, now_ms)


__all__ = ["BatchQueues", "OpenBatch", "RecordAccumulator"]
